package dev.xq.policy.fixedpriority;

/**
 * Checked values of {@link MlfqConfig}, in the units the decision uses.
 *
 * @param levels how many levels there are (level 0 is the top)
 * @param sliceNanos device time a queue may use on the top level before it sinks
 * @param growth how many times longer each level's slice is than the one above
 * @param boostPeriodNanos how often queues are lifted back to the top
 * @param boostScope which queues a boost lifts
 */
record MlfqSettings(int levels, long sliceNanos, int growth, long boostPeriodNanos, BoostScope boostScope) {

    /** Which queues a boost lifts to the top (every queue's used time is cleared either way). */
    enum BoostScope {
        /** Every queue: textbook MLFQ. */
        ALL("all"),
        /**
         * Every queue without work (idle, or held by its application); a queue with work keeps its
         * level, and one held back by the policy is lifted by its own timer once it has waited a
         * whole boost period at a stretch.
         */
        WAITING("waiting");

        final String word;

        BoostScope(String word) {
            this.word = word;
        }

        /**
         * @throws IllegalArgumentException naming the value and the allowed ones
         */
        static BoostScope of(String word) {
            for (BoostScope b : values()) {
                if (b.word.equals(word)) {
                    return b;
                }
            }
            throw new IllegalArgumentException("mlfq.boost.scope '" + word + "' is not allowed; allowed: all, waiting");
        }
    }

    /** XSched's mlfq: levels 0 to 3, 10 ms on the top, doubling; its priority recovery is 100 ms too. */
    static final int DEFAULT_LEVELS = 4;
    static final long DEFAULT_SLICE_MICROS = 10_000;
    static final int DEFAULT_GROWTH = 2;
    static final long DEFAULT_BOOST_PERIOD_MICROS = 100_000;
    /**
     * {@code waiting}: the {@code mlfq} scenario's goal (short tasks' P99 within 1.25 x standalone)
     * is missed under {@code all} in every run, met under {@code waiting} (docs/performance.md).
     */
    static final String DEFAULT_BOOST_SCOPE = "waiting";
    static final int MAX_LEVELS = 16;
    static final long MIN_SLICE_MICROS = 100;
    static final long MAX_SLICE_MICROS = 10_000_000;
    static final int MAX_GROWTH = 16;
    static final long MAX_MICROS = 3_600_000_000L;

    static final MlfqSettings DEFAULTS = of(DEFAULT_LEVELS, DEFAULT_SLICE_MICROS, DEFAULT_GROWTH, DEFAULT_BOOST_PERIOD_MICROS,
            BoostScope.of(DEFAULT_BOOST_SCOPE));

    /** The settings with boosts that lift every queue. */
    static MlfqSettings of(int levels, long sliceMicros, int growth, long boostPeriodMicros) {
        return of(levels, sliceMicros, growth, boostPeriodMicros, BoostScope.ALL);
    }

    /**
     * @throws IllegalArgumentException naming the first bad value and what is allowed
     */
    static MlfqSettings of(int levels, long sliceMicros, int growth, long boostPeriodMicros, BoostScope boostScope) {
        if (levels < 1 || levels > MAX_LEVELS) {
            throw new IllegalArgumentException("mlfq.levels " + levels + " is out of range [1, " + MAX_LEVELS + "]");
        }
        if (sliceMicros < MIN_SLICE_MICROS || sliceMicros > MAX_SLICE_MICROS) {
            throw new IllegalArgumentException("mlfq.slice " + sliceMicros + " us is out of range [" + MIN_SLICE_MICROS + ", " + MAX_SLICE_MICROS + "] us");
        }
        if (growth < 1 || growth > MAX_GROWTH) {
            throw new IllegalArgumentException("mlfq.slice.growth " + growth + " is out of range [1, " + MAX_GROWTH + "] (1: every level has mlfq.slice)");
        }
        long bottom = sliceMicros;
        for (int l = 1; l < levels; l++) {
            bottom *= growth;
            if (bottom > MAX_MICROS) {
                throw new IllegalArgumentException("mlfq.slice " + sliceMicros + " us times mlfq.slice.growth " + growth + " per level gives level " + l
                        + " a slice over " + MAX_MICROS + " us; lower mlfq.levels (" + levels + "), mlfq.slice.growth or mlfq.slice");
            }
        }
        if (boostPeriodMicros <= sliceMicros || boostPeriodMicros > MAX_MICROS) {
            throw new IllegalArgumentException("mlfq.boost.period " + boostPeriodMicros + " us is out of range [" + (sliceMicros + 1) + ", " + MAX_MICROS
                    + "] us (longer than mlfq.slice " + sliceMicros + " us, or no queue would ever sink)");
        }
        if (boostScope == null) {
            throw new IllegalArgumentException("mlfq.boost.scope is missing; allowed: all, waiting");
        }
        return new MlfqSettings(levels, sliceMicros * 1000, growth, boostPeriodMicros * 1000, boostScope);
    }

    static MlfqSettings from(MlfqConfig config) {
        return of(config.mlfq_levels(), config.mlfq_slice(), config.mlfq_slice_growth(), config.mlfq_boost_period(),
                BoostScope.of(config.mlfq_boost_scope()));
    }

    /** @return the slice of a level: {@code sliceNanos * growth^level} */
    long sliceNanos(int level) {
        long s = sliceNanos;
        for (int l = 0; l < level; l++) {
            s *= growth;
        }
        return s;
    }

    /** @return the lowest level */
    int bottom() {
        return levels - 1;
    }

    @Override
    public String toString() {
        return "mlfq.levels=" + levels + " mlfq.slice=" + sliceNanos / 1000 + "us mlfq.slice.growth=" + growth
                + " mlfq.boost.period=" + boostPeriodNanos / 1000 + "us mlfq.boost.scope=" + boostScope.word;
    }
}
