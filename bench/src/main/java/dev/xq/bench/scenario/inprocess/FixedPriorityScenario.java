package dev.xq.bench.scenario.inprocess;

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
import dev.xq.bench.workload.TaskShape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** XSched §7.2 / Fig. 9: a periodic foreground tenant over a back-to-back background tenant, policy hpf. */
public final class FixedPriorityScenario implements Scenario {

    @Override
    public String name() {
        return "fixed-priority";
    }

    @Override
    public String summary() {
        return "fg tasks periodic at a share of its standalone throughput over bg back to back; modes standalone, native, xq:hpf (+prio on a GPU)";
    }

    @Override
    public List<ParamSpec> params() {
        List<ParamSpec> p = new ArrayList<>(List.of(
                ParamSpec.integer("T", 500, 0, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("load", 0.2, 0.01, 1.0, "fg load as a share of its standalone throughput"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"),
                ParamSpec.integer("calibrate", 5, 1, 1000, "standalone tasks timed to derive fg's period"),
                ParamSpec.integer("fg_window", -1, -1, 1_000_000, "xq mode: fg's own window in us (0: none), bg keeps the "
                        + "mode's; -1: the same as bg's"),
                ParamSpec.decimal("warmup", 2, 0, 600, "seconds of both tenants (half under hpf, half fg alone) run before "
                        + "calibration and not measured, so that the JIT has compiled the paths; 0: none")));
        p.addAll(QueueSettings.params(0, 0, 0, -1));
        return p;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf");
        QueueConfig xqConfig = QueueSettings.config(ctx.service().defaults(), p);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        Mode xqMode = xqConfig == null ? Mode.xq("hpf") : Mode.xq("hpf", xqConfig);
        var warm = FgBgWorkload.warmUp(ctx, TaskShape.spins(p.intValue("n"), p.longValue("T")), p.doubleValue("load"),
                p.doubleValue("warmup"), xqMode);
        FgBgWorkload w = FgBgWorkload.calibrate(ctx, TaskShape.spins(p.intValue("n"), p.longValue("T")),
                p.doubleValue("load"), p.intValue("calibrate"));
        List<Mode> modes = new ArrayList<>(List.of(Mode.standalone(), Mode.nativeMode()));
        if (ctx.gpu()) {
            modes.add(Mode.prio());
        }
        modes.add(xqMode);
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + (mode.policy().equals("hpf") ? " (" + QueueSettings.describe(xqConfig) + ")" : "")
                    + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            w.addTenants(run, mode.label().equals("standalone"), List.of(), List.of());
            long fgWindow = p.longValue("fg_window");
            if (mode == xqMode && fgWindow >= 0) {
                XQueue fg = FgBgWorkload.stream(run, FgBgWorkload.FG).queue();
                fg.configure(fg.status().config().withWindowMicros(fgWindow));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            // the preemption level bg's queue had (what a suspend of it could do): 1 block, 2 deactivate, 3 interrupt
            int bgLevel = mode == xqMode ? FgBgWorkload.stream(run, FgBgWorkload.BG).queue().status().level().number() : 0;
            var counts = run.finish(Duration.ofSeconds(60));
            ModeResult m = w.figures(run, run.startNanos() + FgBgWorkload.warmupNanos(seconds), run.endNanos());
            if (bgLevel > 0) {
                report.summary().put("xq_bg_level", bgLevel);
            }
            if (mode.label().equals("standalone")) {
                counts = counts.plus(w.calibrationCounts).plus(warm);
            }
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        double nativeBg = Double.NaN;
        for (ModeResult m : report.modes()) {
            if (m.mode().equals("native")) {
                nativeBg = m.number("bg_tasks_per_s");
            }
        }
        for (ModeResult m : report.modes()) {
            m.put("bg_vs_native", Measures.round(Measures.ratio(m.number("bg_tasks_per_s"), nativeBg)));
        }
        report.summary().put("standalone_task_ms", Measures.round(w.standaloneNanos / 1e6));
        report.summary().put("fg_period_ms", Measures.round(w.periodNanos / 1e6));
        report.note("fg latency = submit of a task's first command to the end of its last; fg_p99_over_standalone divides by the "
                + "standalone task time measured before the modes (" + Measures.round(w.standaloneNanos / 1e6) + " ms)");
        ModeResult xq = report.modes().getLast();
        ModeResult nat = report.modes().get(1);
        report.goal("xq:hpf fg P99 is below native's", xq.number("fg_p99") < nat.number("fg_p99"),
                "xq:hpf " + xq.figure("fg_p99") + " ms, native " + nat.figure("fg_p99") + " ms");
        // the standalone tenant's own spread: a host that adds noise to a tenant alone shows here
        for (ModeResult m : report.modes()) {
            if (m.mode().equals("standalone")) {
                double spread = Measures.ratio(m.number("fg_p99"), m.number("fg_p50"));
                report.summary().put("standalone_p99_over_p50", Measures.round(spread));
                report.goal("standalone P99 <= 1.05 x its own median", spread <= 1.05,
                        "P99 " + m.figure("fg_p99") + " ms, median " + m.figure("fg_p50") + " ms: " + String.format(java.util.Locale.ROOT, "%.3f", spread)
                                + FgBgWorkload.stallNote(m));
            }
        }
        report.goal("xq:hpf fg P99 <= 1.10 x the standalone task time", xq.number("fg_p99_over_standalone") <= 1.10,
                xq.figure("fg_p99_over_standalone") + FgBgWorkload.stallNote(xq));
        report.goal("xq:hpf bg throughput >= 0.97 x native's", xq.number("bg_vs_native") >= 0.97,
                String.valueOf(xq.figure("bg_vs_native")));
        report.barFigure("bg_tasks_per_s");
        report.barFigure("fg_p99");
        return report;
    }
}
