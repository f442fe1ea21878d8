package dev.xq.policy.fixedpriority;

/**
 * Checked values of {@link AgingConfig}, in the units the decision uses.
 *
 * @param thresholdNanos how long a queue waits before it ages
 * @param ratePerMs priority levels gained per ms of waiting beyond the threshold
 * @param quantumNanos how long an aged queue keeps its raised priority
 */
record AgingSettings(long thresholdNanos, double ratePerMs, long quantumNanos) {

    static final long DEFAULT_THRESHOLD_MICROS = 20_000;
    static final double DEFAULT_RATE_PER_MS = 1.0;
    static final long DEFAULT_QUANTUM_MICROS = 10_000;
    static final long MAX_MICROS = 3_600_000_000L;
    static final double MIN_RATE = 0.000001;
    static final double MAX_RATE = 1_000_000;

    static final AgingSettings DEFAULTS = of(DEFAULT_THRESHOLD_MICROS, DEFAULT_RATE_PER_MS, DEFAULT_QUANTUM_MICROS);

    /**
     * @throws IllegalArgumentException naming the first bad value and its allowed range
     */
    static AgingSettings of(long thresholdMicros, double ratePerMs, long quantumMicros) {
        if (thresholdMicros < 0 || thresholdMicros > MAX_MICROS) {
            throw new IllegalArgumentException("aging.threshold " + thresholdMicros + " us is out of range [0, " + MAX_MICROS + "] us");
        }
        if (!(ratePerMs >= MIN_RATE && ratePerMs <= MAX_RATE)) {
            throw new IllegalArgumentException("aging.rate " + ratePerMs + " levels/ms is out of range [" + MIN_RATE + ", " + MAX_RATE + "] levels/ms");
        }
        if (quantumMicros < 1 || quantumMicros > MAX_MICROS) {
            throw new IllegalArgumentException("aging.quantum " + quantumMicros + " us is out of range [1, " + MAX_MICROS + "] us");
        }
        return new AgingSettings(thresholdMicros * 1000, ratePerMs, quantumMicros * 1000);
    }

    static AgingSettings from(AgingConfig config) {
        return of(config.aging_threshold(), config.aging_rate(), config.aging_quantum());
    }

    /** @return the waiting beyond the threshold after which a queue has gained {@code levels} */
    long nanosToGain(int levels) {
        // Rounded up so that the queue has really gained the levels at the returned moment.
        return (long) Math.ceil(levels * 1_000_000.0 / ratePerMs);
    }

    @Override
    public String toString() {
        return "aging.threshold=" + thresholdNanos / 1000 + "us aging.rate=" + ratePerMs + "/ms aging.quantum=" + quantumNanos / 1000 + "us";
    }
}
