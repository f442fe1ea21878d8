package dev.xq.policy.fixedpriority;

/**
 * Checked values of {@link ChpfConfig}, in the units the decision uses.
 *
 * @param refreshNanos how long a process's CPU priority is used before it is read again
 */
record ChpfSettings(long refreshNanos) {

    static final long DEFAULT_REFRESH_MICROS = 1_000_000;
    static final long MIN_REFRESH_MICROS = 1_000;
    static final long MAX_MICROS = 3_600_000_000L;

    static final ChpfSettings DEFAULTS = of(DEFAULT_REFRESH_MICROS);

    /**
     * @throws IllegalArgumentException naming the bad value and what is allowed
     */
    static ChpfSettings of(long refreshMicros) {
        if (refreshMicros < MIN_REFRESH_MICROS || refreshMicros > MAX_MICROS) {
            throw new IllegalArgumentException("chpf.refresh " + refreshMicros + " us is out of range [" + MIN_REFRESH_MICROS + ", " + MAX_MICROS
                    + "] us (shorter would read /proc at almost every decision)");
        }
        return new ChpfSettings(refreshMicros * 1000);
    }

    static ChpfSettings from(ChpfConfig config) {
        return of(config.chpf_refresh());
    }

    @Override
    public String toString() {
        return "chpf.refresh=" + refreshNanos / 1000 + "us";
    }
}
