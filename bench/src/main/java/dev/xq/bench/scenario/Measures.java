package dev.xq.bench.scenario;

import dev.xq.api.CommandResult;
import dev.xq.api.Submission;
import dev.xq.bench.stats.Interval;
import dev.xq.bench.workload.TaskRecord;
import java.util.ArrayList;
import java.util.List;

/** Figures computed from task records within a measurement window [from, to). */
public final class Measures {

    private Measures() {
    }

    /** @return latencies in ms of the tasks released in [from, to) that completed */
    public static double[] latencyMillis(List<TaskRecord> tasks, long from, long to) {
        List<Double> out = new ArrayList<>();
        for (TaskRecord t : tasks) {
            if (t.releaseNanos() >= from && t.releaseNanos() < to) {
                long l = t.latencyNanos();
                if (l >= 0) {
                    out.add(l / 1e6);
                }
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** A task's submit CPU at or over this, and {@link #STALL_OVER_MEDIAN} x the median's, is a host stall ({@link #hostStalled}). */
    public static final long STALL_CPU_NANOS = 2_000_000L;
    /** See {@link #STALL_CPU_NANOS}. */
    public static final int STALL_OVER_MEDIAN = 5;

    /**
     * Which tasks released in [from, to) met a host stall: their submitting thread was charged at
     * least {@link #STALL_CPU_NANOS} and {@link #STALL_OVER_MEDIAN} x the median task's CPU for
     * submitting the task's commands. On a VM whose host takes a vCPU away without the guest being
     * told (no steal time), the guest charges the whole absence to the thread it was running: on the
     * 2-vCPU build VM a sampling profiler saw no sample of any of the node's threads for the ~3 ms
     * such a task's submit was charged (docs/performance.md, session 88). Tasks without a submit CPU
     * reading (-1) are never counted. @return one flag per task of {@code latencyMillis}'s order
     */
    public static boolean[] hostStalled(List<TaskRecord> tasks, long from, long to) {
        List<Long> cpu = new ArrayList<>();
        for (TaskRecord t : tasks) {
            if (t.releaseNanos() >= from && t.releaseNanos() < to && t.latencyNanos() >= 0) {
                cpu.add(t.submitCpuNanos());
            }
        }
        long[] known = cpu.stream().mapToLong(Long::longValue).filter(c -> c >= 0).sorted().toArray();
        boolean[] out = new boolean[cpu.size()];
        if (known.length == 0) {
            return out;
        }
        long bar = Math.max(STALL_CPU_NANOS, STALL_OVER_MEDIAN * known[known.length / 2]);
        for (int i = 0; i < out.length; i++) {
            out[i] = cpu.get(i) >= bar;
        }
        return out;
    }

    /**
     * Where the device is idle while two tenants share it (issue 13: what bg's throughput loses
     * under a policy against native). The commands of both tenants' completed tasks released in
     * [from, to) are merged in device time; each idle span between them is charged to what ended
     * before it and what starts after it. Ends seen by the completion thread come a few µs after
     * the device's, so spans are a little short; the split is what counts. @return {idle total,
     * bg within a task (bg's next command not there in time), bg between tasks (the tenant's next
     * task not there in time), fg then bg (bg resumed late), before fg (an fg command not there
     * in time)} as % of [from, to), then bg's median command time in µs (a level-2 guard adds to
     * it); NaN without commands
     */
    static double[] deviceIdle(List<TaskRecord> fg, List<TaskRecord> bg, long from, long to) {
        List<long[]> cmds = new ArrayList<>(); // {start, end, tenant (0 fg, 1 bg), task}
        collect(fg, 0, from, to, cmds);
        collect(bg, 1, from, to, cmds);
        double[] out = new double[6];
        java.util.Arrays.fill(out, Double.NaN);
        if (cmds.isEmpty() || to <= from) {
            return out;
        }
        cmds.sort(java.util.Comparator.comparingLong(c -> c[0]));
        double[] idle = new double[5];
        long[] last = cmds.getFirst(); // the command whose end is the latest so far
        List<Long> bgTimes = new ArrayList<>();
        for (long[] c : cmds) {
            if (c[2] == 1) {
                bgTimes.add(c[1] - c[0]);
            }
            if (c == cmds.getFirst()) {
                continue;
            }
            if (c[0] > last[1]) {
                long gap = c[0] - last[1];
                int kind = c[2] == 0 ? 4 : last[2] == 0 ? 3 : last[3] == c[3] ? 1 : 2;
                idle[kind] += gap;
                idle[0] += gap;
            }
            if (c[1] > last[1]) {
                last = c;
            }
        }
        for (int k = 0; k < 5; k++) {
            out[k] = Math.round(idle[k] * 100.0 / (to - from) * 1000) / 1000.0;
        }
        if (!bgTimes.isEmpty()) {
            bgTimes.sort(null);
            out[5] = Math.round(bgTimes.get(bgTimes.size() / 2) / 100.0) / 10.0;
        }
        return out;
    }

    private static void collect(List<TaskRecord> tasks, int tenant, long from, long to, List<long[]> out) {
        if (tasks == null) {
            return;
        }
        int index = 0;
        for (TaskRecord t : tasks) {
            index++;
            if (t.releaseNanos() < from || t.releaseNanos() >= to || !t.ok()) {
                continue;
            }
            for (Submission s : t.commands()) {
                CommandResult r = TaskRecord.resultOf(s);
                out.add(new long[] {r.startNanos(), r.endNanos(), tenant, index});
            }
        }
    }

    /**
     * Where the time of the slowest tasks goes, against the median ones: for each completed task
     * released in [from, to), from its commands' results, {@code launch} = the first command's
     * submit to its device start, {@code gaps} = the device's idle time between the task's
     * commands (a command started after the previous one ended), {@code device} = the commands'
     * device time, {@code submit} = the first command's submit to the last one's (how long the
     * submitting thread took to hand the task over), {@code cpu} = the CPU time the submitting
     * thread spent on it (NaN when not measured; submit much above cpu: the thread was off the
     * CPU), {@code first} = the first command's submit to the second one's (how long the device
     * had the task's first command only: on a slow host the thread's cold first submit is where
     * the task loses its time; NaN for tasks of one command). @return {slow launch, slow gaps,
     * slow device, slow submit, slow cpu, median launch, median gaps, median device, median
     * submit, median cpu, slow first, median first} in µs: means over the tasks at or above the
     * 99th latency percentile and over those between the 45th and 55th; NaN without tasks
     */
    static double[] breakdownMicros(List<TaskRecord> tasks, long from, long to) {
        List<long[]> rows = new ArrayList<>(); // {latency, launch, gaps, device, submit, cpu, first}
        for (TaskRecord t : tasks) {
            if (t.releaseNanos() < from || t.releaseNanos() >= to || !t.ok()) {
                continue;
            }
            long launch = -1;
            long gaps = 0;
            long device = 0;
            long prevEnd = -1;
            long firstSubmit = -1;
            long lastSubmit = -1;
            long first = -1;
            for (Submission s : t.commands()) {
                CommandResult r = TaskRecord.resultOf(s);
                if (firstSubmit >= 0 && first < 0) {
                    first = r.submitNanos() - firstSubmit;
                }
                firstSubmit = firstSubmit < 0 ? r.submitNanos() : firstSubmit;
                lastSubmit = r.submitNanos();
                if (launch < 0) {
                    launch = r.startNanos() - r.submitNanos();
                }
                if (prevEnd >= 0 && r.startNanos() > prevEnd) {
                    gaps += r.startNanos() - prevEnd;
                }
                device += r.endNanos() - r.startNanos();
                prevEnd = Math.max(prevEnd, r.endNanos());
            }
            rows.add(new long[] {t.latencyNanos(), launch, gaps, device, lastSubmit - firstSubmit, t.submitCpuNanos(), first});
        }
        double[] out = new double[12];
        java.util.Arrays.fill(out, Double.NaN);
        if (rows.isEmpty()) {
            return out;
        }
        rows.sort(java.util.Comparator.comparingLong(r -> r[0]));
        int n = rows.size();
        int slowFrom = Math.min(n - 1, (int) Math.floor(n * 0.99));
        List<long[]> slow = rows.subList(slowFrom, n);
        List<long[]> median = rows.subList((int) (n * 0.45), Math.max((int) (n * 0.45) + 1, (int) (n * 0.55)));
        for (int k = 0; k < 5; k++) {
            out[k] = mean(slow, k + 1);
            out[5 + k] = mean(median, k + 1);
        }
        out[10] = mean(slow, 6);
        out[11] = mean(median, 6);
        return out;
    }

    /** @return the mean of column {@code k} in µs; NaN if any row lacks it (negative) */
    private static double mean(List<long[]> rows, int k) {
        double sum = 0;
        for (long[] r : rows) {
            if (r[k] < 0) {
                return Double.NaN;
            }
            sum += r[k];
        }
        return round(sum / rows.size() / 1e3);
    }

    /**
     * The device timelines of the slowest fg tasks and of the median ones, for reading by eye
     * (issue 13: what happened around a slow task). For each of the {@code count} slowest
     * completed tasks released in [from, to), and {@code count} around the median: its latency,
     * the CPU time its submitting thread spent, and every command of both tenants that ended
     * after {@code leadNanos} before the task's first submit and started before its last end,
     * as submit, device start and device end in µs from that first submit. bg's commands show
     * what ran on the device when fg arrived and between fg's commands. Each task says when it was
     * released, in seconds from {@code originNanos} (the mode's start: its progress lines are
     * printed at whole seconds from there), so that slow tasks can be matched to what else
     * happened at that moment.
     */
    static String timelines(List<TaskRecord> fg, List<TaskRecord> bg, long from, long to, int count, long leadNanos, long originNanos) {
        List<TaskRecord> done = new ArrayList<>();
        for (TaskRecord t : fg) {
            if (t.releaseNanos() >= from && t.releaseNanos() < to && t.ok()) {
                done.add(t);
            }
        }
        StringBuilder out = new StringBuilder();
        if (done.isEmpty()) {
            return out.toString();
        }
        done.sort(java.util.Comparator.comparingLong(TaskRecord::latencyNanos));
        int n = done.size();
        List<TaskRecord> picked = new ArrayList<>(done.subList(Math.max(0, n - count), n).reversed());
        int mid = Math.max(0, n / 2 - count / 2);
        List<TaskRecord> median = done.subList(mid, Math.min(n, mid + count));
        List<long[]> others = new ArrayList<>(); // {submit, start, end, task} of bg
        if (bg != null) {
            int index = 0;
            for (TaskRecord t : bg) {
                index++;
                for (Submission s : t.commands()) {
                    CommandResult r = TaskRecord.resultOf(s);
                    if (r != null) {
                        others.add(new long[] {r.submitNanos(), r.startNanos(), r.endNanos(), index});
                    }
                }
            }
        }
        for (List<TaskRecord> group : List.of(picked, median)) {
            out.append(group == picked ? "slowest\n" : "median\n");
            for (TaskRecord t : group) {
                long t0 = t.firstSubmitNanos();
                long end = t.endNanos();
                out.append(String.format(java.util.Locale.ROOT, "task latency %.1f us, submit cpu %.1f us, released at %.3f s%n",
                        t.latencyNanos() / 1e3, t.submitCpuNanos() < 0 ? Double.NaN : t.submitCpuNanos() / 1e3,
                        (t.releaseNanos() - originNanos) / 1e9));
                List<String[]> rows = new ArrayList<>();
                int k = 0;
                for (Submission s : t.commands()) {
                    CommandResult r = TaskRecord.resultOf(s);
                    rows.add(row(r.startNanos(), "fg " + k++, r, t0));
                }
                for (long[] o : others) {
                    if (o[2] > t0 - leadNanos && o[1] < end) {
                        rows.add(row(o[1], "bg task " + o[3], new CommandResult(0, o[0], o[1], o[2]), t0));
                    }
                }
                rows.sort(java.util.Comparator.comparingDouble(r -> Double.parseDouble(r[1])));
                for (String[] r : rows) {
                    out.append(r[0]).append('\n');
                }
            }
        }
        return out.toString();
    }

    private static String[] row(long start, String what, CommandResult r, long t0) {
        return new String[] {String.format(java.util.Locale.ROOT, "  %-12s submit %9.1f  start %9.1f  end %9.1f", what,
                (r.submitNanos() - t0) / 1e3, (r.startNanos() - t0) / 1e3, (r.endNanos() - t0) / 1e3),
            Double.toString((start - t0) / 1e3)};
    }

    /** @return tasks per second that completed within [from, to) */
    public static double tasksPerSecond(List<TaskRecord> tasks, long from, long to) {
        long n = 0;
        for (TaskRecord t : tasks) {
            long end = t.endNanos();
            if (t.ok() && end >= from && end < to) {
                n++;
            }
        }
        return n / ((to - from) / 1e9);
    }

    /** @return the [start, end] spans of every completed command of the tasks, tagged with {@code tenant} */
    public static List<Interval> intervals(List<TaskRecord> tasks, String tenant) {
        List<Interval> out = new ArrayList<>();
        for (TaskRecord t : tasks) {
            for (Submission s : t.commands()) {
                CommandResult r = TaskRecord.resultOf(s);
                if (r != null) {
                    out.add(new Interval(tenant, r.startNanos(), r.endNanos()));
                }
            }
        }
        return out;
    }

    /** @return a ratio, NaN when the divisor is not a positive number */
    public static double ratio(double a, double b) {
        return b > 0 ? a / b : Double.NaN;
    }

    /** @return {@code v} rounded to 3 decimals, for tables and JSON that people read */
    public static double round(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? v : Math.round(v * 1000.0) / 1000.0;
    }

    /**
     * How long a parked thread takes to run after another thread unparks it, {@code samples}
     * times, sorted. The scheduler's loop is woken this way for every event.
     */
    public static long[] osWakeLatencyNanos(int samples) throws InterruptedException {
        long[] lat = new long[samples];
        java.util.concurrent.atomic.AtomicLong posted = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicInteger taken = new java.util.concurrent.atomic.AtomicInteger();
        Thread waiter = Thread.ofPlatform().daemon().name("xq-bench-wake").start(() -> {
            for (int i = 0; i < samples; i++) {
                long t;
                while ((t = posted.get()) == 0) {
                    java.util.concurrent.locks.LockSupport.park();
                }
                lat[i] = System.nanoTime() - t;
                posted.set(0);
                taken.incrementAndGet();
            }
        });
        for (int i = 0; i < samples; i++) {
            java.util.concurrent.locks.LockSupport.parkNanos(250_000);
            posted.set(System.nanoTime());
            java.util.concurrent.locks.LockSupport.unpark(waiter);
            long deadline = System.nanoTime() + 1_000_000_000L;
            while (taken.get() <= i && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        }
        waiter.join(1000);
        java.util.Arrays.sort(lat);
        return lat;
    }
}
