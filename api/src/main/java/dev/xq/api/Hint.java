package dev.xq.api;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A scheduling parameter of one queue. Which hints matter depends on the active policy;
 * a policy ignores the hints it does not use. Every hint checks its range when it is made
 * and names the offending value and the allowed range.
 *
 * <p>Every kind of hint is a record here with one entry in {@link Kind}, the one list of kinds:
 * the shell ({@code xq:hint}), the HTTP API and the dashboard parse, list and show hints from it.
 * A new kind is its record (with {@link #text()}) and its {@link Kind} entry, nothing else.
 */
@ProviderType
public sealed interface Hint {

    /** The lowest priority a {@link Priority} hint may carry. */
    int MIN_PRIORITY = -1000;
    /** The highest priority a {@link Priority} hint may carry. */
    int MAX_PRIORITY = 1000;

    /** @return the short name used in the shell ({@code priority}, {@code deadline}, ...): its {@link Kind}'s */
    default String kind() {
        // The six kinds of API 1.2 (priority to demand) override this to return the same thing:
        // their class files had kind(), and the API's baseline (docs/api-versioning.md) counts a
        // method leaving a class as a major change. A new kind needs no override.
        return Kind.of(getClass()).kind();
    }

    /**
     * @return the hint as {@code xq:queues}, {@code xq:top} and the dashboard show it, such as
     *         {@code priority=2}, {@code deadline=5000us}, {@code laxity=1000us/1/5}
     * @since 1.3
     */
    String text();

    /**
     * @return the record's components in order, the numbers that {@link #parse} takes after the
     *         kind ({@code [1000, 1, 5]} for {@code laxity 1000 1 5}); the HTTP API's {@code values}
     * @since 1.3
     */
    default List<Object> values() {
        List<Object> out = new ArrayList<>();
        for (RecordComponent c : getClass().getRecordComponents()) {
            try {
                out.add(c.getAccessor().invoke(this));
            } catch (IllegalAccessException | InvocationTargetException e) {
                throw new IllegalStateException("hint " + getClass().getSimpleName() + " does not give its " + c.getName(), e);
            }
        }
        return List.copyOf(out);
    }

    /**
     * Higher runs first (policies {@code hpf}, {@code hpf-aging}).
     * @param value in [{@value #MIN_PRIORITY}, {@value #MAX_PRIORITY}]
     */
    record Priority(int value) implements Hint {
        public Priority {
            if (value < MIN_PRIORITY || value > MAX_PRIORITY) {
                throw new IllegalArgumentException("priority " + value + " is out of range [" + MIN_PRIORITY + ", " + MAX_PRIORITY + "]");
            }
        }

        /** Declared by the kinds of API 1.2 only (see {@link Hint#kind()}). */
        @Override
        public String kind() {
            return Hint.super.kind();
        }

        @Override
        public String text() {
            return "priority=" + value;
        }
    }

    /**
     * Relative deadline of the queue's current task, counted from the moment the queue became
     * ready (policies {@code edf}, {@code kedf}).
     * @param micros in [1, 3_600_000_000]
     */
    record Deadline(long micros) implements Hint {
        public Deadline {
            if (micros < 1 || micros > 3_600_000_000L) {
                throw new IllegalArgumentException("deadline " + micros + " us is out of range [1, 3600000000] us");
            }
        }

        /** Declared by the kinds of API 1.2 only (see {@link Hint#kind()}). */
        @Override
        public String kind() {
            return Hint.super.kind();
        }

        @Override
        public String text() {
            return "deadline=" + micros + "us";
        }
    }

    /**
     * Least-laxity scheduling: the queue may wait {@code micros} after becoming ready; while it
     * waits it runs at {@code priority}, and once its laxity is used up at {@code criticalPriority}.
     */
    record Laxity(long micros, int priority, int criticalPriority) implements Hint {
        public Laxity {
            if (micros < 0 || micros > 3_600_000_000L) {
                throw new IllegalArgumentException("laxity " + micros + " us is out of range [0, 3600000000] us");
            }
            new Priority(priority);
            new Priority(criticalPriority);
            if (criticalPriority < priority) {
                throw new IllegalArgumentException("critical priority " + criticalPriority + " must be >= laxity priority " + priority);
            }
        }

        /** Declared by the kinds of API 1.2 only (see {@link Hint#kind()}). */
        @Override
        public String kind() {
            return Hint.super.kind();
        }

        @Override
        public String text() {
            return "laxity=" + micros + "us/" + priority + "/" + criticalPriority;
        }
    }

    /**
     * Share of device time (policy {@code bandwidth}).
     * @param percent in [1, 100]
     */
    record Utilization(int percent) implements Hint {
        public Utilization {
            if (percent < 1 || percent > 100) {
                throw new IllegalArgumentException("utilization " + percent + "% is out of range [1, 100]%");
            }
        }

        /** Declared by the kinds of API 1.2 only (see {@link Hint#kind()}). */
        @Override
        public String kind() {
            return Hint.super.kind();
        }

        @Override
        public String text() {
            return "utilization=" + percent + "%";
        }
    }

    /**
     * Length of one time slice (policy {@code bandwidth}).
     * @param micros in [100, 10_000_000]
     */
    record Timeslice(long micros) implements Hint {
        public Timeslice {
            if (micros < 100 || micros > 10_000_000L) {
                throw new IllegalArgumentException("timeslice " + micros + " us is out of range [100, 10000000] us");
            }
        }

        /** Declared by the kinds of API 1.2 only (see {@link Hint#kind()}). */
        @Override
        public String kind() {
            return Hint.super.kind();
        }

        @Override
        public String text() {
            return "timeslice=" + micros + "us";
        }
    }

    /**
     * What one task of this queue occupies on its device at once (policy {@code drf}).
     * @param engines execution engines, in [0, 1_000_000]
     * @param memoryBytes device memory, in [0, 2^50]
     */
    record Demand(int engines, long memoryBytes) implements Hint {
        public Demand {
            if (engines < 0 || engines > 1_000_000) {
                throw new IllegalArgumentException("demand engines " + engines + " is out of range [0, 1000000]");
            }
            if (memoryBytes < 0 || memoryBytes > (1L << 50)) {
                throw new IllegalArgumentException("demand memory " + memoryBytes + " bytes is out of range [0, " + (1L << 50) + "]");
            }
            if (engines == 0 && memoryBytes == 0) {
                throw new IllegalArgumentException("demand <0 engines, 0 bytes> is empty; at least one must be positive");
            }
        }

        /** Declared by the kinds of API 1.2 only (see {@link Hint#kind()}). */
        @Override
        public String kind() {
            return Hint.super.kind();
        }

        @Override
        public String text() {
            return "demand=" + engines + "e/" + mebiOrGibi(memoryBytes);
        }
    }

    /**
     * The queue's group (its process, for the node's process queues; its tenant, for a host
     * application's) owns the active window of a desktop display (policy {@code awf}). XQ cannot
     * see a desktop: whoever watches the focus says so (a desktop monitor through the HTTP API,
     * XSched's window-active hint on {@code POST /hint}, an operator with {@code xq:hint}).
     *
     * <p>Marks order the focus changes: per display, the group whose queues carry the highest
     * mark owns that display's active window, so the most recently marked group wins and the one
     * marked before it needs no clearing. Mark 0 means "not active" and clears an earlier mark of
     * the queue. In the shell's form the mark may be the word {@code now}: {@link #nextMark()}, the
     * node's clock in milliseconds, never the same twice. Marks typed by hand work too (1, 2, 3,
     * ...), but do not mix them with {@code now} on one display: any clock reading is higher.
     *
     * @param display the display, numbered as X11 numbers them ({@code :0} is 0), in [0, {@value #MAX_DISPLAY}]
     * @param mark in [0, {@value Long#MAX_VALUE}]; 0 = not active
     * @since 1.4
     */
    record WindowActive(int display, long mark) implements Hint {

        /** The highest display number a {@link WindowActive} hint may carry. */
        public static final int MAX_DISPLAY = 1_000_000;

        private static final java.util.concurrent.atomic.AtomicLong LAST_MARK = new java.util.concurrent.atomic.AtomicLong();

        public WindowActive {
            if (display < 0 || display > MAX_DISPLAY) {
                throw new IllegalArgumentException("window-active display " + display + " is out of range [0, " + MAX_DISPLAY + "]");
            }
            if (mark < 0) {
                throw new IllegalArgumentException("window-active mark " + mark + " is out of range [0, " + Long.MAX_VALUE
                        + "] (0: not active; now: the node's clock)");
            }
        }

        /**
         * @return a mark for a focus change now: the wall clock in milliseconds, but always above
         *         every mark this method returned before in this JVM, so two changes in the same
         *         millisecond are still ordered
         */
        public static long nextMark() {
            long now = System.currentTimeMillis();
            return LAST_MARK.updateAndGet(last -> Math.max(last + 1, now));
        }

        /** @return whether this hint marks the window active (its mark is positive) */
        public boolean active() {
            return mark > 0;
        }

        @Override
        public String text() {
            return "window-active=:" + display + "@" + (mark == 0 ? "off" : Long.toString(mark));
        }

        /**
         * Turns the shell's mark {@code now} into {@link #nextMark()}, before the values are parsed
         * as numbers, and refuses a mark that is neither a whole number (ASCII digits) nor {@code now}.
         */
        static String[] resolveMark(String[] values) {
            String mark = values[1];
            if ("now".equals(mark)) {
                values[1] = Long.toString(nextMark());
                return values;
            }
            int i = mark != null && !mark.isEmpty() && (mark.charAt(0) == '-' || mark.charAt(0) == '+') ? 1 : 0;
            boolean digits = mark != null && i < mark.length();
            for (; digits && i < mark.length(); i++) {
                digits = mark.charAt(i) >= '0' && mark.charAt(i) <= '9';
            }
            if (!digits) {
                throw new IllegalArgumentException("window-active mark " + mark + " is neither a whole number nor now");
            }
            return values;
        }
    }

    /**
     * The kinds of hint: the one list that parsing, the shell's usage, the HTTP API and the
     * dashboard read. Each entry names its record, the shell's word for it, its values as
     * {@code xq:hint} shows them in its usage, an example of them, and how they become the
     * record (a {@link NumberFormatException} there is reported as "not a whole number").
     * @since 1.3
     */
    enum Kind {
        PRIORITY(Priority.class, "priority", "N", "2",
                v -> new Priority(Integer.parseInt(v[0]))),
        DEADLINE(Deadline.class, "deadline", "US", "5000",
                v -> new Deadline(Long.parseLong(v[0]))),
        LAXITY(Laxity.class, "laxity", "US PRIO CRITICAL_PRIO", "1000 1 5",
                v -> new Laxity(Long.parseLong(v[0]), Integer.parseInt(v[1]), Integer.parseInt(v[2]))),
        UTILIZATION(Utilization.class, "utilization", "PERCENT", "50",
                v -> new Utilization(Integer.parseInt(v[0]))),
        TIMESLICE(Timeslice.class, "timeslice", "US", "2000",
                v -> new Timeslice(Long.parseLong(v[0]))),
        DEMAND(Demand.class, "demand", "ENGINES BYTES", "2 1073741824",
                v -> new Demand(Integer.parseInt(v[0]), Long.parseLong(v[1]))),
        /** @since 1.4 */
        WINDOW_ACTIVE(WindowActive.class, "window-active", "DISPLAY MARK", "0 1", WindowActive::resolveMark,
                v -> new WindowActive(Integer.parseInt(v[0]), Long.parseLong(v[1])));

        private final Class<? extends Hint> type;
        private final String kind;
        private final List<String> valueNames;
        private final List<String> example;
        private final Function<String[], Hint> parser;
        /** Turns the words a kind takes for numbers (window-active's {@code now}) into them; the identity for most. */
        private final UnaryOperator<String[]> words;

        Kind(Class<? extends Hint> type, String kind, String valueNames, String example, Function<String[], Hint> parser) {
            this(type, kind, valueNames, example, UnaryOperator.identity(), parser);
        }

        Kind(Class<? extends Hint> type, String kind, String valueNames, String example, UnaryOperator<String[]> words,
             Function<String[], Hint> parser) {
            this.type = type;
            this.kind = kind;
            this.valueNames = List.of(valueNames.split(" "));
            this.example = List.of(example.split(" "));
            this.words = words;
            this.parser = parser;
        }

        /** @return the record of this kind */
        public Class<? extends Hint> type() {
            return type;
        }

        /** @return the shell's word for it, {@link Hint#kind()} */
        public String kind() {
            return kind;
        }

        /** @return the names of its values, as the usage shows them ({@code [US, PRIO, CRITICAL_PRIO]}) */
        public List<String> valueNames() {
            return valueNames;
        }

        /** @return example values ({@code [1000, 1, 5]}) */
        public List<String> example() {
            return example;
        }

        /** @return the shell form, such as {@code laxity US PRIO CRITICAL_PRIO} */
        public String usage() {
            return kind + " " + String.join(" ", valueNames);
        }

        /**
         * Makes the hint from its values as typed, such as {@code ["1000", "1", "5"]} for laxity.
         * @throws IllegalArgumentException naming the value and what is allowed
         */
        public Hint parse(String... values) {
            if (values.length != valueNames.size()) {
                throw new IllegalArgumentException(kind + " takes " + valueNames.size() + (valueNames.size() == 1 ? " value" : " values")
                        + " (" + String.join(" ", valueNames) + "), got " + values.length);
            }
            // each value as typed: a word that is no number (or the word a value takes for one) is named by
            // its place and what that value allows, as the shell, the HTTP API and ./xq all say it
            List<Typed> typed = Typed.OF.get(this);
            for (int i = 0; i < values.length; i++) {
                if (!typed.get(i).written(values[i])) {
                    throw new IllegalArgumentException(refusal(i, values[i], "is not a whole number", typed.get(i)));
                }
            }
            // words that stand for numbers become those numbers before anything reads the values as numbers
            String[] asTyped = values;
            values = words.apply(values.clone());
            try {
                for (String v : values) {
                    // Java's parsing also takes other scripts' digits (Arabic-Indic, Devanagari, ...)
                    if (v == null || !v.matches("[+-]?[0-9]+")) {
                        throw new NumberFormatException(v);
                    }
                }
                return parser.apply(values.clone());
            } catch (NumberFormatException e) {
                // written as a number, but beyond what its type holds (a mark of 2^63): named with its range
                for (int i = 0; i < asTyped.length; i++) {
                    if (!typed.get(i).inRange(asTyped[i])) {
                        throw new IllegalArgumentException(refusal(i, asTyped[i], "is out of range", typed.get(i)), e);
                    }
                }
                throw new IllegalArgumentException("hint " + kind + " value " + String.join(" ", values) + " is not a whole number", e);
            }
        }

        private String refusal(int i, String word, String what, Typed t) {
            return "hint " + kind + " " + (valueNames.size() == 1 ? "value" : "values[" + i + "]") + " " + quote(word) + " " + what
                    + "; allowed: " + t.allowed();
        }

        /** @return the word in single quotes (so that an empty one shows), shortened past 100 characters */
        private static String quote(String word) {
            if (word == null) {
                return "null";
            }
            return word.length() > 100 ? "'" + word.substring(0, 100) + "...' (" + word.length() + " characters)" : "'" + word + "'";
        }

        /**
         * What one value of a kind allows as typed: a whole number in a range (the range its record
         * checks), or a word standing for one ({@code now} for window-active's mark).
         */
        private record Typed(String name, long min, long max, boolean now, String note) {

            Typed(String name, long min, long max) {
                this(name, min, max, false, "");
            }

            static final long MAX_MICROS = 3_600_000_000L;

            /** Each kind's values, in order. */
            static final java.util.Map<Kind, List<Typed>> OF = new java.util.EnumMap<>(java.util.Map.of(
                    PRIORITY, List.of(new Typed("N", MIN_PRIORITY, MAX_PRIORITY)),
                    DEADLINE, List.of(new Typed("US", 1, MAX_MICROS)),
                    LAXITY, List.of(new Typed("US", 0, MAX_MICROS), new Typed("PRIO", MIN_PRIORITY, MAX_PRIORITY),
                            new Typed("CRITICAL_PRIO", MIN_PRIORITY, MAX_PRIORITY, false, ", at least PRIO")),
                    UTILIZATION, List.of(new Typed("PERCENT", 1, 100)),
                    TIMESLICE, List.of(new Typed("US", 100, 10_000_000L)),
                    DEMAND, List.of(new Typed("ENGINES", 0, 1_000_000), new Typed("BYTES", 0, 1L << 50, false, ", not both 0")),
                    WINDOW_ACTIVE, List.of(new Typed("DISPLAY", 0, WindowActive.MAX_DISPLAY),
                            new Typed("MARK", 0, Long.MAX_VALUE, true, " (0: not active)"))));

            /** @return what is allowed, such as {@code PRIO, a whole number in [-1000, 1000]} */
            String allowed() {
                return name + ", a whole number in [" + min + ", " + max + "]" + note + (now ? " or now" : "");
            }

            /** @return whether the word is written as this value may be: ASCII digits with an optional sign, or now where it stands for one */
            boolean written(String word) {
                if (now && "now".equals(word)) {
                    return true;
                }
                return word != null && word.matches("[+-]?[0-9]+");
            }

            boolean inRange(String word) {
                if (now && "now".equals(word)) {
                    return true;
                }
                java.math.BigInteger v = new java.math.BigInteger(word);
                return v.compareTo(java.math.BigInteger.valueOf(min)) >= 0 && v.compareTo(java.math.BigInteger.valueOf(max)) <= 0;
            }
        }

        /**
         * @return the kind the shell calls {@code kind}
         * @throws IllegalArgumentException for a word no kind has (the message lists them)
         */
        public static Kind of(String kind) {
            Objects.requireNonNull(kind, "kind");
            for (Kind k : values()) {
                if (k.kind.equals(kind)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("hint kind '" + kind + "' is unknown; allowed: " + names());
        }

        /** @return the kind whose record {@code type} is */
        public static Kind of(Class<? extends Hint> type) {
            for (Kind k : values()) {
                if (k.type == type) {
                    return k;
                }
            }
            throw new IllegalStateException("hint record " + type.getName() + " has no entry in Hint.Kind");
        }

        /** @return the kinds' words, comma-separated: {@code priority, deadline, ...} */
        public static String names() {
            return Arrays.stream(values()).map(Kind::kind).collect(Collectors.joining(", "));
        }

        /** @return every kind's {@link #usage()}, comma-separated: {@code priority N, deadline US, ...} */
        public static String usages() {
            return Arrays.stream(values()).map(Kind::usage).collect(Collectors.joining(", "));
        }
    }

    /**
     * Parses the shell form of a hint, such as {@code priority 2}, {@code deadline 5000},
     * {@code laxity 1000 1 5}, {@code demand 3 1073741824}: {@link Kind#of(String)}, then
     * {@link Kind#parse}.
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static Hint parse(String kind, String... values) {
        return Kind.of(kind).parse(values);
    }

    private static String mebiOrGibi(long bytes) {
        return bytes >= (1L << 30) ? String.format("%.1fGiB", bytes / (double) (1L << 30))
                : String.format("%.1fMiB", bytes / (double) (1L << 20));
    }
}
