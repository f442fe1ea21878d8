package dev.xq.hal.spi;

/**
 * Maps XQ's native queue priority (higher = more urgent, in [{@value #MIN}, {@value #MAX}]) onto
 * a device's stream priority range, where a lower number is more urgent: CUDA's
 * {@code cuCtxGetStreamPriorityRange} and HIP's {@code hipDeviceGetStreamPriorityRange} report
 * {@code least} (e.g. 0) and {@code greatest} (e.g. -5 on Hopper). One rule for every adapter, so
 * that a priority means the same stream level on every vendor's device.
 */
public final class StreamPriorities {

    /** The least urgent native priority. */
    public static final int MIN = -1000;
    /** The most urgent native priority. */
    public static final int MAX = 1000;

    private StreamPriorities() {
    }

    /**
     * Linear, rounded to the nearest level, halves towards the less urgent one (so only a priority
     * above the middle reaches a more urgent stream): {@value #MIN} gives {@code least},
     * {@value #MAX} gives {@code greatest}. A range reported the other way round is normalised
     * rather than inverted.
     *
     * @param nativePriority XQ's priority, or {@code null} for the platform's default stream
     *        priority, 0, clamped into the range
     * @throws IllegalArgumentException naming the value when it is outside [{@value #MIN}, {@value #MAX}]
     */
    public static int toDevice(Integer nativePriority, int least, int greatest) {
        if (greatest > least) {
            int t = greatest;
            greatest = least;
            least = t;
        }
        if (nativePriority == null) {
            return Math.max(greatest, Math.min(least, 0));
        }
        int p = nativePriority;
        if (p < MIN || p > MAX) {
            throw new IllegalArgumentException("native priority " + p + " is out of range [" + MIN + ", " + MAX
                    + "] (higher = more urgent)");
        }
        long span = (long) least - greatest;
        long steps = (long) (p - MIN) * span;
        long total = MAX - MIN;
        // floor((steps + total/2 - 1) / total): half rounds down, the tie goes to the less urgent level
        return (int) (least - (steps + total / 2 - 1) / total);
    }
}
