package dev.xq.hal.kfd;

import java.util.Locale;

/**
 * Validated provider settings.
 *
 * @param device KFD device file
 * @param gracePeriodMicros grace period asked for
 * @param minSuspendIntervalMicros rate limit between suspends
 * @param mode how to stop queues
 */
public record KfdSettings(String device, int gracePeriodMicros, int minSuspendIntervalMicros, Mode mode) {

    /** Which mechanism the provider may use. */
    public enum Mode {
        /** Debugger API if present, else the patched ioctls. */
        AUTO,
        /** Debugger API (DBG_TRAP SUSPEND/RESUME, CWSR) only. */
        CWSR,
        /** Patched-driver PREEMPT/RESUME ioctls only. */
        PREEMPT,
        /** Never suspends; attach returns nothing; pending work can still be read. */
        LOGICAL
    }

    /** MI300X peak engine clock; the kernel's grace-period unit is about 1000 clocks (unverified). */
    static final double ASSUMED_GPU_MHZ = 2100.0;

    /** @throws IllegalArgumentException naming the bad value and what is allowed */
    public KfdSettings {
        if (device == null || device.isBlank()) {
            throw new IllegalArgumentException("device is empty; expected a KFD device file such as /dev/kfd");
        }
        if (gracePeriodMicros < 0) {
            throw new IllegalArgumentException("gracePeriodMicros " + gracePeriodMicros + " is negative; allowed: 0 or more");
        }
        if (minSuspendIntervalMicros < 0) {
            throw new IllegalArgumentException("minSuspendIntervalMicros " + minSuspendIntervalMicros
                    + " is negative; allowed: 0 or more");
        }
        if (mode == null) {
            throw new IllegalArgumentException("mode is missing; allowed: auto, cwsr, preempt, logical");
        }
    }

    static KfdSettings from(KfdConfig c) {
        return new KfdSettings(c.device(), c.gracePeriodMicros(), c.minSuspendIntervalMicros(), mode(c.mode()));
    }

    static Mode mode(String text) {
        if (text != null) {
            for (Mode m : Mode.values()) {
                if (m.name().toLowerCase(Locale.ROOT).equals(text.trim().toLowerCase(Locale.ROOT))) {
                    return m;
                }
            }
        }
        throw new IllegalArgumentException("mode '" + text + "' is not known; allowed: auto, cwsr, preempt, logical");
    }

    /** @return the grace period in KFD units (about 1000 GPU clocks each), at least 1 */
    int gracePeriodUnits() {
        long units = (long) Math.ceil(gracePeriodMicros * ASSUMED_GPU_MHZ / 1000.0);
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, units));
    }
}
