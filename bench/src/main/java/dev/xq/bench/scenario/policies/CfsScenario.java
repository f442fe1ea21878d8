package dev.xq.bench.scenario.policies;

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
import dev.xq.bench.workload.TaskShape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code bandwidth}'s shape with three tenants back to back, weighted 1:2:4 through their
 * priority hints on Linux's nice scale (priority p = nice -p, weight round(1024 / 1.25^nice)):
 * under {@code cfs} each should get device time in proportion to its weight; native gives each
 * about a third.
 */
public final class CfsScenario implements Scenario {

    private static final String[] TENANTS = {"a", "b", "c"};

    @Override
    public String name() {
        return "cfs";
    }

    @Override
    public String summary() {
        return "three tenants back to back, priority hints 0/3/6 (cfs weights 1024/2000/3906, ~1:2:4); device-time shares; "
                + "modes standalone, native, xq:cfs";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.integer("pa", 0, -19, 20, "priority hint of tenant a (cfs: nice = -priority)"),
                ParamSpec.integer("pb", 3, -19, 20, "priority hint of tenant b"),
                ParamSpec.integer("pc", 6, -19, 20, "priority hint of tenant c"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"));
    }

    /** Linux's nice scale as policy cfs documents it: round(1024 / 1.25^nice), nice = -priority clamped to [-20, 19]. */
    static long weight(int priority) {
        int nice = Math.max(-20, Math.min(19, -priority));
        return Math.round(1024 / Math.pow(1.25, nice));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("cfs");
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        int[] prio = {p.intValue("pa"), p.intValue("pb"), p.intValue("pc")};
        long[] w = new long[3];
        long wSum = 0;
        for (int i = 0; i < 3; i++) {
            w[i] = weight(prio[i]);
            wSum += w[i];
        }
        double[] want = new double[3];
        for (int i = 0; i < 3; i++) {
            want[i] = (double) w[i] / wSum;
        }
        double standaloneBusy = Double.NaN;
        List<Mode> modes = new ArrayList<>(List.of(Mode.standalone(), Mode.nativeMode()));
        if (ctx.gpu()) {
            modes.add(Mode.prio());
        }
        modes.add(Mode.xq("cfs"));
        long commandNanos = p.longValue("T") * 1000;
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            boolean alone = mode.label().equals("standalone");
            for (int i = 0; i < (alone ? 1 : 3); i++) {
                // Stream priorities for prio mode follow the weights: a lowest, c highest.
                XQueue q = run.queue(TENANTS[i], TENANTS[i], i, new Hint.Priority(prio[i]));
                // Two tasks outstanding keep each queue from going idle between tasks.
                run.add(dev.xq.bench.workload.TaskStream.backToBack(TENANTS[i], q, run.ledger(), shape, 2));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            long[] work = new long[3];
            long total = 0;
            for (int i = 0; i < 3; i++) {
                work[i] = BandwidthScenario.workNanos(FgBgWorkload.stream(run, TENANTS[i]), commandNanos, from, to);
                total += work[i];
            }
            double busy = (double) total / (to - from);
            if (alone) {
                standaloneBusy = busy;
            }
            ModeResult m = new ModeResult(mode.label());
            double worst = 0;
            for (int i = 0; i < 3; i++) {
                double share = Measures.ratio(work[i], total);
                m.put("share_" + TENANTS[i], alone && i > 0 ? Double.NaN : Measures.round(share));
                worst = Math.max(worst, Math.abs(share - want[i]));
            }
            m.put("max_share_error", alone ? Double.NaN : Measures.round(worst));
            m.put("busy", Measures.round(busy));
            m.put("total_vs_standalone", Measures.round(Measures.ratio(busy, standaloneBusy)));
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        report.summary().put("want_share_a", Measures.round(want[0]));
        report.summary().put("want_share_b", Measures.round(want[1]));
        report.summary().put("want_share_c", Measures.round(want[2]));
        report.note(String.format(Locale.ROOT, "weights from the priority hints %d/%d/%d: %d/%d/%d, so cfs's shares should be "
                + "%.3f/%.3f/%.3f; max_share_error = the largest |share - that| of the three", prio[0], prio[1], prio[2],
                w[0], w[1], w[2], want[0], want[1], want[2]));
        report.note("work = commands that completed in the measured window x T; shares = each tenant's work over all tenants' "
                + "work; busy = work / wall time; total_vs_standalone = busy / standalone's busy");
        ModeResult cfs = report.modes().getLast();
        ModeResult nat = report.modes().get(1);
        double err = cfs.number("max_share_error");
        report.goal(String.format(Locale.ROOT, "under xq:cfs every tenant gets its weight's share of the device time (+-0.02: "
                + "%.3f/%.3f/%.3f)", want[0], want[1], want[2]), err <= 0.02,
                "shares " + cfs.figure("share_a") + "/" + cfs.figure("share_b") + "/" + cfs.figure("share_c") + ", max error " + err
                        + " (native " + nat.figure("share_a") + "/" + nat.figure("share_b") + "/" + nat.figure("share_c")
                        + ", max error " + nat.figure("max_share_error") + ")");
        double total = cfs.number("total_vs_standalone");
        report.goal("under xq:cfs the three tenants together get at least 0.95 of standalone's work done", total >= 0.95,
                "total_vs_standalone " + total + " (native " + nat.figure("total_vs_standalone") + ")");
        report.barFigure("share_a");
        report.barFigure("share_c");
        return report;
    }
}
