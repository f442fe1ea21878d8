package dev.xq.bench.scenario.policies;

import dev.xq.api.Command;
import dev.xq.api.DeviceInfo;
import dev.xq.api.Hint;
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
import dev.xq.bench.scenario.SimDevice;
import dev.xq.bench.stats.Interval;
import dev.xq.bench.stats.Intervals;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * A workload where the hardware on its own is unfair and DRF is not: on a sim device of 12
 * engines, tenant A floods with many queues of short one-engine tasks, tenant B has a few queues
 * of longer three-engine tasks. Natively every engine that frees up is taken at once by one of
 * A's many waiting one-engine tasks, so B rarely finds three free engines. DRF equalises the
 * dominant shares: A 6 tasks, B 2 tasks (engines are the dominant resource of both), 1/2 each.
 */
public final class DrfFloodScenario implements Scenario {

    private static final long GB = 1L << 30;

    @Override
    public String name() {
        return "drf-flood";
    }

    @Override
    public String summary() {
        return "sim device 12 engines / 48 GB; A floods with many queues of short <1 engine, 1 GB> tasks, B has a few queues of "
                + "<3 engines, 1 GB> tasks; dominant shares; modes native, xq:drf";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("Ta", 500, 1, 1_000_000, "spin time of one A task, us"),
                ParamSpec.integer("Tb", 2000, 1, 1_000_000, "spin time of one B task, us"),
                ParamSpec.integer("queuesA", 48, 1, 1000, "A's queues"),
                ParamSpec.integer("queuesB", 2, 1, 1000, "B's queues"),
                ParamSpec.integer("engines", 12, 3, 1_000_000, "engines of the sim device"),
                ParamSpec.integer("memory_gb", 48, 1, 1 << 20, "memory of the sim device, GB"),
                ParamSpec.integer("level", 2, 1, 3, "highest preemption level of the sim device"),
                ParamSpec.integer("samples", 2000, 1, 10_000_000, "instants at which running tasks are counted"),
                ParamSpec.decimal("seconds", 5, 0.5, 3600, "length of each mode"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("drf");
        SimDevice dev = SimDevice.create(ctx, new SimDevice.Spec("sim-drf-flood", p.intValue("engines"), p.longValue("memory_gb") * GB,
                p.intValue("level"), "stall", -1, -1, -1));
        ctx.onClose(dev);
        DeviceInfo info = dev.info();
        ctx.out().line("created sim device " + info.id() + ": " + info.engines() + " engines, " + info.memoryBytes() / GB + " GB, Lv"
                + info.maxLevel().number());
        ScenarioReport report = new ScenarioReport(name(), info.id(), p.asMap());
        double seconds = p.doubleValue("seconds");
        Command aTask = Command.spin(p.longValue("Ta"), 1, GB);
        Command bTask = Command.spin(p.longValue("Tb"), 3, GB);
        double aDominant = Math.max(1.0 / info.engines(), 1.0 * GB / info.memoryBytes());
        double bDominant = Math.max(3.0 / info.engines(), 1.0 * GB / info.memoryBytes());
        for (Mode mode : List.of(Mode.nativeMode(), Mode.xq("drf"))) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            for (int i = 0; i < p.intValue("queuesA"); i++) {
                XQueue a = run.queueOn(info.id(), "A" + i, "A", 0, new Hint.Demand(1, GB));
                run.add(TaskStream.backToBack("A" + i, a, run.ledger(), new TaskShape(1, aTask), 2));
            }
            for (int i = 0; i < p.intValue("queuesB"); i++) {
                XQueue b = run.queueOn(info.id(), "B" + i, "B", 0, new Hint.Demand(3, GB));
                run.add(TaskStream.backToBack("B" + i, b, run.ledger(), new TaskShape(1, bTask), 2));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            List<Interval> spans = new ArrayList<>();
            for (TaskStream s : run.streams()) {
                spans.addAll(Measures.intervals(s.records(), s.tenant().substring(0, 1)));
            }
            double aTasks = Intervals.meanConcurrency(spans, "A", from, to);
            double bTasks = Intervals.meanConcurrency(spans, "B", from, to);
            TreeMap<Integer, Integer> aHist = Intervals.sampleConcurrency(spans, "A", from, to, p.intValue("samples"));
            TreeMap<Integer, Integer> bHist = Intervals.sampleConcurrency(spans, "B", from, to, p.intValue("samples"));
            double aShare = aTasks * aDominant;
            double bShare = bTasks * bDominant;
            ModeResult m = new ModeResult(mode.label());
            m.put("a_tasks", Measures.round(aTasks));
            m.put("b_tasks", Measures.round(bTasks));
            m.put("a_dominant_share", Measures.round(aShare));
            m.put("b_dominant_share", Measures.round(bShare));
            m.put("b_over_a", Measures.round(Measures.ratio(bShare, aShare)));
            m.put("a_tasks_mode", Intervals.mostFrequent(aHist));
            m.put("b_tasks_mode", Intervals.mostFrequent(bHist));
            m.put("engines_used", Measures.round(aTasks + 3 * bTasks));
            m.note("running tasks seen at " + p.intValue("samples") + " instants: A " + aHist + ", B " + bHist
                    + (run.drainNote().isEmpty() ? "" : "; " + run.drainNote()));
            m.counts(counts);
            report.add(m);
        }
        report.note(String.format(Locale.ROOT, "A: %d queues of <1 engine, 1 GB> x %d us; B: %d queues of <3 engines, 1 GB> x %d us; "
                + "both always busy (two tasks outstanding per queue)", p.intValue("queuesA"), p.longValue("Ta"),
                p.intValue("queuesB"), p.longValue("Tb")));
        report.note("a_tasks/b_tasks = time-averaged number of the tenant's commands running (CommandResult start to end); "
                + "dominant share = tasks x the task's largest share of a resource; b_over_a = B's dominant share over A's (1 = fair); "
                + "DRF's answer on 12 engines: A 6, B 2, dominant shares 1/2 each");
        ModeResult nat = report.modes().get(0);
        ModeResult drf = report.modes().get(1);
        report.goal("the workload discriminates: under native B's dominant share is at most half of A's",
                nat.number("b_over_a") <= 0.5, "native b_over_a " + nat.figure("b_over_a") + " (A " + nat.figure("a_dominant_share")
                        + ", B " + nat.figure("b_dominant_share") + ")");
        report.goal("under xq:drf the dominant shares are equal within 10% (b_over_a in [0.9, 1.1]), where native's are not",
                drf.number("b_over_a") >= 0.9 && drf.number("b_over_a") <= 1.1 && !(nat.number("b_over_a") >= 0.9 && nat.number("b_over_a") <= 1.1),
                "xq:drf b_over_a " + drf.figure("b_over_a") + " (A " + drf.figure("a_dominant_share") + ", B "
                        + drf.figure("b_dominant_share") + "; A " + drf.figure("a_tasks_mode") + " / B " + drf.figure("b_tasks_mode")
                        + " tasks most often), native " + nat.figure("b_over_a"));
        report.goal("under xq:drf at least 0.9 of the engines are busy", drf.number("engines_used") >= 0.9 * info.engines(),
                "engines_used " + drf.figure("engines_used") + " of " + info.engines() + " (native " + nat.figure("engines_used") + ")");
        report.barFigure("a_dominant_share");
        report.barFigure("b_dominant_share");
        return report;
    }
}
