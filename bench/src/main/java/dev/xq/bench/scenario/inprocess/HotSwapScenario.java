package dev.xq.bench.scenario.inprocess;

import dev.xq.api.DriverInfo;
import dev.xq.api.Hint;
import dev.xq.api.SchedulerControl;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.scenario.FgBgWorkload;
import dev.xq.bench.scenario.Measures;
import dev.xq.bench.scenario.Mode;
import dev.xq.bench.scenario.ModeRun;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.osgi.framework.Bundle;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/**
 * The fixed-priority workload while the node changes under it: select edf, update the
 * fixed-priority policy bundle in place, select hpf again. Nothing may be lost.
 */
public final class HotSwapScenario implements Scenario {

    static final String POLICY_BUNDLE = "dev.xq.policy.fixedpriority";

    @Override
    public String name() {
        return "hot-swap";
    }

    @Override
    public String summary() {
        return "fixed-priority workload; at 1/4 select edf, at 1/2 update the " + POLICY_BUNDLE + " bundle in place, at 3/4 select hpf; "
                + "a preemption provider bundle serving the device is stopped and started in between";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("load", 0.2, 0.01, 1.0, "fg load as a share of its standalone throughput"),
                ParamSpec.decimal("slo", 2.0, 1.0, 1000, "fg deadline hint (for edf) as a multiple of its standalone task time"),
                ParamSpec.decimal("seconds", 20, 2, 3600, "length of the run"),
                ParamSpec.decimal("around", 1.0, 0.1, 60, "seconds after each change whose fg tasks count as during swaps"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf", "edf");
        Bundle policyBundle = findBundle(ctx, POLICY_BUNDLE);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        FgBgWorkload w = FgBgWorkload.calibrate(ctx, TaskShape.spins(p.intValue("n"), p.longValue("T")), p.doubleValue("load"), 5);
        long deadline = Math.max(1, (long) (p.doubleValue("slo") * w.standaloneNanos / 1e3));
        // The timing figures then cover this run only; the counters keep counting.
        ctx.scheduler().resetStats();
        SchedulerControl.SchedulerStats before = ctx.scheduler().stats();
        Mode mode = Mode.xq("hpf").labelled("xq:hpf>edf>update>hpf");
        ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
        ModeRun run = new ModeRun(ctx, mode);
        w.addTenants(run, false, List.of(new Hint.Deadline(deadline)), List.of());
        List<Long> changes = new ArrayList<>();
        List<String> log = new ArrayList<>();
        long total = (long) (seconds * 1e9);
        List<Bundle> providers = providerBundles(ctx);
        List<ModeRun.TimedAction> actions = new ArrayList<>(List.of(
                // The gap figure leaves out the start-up, as every other figure does (the first
                // launches of a mode run cold code: 1-4 ms gaps there even on a quiet 16-core host).
                new ModeRun.TimedAction(Duration.ofNanos(FgBgWorkload.warmupNanos(seconds)), () -> ctx.scheduler().resetStats()),
                new ModeRun.TimedAction(Duration.ofNanos(total / 4), () -> {
                    changes.add(System.nanoTime());
                    ctx.selectPolicy("edf", 0);
                    say(ctx, log, "selected edf");
                }),
                new ModeRun.TimedAction(Duration.ofNanos(total / 2), () -> {
                    changes.add(System.nanoTime());
                    long t0 = System.nanoTime();
                    // What FileInstall does when a new jar of the bundle lands in bundles/.
                    policyBundle.update();
                    say(ctx, log, String.format(Locale.ROOT, "updated bundle %s from %s in %.1f ms", POLICY_BUNDLE,
                            policyBundle.getLocation(), (System.nanoTime() - t0) / 1e6));
                }),
                new ModeRun.TimedAction(Duration.ofNanos(total * 3 / 4), () -> {
                    changes.add(System.nanoTime());
                    long t0 = System.nanoTime();
                    // The updated bundle re-registers hpf a moment after it restarts.
                    ctx.selectPolicy("hpf", 10_000);
                    say(ctx, log, String.format(Locale.ROOT, "selected hpf again (%.1f ms after asking)", (System.nanoTime() - t0) / 1e6));
                })));
        if (!providers.isEmpty()) {
            // Between the update and the last swap: the device's queues drop to their own driver's level and come back.
            actions.add(new ModeRun.TimedAction(Duration.ofNanos(total * 9 / 16), () -> {
                changes.add(System.nanoTime());
                for (Bundle b : providers) {
                    b.stop();
                }
                say(ctx, log, "stopped preemption provider bundle(s) " + names(providers));
            }));
            actions.add(new ModeRun.TimedAction(Duration.ofNanos(total * 5 / 8), () -> {
                changes.add(System.nanoTime());
                for (Bundle b : providers) {
                    b.start();
                }
                say(ctx, log, "started preemption provider bundle(s) " + names(providers) + " again");
            }));
        }
        run.run(Duration.ofNanos(total), actions);
        var counts = run.finish(Duration.ofSeconds(60));
        SchedulerControl.SchedulerStats after = ctx.scheduler().stats();
        long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
        ModeResult m = w.figures(run, from, run.endNanos());
        long around = (long) (p.doubleValue("around") * 1e9);
        List<Double> during = new ArrayList<>();
        TaskStream fg = FgBgWorkload.stream(run, FgBgWorkload.FG);
        for (TaskRecord r : fg.records()) {
            for (long c : changes) {
                if (r.releaseNanos() >= c && r.releaseNanos() < c + around && r.latencyNanos() >= 0) {
                    during.add(r.latencyNanos() / 1e6);
                    break;
                }
            }
        }
        m.put("swaps", after.swaps() - before.swaps());
        m.put("max_decision_gap_us", Measures.round(after.maxDecisionGapMicros()));
        m.put("watchdog_trips", after.watchdogTrips() - before.watchdogTrips());
        long[] wake = Measures.osWakeLatencyNanos(4000);
        m.put("os_wake_p999_us", Measures.round(wake[wake.length * 999 / 1000] / 1e3));
        m.put("os_wake_max_us", Measures.round(wake[wake.length - 1] / 1e3));
        m.put("fg_p99_during_swaps", Measures.round(Percentiles.of(during.stream().mapToDouble(Double::doubleValue).toArray()).at(99)));
        m.put("fg_tasks_during_swaps", during.size());
        m.counts(counts);
        report.add(m);
        report.notes().addAll(log);
        if (providers.isEmpty()) {
            report.note("no preemption provider serves " + ctx.device() + ": no provider bundle to remove and re-add");
        }
        report.note("max_decision_gap_us is the scheduler's longest event-to-decision gap during the run after its warm-up "
                + "(SchedulerControl.resetStats " + Measures.round(FgBgWorkload.warmupNanos(seconds) / 1e9) + " s in, before the first swap); swaps counts changes of the deciding policy during the run; fg_p99_during_swaps covers fg tasks released within " + p.doubleValue("around") + " s after each change");
        report.note("os_wake_p999_us / os_wake_max_us: this machine's own wake-up latency, measured after the run in the same JVM "
                + "(one thread unparks another that is parked; time until it runs; 4000 times, 250 us apart): what each event "
                + "would pay if it were handed to another thread; bounded policies decide on the posting thread instead, and "
                + "what is left on a machine with few cores is its threads sharing them");
        double gap = m.number("max_decision_gap_us");
        report.goal("the scheduler's longest event-to-decision gap across the swaps is at most 1000 us", gap <= 1000,
                String.format(Locale.ROOT, "max_decision_gap_us %.1f; this machine's wake-up p99.9 %.1f us, max %.1f us", gap,
                        m.number("os_wake_p999_us"), m.number("os_wake_max_us")));
        return report;
    }

    /**
     * The bundles that register a preemption provider, when a provider serves the scenario's
     * device. DriverInfo does not name bundles, so this looks the providers up in the service
     * registry by the SPI's interface name.
     */
    private static List<Bundle> providerBundles(ScenarioContext ctx) throws InvalidSyntaxException {
        boolean serves = false;
        for (DriverInfo d : ctx.service().drivers()) {
            if (d.kind().equals("provider") && d.devices().contains(ctx.device())) {
                serves = true;
            }
        }
        List<Bundle> out = new ArrayList<>();
        if (!serves) {
            return out;
        }
        ServiceReference<?>[] refs = ctx.bundles().getAllServiceReferences("dev.xq.hal.spi.PreemptionProvider", null);
        if (refs != null) {
            for (ServiceReference<?> r : refs) {
                Bundle b = r.getBundle();
                if (b != null && !out.contains(b)) {
                    out.add(b);
                }
            }
        }
        return out;
    }

    private static String names(List<Bundle> bundles) {
        return bundles.stream().map(Bundle::getSymbolicName).toList().toString();
    }

    private static void say(ScenarioContext ctx, List<String> log, String line) {
        ctx.out().line("  " + line);
        log.add(line);
    }

    static Bundle findBundle(ScenarioContext ctx, String symbolicName) {
        List<String> names = new ArrayList<>();
        for (Bundle b : ctx.bundles().getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
            names.add(b.getSymbolicName());
        }
        throw new IllegalStateException("bundle " + symbolicName + " is not installed; installed: " + names + ". Nothing was run.");
    }
}
