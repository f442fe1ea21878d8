/**
 * The suite: {@link dev.xq.bench.scenario.suite.Scenarios}, every scenario of {@code xq:bench} in
 * the order the usage lists them, found by name. It sits above the scenario packages it lists so
 * that the framework ({@code dev.xq.bench.scenario}) never depends on them. Private to the bundle.
 */
package dev.xq.bench.scenario.suite;
