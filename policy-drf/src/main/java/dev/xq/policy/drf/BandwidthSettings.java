package dev.xq.policy.drf;

/**
 * Checked values of {@link BandwidthConfig}.
 *
 * @param roundNanos the default round length
 * @param defaultUtilization utilization of a queue or group without a hint
 */
record BandwidthSettings(long roundNanos, int defaultUtilization) {

    /** XSched's default time slice. */
    static final long DEFAULT_TIMESLICE_MICROS = 5_000;
    /** XSched's default utilization. */
    static final int DEFAULT_UTILIZATION = 100;
    static final long MIN_TIMESLICE_MICROS = 100;
    static final long MAX_TIMESLICE_MICROS = 10_000_000;
    static final BandwidthSettings DEFAULTS = of(DEFAULT_TIMESLICE_MICROS, DEFAULT_UTILIZATION);

    /**
     * @throws IllegalArgumentException naming the bad value and its allowed range
     */
    static BandwidthSettings of(long timesliceMicros, int defaultUtilization) {
        if (timesliceMicros < MIN_TIMESLICE_MICROS || timesliceMicros > MAX_TIMESLICE_MICROS) {
            throw new IllegalArgumentException("bandwidth.timeslice " + timesliceMicros + " us is out of range ["
                    + MIN_TIMESLICE_MICROS + ", " + MAX_TIMESLICE_MICROS + "] us");
        }
        if (defaultUtilization < 1 || defaultUtilization > 100) {
            throw new IllegalArgumentException("bandwidth.default.utilization " + defaultUtilization + "% is out of range [1, 100]%");
        }
        return new BandwidthSettings(timesliceMicros * 1000, defaultUtilization);
    }

    static BandwidthSettings from(BandwidthConfig config) {
        return of(config.bandwidth_timeslice(), config.bandwidth_default_utilization());
    }

    @Override
    public String toString() {
        return "bandwidth.timeslice=" + roundNanos / 1000 + "us bandwidth.default.utilization=" + defaultUtilization + "%";
    }
}
