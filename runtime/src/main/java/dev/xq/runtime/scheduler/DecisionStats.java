package dev.xq.runtime.scheduler;

import dev.xq.api.SchedulerControl;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/** The scheduler's figures: counts, the recent decisions' times, the longest event-to-decision gap. */
final class DecisionStats {

    private final AtomicLong decisions = new AtomicLong();
    private final AtomicLong swaps = new AtomicLong();
    private final AtomicLong trips = new AtomicLong();
    private final AtomicLong inline = new AtomicLong();
    // guarded by recent
    private final long[] recent = new long[1024];
    private int recentCount;
    private int recentNext;
    private volatile long maxGapNanos;
    /** Upper bounds of the histogram's buckets, in nanoseconds. */
    private static final long[] BOUNDS = {1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
            1_000_000, 2_000_000, 5_000_000, 10_000_000, 100_000_000};
    private final java.util.concurrent.atomic.AtomicLongArray buckets = new java.util.concurrent.atomic.AtomicLongArray(BOUNDS.length + 1);
    private final AtomicLong sumNanos = new AtomicLong();

    /** A decision that took {@code policyNanos} in the policy was applied. */
    void decided(long policyNanos) {
        decisions.incrementAndGet();
        int b = 0;
        while (b < BOUNDS.length && policyNanos > BOUNDS[b]) {
            b++;
        }
        buckets.incrementAndGet(b);
        sumNanos.addAndGet(policyNanos);
        synchronized (recent) {
            recent[recentNext] = policyNanos;
            recentNext = (recentNext + 1) % recent.length;
            recentCount = Math.min(recentCount + 1, recent.length);
        }
    }

    /** An event waited {@code nanos} for its decision to be applied. Only the deciding thread calls it. */
    void gap(long nanos) {
        if (nanos > maxGapNanos) {
            maxGapNanos = nanos;
        }
    }

    void swapped() {
        swaps.incrementAndGet();
    }

    void tripped() {
        trips.incrementAndGet();
    }

    void decidedInline() {
        inline.incrementAndGet();
    }

    long inlineCount() {
        return inline.get();
    }

    SchedulerControl.SchedulerStats snapshot() {
        long[] copy;
        synchronized (recent) {
            copy = Arrays.copyOf(recent, recentCount);
        }
        Arrays.sort(copy);
        return new SchedulerControl.SchedulerStats(decisions.get(), swaps.get(), trips.get(),
                percentile(copy, 0.50) / 1000.0, percentile(copy, 0.99) / 1000.0, maxGapNanos / 1000.0);
    }

    SchedulerControl.DecisionHistogram histogram() {
        java.util.List<Double> bounds = new java.util.ArrayList<>(BOUNDS.length);
        for (long b : BOUNDS) {
            bounds.add(b / 1000.0);
        }
        java.util.List<Long> counts = new java.util.ArrayList<>(BOUNDS.length + 1);
        for (int i = 0; i <= BOUNDS.length; i++) {
            counts.add(buckets.get(i));
        }
        return new SchedulerControl.DecisionHistogram(bounds, counts, sumNanos.get() / 1000.0);
    }

    /** Forgets the decision-time history and the longest gap (a scenario's measuring window). */
    void reset() {
        synchronized (recent) {
            recentCount = 0;
            recentNext = 0;
        }
        maxGapNanos = 0;
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
