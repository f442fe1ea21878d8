package dev.xq.bench.stats;

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

    private static long overlap(Interval i, long from, long to) {
        return Math.max(0, Math.min(i.end(), to) - Math.max(i.start(), from));
    }

    private static void requireWindow(long from, long to) {
        if (to <= from) {
            throw new IllegalArgumentException("window [" + from + ", " + to + ") is empty; end must be after start");
        }
    }
}
