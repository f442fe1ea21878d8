package dev.xq.bench.tail;

import dev.xq.bench.tail.TailAnalysis.Cmd;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where the device sits idle while two tenants share it, from a flight recording with the
 * {@code dev.xq.Command} event (the same recording {@link TailAnalysis} reads): the background
 * tenant's throughput is what the device did not idle, so each idle moment is put in a class by
 * the commands around it: <i>fg→bg</i> (the foreground's task ended, the background had not
 * started again: the resume), <i>bg→fg</i>, <i>fg→fg</i> (inside a foreground task) and
 * <i>bg→bg</i> (between background commands: per-command costs such as a level-2 guard). A resume
 * is split further by how the background's next command got there: already launched and held on
 * the device (level 2: the flag was lowered after the foreground's end was seen), or launched
 * after the end was seen (level 1).
 *
 * <p>Runs as a plain Java program: {@code java -cp dev.xq.bench.jar dev.xq.bench.tail.SwitchAnalysis
 * REC.jfr [fg-queue [bg-queue]]}; every pair of instances of the two queues that ran at the same
 * time (one pair per benchmark mode) is reported.
 */
public final class SwitchAnalysis {

    static final String[] CLASSES = {"fg->bg", "bg->fg", "fg->fg", "bg->bg"};

    private SwitchAnalysis() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: SwitchAnalysis RECORDING.jfr [fg queue (fg)] [bg queue (bg)]");
            System.exit(2);
        }
        List<Cmd> cmds = new ArrayList<>();
        TailAnalysis.read(Path.of(args[0]), cmds, new ArrayList<>());
        analyse(cmds, args.length > 1 ? args[1] : "fg", args.length > 2 ? args[2] : "bg", System.out);
    }

    static void analyse(List<Cmd> all, String fgName, String bgName, PrintStream out) {
        List<Cmd> done = all.stream().filter(c -> c.start() > 0 && c.end() >= c.start()).toList();
        if (done.isEmpty()) {
            out.println("no dev.xq.Command events with device times: was dev.xq.Command enabled?");
            return;
        }
        long offset = Long.MAX_VALUE;
        for (Cmd c : done) {
            offset = Math.min(offset, c.seenEpochNanos() - c.end());
        }
        List<List<Cmd>> fgs = instances(done, fgName);
        List<List<Cmd>> bgs = instances(done, bgName);
        int pairs = 0;
        for (List<Cmd> fg : fgs) {
            long from = fg.getFirst().submit();
            long to = fg.getLast().end();
            for (List<Cmd> bg : bgs) {
                if (bg.getFirst().submit() < to && bg.getLast().end() > from) {
                    pairs++;
                    report(pairs, fg, bg, offset, out);
                }
            }
        }
        if (pairs == 0) {
            out.printf(Locale.ROOT, "no instances of '%s' and '%s' ran at the same time%n", fgName, bgName);
        }
    }

    static List<List<Cmd>> instances(List<Cmd> all, String queue) {
        Map<Long, List<Cmd>> byHandle = new LinkedHashMap<>();
        for (Cmd c : all) {
            if (c.queue().equals(queue)) {
                byHandle.computeIfAbsent(c.handle(), h -> new ArrayList<>()).add(c);
            }
        }
        List<List<Cmd>> list = new ArrayList<>(byHandle.values());
        for (List<Cmd> l : list) {
            l.sort(Comparator.comparingLong(Cmd::seq));
        }
        list.sort(Comparator.comparingLong(l -> l.getFirst().submit()));
        return list;
    }

    /** The idle moments of one pair, classified; returned for tests. */
    record Result(double spanSeconds, double busyFraction, long[] count, double[] idleNanos, List<Long> resumes,
                  List<long[]> heldResumes, List<long[]> launchedResumes, List<List<Long>> queuedGaps, List<List<Long>> lateGaps,
                  List<long[]> lateBgParts) { }

    static Result measure(List<Cmd> fg, List<Cmd> bg, long offset) {
        // the time both ran, less the first tenth (warm-up), as the scenarios do
        long lo = Math.max(fg.getFirst().start(), bg.getFirst().start());
        long hi = Math.min(fg.getLast().end(), bg.getLast().end());
        lo += (hi - lo) / 10;
        List<Cmd> both = new ArrayList<>();
        for (Cmd c : fg) {
            if (c.start() >= lo && c.end() <= hi) {
                both.add(c);
            }
        }
        long fgHandle = fg.getFirst().handle();
        for (Cmd c : bg) {
            if (c.start() >= lo && c.end() <= hi) {
                both.add(c);
            }
        }
        both.sort(Comparator.comparingLong(Cmd::start));
        long[] count = new long[CLASSES.length];
        double[] idle = new double[CLASSES.length];
        List<Long> resumes = new ArrayList<>();
        List<long[]> held = new ArrayList<>();
        List<long[]> launched = new ArrayList<>();
        List<List<Long>> queuedGaps = new ArrayList<>();
        List<List<Long>> lateGaps = new ArrayList<>();
        for (int k = 0; k < CLASSES.length; k++) {
            queuedGaps.add(new ArrayList<>());
            lateGaps.add(new ArrayList<>());
        }
        List<long[]> lateBg = new ArrayList<>();
        long busy = 0;
        long reach = Long.MIN_VALUE;
        Cmd last = null; // the command whose end is the busy frontier
        for (Cmd c : both) {
            if (last != null && c.start() > reach) {
                long gap = c.start() - reach;
                boolean prevFg = last.handle() == fgHandle;
                boolean nextFg = c.handle() == fgHandle;
                int k = prevFg ? (nextFg ? 2 : 0) : (nextFg ? 1 : 3);
                count[k]++;
                idle[k] += gap;
                // the next command was on the device before the previous ended (a device-side gap), or launched after
                (c.launchEnd() > 0 && c.launchEnd() <= reach ? queuedGaps : lateGaps).get(k).add(gap);
                if (k == 3 && c.launchEnd() > reach && c.launchBegin() > 0 && c.enter() > 0) {
                    // bg waited for its own next command: its previous end seen, the submitter back, the launch
                    long seen = Math.max(reach, last.seenEpochNanos() - offset);
                    long entered = Math.max(seen, c.enter());
                    long begin = Math.max(entered, c.launchBegin());
                    long callEnd = Math.max(begin, c.launchEnd());
                    lateBg.add(new long[] {gap, seen - reach, entered - seen, begin - entered, callEnd - begin,
                        Math.max(0, c.start() - callEnd)});
                }
                if (k == 0) {
                    resumes.add(gap);
                    long seen = last.seenEpochNanos() - offset;
                    if (c.launchEnd() > 0 && c.launchEnd() <= reach) {
                        // held on the device: the end seen, then the flag lowered and the stream woke
                        held.add(new long[] {gap, Math.max(0, seen - reach), Math.max(0, c.start() - Math.max(seen, reach))});
                    } else if (c.launchBegin() > 0) {
                        long b = Math.max(c.launchBegin(), reach);
                        long e = Math.max(c.launchEnd(), b);
                        launched.add(new long[] {gap, Math.max(0, seen - reach), Math.max(0, b - Math.max(seen, reach)),
                            e - b, Math.max(0, c.start() - e)});
                    }
                }
                busy += c.end() - c.start();
                reach = c.end();
                last = c;
            } else {
                long newReach = Math.max(reach, c.end());
                busy += newReach - Math.max(reach, c.start());
                if (c.end() >= reach) {
                    last = c;
                }
                reach = newReach;
            }
        }
        double span = (hi - lo) / 1e9;
        return new Result(span, busy / 1e9 / span, count, idle, resumes, held, launched, queuedGaps, lateGaps, lateBg);
    }

    private static void report(int n, List<Cmd> fg, List<Cmd> bg, long offset, PrintStream out) {
        Result r = measure(fg, bg, offset);
        out.printf(Locale.ROOT, "%npair %d (fg handle %d, bg handle %d): %.2f s together, device busy %.2f %%, idle %.2f ms per s%n", n,
                fg.getFirst().handle(), bg.getFirst().handle(), r.spanSeconds, 100 * r.busyFraction,
                (1 - r.busyFraction) * 1e3);
        out.printf(Locale.ROOT, "  %-8s %9s %10s %9s %9s %9s %12s | %-28s | %-28s%n", "idle", "per s", "mean us", "p50 us", "p90 us",
                "p99 us", "ms per s", "next already launched: n/s, mean us", "next launched after: n/s, mean us");
        for (int k = 0; k < CLASSES.length; k++) {
            List<Long> all = new ArrayList<>(r.queuedGaps.get(k));
            all.addAll(r.lateGaps.get(k));
            out.printf(Locale.ROOT, "  %-8s %9.1f %10.1f %9s %9s %9s %12.2f | %10.1f %10.1f        | %10.1f %10.1f%n", CLASSES[k],
                    r.count[k] / r.spanSeconds, r.count[k] == 0 ? 0 : r.idleNanos[k] / r.count[k] / 1e3, us(all, 0.5), us(all, 0.9),
                    us(all, 0.99), r.idleNanos[k] / 1e6 / r.spanSeconds, r.queuedGaps.get(k).size() / r.spanSeconds,
                    mean(r.queuedGaps.get(k)), r.lateGaps.get(k).size() / r.spanSeconds, mean(r.lateGaps.get(k)));
        }
        long[] edges = {2, 4, 6, 8, 12, 20, 50, 200};
        StringBuilder h = new StringBuilder("  bg->bg gaps, us: ms per s by size:");
        List<Long> bgbg = new ArrayList<>(r.queuedGaps.get(3));
        bgbg.addAll(r.lateGaps.get(3));
        long lower = 0;
        for (int e = 0; e <= edges.length; e++) {
            long upper = e < edges.length ? edges[e] : Long.MAX_VALUE;
            long lo = lower;
            double sum = bgbg.stream().filter(g -> g >= lo * 1000 && g < (upper == Long.MAX_VALUE ? upper : upper * 1000))
                    .mapToLong(Long::longValue).sum();
            h.append(String.format(Locale.ROOT, " [%d,%s) %.2f", lower, e < edges.length ? String.valueOf(upper) : "inf",
                    sum / 1e6 / r.spanSeconds));
            lower = upper;
        }
        out.println(h);
        if (!r.lateBgParts.isEmpty()) {
            out.printf(Locale.ROOT, "  bg waiting for its own next command (%d): p50 us: gap %s = previous end seen %s + submitter"
                    + " back %s + to launch %s + call %s + to start %s%n", r.lateBgParts.size(), part(r.lateBgParts, 0),
                    part(r.lateBgParts, 1), part(r.lateBgParts, 2), part(r.lateBgParts, 3), part(r.lateBgParts, 4),
                    part(r.lateBgParts, 5));
        }
        if (!r.heldResumes.isEmpty()) {
            out.printf(Locale.ROOT, "  resumes held on the device (%d): p50 us: gap %s = end seen %s + then to start %s%n", r.heldResumes.size(),
                    part(r.heldResumes, 0), part(r.heldResumes, 1), part(r.heldResumes, 2));
        }
        if (!r.launchedResumes.isEmpty()) {
            out.printf(Locale.ROOT, "  resumes launched after (%d): p50 us: gap %s = end seen %s + to launch %s + call %s + to start %s%n",
                    r.launchedResumes.size(), part(r.launchedResumes, 0), part(r.launchedResumes, 1), part(r.launchedResumes, 2),
                    part(r.launchedResumes, 3), part(r.launchedResumes, 4));
        }
    }

    private static double mean(List<Long> v) {
        return v.isEmpty() ? 0 : v.stream().mapToLong(Long::longValue).average().orElse(0) / 1e3;
    }

    private static String us(List<Long> v, double q) {
        if (v.isEmpty()) {
            return "-";
        }
        long[] a = v.stream().mapToLong(Long::longValue).sorted().toArray();
        return String.format(Locale.ROOT, "%.1f", a[Math.min(a.length - 1, (int) Math.floor(a.length * q))] / 1e3);
    }

    private static String part(List<long[]> rows, int i) {
        long[] a = rows.stream().mapToLong(r -> r[i]).sorted().toArray();
        return String.format(Locale.ROOT, "%.1f", a[a.length / 2] / 1e3) + (a.length > 1 ? String.format(Locale.ROOT, " (mean %.1f)",
                Arrays.stream(a).average().orElse(0) / 1e3) : "");
    }
}
