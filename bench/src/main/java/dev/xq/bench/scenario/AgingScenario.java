package dev.xq.bench.scenario;

import java.time.Duration;
import java.util.List;

import dev.xq.api.Hint;
import dev.xq.api.XQueue;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;

/** A high-priority tenant that never pauses and a low-priority one waiting: hpf starves lp, hpf-aging must not. */
final class AgingScenario implements Scenario {

    @Override
    public String name() {
        return "aging";
    }

    @Override
    public String summary() {
        return "hp back to back forever, lp one task waiting; modes standalone (hp alone), xq:hpf (lp starves), xq:hpf-aging";
    }

    @Override
    public List<ParamSpec> params() {
        List<ParamSpec> p = new java.util.ArrayList<>(List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode")));
        p.addAll(QueueSettings.params(0, 0, 0, -1));
        return p;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf", "hpf-aging");
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        double standaloneP99 = Double.NaN;
        dev.xq.api.QueueConfig cfg = QueueSettings.config(ctx.service().defaults(), p);
        List<Mode> modes = List.of(Mode.standalone(), cfg == null ? Mode.xq("hpf") : Mode.xq("hpf", cfg),
                cfg == null ? Mode.xq("hpf-aging") : Mode.xq("hpf-aging", cfg));
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            XQueue hp = run.queue("hp", "hp", Hint.MAX_PRIORITY, new Hint.Priority(2));
            // Two tasks outstanding: hp's queue never goes idle, so nothing else ever gets a gap under hpf.
            run.add(TaskStream.backToBack("hp", hp, run.ledger(), shape, 2));
            boolean alone = mode.label().equals("standalone");
            if (!alone) {
                XQueue lp = run.queue("lp", "lp", 0, new Hint.Priority(1));
                run.add(TaskStream.backToBack("lp", lp, run.ledger(), shape, 1));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            // Stop hp first: under hpf lp runs only once hp has drained.
            var counts = run.finish(Duration.ofSeconds(120));
            double[] hpMs = Measures.latencyMillis(FgBgWorkload.stream(run, "hp").records(), from, to);
            Percentiles hpP = Percentiles.of(hpMs);
            if (alone) {
                standaloneP99 = hpP.at(99);
            }
            ModeResult m = new ModeResult(mode.label());
            m.put("hp_p99", Measures.round(hpP.at(99)));
            m.put("hp_p99_over_standalone", Measures.round(Measures.ratio(hpP.at(99), standaloneP99)));
            TaskStream lps = FgBgWorkload.stream(run, "lp");
            if (lps == null) {
                m.put("lp_max_wait", Double.NaN);
                m.put("lp_tasks_per_s", Double.NaN);
            } else {
                double maxWait = 0;
                for (TaskRecord r : lps.records()) {
                    if (r.releaseNanos() >= to) {
                        continue;
                    }
                    // Waits are capped at the end of the run: after it hp stops, so lp no longer competes.
                    long end = r.ok() ? Math.min(r.endNanos(), to) : to;
                    maxWait = Math.max(maxWait, (end - r.releaseNanos()) / 1e6);
                }
                double lpRate = Measures.tasksPerSecond(lps.records(), from, to);
                m.put("lp_max_wait", Measures.round(maxWait));
                m.put("lp_tasks_per_s", Measures.round(lpRate));
                m.put("lp_starved", lpRate == 0);
                if (lpRate == 0) {
                    m.note("lp starved: no lp task completed in the measured " + Measures.round((to - from) / 1e9)
                            + " s; its wait is capped at the run's end");
                }
            }
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note((m.note().isEmpty() ? "" : m.note() + "; ") + run.drainNote());
            }
            report.add(m);
        }
        report.note("hp keeps two tasks submitted at all times; lp keeps one; hp latency includes waiting behind its own previous task");
        ModeResult aging = report.modes().getLast();
        report.goal("under xq:hpf-aging lp is not starved", aging.number("lp_tasks_per_s") > 0,
                "lp " + aging.figure("lp_tasks_per_s") + " tasks/s, longest wait " + aging.figure("lp_max_wait") + " ms");
        report.barFigure("lp_tasks_per_s");
        report.barFigure("lp_max_wait");
        return report;
    }
}
