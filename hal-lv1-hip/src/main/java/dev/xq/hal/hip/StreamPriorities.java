package dev.xq.hal.hip;

/**
 * Maps XQ's native queue priority (higher = more urgent, in [-1000, 1000]) onto a device's HIP
 * stream priority range, where a lower number is more urgent ({@code greatest <= least}).
 */
final class StreamPriorities {

    static final int XQ_MIN = -1000;
    static final int XQ_MAX = 1000;

    private StreamPriorities() {
    }

    /**
     * Linear, rounding to the nearest HIP level (halves towards the less urgent one, so that
     * only a priority above the middle reaches a more urgent stream). -1000 gives {@code least},
     * 1000 gives {@code greatest}.
     *
     * @throws IllegalArgumentException naming the value when it is outside [-1000, 1000]
     */
    static int toHip(int xqPriority, int least, int greatest) {
        if (xqPriority < XQ_MIN || xqPriority > XQ_MAX) {
            throw new IllegalArgumentException("native priority " + xqPriority + " is out of range [" + XQ_MIN + ", "
                    + XQ_MAX + "] (higher = more urgent)");
        }
        if (greatest > least) {
            // A library reporting the range the other way round: normalise rather than invert urgency.
            int t = greatest;
            greatest = least;
            least = t;
        }
        long span = (long) least - greatest;
        long steps = (long) (xqPriority - XQ_MIN) * span;
        long total = XQ_MAX - XQ_MIN;
        // floor((steps + total/2 - 1) / total) rounds half down: the tie goes to the less urgent level
        long levelsUp = (steps + total / 2 - 1) / total;
        return (int) (least - levelsUp);
    }
}
