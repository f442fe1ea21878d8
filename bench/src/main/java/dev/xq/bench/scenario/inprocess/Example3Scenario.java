package dev.xq.bench.scenario.inprocess;

import dev.xq.api.Hint;
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
import dev.xq.bench.scenario.QueueSettings;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** XSched's intra-process example: two tenants of long tasks with random pauses, priorities 2 and 1. */
public final class Example3Scenario implements Scenario {

    @Override
    public String name() {
        return "example3";
    }

    @Override
    public String summary() {
        return "two tenants, tasks of n x T with a 30-50 ms pause after each, priorities 2/1, threshold 8 batch 4; modes native, xq:hpf (+prio on a GPU)";
    }

    @Override
    public List<ParamSpec> params() {
        List<ParamSpec> p = new ArrayList<>(List.of(
                ParamSpec.integer("T", 300, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 100, 1, 100_000, "commands per task"),
                ParamSpec.integer("pause_min", 30, 0, 60_000, "shortest pause after a task, ms"),
                ParamSpec.integer("pause_max", 50, 0, 60_000, "longest pause after a task, ms"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"),
                ParamSpec.integer("seed", 1, 0, Long.MAX_VALUE, "seed of the pauses")));
        p.addAll(QueueSettings.params(0, 8, 4, -1));
        return p;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf");
        if (p.longValue("pause_max") < p.longValue("pause_min")) {
            throw new IllegalArgumentException("pause_max=" + p.longValue("pause_max") + " is below pause_min=" + p.longValue("pause_min")
                    + "; allowed: pause_max >= pause_min");
        }
        QueueConfig cfg = QueueSettings.config(ctx.service().defaults(), p);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        Duration min = Duration.ofMillis(p.longValue("pause_min"));
        Duration max = Duration.ofMillis(p.longValue("pause_max"));
        List<Mode> modes = new ArrayList<>(List.of(Mode.nativeMode()));
        if (ctx.gpu()) {
            modes.add(Mode.prio());
        }
        modes.add(cfg == null ? Mode.xq("hpf") : Mode.xq("hpf", cfg));
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + (mode.policy().equals("hpf") ? " (" + QueueSettings.describe(cfg) + ")" : "")
                    + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            XQueue hp = run.queue("hp", "hp", Hint.MAX_PRIORITY, new Hint.Priority(2));
            XQueue lp = run.queue("lp", "lp", 0, new Hint.Priority(1));
            // The same seeds in every mode: both modes see the same pauses.
            run.add(TaskStream.paused("hp", hp, run.ledger(), shape, min, max, p.longValue("seed")));
            run.add(TaskStream.paused("lp", lp, run.ledger(), shape, min, max, p.longValue("seed") + 1));
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            double[] hpMs = Measures.latencyMillis(FgBgWorkload.stream(run, "hp").records(), from, to);
            double[] lpMs = Measures.latencyMillis(FgBgWorkload.stream(run, "lp").records(), from, to);
            Percentiles h = Percentiles.of(hpMs);
            Percentiles l = Percentiles.of(lpMs);
            ModeResult m = new ModeResult(mode.label());
            m.put("hp_mean", Measures.round(h.mean()));
            m.put("hp_p99", Measures.round(h.at(99)));
            m.put("lp_mean", Measures.round(l.mean()));
            m.put("lp_p99", Measures.round(l.at(99)));
            m.put("lp_over_hp_p99", Measures.round(Measures.ratio(l.at(99), h.at(99))));
            m.put("hp_tasks", hpMs.length);
            m.put("lp_tasks", lpMs.length);
            m.samples("hp task latency ms", hpMs);
            m.samples("lp task latency ms", lpMs);
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        report.note("task latency = submit of a task's first command to the end of its last; a task is " + shape.count() + " x spin "
                + p.longValue("T") + " us");
        report.barFigure("hp_p99");
        return report;
    }
}
