package dev.xq.bench.scenario.inprocess;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.XQueue;
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
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The cost of XQ for one tenant alone: its task time through XQ against the closest thing to the HAL used directly. */
public final class OverheadScenario implements Scenario {

    @Override
    public String name() {
        return "overhead";
    }

    @Override
    public String summary() {
        return "one tenant, tasks of n x spin T one after another; XQ (Lv1, node defaults) vs direct (native, unthrottled); task time and CPU";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 0, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("seconds", 5, 0.5, 3600, "length of each mode"),
                ParamSpec.choice("policy", "hpf", List.of("hpf", "hpf-aging", "edf", "kedf", "lax", "drf", "bandwidth", "bandwidth-group"),
                        "policy deciding in the XQ mode"),
                ParamSpec.integer("level", 1, 1, 3, "XQ mode: preemption level wish"),
                ParamSpec.decimal("warmup", 2, 0, 600, "seconds of the XQ mode run first and not measured, so that the JIT "
                        + "has compiled the paths before either mode is timed; 0: none"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        String policy = p.string("policy");
        ctx.requirePolicies(policy);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        QueueConfig xqConfig = ctx.service().defaults().withLevel(PreemptionLevel.of(p.intValue("level")));
        List<Mode> modes = List.of(Mode.nativeMode().labelled("direct"), Mode.xq(policy, xqConfig));
        List<Double> means = new ArrayList<>();
        double warmup = p.doubleValue("warmup");
        if (warmup > 0) {
            ModeRun run = new ModeRun(ctx, modes.get(1).labelled("warm-up"));
            XQueue q = run.queue("warm-up", "tenant", 0, new Hint.Priority(1));
            run.add(TaskStream.backToBack("warm-up", q, run.ledger(), shape, 1));
            run.run(Duration.ofNanos((long) (warmup * 1e9)), List.of());
            var c = run.finish(Duration.ofSeconds(60));
            if (c.lost() != 0 || c.failed() != 0) {
                throw new IllegalStateException("warm-up: " + c + "; every command must complete");
            }
            ctx.out().line("  warm-up: " + warmup + " s (" + c.submitted() + " commands), not measured");
        }
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            XQueue q = run.queue("tenant", "tenant", 0, new Hint.Priority(1));
            run.add(TaskStream.backToBack("tenant", q, run.ledger(), shape, 1));
            long cpu0 = cpuNanos();
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            long cpu1 = cpuNanos();
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            double[] ms = Measures.latencyMillis(FgBgWorkload.stream(run, "tenant").records(), from, run.endNanos());
            Percentiles pc = Percentiles.of(ms);
            ModeResult m = new ModeResult(mode.label());
            m.put("task", Measures.round(pc.mean()));
            m.put("task_p50", Measures.round(pc.at(50)));
            m.put("task_p99", Measures.round(pc.at(99)));
            m.put("cpu_pct", cpu0 < 0 || cpu1 < 0 ? Double.NaN
                    : Measures.round(100.0 * (cpu1 - cpu0) / (run.endNanos() - run.startNanos())));
            m.samples("task latency ms", ms);
            m.counts(counts);
            means.add(pc.mean());
            report.add(m);
        }
        double direct = means.get(0);
        double xq = means.get(1);
        report.summary().put("task_xq", Measures.round(xq));
        report.summary().put("task_direct", Measures.round(direct));
        report.summary().put("overhead_pct", Measures.round(100.0 * (xq - direct) / direct));
        report.summary().put("cpu_pct", report.modes().get(1).figure("cpu_pct"));
        report.modes().get(1).put("overhead_pct", report.summary().get("overhead_pct"));
        report.note("\"direct\" is the closest the public API comes to the HAL used directly: policy native, unthrottled queue "
                + "(every command goes to the hardware queue at once); it still passes through the XQueue engine");
        report.note("cpu_pct = CPU time of the whole node process during the mode / wall time x 100 (one core = 100)");
        report.barFigure("task");
        report.barFigure("cpu_pct");
        return report;
    }

    private static long cpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }
}
