package dev.xq.runtime.engine;

/**
 * Arrival guards (docs/runtime.md) as one application queue takes them: the scheduler foresees
 * the arrival of a queue preferred over this one, so what this queue launches until
 * {@code untilNanos} should be done by {@code horizonNanos}. An application queue does not stop
 * launching for it (its level-2 suspend holds what is launched, or its limits bound it); it uses
 * it to spare the device what holding costs: a command expected to end before the horizon is
 * launched unheld ({@link PreemptionControl#nextLaunchUnheld}), since no suspend is foreseen
 * while it runs.
 */
final class ArrivalGuard {

    /** The guard in force: {horizon, until} nanos, both 0 when none. */
    private volatile long[] guard = {0, 0};

    void set(long horizonNanos, long untilNanos) {
        guard = new long[] {horizonNanos, untilNanos};
    }

    /** @return the guard in force: {horizon, until} nanos, both 0 when none */
    long[] get() {
        return guard.clone();
    }

    /** Whether a command expected to end at {@code expectedEnd} ends before the horizon of a guard in force. */
    boolean endsBefore(long expectedEnd) {
        long[] g = guard;
        return g[0] != 0 && System.nanoTime() - g[1] < 0 && expectedEnd - g[0] < 0;
    }
}
