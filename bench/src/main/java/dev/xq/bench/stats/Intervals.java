package dev.xq.bench.stats;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Measures on the [start, end] spans of completed commands: how many ran at once, and whose
 * command owned the device when spans nest.
 */
public final class Intervals {

    private Intervals() {
    }

    /**
     * Time-averaged number of {@code tenant}'s intervals open at once within [{@code from}, {@code to}).
     * This is the exact mean of what sampling at every instant would see.
     */
    public static double meanConcurrency(List<Interval> intervals, String tenant, long from, long to) {
        requireWindow(from, to);
        long covered = 0;
        for (Interval i : intervals) {
            if (i.tenant().equals(tenant)) {
                covered += overlap(i, from, to);
            }
        }
        return (double) covered / (to - from);
    }

    /**
     * Counts {@code tenant}'s intervals open at each of {@code samples} evenly spaced instants in
     * [{@code from}, {@code to}) and returns how often each count was seen.
     * @return count of open intervals -> number of instants that saw it, ascending
     */
    public static TreeMap<Integer, Integer> sampleConcurrency(List<Interval> intervals, String tenant,
                                                              long from, long to, int samples) {
        requireWindow(from, to);
        if (samples < 1) {
            throw new IllegalArgumentException("samples " + samples + " must be >= 1");
        }
        // Sweep: +1 at each start, -1 at each end, then walk the sample instants in order.
        TreeMap<Long, Integer> delta = new TreeMap<>();
        for (Interval i : intervals) {
            if (i.tenant().equals(tenant)) {
                delta.merge(i.start(), 1, Integer::sum);
                delta.merge(i.end(), -1, Integer::sum);
            }
        }
        TreeMap<Integer, Integer> histogram = new TreeMap<>();
        var it = delta.entrySet().iterator();
        Map.Entry<Long, Integer> next = it.hasNext() ? it.next() : null;
        int open = 0;
        double step = (double) (to - from) / samples;
        for (int s = 0; s < samples; s++) {
            long t = from + (long) (s * step);
            while (next != null && next.getKey() <= t) {
                open += next.getValue();
                next = it.hasNext() ? it.next() : null;
            }
            histogram.merge(open, 1, Integer::sum);
        }
        return histogram;
    }

    /** @return the count seen most often in a histogram from {@link #sampleConcurrency}; ties go to the larger count */
    public static int mostFrequent(TreeMap<Integer, Integer> histogram) {
        int best = 0;
        int seen = -1;
        for (var e : histogram.entrySet()) {
            if (e.getValue() >= seen) {
                best = e.getKey();
                seen = e.getValue();
            }
        }
        return best;
    }

    /**
     * Device time each tenant owned within [{@code from}, {@code to}) on a device that runs one
     * command at a time. When a command is interrupted and another runs in the meantime, the
     * reported spans nest; the innermost (latest-started) open span owns that stretch of time,
     * so the interrupted command is not credited with its pause.
     * @return tenant -> owned nanoseconds
     */
    public static Map<String, Long> ownedTime(List<Interval> intervals, long from, long to) {
        requireWindow(from, to);
        record Edge(long at, boolean open, int index) { }
        List<Edge> edges = new ArrayList<>();
        for (int k = 0; k < intervals.size(); k++) {
            Interval i = intervals.get(k);
            edges.add(new Edge(i.start(), true, k));
            edges.add(new Edge(i.end(), false, k));
        }
        // Ends before starts at the same instant: back-to-back spans never overlap.
        edges.sort(Comparator.comparingLong(Edge::at).thenComparing(Edge::open));
        // Open spans ordered by start (then index, to tell equal starts apart).
        TreeMap<long[], Integer> open = new TreeMap<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        Map<String, Long> owned = new HashMap<>();
        long prev = Long.MIN_VALUE;
        for (Edge e : edges) {
            if (!open.isEmpty() && prev != Long.MIN_VALUE) {
                long a = Math.max(prev, from);
                long b = Math.min(e.at(), to);
                if (b > a) {
                    Interval owner = intervals.get(open.lastEntry().getValue());
                    owned.merge(owner.tenant(), b - a, Long::sum);
                }
            }
            Interval i = intervals.get(e.index());
            long[] key = {i.start(), e.index()};
            if (e.open()) {
                open.put(key, e.index());
            } else {
                open.remove(key);
            }
            prev = e.at();
        }
        return owned;
    }

    private static long overlap(Interval i, long from, long to) {
        return Math.max(0, Math.min(i.end(), to) - Math.max(i.start(), from));
    }

    private static void requireWindow(long from, long to) {
        if (to <= from) {
            throw new IllegalArgumentException("window [" + from + ", " + to + ") is empty; end must be after start");
        }
    }
}
