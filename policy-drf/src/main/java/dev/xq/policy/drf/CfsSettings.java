package dev.xq.policy.drf;

/**
 * Checked values of {@link CfsConfig}, in the units the decision uses.
 *
 * @param latencyNanos the period in which every ready queue of a device runs once, while there
 *        are few enough of them
 * @param minGranularityNanos the shortest turn a queue gets
 */
record CfsSettings(long latencyNanos, long minGranularityNanos) {

    static final long DEFAULT_LATENCY_MICROS = 6_000;
    /** XSched's cfs time slice. */
    static final long DEFAULT_MIN_GRANULARITY_MICROS = 1_000;
    static final long MIN_MICROS = 100;
    static final long MAX_MICROS = 10_000_000;

    static final CfsSettings DEFAULTS = of(DEFAULT_LATENCY_MICROS, DEFAULT_MIN_GRANULARITY_MICROS);

    /**
     * @throws IllegalArgumentException naming the first bad value and what is allowed
     */
    static CfsSettings of(long latencyMicros, long minGranularityMicros) {
        if (latencyMicros < MIN_MICROS || latencyMicros > MAX_MICROS) {
            throw new IllegalArgumentException("cfs.latency " + latencyMicros + " us is out of range [" + MIN_MICROS + ", " + MAX_MICROS + "] us");
        }
        if (minGranularityMicros < MIN_MICROS || minGranularityMicros > latencyMicros) {
            throw new IllegalArgumentException("cfs.min.granularity " + minGranularityMicros + " us is out of range [" + MIN_MICROS + ", "
                    + latencyMicros + "] us (at most cfs.latency)");
        }
        return new CfsSettings(latencyMicros * 1000, minGranularityMicros * 1000);
    }

    static CfsSettings from(CfsConfig config) {
        return of(config.cfs_latency(), config.cfs_min_granularity());
    }

    /** @return the turn of a queue of weight {@code weight} among ready queues weighing {@code totalWeight} together */
    long sliceNanos(long weight, long totalWeight) {
        return Math.max(minGranularityNanos, (long) ((double) latencyNanos * weight / totalWeight));
    }

    /**
     * @return how long the policy may go without deciding before it stops charging the device
     *         time used in between: longer than any turn, so only a stretch in which another
     *         policy decided (or a single queue ran alone) is forgotten
     */
    long forgetAfterNanos() {
        return 1_000_000_000L + 2 * latencyNanos;
    }

    @Override
    public String toString() {
        return "cfs.latency=" + latencyNanos / 1000 + "us cfs.min.granularity=" + minGranularityNanos / 1000 + "us";
    }
}
