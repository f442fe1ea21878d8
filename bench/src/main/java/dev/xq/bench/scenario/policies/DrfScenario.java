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
import java.util.TreeMap;

/**
 * The DRF paper's §4.1 example on a sim device of 9 engines and 18 GB: tenant A's tasks need
 * &lt;1 engine, 4 GB&gt;, B's &lt;3 engines, 1 GB&gt;; DRF should settle at 3 A and 2 B tasks.
 */
public final class DrfScenario implements Scenario {

    private static final long GB = 1L << 30;

    @Override
    public String name() {
        return "drf";
    }

    @Override
    public String summary() {
        return "sim device 9 engines / 18 GB; A tasks <1 engine, 4 GB>, B tasks <3 engines, 1 GB>, both always busy; "
                + "running tasks and dominant shares; modes native, xq:drf";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 2000, 1, 1_000_000, "spin time of one task, us"),
                ParamSpec.integer("queues", 6, 1, 1000, "queues (tasks) per tenant"),
                ParamSpec.integer("engines", 9, 1, 1_000_000, "engines of the sim device"),
                ParamSpec.integer("memory_gb", 18, 1, 1 << 20, "memory of the sim device, GB"),
                ParamSpec.integer("level", 2, 1, 3, "highest preemption level of the sim device"),
                ParamSpec.integer("samples", 2000, 1, 10_000_000, "instants at which running tasks are counted"),
                ParamSpec.decimal("seconds", 5, 0.5, 3600, "length of each mode"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("drf");
        long t = p.longValue("T");
        SimDevice dev = SimDevice.create(ctx, new SimDevice.Spec("sim-drf", p.intValue("engines"), p.longValue("memory_gb") * GB,
                p.intValue("level"), "stall", -1, -1, -1));
        ctx.onClose(dev);
        DeviceInfo info = dev.info();
        ctx.out().line("created sim device " + info.id() + ": " + info.engines() + " engines, " + info.memoryBytes() / GB + " GB, Lv"
                + info.maxLevel().number());
        ScenarioReport report = new ScenarioReport(name(), info.id(), p.asMap());
        double seconds = p.doubleValue("seconds");
        Command aTask = Command.spin(t, 1, 4 * GB);
        Command bTask = Command.spin(t, 3, GB);
        double aDominant = Math.max(1.0 / info.engines(), 4.0 * GB / info.memoryBytes());
        double bDominant = Math.max(3.0 / info.engines(), 1.0 * GB / info.memoryBytes());
        for (Mode mode : List.of(Mode.nativeMode(), Mode.xq("drf"))) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            for (int i = 0; i < p.intValue("queues"); i++) {
                XQueue a = run.queueOn(info.id(), "A" + i, "A", 0, new Hint.Demand(1, 4 * GB));
                XQueue b = run.queueOn(info.id(), "B" + i, "B", 0, new Hint.Demand(3, GB));
                // Two commands outstanding: the queue never goes idle, so both tenants always have work.
                run.add(TaskStream.backToBack("A" + i, a, run.ledger(), new TaskShape(1, aTask), 2));
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
            ModeResult m = new ModeResult(mode.label());
            m.put("a_tasks", Measures.round(aTasks));
            m.put("b_tasks", Measures.round(bTasks));
            m.put("a_dominant_share", Measures.round(aTasks * aDominant));
            m.put("b_dominant_share", Measures.round(bTasks * bDominant));
            m.put("a_tasks_mode", Intervals.mostFrequent(aHist));
            m.put("b_tasks_mode", Intervals.mostFrequent(bHist));
            m.put("engines_used", Measures.round(aTasks + 3 * bTasks));
            m.note("running tasks seen at " + p.intValue("samples") + " instants: A " + aHist + ", B " + bHist
                    + (run.drainNote().isEmpty() ? "" : "; " + run.drainNote()));
            m.counts(counts);
            report.add(m);
        }
        report.note("a_tasks/b_tasks = time-averaged number of the tenant's commands between start and end (CommandResult); "
                + "*_mode = the count seen most often; DRF's answer for this device is A 3, B 2, dominant shares 2/3 each");
        report.note("native: the sim starts waiting commands round-robin across hardware queues, so its packing depends on that "
                + "arbitration, not on a fairness goal");
        if (info.engines() == 9 && info.memoryBytes() == 18 * GB) {
            ModeResult drf = report.modes().getLast();
            report.goal("under xq:drf the steady state is A 3 tasks, B 2 tasks", drf.number("a_tasks_mode") == 3 && drf.number("b_tasks_mode") == 2,
                    "A " + drf.figure("a_tasks_mode") + ", B " + drf.figure("b_tasks_mode") + " most often");
        }
        report.barFigure("a_tasks");
        report.barFigure("b_tasks");
        return report;
    }
}
