package dev.xq.policy.drf;

import dev.xq.policy.spi.QueueView;

/**
 * Linux's nice scale for policy {@code cfs}: nice -20 (most device time) to 19 (least), nice 0
 * weighing 1024 and each step changing the weight by a factor of about 1.25, so that one nice
 * step apart moves roughly 10% of the device between two queues. The weights are computed from
 * that rule, {@code round(1024 / 1.25^nice)}, not copied from the kernel; they are within 0.5%
 * of the kernel's table (nice -20: 88818 here, 88761 there; nice 19: 15 in both).
 *
 * <p>A queue's nice value is its {@code Priority} hint negated and clamped to [-20, 19]: priority
 * 0 (or no hint) is nice 0, priority 5 is nice -5, and priorities above 20 or below -19 weigh
 * as much as 20 or -19. So a higher priority means more device time, as under {@code hpf}.
 */
final class NiceWeights {

    static final int MIN_NICE = -20;
    static final int MAX_NICE = 19;
    static final int NICE_0_WEIGHT = 1024;

    private static final long[] WEIGHTS = new long[MAX_NICE - MIN_NICE + 1];

    static {
        for (int nice = MIN_NICE; nice <= MAX_NICE; nice++) {
            WEIGHTS[nice - MIN_NICE] = Math.round(NICE_0_WEIGHT / Math.pow(1.25, nice));
        }
    }

    private NiceWeights() {
    }

    /** @return the weight of a nice value, clamped to [-20, 19] */
    static long weight(int nice) {
        return WEIGHTS[Math.clamp(nice, MIN_NICE, MAX_NICE) - MIN_NICE];
    }

    /** @return the queue's nice value: its priority hint negated, clamped to [-20, 19] */
    static int nice(QueueView q) {
        return Math.clamp(-(long) q.priority(), MIN_NICE, MAX_NICE);
    }

    /** @return the queue's weight on the nice scale */
    static long weight(QueueView q) {
        return weight(nice(q));
    }
}
