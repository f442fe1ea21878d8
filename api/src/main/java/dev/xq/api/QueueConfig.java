package dev.xq.api;

/**
 * How an XQueue launches work to its hardware queue.
 *
 * @param level the preemption level wished for; the queue uses the lower of this and what its
 *              hardware queue offers now (a provider bundle can raise that later)
 * @param threshold most commands in flight at once, in [1, {@value #MAX_THRESHOLD}]
 * @param batch once {@code threshold} is reached, launching resumes when in-flight drops to
 *              {@code threshold - batch}; in [1, threshold]
 * @param windowMicros time budget: launch only while the estimated device time of the commands
 *              in flight stays within this many microseconds; two commands may always be in
 *              flight once their size is known (one before), so that the device never waits for
 *              the host; 0 turns the budget off; in [0, {@value #MAX_WINDOW_MICROS}]
 */
public record QueueConfig(PreemptionLevel level, int threshold, int batch, long windowMicros) {

    /** Largest allowed threshold. */
    public static final int MAX_THRESHOLD = 1 << 20;
    /** Largest allowed window. */
    public static final long MAX_WINDOW_MICROS = 60_000_000L;
    /** XSched's default threshold. */
    public static final int DEFAULT_THRESHOLD = 16;
    /** XSched's default batch. */
    public static final int DEFAULT_BATCH = 8;
    /** XQ's default time budget of in-flight work. */
    public static final long DEFAULT_WINDOW_MICROS = 300;

    public QueueConfig {
        if (level == null) {
            throw new IllegalArgumentException("level is missing; allowed: 1 (block), 2 (deactivate), 3 (interrupt)");
        }
        if (threshold < 1 || threshold > MAX_THRESHOLD) {
            throw new IllegalArgumentException("threshold " + threshold + " is out of range [1, " + MAX_THRESHOLD + "]");
        }
        if (batch < 1 || batch > threshold) {
            throw new IllegalArgumentException("batch " + batch + " is out of range [1, threshold=" + threshold + "]");
        }
        if (windowMicros < 0 || windowMicros > MAX_WINDOW_MICROS) {
            throw new IllegalArgumentException("window " + windowMicros + " us is out of range [0, " + MAX_WINDOW_MICROS + "] us (0 = off)");
        }
    }

    /** @return XQ's defaults: the highest level, threshold 16, batch 8, window 300 us */
    public static QueueConfig defaults() {
        return new QueueConfig(PreemptionLevel.INTERRUPT, DEFAULT_THRESHOLD, DEFAULT_BATCH, DEFAULT_WINDOW_MICROS);
    }

    /** @return XSched's Lv1 behaviour: threshold and batch only, no time budget */
    public static QueueConfig xsched(int threshold, int batch) {
        return new QueueConfig(PreemptionLevel.INTERRUPT, threshold, batch, 0);
    }

    /** @return no throttling at all: every command goes to the hardware queue at once */
    public static QueueConfig unthrottled() {
        return new QueueConfig(PreemptionLevel.BLOCK, MAX_THRESHOLD, 1, 0);
    }

    public QueueConfig withLevel(PreemptionLevel l) {
        return new QueueConfig(l, threshold, batch, windowMicros);
    }

    /** Sets the threshold, lowering batch to it where batch would exceed it. */
    public QueueConfig withThreshold(int t) {
        return new QueueConfig(level, t, Math.max(1, Math.min(batch, t)), windowMicros);
    }

    public QueueConfig withBatch(int b) {
        return new QueueConfig(level, threshold, b, windowMicros);
    }

    public QueueConfig withWindowMicros(long w) {
        return new QueueConfig(level, threshold, batch, w);
    }

    /**
     * Applies one shell-style setting: {@code level 1..3}, {@code threshold N}, {@code batch N},
     * {@code window MICROS}.
     * @throws IllegalArgumentException naming the key or value and what is allowed
     */
    public QueueConfig with(String key, String value) {
        long v;
        try {
            v = Long.parseLong(asciiDigits(value));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " value '" + value + "' is not a whole number", e);
        }
        return switch (key) {
            // a value beyond int is named as typed (4294967299 was reported as level 2147483647)
            case "level" -> withLevel(PreemptionLevel.of(v < Integer.MIN_VALUE || v > Integer.MAX_VALUE ? Math.toIntExact(levelOutOfRange(v)) : (int) v));
            case "threshold" -> withThreshold(toInt(key, v));
            case "batch" -> withBatch(toInt(key, v));
            case "window" -> withWindowMicros(v);
            default -> throw new IllegalArgumentException("queue setting '" + key + "' is unknown; allowed: level, threshold, batch, window");
        };
    }

    private static long levelOutOfRange(long v) {
        throw new IllegalArgumentException("preemption level " + v + " is not one of 1 (block), 2 (deactivate), 3 (interrupt)");
    }

    private static int toInt(String key, long v) {
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key + " " + v + " is out of range [1, " + MAX_THRESHOLD + "]");
        }
        return (int) v;
    }

    /**
     * @return {@code text} when it is a whole number written in ASCII digits (an optional sign, then
     *         0-9 only); Java's own parsing also takes other scripts' digits (Arabic-Indic, Devanagari...)
     * @throws NumberFormatException otherwise
     */
    private static String asciiDigits(String text) {
        // a loop, not a regular expression: the process protocol parses every WAKE line with it
        int n = text == null ? 0 : text.length();
        int i = n > 0 && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        if (i == n) {
            throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
        }
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
            }
        }
        return text;
    }
}
