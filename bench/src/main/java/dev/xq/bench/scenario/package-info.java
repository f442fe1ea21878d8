/**
 * The framework the scenarios of {@code xq:bench} are written on: {@link dev.xq.bench.scenario.Scenario}
 * (one scenario: name, parameters, run), {@link dev.xq.bench.scenario.ScenarioContext} (the node's
 * services, the device, the progress output; undoes what a run set up),
 * {@link dev.xq.bench.scenario.Progress}, {@link dev.xq.bench.scenario.Mode} and
 * {@link dev.xq.bench.scenario.ModeRun} (how one mode runs its queues and task streams),
 * {@link dev.xq.bench.scenario.Measures} (figures from task records), the settings a run changes
 * and puts back ({@link dev.xq.bench.scenario.QueueSettings}, {@link dev.xq.bench.scenario.PolicySettings},
 * {@link dev.xq.bench.scenario.SimDevice}), and {@link dev.xq.bench.scenario.FgBgWorkload}, the
 * fg/bg workload that many scenarios share.
 *
 * <p>The scenarios themselves are in the sub-packages: {@code inprocess} (XQ's own mechanics
 * measured with in-process tenants), {@code policies} (one or more per scheduling policy) and
 * {@code processes} (unmodified programs as separate processes); {@code suite} lists them. The
 * dependencies go one way: the sub-packages use this one, this one names none of them. Private
 * to the bundle.
 */
package dev.xq.bench.scenario;
