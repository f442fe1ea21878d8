package dev.xq.bench.tail;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a tenant's slow tasks lose their time, from a flight recording of a node that ran a
 * scenario with the {@code dev.xq.Command} event enabled (docs/performance.md, "the T = 100
 * tail"). Each command's host times are known: submitted, launch call begin and end (and by which
 * thread), device start and end. For every queue instance of the tenant, tasks are runs of
 * {@code per-task} consecutive commands; for the slowest 1 % and the median band, each moment the
 * device sat idle inside a task is split into: <i>not yet submitted</i> (the submitting thread
 * had not handed the command over), <i>held</i> (submitted, the launch call not yet begun: limits,
 * or another thread was to launch it), <i>in the launch call</i>, and <i>after the launch</i> (the
 * launch call had returned, the device had not started it). The worst tasks are listed with the
 * JVM events (safepoints, long parks, monitor waits, collections, deoptimisations) that overlap
 * their longest idle time.
 *
 * <p>Runs as a plain Java program, outside a framework:
 * {@code java -cp dev.xq.bench.jar dev.xq.bench.tail.TailAnalysis REC.jfr [queue [per-task [worst]]]}.
 */
public final class TailAnalysis {

    /** One completed command, as the flight recorder saw it; times in {@link System#nanoTime()}. */
    record Cmd(long handle, String queue, long seq, long enter, long submit, long submitThread, long launchBegin,
               long launchEnd, long launchThread, long pumpEnd, long returned, long start, long end, long seenEpochNanos) { }

    /** A JVM event with a duration, in epoch nanoseconds, and the thread it happened on. */
    record JvmEvent(String what, long beginEpoch, long endEpoch, String thread) { }

    /** The parts of a task's time, µs: first launch (held, call, device late), idle inside it (4 parts), total. */
    static final String[] PARTS = {
        "first:held", "first:call", "first:after", "idle:prev-pump", "idle:prev-announce", "idle:between-calls",
        "idle:check+lock", "idle:held", "idle:in-call", "idle:after-launch", "idle:total", "launched-by-other", "submit-spread"
    };
    private static final int IDLE = 3;
    private static final int TOTAL = 10;
    private static final int OTHER = 11;
    private static final int SPREAD = 12;

    /** Java thread ids seen in the recording, by name (for "launched by"). */
    static final Map<Long, String> THREAD_NAMES = new java.util.HashMap<>();

    private TailAnalysis() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: TailAnalysis RECORDING.jfr [queue (fg)] [commands per task (20)] [worst tasks listed (10)]");
            System.exit(2);
        }
        String queue = args.length > 1 ? args[1] : "fg";
        int perTask = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int worst = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        List<Cmd> cmds = new ArrayList<>();
        List<JvmEvent> jvm = new ArrayList<>();
        read(Path.of(args[0]), cmds, jvm);
        analyse(cmds, jvm, queue, perTask, worst, System.out);
    }

    static void read(Path file, List<Cmd> cmds, List<JvmEvent> jvm) throws IOException {
        try (RecordingFile f = new RecordingFile(file)) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String type = e.getEventType().getName();
                if (type.equals("dev.xq.Command")) {
                    cmds.add(new Cmd(e.getLong("handle"), e.getString("queue"), e.getLong("sequence"), e.getLong("enterNanos"),
                            e.getLong("submitNanos"), e.getLong("submitThread"), e.getLong("launchBeginNanos"),
                            e.getLong("launchEndNanos"), e.getLong("launchThread"), e.getLong("pumpEndNanos"),
                            e.getLong("returnNanos"), e.getLong("startNanos"), e.getLong("endNanos"), epoch(e.getStartTime())));
                } else if (!type.startsWith("dev.xq.")) {
                    RecordedThread t = e.getThread();
                    if (t != null) {
                        THREAD_NAMES.put(t.getJavaThreadId(), t.getJavaName());
                    }
                    String what = type.replace("jdk.", "");
                    if (type.equals("jdk.ThreadPark") && e.hasField("parkedClass") && e.getClass("parkedClass") != null) {
                        what += "(" + e.getClass("parkedClass").getName() + ")";
                    } else if (type.equals("jdk.GarbageCollection")) {
                        what += "(" + e.getString("name") + ")";
                    }
                    jvm.add(new JvmEvent(what, epoch(e.getStartTime()), epoch(e.getEndTime()), t == null ? "-" : t.getJavaName()));
                }
            }
        }
    }

    private static long epoch(Instant i) {
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    static void analyse(List<Cmd> all, List<JvmEvent> jvm, String queue, int perTask, int worst, PrintStream out) {
        if (all.isEmpty()) {
            out.println("no dev.xq.Command events: was the recording started with dev.xq.Command#enabled=true?");
            return;
        }
        // nanoTime -> epoch: a completion is seen after the device end, so the smallest difference is the offset
        long offset = Long.MAX_VALUE;
        for (Cmd c : all) {
            offset = Math.min(offset, c.seenEpochNanos - c.end);
        }
        Map<Long, List<Cmd>> byQueue = new LinkedHashMap<>();
        for (Cmd c : all) {
            if (c.queue.equals(queue)) {
                byQueue.computeIfAbsent(c.handle, h -> new ArrayList<>()).add(c);
            }
        }
        List<List<Cmd>> instances = new ArrayList<>(byQueue.values());
        instances.sort(Comparator.comparingLong(l -> l.getFirst().submit));
        out.printf(Locale.ROOT, "%d commands recorded; %d instances of queue '%s'; tasks of %d commands%n", all.size(),
                instances.size(), queue, perTask);
        int n = 0;
        for (List<Cmd> inst : instances) {
            n++;
            inst.sort(Comparator.comparingLong(Cmd::seq));
            List<Task> tasks = tasks(inst, perTask);
            // leave out the first tenth (warm-up), as the scenarios do
            tasks = tasks.subList(tasks.size() / 10, tasks.size());
            if (tasks.size() < 20) {
                out.printf(Locale.ROOT, "%n#%d (handle %d): %d whole tasks, too few%n", n, inst.getFirst().handle, tasks.size());
                continue;
            }
            report(n, inst.getFirst().handle, tasks, jvm, offset, worst, out);
        }
    }

    /** A task: its commands in order, its latency and the parts of its time. */
    record Task(List<Cmd> cmds, long latency, double[] parts, int worstAt, long worstIdle) { }

    static List<Task> tasks(List<Cmd> inst, int perTask) {
        List<Task> tasks = new ArrayList<>();
        long base = inst.getFirst().seq;
        int i = 0;
        while (i < inst.size()) {
            long taskNo = (inst.get(i).seq - base) / perTask;
            int j = i;
            while (j < inst.size() && (inst.get(j).seq - base) / perTask == taskNo) {
                j++;
            }
            if (j - i == perTask) {
                tasks.add(task(inst.subList(i, j)));
            }
            i = j;
        }
        return tasks;
    }

    static Task task(List<Cmd> cs) {
        double[] p = new double[PARTS.length];
        Cmd first = cs.getFirst();
        if (first.launchBegin > 0 && first.launchEnd > 0) {
            p[0] = Math.max(0, first.launchBegin - first.submit);
            p[1] = Math.max(0, first.launchEnd - first.launchBegin);
            p[2] = Math.max(0, first.start - first.launchEnd);
        }
        int worstAt = -1;
        long worstIdle = 0;
        for (int k = 0; k < cs.size(); k++) {
            Cmd c = cs.get(k);
            if (c.launchThread != c.submitThread) {
                p[OTHER]++;
            }
            if (k == 0) {
                continue;
            }
            Cmd prev = cs.get(k - 1);
            long idle = c.start - prev.end;
            if (idle <= 0) {
                continue;
            }
            p[TOTAL] += idle;
            if (idle > worstIdle) {
                worstIdle = idle;
                worstAt = k;
            }
            if (c.launchBegin <= 0 || c.launchEnd <= 0 || prev.returned <= 0) {
                continue;
            }
            // walk the idle span [prev.end, start] through the submitter's and the command's own moments:
            // the previous submit's pump returned, it returned (after announcing), this submit entered,
            // the command was submitted, its launch call began and ended, the device started it
            long t = prev.end;
            long[] marks = {prev.pumpEnd, prev.returned, c.enter, c.submit, c.launchBegin, c.launchEnd, c.start};
            for (int m = 0; m < marks.length; m++) {
                long until = Math.min(Math.max(marks[m], t), c.start);
                p[IDLE + m] += until - t;
                t = until;
            }
        }
        p[SPREAD] = cs.getLast().submit - first.submit;
        for (int k = 0; k < PARTS.length; k++) {
            if (k != OTHER) {
                p[k] /= 1e3;
            }
        }
        return new Task(List.copyOf(cs), cs.getLast().end - first.submit, p, worstAt, worstIdle);
    }

    private static void report(int n, long handle, List<Task> tasks, List<JvmEvent> jvm, long offset, int worst, PrintStream out) {
        List<Task> sorted = new ArrayList<>(tasks);
        sorted.sort(Comparator.comparingLong(Task::latency));
        int count = sorted.size();
        double p50 = sorted.get(count / 2).latency / 1e6;
        double p99 = sorted.get(Math.min(count - 1, (int) Math.floor(count * 0.99))).latency / 1e6;
        out.printf(Locale.ROOT, "%n#%d (handle %d): %d tasks, P50 %.3f ms, P99 %.3f ms, P99/P50 %.3f%n", n, handle, count, p50, p99,
                p99 / p50);
        List<Task> slow = sorted.subList(Math.min(count - 1, (int) Math.floor(count * 0.99)), count);
        List<Task> median = sorted.subList((int) (count * 0.45), Math.max((int) (count * 0.45) + 1, (int) (count * 0.55)));
        out.printf(Locale.ROOT, "  %-22s %12s %12s%n", "mean per task (us)", "slowest 1%", "median band");
        for (int k = 0; k < PARTS.length; k++) {
            out.printf(Locale.ROOT, "  %-22s %12.1f %12.1f%n", PARTS[k], mean(slow, k), mean(median, k));
        }
        // a command's own time (start to end): under seen end times a look that came late shows as one
        // command far longer than the others and the next one ending at once (both seen together)
        List<Long> lengths = new ArrayList<>();
        for (Task t : tasks) {
            for (Cmd c : t.cmds) {
                lengths.add(c.end - c.start);
            }
        }
        lengths.sort(null);
        long medianLength = lengths.get(lengths.size() / 2);
        out.printf(Locale.ROOT, "  worst %d tasks: latency ms, longest idle us at command k, its parts, JVM events overlapping it;"
                + " the longest command (median command %.0f us)%n", Math.min(worst, count), medianLength / 1e3);
        for (int w = 0; w < Math.min(worst, count); w++) {
            Task t = sorted.get(count - 1 - w);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "   %.3f ms", t.latency / 1e6));
            if (t.worstAt > 0) {
                Cmd c = t.cmds.get(t.worstAt);
                long from = t.cmds.get(t.worstAt - 1).end;
                Cmd prev = t.cmds.get(t.worstAt - 1);
                line.append(String.format(Locale.ROOT, "  idle %.0f us at k=%d: previous pump returned %+.0f, previous submit"
                        + " returned %+.0f, entered %+.0f, submit %+.0f, launch %+.0f..%+.0f, start %+.0f us after the previous end;"
                        + " launched by %s", t.worstIdle / 1e3, t.worstAt, (prev.pumpEnd - from) / 1e3, (prev.returned - from) / 1e3,
                        (c.enter - from) / 1e3, (c.submit - from) / 1e3, (c.launchBegin - from) / 1e3, (c.launchEnd - from) / 1e3,
                        (c.start - from) / 1e3,
                        c.launchThread == c.submitThread ? "the submitter"
                                : THREAD_NAMES.getOrDefault(c.launchThread, "thread " + c.launchThread)));
                // JVM events that begin or end near the idle time (threads parked all along are left out)
                int shown = 0;
                for (JvmEvent e : jvm) {
                    long b = e.beginEpoch - offset;
                    long en = e.endEpoch - offset;
                    boolean near = (b >= from - 200_000 && b <= c.start) || (en >= from && en <= c.start + 200_000);
                    if (near && en >= from && b <= c.start && shown++ < 8) {
                        line.append(String.format(Locale.ROOT, "%n      %s on %s, %.0f us, from %+.0f us", e.what, e.thread,
                                (en - b) / 1e3, (b - from) / 1e3));
                    }
                }
            } else {
                line.append(String.format(Locale.ROOT, "  no idle inside; first launch held %.0f, call %.0f, after %.0f us",
                        t.parts[0], t.parts[1], t.parts[2]));
            }
            int longest = 0;
            for (int k = 1; k < t.cmds.size(); k++) {
                if (t.cmds.get(k).end - t.cmds.get(k).start > t.cmds.get(longest).end - t.cmds.get(longest).start) {
                    longest = k;
                }
            }
            Cmd l = t.cmds.get(longest);
            if (l.end - l.start > 2 * medianLength) {
                line.append(String.format(Locale.ROOT, "%n      longest command k=%d: %.0f us%s", longest, (l.end - l.start) / 1e3,
                        longest + 1 < t.cmds.size() && t.cmds.get(longest + 1).end - l.end < medianLength / 10
                                ? ", and the next one ended " + Math.round((t.cmds.get(longest + 1).end - l.end) / 1e3)
                                        + " us after it: both were seen together (a late look)"
                                : ""));
            }
            out.println(line);
        }
    }

    private static double mean(List<Task> tasks, int part) {
        double s = 0;
        for (Task t : tasks) {
            s += t.parts[part];
        }
        return s / tasks.size();
    }
}
