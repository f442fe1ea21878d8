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
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code awf}: active window first. Two interactive tenants, {@code w1} and {@code w2} (one group
 * each, as two desktop programs), release tasks periodically at a share of the device; a
 * background tenant {@code bg} runs the same tasks back to back. Nobody has a priority hint. The
 * active window starts with w1 and moves between w1 and w2 every {@code switch_ms}: the scenario
 * marks the newly active tenant's queue with a {@code window-active} hint whose mark is higher than
 * any before ({@link Hint.WindowActive#nextMark()}), and never clears the other, so the policy has
 * to take "most recent mark wins" from the marks alone. Every mode gets the same hints (natively
 * they change nothing).
 *
 * <p>A task counts as the active window's when its tenant had the active window from its submit
 * to its end; one during which the window moved counts for neither (figures {@code across_*}).
 * Figures: the active window's and the other window's task latency over the standalone task time,
 * the first task of the newly active tenant after each switch, bg's throughput against native.
 */
public final class AwfScenario implements Scenario {

    private static final String W1 = "w1";
    private static final String W2 = "w2";
    private static final String BG = "bg";
    private static final String PID = "dev.xq.policy.awf";
    private static final int DISPLAY = 0;

    @Override
    public String name() {
        return "awf";
    }

    @Override
    public String summary() {
        return "two interactive tenants periodic, the active window moving between them every switch_ms (window-active hints), bg "
                + "back to back, no priority hints; the active window's P99 vs standalone; modes standalone, native, xq:awf";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("load", 0.2, 0.01, 0.5, "each interactive tenant's load as a share of its standalone throughput"),
                ParamSpec.integer("switch_ms", 1000, 10, 3_600_000, "time between two moves of the active window, ms"),
                ParamSpec.integer("wait", -1, -1, 3_600_000_000L, "awf.guard.wait for the run in us (0 = no guard, 100 or more); "
                        + "-1 = the policy's setting"),
                ParamSpec.integer("window", 0, -1, 60_000_000, "XQ mode: w1's and w2's in-flight time budget in us; 0 = off (a task "
                        + "launched in batches of threshold/batch), -1 = the node's default (300 us: one 500 us command at a time)"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"),
                ParamSpec.integer("calibrate", 5, 1, 1000, "standalone tasks timed to derive the interactive tenants' period"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("awf");
        long wait = p.longValue("wait");
        if (wait > 0 && wait < 100) {
            throw new IllegalArgumentException("wait=" + wait + " is out of range; allowed: -1 (the policy's setting), 0 (no guard) "
                    + "or [100, 3600000000] us");
        }
        Map<String, Object> knobs = new LinkedHashMap<>();
        if (wait >= 0) {
            knobs.put("awf.guard.wait", wait);
            ctx.onClose(PolicySettings.apply(ctx, PID, knobs));
            ctx.out().line("policy awf set for this run: " + knobs);
        }
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        long switchNanos = p.longValue("switch_ms") * 1_000_000L;
        FgBgWorkload w = FgBgWorkload.calibrate(ctx, TaskShape.spins(p.intValue("n"), p.longValue("T")),
                p.doubleValue("load"), p.intValue("calibrate"));
        double standaloneMs = w.standaloneNanos / 1e6;
        List<Mode> modes = List.of(Mode.standalone(), Mode.nativeMode(), Mode.xq("awf"));
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            boolean alone = mode.label().equals("standalone");
            XQueue q1 = run.queue(W1, W1, 1);
            long window = p.longValue("window");
            if (window >= 0 && mode.config() == null) {
                q1.configure(q1.status().config().with("window", Long.toString(window)));
            }
            run.add(TaskStream.periodic(W1, q1, run.ledger(), w.shape, w.periodNanos));
            XQueue q2 = null;
            if (!alone) {
                q2 = run.queue(W2, W2, 1);
                if (window >= 0 && mode.config() == null) {
                    q2.configure(q2.status().config().with("window", Long.toString(window)));
                }
                // w2 half a period after w1, so that their releases do not coincide
                run.add(TaskStream.periodicFrom(W2, q2, run.ledger(), w.shape, w.periodNanos, System.nanoTime() + w.periodNanos / 2));
                XQueue bg = run.queue(BG, BG, 0);
                run.add(TaskStream.backToBack(BG, bg, run.ledger(), w.shape, 1));
            }
            // The active window: w1 from the start, then w2, w1, ... every switch_ms, each marked above every mark before.
            List<long[]> switches = new ArrayList<>(); // {moment, tenant 1 or 2}
            q1.hint(new Hint.WindowActive(DISPLAY, Hint.WindowActive.nextMark()));
            switches.add(new long[] {System.nanoTime(), 1});
            List<ModeRun.TimedAction> actions = new ArrayList<>();
            if (!alone) {
                XQueue[] qs = {q1, q2};
                for (long t = switchNanos, k = 1; t < (long) (seconds * 1e9); t += switchNanos, k++) {
                    int to = k % 2 == 1 ? 2 : 1;
                    actions.add(new ModeRun.TimedAction(Duration.ofNanos(t), () -> {
                        qs[to - 1].hint(new Hint.WindowActive(DISPLAY, Hint.WindowActive.nextMark()));
                        switches.add(new long[] {System.nanoTime(), to});
                    }));
                }
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), actions);
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            ModeResult m = figures(mode.label(), run, switches, from, to, standaloneMs);
            if (alone) {
                counts = counts.plus(w.calibrationCounts);
            }
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        double nativeBg = report.modes().get(1).number("bg_tasks_per_s");
        for (ModeResult m : report.modes()) {
            m.put("bg_vs_native", Measures.round(Measures.ratio(m.number("bg_tasks_per_s"), nativeBg)));
        }
        report.summary().put("standalone_task_ms", Measures.round(standaloneMs));
        report.note(String.format(Locale.ROOT, "w1, w2: %d x %d us every %.3f ms each (load %.2f), w2 half a period after w1; bg: the same "
                + "tasks back to back; no priority hints; the active window moves w1 -> w2 -> w1 ... every %d ms, by a window-active "
                + "hint on the newly active tenant's queue with a mark above every earlier one (the other's mark is left as it was)",
                p.intValue("n"), p.longValue("T"), w.periodNanos / 1e6, p.doubleValue("load"), p.longValue("switch_ms")));
        long win = p.longValue("window");
        report.note("xq:awf: w1's and w2's queues " + (win < 0 ? "have the node's default in-flight window" : win == 0
                ? "have no in-flight window (threshold and batch only): a task goes to the device in two launches, not a chain of 20 "
                + "launch round trips that a descheduled host thread can stretch (as in hhpf)" : "have an in-flight window of " + win + " us")
                + "; bg the node's defaults");
        report.note("awf knobs: " + (knobs.isEmpty() ? "the policy's configuration (defaults: awf.order priority, no guard)" : knobs + " for this run"));
        report.note("latency = submit of a task's first command to the end of its last; a task is the active window's when its tenant "
                + "was active from its first command's submit to its last one's end, the other window's when it was not active all that "
                + "time, and across_* when the window moved in between (left out of both); *_over_standalone divides by the standalone task time measured before the modes ("
                + Measures.round(standaloneMs) + " ms); switch_first_*: the newly active tenant's first task released after each switch");
        ModeResult awf = report.modes().get(2);
        ModeResult nat = report.modes().get(1);
        report.goal("under xq:awf the active window's tasks have P99 within 1.25 x the standalone task time",
                awf.number("active_p99_over_standalone") <= 1.25,
                "xq:awf " + awf.figure("active_p99_over_standalone") + " x (" + awf.figure("active_p99") + " ms), native "
                        + nat.figure("active_p99_over_standalone") + " x");
        double switches = awf.number("switches");
        report.goal("under xq:awf a switch moves the advantage at once: after every switch the newly active tenant's first task "
                        + "within 1.25 x the standalone task time, and the window left behind loses it (its P50 at least 1.25 x the active one's)",
                switches > 0 && awf.number("switch_first_within") == switches
                        && awf.number("inactive_p50") >= 1.25 * awf.number("active_p50"),
                "first tasks after " + (long) switches + " switches: " + (long) awf.number("switch_first_within") + " within 1.25 x (worst "
                        + awf.figure("switch_first_max_over_standalone") + " x); P50 active " + awf.figure("active_p50") + " ms, other window "
                        + awf.figure("inactive_p50") + " ms (native " + nat.figure("active_p50") + " / " + nat.figure("inactive_p50") + ")");
        report.goal("under xq:awf bg is not starved: it runs whenever the active window has no ready work (at least 0.9 of its native "
                + "throughput here)", awf.number("bg_vs_native") >= 0.9, "bg_vs_native " + awf.figure("bg_vs_native"));
        report.barFigure("active_p99");
        report.barFigure("inactive_p99");
        report.barFigure("bg_tasks_per_s");
        return report;
    }

    /** The mode's figures: tasks split by whether their tenant had the active window at release. */
    private static ModeResult figures(String label, ModeRun run, List<long[]> switches, long from, long to, double standaloneMs) {
        List<double[]> active = new ArrayList<>();
        List<double[]> inactive = new ArrayList<>();
        List<Double> firstAfterSwitch = new ArrayList<>();
        List<Double> across = new ArrayList<>();
        for (String tenant : List.of(W1, W2)) {
            TaskStream s = FgBgWorkload.stream(run, tenant);
            if (s == null) {
                continue;
            }
            int me = tenant.equals(W1) ? 1 : 2;
            List<TaskRecord> tasks = s.records();
            for (TaskRecord t : tasks) {
                long lat = t.latencyNanos();
                if (t.releaseNanos() < from || t.releaseNanos() >= to || lat < 0) {
                    continue;
                }
                if (switchWithin(switches, t.firstSubmitNanos(), t.endNanos())) {
                    across.add(lat / 1e6);
                } else {
                    (activeAt(switches, t.releaseNanos()) == me ? active : inactive).add(new double[] {lat / 1e6});
                }
            }
            // the first task of this tenant released after each switch to it (within the window)
            for (int i = 1; i < switches.size(); i++) {
                long[] sw = switches.get(i);
                if (sw[1] != me || sw[0] < from || sw[0] >= to) {
                    continue;
                }
                for (TaskRecord t : tasks) {
                    if (t.releaseNanos() >= sw[0]) {
                        if (t.latencyNanos() >= 0 && t.releaseNanos() < to) {
                            firstAfterSwitch.add(t.latencyNanos() / 1e6);
                        }
                        break;
                    }
                }
            }
        }
        ModeResult m = new ModeResult(label);
        double[] a = active.stream().mapToDouble(x -> x[0]).toArray();
        double[] b = inactive.stream().mapToDouble(x -> x[0]).toArray();
        Percentiles pa = Percentiles.of(a);
        Percentiles pb = Percentiles.of(b);
        m.put("active_p50", Measures.round(pa.at(50)));
        m.put("active_p99", Measures.round(pa.at(99)));
        m.put("active_p99_over_standalone", Measures.round(Measures.ratio(pa.at(99), standaloneMs)));
        m.put("inactive_p50", b.length == 0 ? Double.NaN : Measures.round(pb.at(50)));
        m.put("inactive_p99", b.length == 0 ? Double.NaN : Measures.round(pb.at(99)));
        m.put("inactive_p99_over_standalone", b.length == 0 ? Double.NaN : Measures.round(Measures.ratio(pb.at(99), standaloneMs)));
        double[] first = firstAfterSwitch.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(first);
        m.put("switches", first.length);
        m.put("switch_first_within", Arrays.stream(first).filter(x -> x <= 1.25 * standaloneMs).count());
        m.put("switch_first_max_over_standalone", first.length == 0 ? Double.NaN
                : Measures.round(Measures.ratio(first[first.length - 1], standaloneMs)));
        TaskStream bg = FgBgWorkload.stream(run, BG);
        m.put("bg_tasks_per_s", bg == null ? Double.NaN : Measures.round(Measures.tasksPerSecond(bg.records(), from, to)));
        m.put("active_tasks", a.length);
        m.put("inactive_tasks", b.length);
        m.put("across_tasks", across.size());
        m.put("across_p50", across.isEmpty() ? Double.NaN
                : Measures.round(Percentiles.of(across.stream().mapToDouble(Double::doubleValue).toArray()).at(50)));
        m.samples("active window task latency ms", a);
        if (b.length > 0) {
            m.samples("other window task latency ms", b);
        }
        return m;
    }

    /** @return whether the active window moved in (from, to] */
    private static boolean switchWithin(List<long[]> switches, long from, long to) {
        for (int i = 1; i < switches.size(); i++) {
            long at = switches.get(i)[0];
            if (at > from && at <= to) {
                return true;
            }
        }
        return false;
    }

    /** @return the tenant (1 or 2) that had the active window at {@code nanos} */
    private static int activeAt(List<long[]> switches, long nanos) {
        int who = (int) switches.getFirst()[1];
        for (long[] sw : switches) {
            if (sw[0] <= nanos) {
                who = (int) sw[1];
            }
        }
        return who;
    }
}
