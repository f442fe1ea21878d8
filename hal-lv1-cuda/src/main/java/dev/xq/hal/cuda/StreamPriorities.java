package dev.xq.hal.cuda;

/**
 * Maps XQ's native queue priority (higher = more urgent, [-1000, 1000]) onto a CUDA context's
 * stream priority range, where a lower number is more urgent: cuCtxGetStreamPriorityRange
 * gives {@code least} (e.g. 0) and {@code greatest} (e.g. -5 on Hopper).
 */
final class StreamPriorities {

    static final int MIN = -1000;
    static final int MAX = 1000;

    private StreamPriorities() {
    }

    /**
     * @param nativePriority XQ's priority, or {@code null} for CUDA's default stream priority (0,
     *        clamped into the range)
     * @return the CUDA stream priority: -1000 gives {@code least}, 1000 gives {@code greatest},
     *         evenly in between, rounded to the nearest level
     * @throws IllegalArgumentException if {@code nativePriority} is outside [-1000, 1000]
     */
    static int toCuda(Integer nativePriority, int least, int greatest) {
        if (nativePriority == null) {
            return Math.max(greatest, Math.min(least, 0));
        }
        int p = nativePriority;
        if (p < MIN || p > MAX) {
            throw new IllegalArgumentException("native priority " + p + " is out of range [" + MIN + ", " + MAX
                    + "] (higher = more urgent)");
        }
        long span = (long) greatest - least;
        return least + (int) Math.round((p - (double) MIN) * span / (MAX - MIN));
    }
}
