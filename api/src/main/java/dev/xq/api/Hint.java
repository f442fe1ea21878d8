package dev.xq.api;

import java.util.Objects;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A scheduling parameter of one queue. Which hints matter depends on the active policy;
 * a policy ignores the hints it does not use. Every hint checks its range when it is made
 * and names the offending value and the allowed range.
 */
@ProviderType
public sealed interface Hint {

    /** The lowest priority a {@link Priority} hint may carry. */
    int MIN_PRIORITY = -1000;
    /** The highest priority a {@link Priority} hint may carry. */
    int MAX_PRIORITY = 1000;

    /** @return the short name used in the shell ({@code priority}, {@code deadline}, ...) */
    String kind();

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

        @Override
        public String kind() {
            return "priority";
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

        @Override
        public String kind() {
            return "deadline";
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

        @Override
        public String kind() {
            return "laxity";
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

        @Override
        public String kind() {
            return "utilization";
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

        @Override
        public String kind() {
            return "timeslice";
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

        @Override
        public String kind() {
            return "demand";
        }
    }

    /**
     * Parses the shell form of a hint, such as {@code priority 2}, {@code deadline 5000},
     * {@code laxity 1000 1 5}, {@code demand 3 1073741824}.
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static Hint parse(String kind, String... values) {
        Objects.requireNonNull(kind, "kind");
        try {
            return switch (kind) {
                case "priority" -> new Priority(Integer.parseInt(one(kind, values)));
                case "deadline" -> new Deadline(Long.parseLong(one(kind, values)));
                case "utilization" -> new Utilization(Integer.parseInt(one(kind, values)));
                case "timeslice" -> new Timeslice(Long.parseLong(one(kind, values)));
                case "laxity" -> {
                    if (values.length != 3) {
                        throw new IllegalArgumentException("laxity takes 3 values (micros priority criticalPriority), got " + values.length);
                    }
                    yield new Laxity(Long.parseLong(values[0]), Integer.parseInt(values[1]), Integer.parseInt(values[2]));
                }
                case "demand" -> {
                    if (values.length != 2) {
                        throw new IllegalArgumentException("demand takes 2 values (engines memoryBytes), got " + values.length);
                    }
                    yield new Demand(Integer.parseInt(values[0]), Long.parseLong(values[1]));
                }
                default -> throw new IllegalArgumentException("hint kind '" + kind + "' is unknown; allowed: priority, deadline, laxity, utilization, timeslice, demand");
            };
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("hint " + kind + " value " + String.join(" ", values) + " is not a whole number", e);
        }
    }

    private static String one(String kind, String[] values) {
        if (values.length != 1) {
            throw new IllegalArgumentException(kind + " takes 1 value, got " + values.length);
        }
        return values[0];
    }
}
