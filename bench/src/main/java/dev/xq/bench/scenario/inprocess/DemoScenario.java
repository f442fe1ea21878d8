package dev.xq.bench.scenario.inprocess;

import dev.xq.api.SchedulerControl;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.Counts;
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
import java.util.List;
import java.util.Locale;

/**
 * {@code xq:demo}: the fixed-priority workload, shortened, first without a scheduler, then with
 * hpf, then once more with the policy switched from native to hpf while it runs.
 */
public final class DemoScenario implements Scenario {

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String summary() {
        return "two tenants on sim0: fg periodic at 20% load over bg back to back; native, then xq:hpf, then native -> hpf live";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.decimal("seconds", 4, 1, 600, "length of each mode"),
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("load", 0.2, 0.01, 1.0, "fg load as a share of its standalone throughput"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf");
        double seconds = p.doubleValue("seconds");
        long length = (long) (seconds * 1e9);
        ctx.out().line("XQ demo on " + ctx.device() + ": fg sends a task of " + p.longValue("n") + " x " + p.longValue("T")
                + " us every period (" + Math.round(p.doubleValue("load") * 100) + "% load), bg sends the same tasks back to back.");
        FgBgWorkload w = FgBgWorkload.calibrate(ctx, TaskShape.spins(p.intValue("n"), p.longValue("T")), p.doubleValue("load"), 5);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double standaloneMs = w.standaloneNanos / 1e6;

        ctx.out().line("1/4 standalone: fg alone for " + seconds / 2 + " s");
        ModeResult alone = runMode(ctx, w, Mode.standalone(), true, (long) (length / 2));
        alone.counts(alone.counts().plus(w.calibrationCounts));
        alone.note(String.format(Locale.ROOT, "fg alone: a task takes %.2f ms; this is the floor", standaloneMs));
        report.add(alone);

        ctx.out().line("2/4 native: both tenants, no scheduler, for " + seconds + " s");
        ModeResult nat = runMode(ctx, w, Mode.nativeMode(), false, length);
        nat.note(String.format(Locale.ROOT, "no scheduler: fg's commands wait behind bg's on the device; fg P99 is %.2fx standalone",
                nat.number("fg_p99_over_standalone")));
        report.add(nat);

        ctx.out().line("3/4 xq:hpf: both tenants, XQ with highest-priority-first (fg 2, bg 1), for " + seconds + " s");
        ModeResult hpf = runMode(ctx, w, Mode.xq("hpf"), false, length);
        double bgShare = Measures.ratio(hpf.number("bg_tasks_per_s"), nat.number("bg_tasks_per_s"));
        hpf.note(String.format(Locale.ROOT, "XQ suspends bg whenever fg has work: fg P99 is %.2fx standalone; bg keeps %.0f%% of its "
                + "native throughput", hpf.number("fg_p99_over_standalone"), bgShare * 100) + FgBgWorkload.stallNote(hpf));
        report.add(hpf);

        ctx.out().line("4/4 live switch: the same workload starts under native; at " + seconds / 2 + " s hpf is selected while it runs");
        ModeRun run = new ModeRun(ctx, Mode.xq(SchedulerControl.NATIVE).labelled("live"));
        w.addTenants(run, false, List.of(), List.of());
        long[] switchAt = {0};
        run.run(Duration.ofNanos(length), List.of(new ModeRun.TimedAction(Duration.ofNanos(length / 2), () -> {
            switchAt[0] = System.nanoTime();
            ctx.selectPolicy("hpf", 0);
            ctx.out().line("  selected hpf (queues keep running)");
        })));
        Counts live = run.finish(Duration.ofSeconds(60));
        ModeResult before = w.figures(run, run.startNanos() + FgBgWorkload.warmupNanos(seconds / 2), switchAt[0]);
        ModeResult after = w.figures(run, switchAt[0], run.endNanos());
        ModeResult b = relabel(before, "live (native)");
        ModeResult a = relabel(after, "live (->hpf)");
        a.counts(live);
        b.note(String.format(Locale.ROOT, "before the switch: fg P99 %.2f ms (%.2fx standalone)", b.number("fg_p99"),
                b.number("fg_p99_over_standalone")));
        a.note(String.format(Locale.ROOT, "after selecting hpf live: fg P99 %.2f ms (%.2fx standalone); counts cover the whole live run",
                a.number("fg_p99"), a.number("fg_p99_over_standalone")));
        report.add(b);
        report.add(a);
        for (ModeResult m : report.modes()) {
            m.put("bg_vs_native", Measures.round(Measures.ratio(m.number("bg_tasks_per_s"), nat.number("bg_tasks_per_s"))));
        }
        report.summary().put("standalone_task_ms", Measures.round(standaloneMs));
        report.note("fg latency = submit of a task's first command to the end of its last; P99/standalone divides by fg's task time alone");
        report.note("native and standalone send every command to the device at once; xq:hpf and the live run use the node's queue "
                + "defaults, so before the live switch the native policy resumes every queue but launching is still paced");
        report.barFigure("bg_tasks_per_s");
        report.barFigure("fg_p99");
        return report;
    }

    private static ModeResult runMode(ScenarioContext ctx, FgBgWorkload w, Mode mode, boolean fgOnly, long length) throws Exception {
        ModeRun run = new ModeRun(ctx, mode);
        w.addTenants(run, fgOnly, List.of(), List.of());
        run.run(Duration.ofNanos(length), List.of());
        Counts c = run.finish(Duration.ofSeconds(60));
        ModeResult m = w.figures(run, run.startNanos() + FgBgWorkload.warmupNanos(length / 1e9), run.endNanos());
        m.counts(c);
        return m;
    }

    private static ModeResult relabel(ModeResult m, String label) {
        ModeResult r = new ModeResult(label);
        m.figures().forEach(r::put);
        m.samples().forEach(r::samples);
        r.counts(m.counts());
        return r;
    }
}
