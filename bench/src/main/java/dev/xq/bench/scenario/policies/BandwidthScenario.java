package dev.xq.bench.scenario.policies;

import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.Submission;
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
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Fig. 9 bottom: two tenants back to back under a weighted time partition (policy bandwidth). */
public final class BandwidthScenario implements Scenario {

    @Override
    public String name() {
        return "bandwidth";
    }

    @Override
    public String summary() {
        return "two tenants back to back; policy bandwidth with utilization a/b; device-time shares; modes standalone, native, xq:bandwidth";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.integer("a", 75, 1, 100, "utilization hint of tenant a, %"),
                ParamSpec.integer("b", 25, 1, 100, "utilization hint of tenant b, %"),
                ParamSpec.integer("slice", 0, 0, 10_000_000, "timeslice hint in us (100 or more), 0 = the policy's round length"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("bandwidth");
        long slice = p.longValue("slice");
        if (slice != 0 && slice < 100) {
            throw new IllegalArgumentException("slice=" + slice + " is out of range; allowed: 0 or [100, 10000000]");
        }
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        double standaloneBusy = Double.NaN;
        List<Mode> modes = new ArrayList<>(List.of(Mode.standalone(), Mode.nativeMode()));
        if (ctx.gpu()) {
            modes.add(Mode.prio());
        }
        modes.add(Mode.xq("bandwidth"));
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            List<Hint> aHints = new ArrayList<>(List.of(new Hint.Utilization(p.intValue("a"))));
            List<Hint> bHints = new ArrayList<>(List.of(new Hint.Utilization(p.intValue("b"))));
            if (slice > 0) {
                aHints.add(new Hint.Timeslice(slice));
                bHints.add(new Hint.Timeslice(slice));
            }
            XQueue a = run.queue("a", "a", 1, aHints.toArray(Hint[]::new));
            // Two tasks outstanding keep each queue from going idle between tasks.
            run.add(TaskStream.backToBack("a", a, run.ledger(), shape, 2));
            boolean alone = mode.label().equals("standalone");
            if (!alone) {
                XQueue b = run.queue("b", "b", 0, bHints.toArray(Hint[]::new));
                run.add(TaskStream.backToBack("b", b, run.ledger(), shape, 2));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            long commandNanos = p.longValue("T") * 1000;
            long ta = workNanos(FgBgWorkload.stream(run, "a"), commandNanos, from, to);
            long tb = workNanos(FgBgWorkload.stream(run, "b"), commandNanos, from, to);
            double busy = (double) (ta + tb) / (to - from);
            if (alone) {
                standaloneBusy = busy;
            }
            ModeResult m = new ModeResult(mode.label());
            m.put("share_a", Measures.round(Measures.ratio(ta, ta + tb)));
            m.put("share_b", alone ? Double.NaN : Measures.round(Measures.ratio(tb, ta + tb)));
            m.put("busy", Measures.round(busy));
            m.put("total_vs_standalone", Measures.round(Measures.ratio(busy, standaloneBusy)));
            m.put("a_tasks_per_s", Measures.round(Measures.tasksPerSecond(FgBgWorkload.stream(run, "a").records(), from, to)));
            TaskStream bs = FgBgWorkload.stream(run, "b");
            m.put("b_tasks_per_s", bs == null ? Double.NaN : Measures.round(Measures.tasksPerSecond(bs.records(), from, to)));
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        report.note("work = commands that completed in the measured window x T (their own device time; save, restore and idle "
                + "time are not work); shares = each tenant's work over both tenants' work; busy = work / wall time; "
                + "total_vs_standalone = busy / standalone's busy");
        double want = (double) p.intValue("a") / (p.intValue("a") + p.intValue("b"));
        double got = report.modes().getLast().number("share_a");
        report.goal(String.format(java.util.Locale.ROOT, "under xq:bandwidth tenant a gets %.2f of the device time (+-0.02)", want),
                Math.abs(got - want) <= 0.02, "share_a " + got);
        double total = report.modes().getLast().number("total_vs_standalone");
        report.goal("under xq:bandwidth the two tenants together get at least 0.97 of standalone's work done",
                total >= 0.97, "total_vs_standalone " + total);
        report.barFigure("share_a");
        report.barFigure("busy");
        return report;
    }

    /**
     * Device time a tenant's completed commands account for: those that ended in [from, to) times
     * the nominal command time. An interrupted command's result spans from its first start to its
     * last end, so summing result spans would count other tenants' time in between.
     */
    static long workNanos(TaskStream stream, long commandNanos, long from, long to) {
        if (stream == null) {
            return 0;
        }
        long n = 0;
        for (TaskRecord t : stream.records()) {
            for (Submission s : t.commands()) {
                CommandResult r = TaskRecord.resultOf(s);
                if (r != null && r.endNanos() >= from && r.endNanos() < to) {
                    n++;
                }
            }
        }
        return n * commandNanos;
    }
}
