package dev.xq.http;

import dev.xq.api.Hint;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What each value of each kind of hint allows: the xserver-compatible {@code POST /hint} names a
 * field's range from here ({@link XschedApi}). The ranges are the ones the records of {@link Hint}
 * check; {@code XqApiTest.hintValueRangesAreHintsOwn} holds the two together (each bound taken,
 * one beyond it refused, for every kind).
 */
final class HintValues {

    /**
     * One value of a kind.
     *
     * @param name as {@link Hint.Kind#valueNames()} names it
     * @param now whether the word {@code now} stands for a number here (window-active's mark)
     * @param note what else is allowed or meant, after the range (may be empty)
     */
    record Value(String name, long min, long max, boolean now, String note) {

        Value(String name, long min, long max) {
            this(name, min, max, false, "");
        }

        /** @return what is allowed, such as {@code PRIO, a whole number in [-1000, 1000]} */
        String allowed() {
            return name + ", a whole number in [" + min + ", " + max + "]" + note + (now ? " or now" : "");
        }
    }

    static final long MAX_MICROS = 3_600_000_000L;
    static final Value PRIORITY = new Value("N", Hint.MIN_PRIORITY, Hint.MAX_PRIORITY);
    static final Value UTILIZATION = new Value("PERCENT", 1, 100);
    static final Value TIMESLICE = new Value("US", 100, 10_000_000L);

    /** Every kind's values, in order; a kind missing here is parsed with {@link Hint.Kind}'s words alone. */
    static final Map<Hint.Kind, List<Value>> VALUES = new EnumMap<>(Map.of(
            Hint.Kind.PRIORITY, List.of(PRIORITY),
            Hint.Kind.DEADLINE, List.of(new Value("US", 1, MAX_MICROS)),
            Hint.Kind.LAXITY, List.of(new Value("US", 0, MAX_MICROS), new Value("PRIO", Hint.MIN_PRIORITY, Hint.MAX_PRIORITY),
                    new Value("CRITICAL_PRIO", Hint.MIN_PRIORITY, Hint.MAX_PRIORITY, false, ", at least PRIO")),
            Hint.Kind.UTILIZATION, List.of(UTILIZATION),
            Hint.Kind.TIMESLICE, List.of(TIMESLICE),
            Hint.Kind.DEMAND, List.of(new Value("ENGINES", 0, 1_000_000), new Value("BYTES", 0, 1L << 50, false,
                    ", not both 0")),
            Hint.Kind.WINDOW_ACTIVE, List.of(new Value("DISPLAY", 0, Hint.WindowActive.MAX_DISPLAY),
                    new Value("MARK", 0, Long.MAX_VALUE, true, " (0: not active)"))));

    private HintValues() {
    }

    /**
     * Makes a hint from its values as sent: {@link Hint.Kind#parse}, which names a value that is
     * not a whole number or beyond its range by its place ({@code hint laxity values[1] 'x' is not a
     * whole number; allowed: PRIO, a whole number in [-1000, 1000]}), as the shell and {@code ./xq hint} say it.
     *
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static Hint parse(String kind, String... words) {
        return Hint.Kind.of(kind).parse(words);
    }
}
