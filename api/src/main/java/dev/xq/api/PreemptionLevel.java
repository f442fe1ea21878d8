package dev.xq.api;

/**
 * How deeply a queue can be preempted. Each level includes the ones below it.
 */
public enum PreemptionLevel {
    /** Lv1: stop launching pending commands; commands already in flight still run. */
    BLOCK(1),
    /** Lv2: also keep launched-but-not-started commands from starting. */
    DEACTIVATE(2),
    /** Lv3: also stop the running command mid-way and resume it later. */
    INTERRUPT(3);

    private final int number;

    PreemptionLevel(int number) {
        this.number = number;
    }

    /** @return 1, 2 or 3 */
    public int number() {
        return number;
    }

    /**
     * @param number 1, 2 or 3
     * @return the level with that number
     * @throws IllegalArgumentException naming the value when it is not 1, 2 or 3
     */
    public static PreemptionLevel of(int number) {
        for (PreemptionLevel l : values()) {
            if (l.number == number) {
                return l;
            }
        }
        throw new IllegalArgumentException("preemption level " + number + " is not one of 1 (block), 2 (deactivate), 3 (interrupt)");
    }

    /** @return the lower of the two levels */
    public PreemptionLevel min(PreemptionLevel other) {
        return number <= other.number ? this : other;
    }

    /** @return the higher of the two levels */
    public PreemptionLevel max(PreemptionLevel other) {
        return number >= other.number ? this : other;
    }
}
