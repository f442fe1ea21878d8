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
import dev.xq.bench.scenario.PolicySettings;
import dev.xq.bench.scenario.QueueSettings;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.List;

/** A high-priority tenant that never pauses and a low-priority one waiting: hpf starves lp, hpf-aging must not. */
public final class AgingScenario implements Scenario {

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
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"),
                ParamSpec.integer("agingThreshold", 20_000, 0, 3_600_000_000L, "aging.threshold of hpf-aging for the run, us"),
                ParamSpec.decimal("agingRate", 1.0, 0.000001, 1_000_000, "aging.rate of hpf-aging for the run, levels per ms"),
                ParamSpec.integer("agingQuantum", 10_000, 1, 3_600_000_000L, "aging.quantum of hpf-aging for the run, us")));
        p.addAll(QueueSettings.params(0, 0, 0, -1));
        return p;
    }

    static final String AGING_PID = "dev.xq.policy.hpf-aging";
    static final int HP_PRIORITY = 2;
    static final int LP_PRIORITY = 1;

    /**
     * The longest time the task had work and none of its commands ran: release to the first
     * start, then each end to the next start, each clipped to [{@code from}, {@code to}] (a task
     * cut off by the run's end waits until then).
     */
    static long longestWaitNanos(TaskRecord r, long from, long to) {
        long longest = 0;
        long readyFrom = Math.max(r.releaseNanos(), from);
        for (var s : r.commands()) {
            var res = TaskRecord.resultOf(s);
            if (res == null) {
                return Math.max(longest, Math.max(0, to - readyFrom));
            }
            longest = Math.max(longest, Math.min(res.startNanos(), to) - readyFrom);
            readyFrom = Math.max(res.endNanos(), from);
        }
        return longest;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf", "hpf-aging");
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        ctx.onClose(PolicySettings.apply(ctx, AGING_PID, java.util.Map.of("aging.threshold", p.longValue("agingThreshold"),
                "aging.rate", p.doubleValue("agingRate"), "aging.quantum", p.longValue("agingQuantum"))));
        // hpf-aging's stated bound (its Javadoc and Metatype): threshold + (p_hi - p_lo + 1) / rate,
        // plus the work in flight when lp is resumed (at most two hp commands at the queue defaults),
        // plus one quantum: lp submits its next task the moment one ends, usually inside its own
        // quantum, and a queue that goes idle and ready again within its quantum counts as cut off,
        // so its wait runs from where that quantum would have ended.
        double boundMs = p.longValue("agingThreshold") / 1e3 + (HP_PRIORITY - LP_PRIORITY + 1) / p.doubleValue("agingRate")
                + p.longValue("agingQuantum") / 1e3 + 2 * p.longValue("T") / 1e3;
        double seconds = p.doubleValue("seconds");
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        double standaloneP99 = Double.NaN;
        dev.xq.api.QueueConfig cfg = QueueSettings.config(ctx.service().defaults(), p);
        List<Mode> modes = List.of(Mode.standalone(), cfg == null ? Mode.xq("hpf") : Mode.xq("hpf", cfg),
                cfg == null ? Mode.xq("hpf-aging") : Mode.xq("hpf-aging", cfg));
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            XQueue hp = run.queue("hp", "hp", Hint.MAX_PRIORITY, new Hint.Priority(HP_PRIORITY));
            // Two tasks outstanding: hp's queue never goes idle, so nothing else ever gets a gap under hpf.
            run.add(TaskStream.backToBack("hp", hp, run.ledger(), shape, 2));
            boolean alone = mode.label().equals("standalone");
            if (!alone) {
                XQueue lp = run.queue("lp", "lp", 0, new Hint.Priority(LP_PRIORITY));
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
                double maxLatency = 0;
                double maxWait = 0;
                for (TaskRecord r : lps.records()) {
                    // Tasks waiting or running in the measured window, as every figure; time before it does not
                    // count (the first task may start before hpf-aging's configuration for the run reached it).
                    if (r.releaseNanos() >= to || (r.ok() && r.endNanos() <= from)) {
                        continue;
                    }
                    // Waits are capped at the end of the run: after it hp stops, so lp no longer competes.
                    long end = r.ok() ? Math.min(r.endNanos(), to) : to;
                    maxLatency = Math.max(maxLatency, (end - r.releaseNanos()) / 1e6);
                    maxWait = Math.max(maxWait, longestWaitNanos(r, from, to) / 1e6);
                }
                double lpRate = Measures.tasksPerSecond(lps.records(), from, to);
                m.put("lp_max_wait", Measures.round(maxWait));
                m.put("lp_max_task_latency", Measures.round(maxLatency));
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
        report.note("lp_max_wait = the longest stretch in which lp had work and none of its commands ran (from a task's release "
                + "to its first command's start, and between one command's end and the next one's start): what hpf-aging bounds; "
                + "lp_max_task_latency = release to end of a whole lp task, several turns when a task needs more device time "
                + "than a quantum gives it");
        // The bound is kept by the policy's decisions (AgingBoundTest checks it on a simulated clock); on a
        // real node the decision that resumes lp comes from a timer, which the OS delivers late by its
        // own wake-up latency: measured here, in the same JVM, and added as the platform's term.
        long[] wake = Measures.osWakeLatencyNanos(4000);
        double wakeMaxMs = wake[wake.length - 1] / 1e6;
        report.summary().put("stated_bound_ms", Measures.round(boundMs));
        report.summary().put("os_wake_max_ms", Measures.round(wakeMaxMs));
        ModeResult aging = report.modes().getLast();
        report.goal(String.format(java.util.Locale.ROOT, "under xq:hpf-aging lp waits at most the stated bound %.1f ms "
                        + "(aging.threshold + (p_hi - p_lo + 1) / aging.rate + aging.quantum + two hp commands in flight)", boundMs),
                aging.number("lp_max_wait") <= boundMs, "lp_max_wait " + aging.figure("lp_max_wait") + " ms");
        report.goal(String.format(java.util.Locale.ROOT, "... plus this machine's timer lateness (its wake-up max %.1f ms): %.1f ms",
                        wakeMaxMs, boundMs + wakeMaxMs),
                aging.number("lp_max_wait") <= boundMs + wakeMaxMs, "lp_max_wait " + aging.figure("lp_max_wait") + " ms");
        report.goal("under xq:hpf lp starves (shown, not hidden)", report.modes().get(1).figure("lp_starved") == Boolean.TRUE,
                "lp " + report.modes().get(1).figure("lp_tasks_per_s") + " tasks/s");
        report.goal("under xq:hpf-aging lp is not starved", aging.number("lp_tasks_per_s") > 0,
                "lp " + aging.figure("lp_tasks_per_s") + " tasks/s, longest wait " + aging.figure("lp_max_wait") + " ms");
        report.barFigure("lp_tasks_per_s");
        report.barFigure("lp_max_wait");
        return report;
    }
}
