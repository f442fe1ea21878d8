package dev.xq.bench.scenario;

import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.bench.report.Counts;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The two-tenant workload of XSched's fixed-priority experiment: a foreground tenant whose
 * tasks arrive periodically at a fraction of its standalone throughput, and a background
 * tenant issuing the same tasks back to back. Shared by {@code fixed-priority}, {@code hot-swap}
 * and the demo.
 */
public final class FgBgWorkload {

    public static final String FG = "fg";
    public static final String BG = "bg";
    static final int FG_PRIORITY = 2;
    static final int BG_PRIORITY = 1;
    /** Stream priorities for {@code prio} mode: higher is more urgent; the driver maps them to its range. */
    public static final int FG_STREAM_PRIORITY = Hint.MAX_PRIORITY;
    public static final int BG_STREAM_PRIORITY = 0;

    public final TaskShape shape;
    final double load;
    /** Median task time of fg alone, ns. */
    public final long standaloneNanos;
    public final long periodNanos;
    /** What calibration submitted. */
    public final Counts calibrationCounts;

    private FgBgWorkload(TaskShape shape, double load, long standaloneNanos, Counts calibrationCounts) {
        this.shape = shape;
        this.load = load;
        this.standaloneNanos = standaloneNanos;
        this.periodNanos = Math.max(1, (long) (standaloneNanos / load));
        this.calibrationCounts = calibrationCounts;
    }

    /**
     * Runs the two tenants through the paths the modes will take, unmeasured, so that the JIT has
     * compiled them before anything is timed: for half of {@code seconds} fg (periodic at
     * {@code load} of the task's ideal time) and bg back to back under {@code policy}, then fg
     * alone for the other half. Without it the first mode (standalone) and the calibration ran
     * partly in interpreted and C1 code: on the H100 the first second's tasks spent 140-150 us
     * after their first launch inside the engine (decision and bookkeeping), 40-50 us once
     * compiled (issue 13). @return what the warm-up submitted (every command ended)
     */
    public static Counts warmUp(ScenarioContext ctx, TaskShape shape, double load, double seconds, Mode xq) throws Exception {
        Counts total = new Counts(0, 0, 0, 0);
        if (seconds <= 0) {
            return total;
        }
        long micros = shape.command() instanceof dev.xq.api.Command.Spin spin ? spin.micros() : 100;
        long ideal = Math.max(1000, shape.count() * micros * 1000L);
        FgBgWorkload w = new FgBgWorkload(shape, load, ideal, total);
        for (Mode mode : List.of(xq.labelled("warm-up " + xq.label()), Mode.standalone().labelled("warm-up standalone"))) {
            ModeRun run = new ModeRun(ctx, mode);
            w.addTenants(run, mode.label().endsWith("standalone"), List.of(), List.of());
            run.run(Duration.ofNanos((long) (seconds / 2 * 1e9)), List.of());
            Counts c = run.finish(Duration.ofSeconds(60));
            if (c.lost() != 0 || c.failed() != 0) {
                throw new IllegalStateException("warm-up " + mode.label() + ": " + c + "; every command must complete");
            }
            total = total.plus(c);
        }
        ctx.out().line(String.format(Locale.ROOT, "  warm-up: %.1f s (%d commands), not measured", seconds, total.submitted()));
        return total;
    }

    /**
     * Measures fg's standalone task time (fg alone, no scheduler, unthrottled), task after task,
     * and derives the release period for {@code load}.
     */
    public static FgBgWorkload calibrate(ScenarioContext ctx, TaskShape shape, double load, int tasks) throws Exception {
        ModeRun run = new ModeRun(ctx, Mode.standalone().labelled("calibration"));
        XQueue q = run.queue("calibrate", FG, FG_STREAM_PRIORITY);
        double[] ms = closedLoop(run, q, shape, tasks + 1);
        Counts c = run.finish(Duration.ofSeconds(30));
        // The first task pays for warm-up (code paths, device context); leave it out.
        double[] steady = java.util.Arrays.copyOfRange(ms, 1, ms.length);
        long median = (long) (Percentiles.of(steady).at(50) * 1e6);
        if (median <= 0) {
            throw new IllegalStateException("calibration measured a task time of " + median + " ns; expected > 0");
        }
        String period = load < 1 ? String.format(Locale.ROOT, "; fg period at load %.2f: %.3f ms", load, median / load / 1e6) : "";
        ctx.out().line(String.format(Locale.ROOT, "  standalone task time %.3f ms (median of %d tasks of %d x %s)%s",
                median / 1e6, steady.length, shape.count(), shape.command(), period));
        return new FgBgWorkload(shape, load, median, c);
    }

    /** Runs {@code tasks} tasks one after the other on {@code q} and returns each one's latency in ms. */
    static double[] closedLoop(ModeRun run, XQueue q, TaskShape shape, int tasks) throws InterruptedException {
        double[] ms = new double[tasks];
        for (int i = 0; i < tasks; i++) {
            List<Submission> subs = new ArrayList<>();
            for (int k = 0; k < shape.count(); k++) {
                subs.add(run.ledger().submit(q, shape.command()));
            }
            CommandResult last = subs.getLast().await();
            CommandResult first = subs.getFirst().await();
            ms[i] = (last.endNanos() - first.submitNanos()) / 1e6;
        }
        return ms;
    }

    /**
     * Opens fg (and bg unless {@code fgOnly}) for {@code mode} and adds their streams to {@code run}.
     * @param extraFg more hints for fg (e.g. a deadline), after its priority
     */
    public void addTenants(ModeRun run, boolean fgOnly, List<Hint> extraFg, List<Hint> extraBg) {
        List<Hint> fgHints = new ArrayList<>(List.of(new Hint.Priority(FG_PRIORITY)));
        fgHints.addAll(extraFg);
        XQueue fg = run.queue(FG, FG, FG_STREAM_PRIORITY, fgHints.toArray(Hint[]::new));
        run.add(TaskStream.periodic(FG, fg, run.ledger(), shape, periodNanos));
        if (!fgOnly) {
            List<Hint> bgHints = new ArrayList<>(List.of(new Hint.Priority(BG_PRIORITY)));
            bgHints.addAll(extraBg);
            XQueue bg = run.queue(BG, BG, BG_STREAM_PRIORITY, bgHints.toArray(Hint[]::new));
            run.add(TaskStream.backToBack(BG, bg, run.ledger(), shape, 1));
        }
    }

    /**
     * What a reader needs when host stalls ({@link Measures#hostStalled}) were in a mode's fg tasks:
     * how many, and the P99 over standalone without them; empty when there were none.
     */
    public static String stallNote(ModeResult m) {
        double n = m.number("fg_host_stalled_tasks");
        if (!(n > 0)) {
            return "";
        }
        return String.format(java.util.Locale.ROOT, "; %d of %d fg tasks in %s met a host stall (%.1f ms or more of CPU charged to "
                + "submitting one task: the VM's host took the vCPU away, not XQ; docs/performance.md), fg P99 without them %.3f x",
                (long) n, (long) m.number("fg_tasks"), m.mode(), Measures.STALL_CPU_NANOS / 1e6,
                m.number("fg_p99_over_standalone_unstalled"));
    }

    /**
     * The fixed-priority figures of one run within [from, to): fg latency percentiles, fg P99
     * over the standalone task time, bg throughput.
     */
    public ModeResult figures(ModeRun run, long from, long to) {
        ModeResult m = new ModeResult(run.mode().label());
        TaskStream fg = stream(run, FG);
        TaskStream bg = stream(run, BG);
        double[] fgMs = Measures.latencyMillis(fg.records(), from, to);
        Percentiles p = Percentiles.of(fgMs);
        m.put("fg_p50", Measures.round(p.at(50)));
        m.put("fg_p99", Measures.round(p.at(99)));
        m.put("fg_p99_over_standalone", Measures.round(Measures.ratio(p.at(99), standaloneNanos / 1e6)));
        m.put("bg_tasks_per_s", bg == null ? Double.NaN : Measures.round(Measures.tasksPerSecond(bg.records(), from, to)));
        m.put("fg_tasks", fgMs.length);
        // tasks whose submitting thread the host stalled (Measures.hostStalled), and the P99 without them
        boolean[] stalled = Measures.hostStalled(fg.records(), from, to);
        int nStalled = 0;
        double[] clean = new double[fgMs.length];
        int nClean = 0;
        for (int i = 0; i < fgMs.length; i++) {
            if (stalled[i]) {
                nStalled++;
            } else {
                clean[nClean++] = fgMs[i];
            }
        }
        m.put("fg_host_stalled_tasks", nStalled);
        m.put("fg_p99_over_standalone_unstalled", nClean == 0 ? Double.NaN
                : Measures.round(Measures.ratio(Percentiles.of(java.util.Arrays.copyOf(clean, nClean)).at(99), standaloneNanos / 1e6)));
        // where the slowest fg tasks' time goes (issue 13): launch = first submit to device start,
        // gaps = device idle between the task's commands, device = the commands' own device time
        // (a task slow in it alone, with no other tenant, met a slower device, not a host hiccup);
        // slowest 1 % against the median band
        double[] bd = Measures.breakdownMicros(fg.records(), from, to);
        m.put("fg_slow_launch_us", bd[0]);
        m.put("fg_slow_gaps_us", bd[1]);
        m.put("fg_slow_device_us", bd[2]);
        m.put("fg_slow_submit_us", bd[3]);
        m.put("fg_slow_submit_cpu_us", bd[4]);
        m.put("fg_med_launch_us", bd[5]);
        m.put("fg_med_gaps_us", bd[6]);
        m.put("fg_med_device_us", bd[7]);
        m.put("fg_med_submit_us", bd[8]);
        m.put("fg_med_submit_cpu_us", bd[9]);
        // the first command's submit to the second's: the device had only the first meanwhile
        m.put("fg_slow_first_submit_us", bd[10]);
        m.put("fg_med_first_submit_us", bd[11]);
        if (bg != null) {
            // where the device idles with both tenants on it (bg's throughput against native's)
            double[] idle = Measures.deviceIdle(fg.records(), bg.records(), from, to);
            m.put("idle_pct", idle[0]);
            m.put("idle_bg_cmd_pct", idle[1]);
            m.put("idle_bg_task_pct", idle[2]);
            m.put("idle_resume_pct", idle[3]);
            m.put("idle_fg_pct", idle[4]);
            m.put("bg_cmd_us", idle[5]);
        }
        m.samples("fg task latency ms", fgMs);
        writeTimelines(run, fg, bg, from, to);
        return m;
    }

    /**
     * With {@code XQ_BENCH_TIMELINES} naming a folder, appends the slowest and median fg tasks'
     * device timelines ({@link Measures#timelines}) to {@code <folder>/timelines.txt}: a
     * diagnostic for reading what happened around a slow task (bench/README.md).
     */
    private void writeTimelines(ModeRun run, TaskStream fg, TaskStream bg, long from, long to) {
        String dir = System.getenv("XQ_BENCH_TIMELINES");
        if (dir == null || dir.isBlank()) {
            return;
        }
        String text = "== " + java.time.Instant.now() + " mode " + run.mode().label() + ", standalone task "
                + Measures.round(standaloneNanos / 1e6) + " ms, period " + Measures.round(periodNanos / 1e6) + " ms\n"
                + Measures.timelines(fg.records(), bg == null ? null : bg.records(), from, to, 8, 300_000, run.startNanos());
        try {
            java.nio.file.Path d = java.nio.file.Path.of(dir);
            java.nio.file.Files.createDirectories(d);
            java.nio.file.Files.writeString(d.resolve("timelines.txt"), text, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
        } catch (java.io.IOException e) {
            System.err.println("XQ_BENCH_TIMELINES: cannot write to " + dir + ": " + e.getMessage());
        }
    }

    public static TaskStream stream(ModeRun run, String tenant) {
        for (TaskStream s : run.streams()) {
            if (s.tenant().equals(tenant)) {
                return s;
            }
        }
        return null;
    }

    /** @return the warm-up left out of a run of {@code seconds} */
    public static long warmupNanos(double seconds) {
        return (long) (Math.min(1.0, seconds * 0.1) * 1e9);
    }
}
