package dev.xq.runtime.engine;

/**
 * When each command a queue launches is expected to end: for a waiter's spin and looks
 * ({@link SubmissionImpl#await()}) and for the unheld launch ({@link ArrivalGuard}).
 *
 * <p>Not thread-safe: the owner calls it holding its {@code control} lock (the launching thread).
 */
final class ExpectedEnds {

    /** When the command launched last is expected to end (for await's spin). */
    private long lastExpectedEndNanos = Long.MIN_VALUE;

    /** @return when a command of {@code estimate} ns launched now is expected to end; 0 without an estimate */
    long of(long estimate) {
        // it ends one estimate after the later of now and its predecessor's expected end
        return estimate > 0 ? Math.max(System.nanoTime(), lastExpectedEndNanos) + estimate : 0;
    }

    /** {@code s} went to the hardware with {@code estimate} and {@link #of} that. */
    void launched(SubmissionImpl s, long estimate, long expectedEnd) {
        if (estimate > 0) {
            lastExpectedEndNanos = expectedEnd;
        }
        if (s.spinNanos > 0) {
            // for a waiter's spin
            s.launched(estimate > 0 ? expectedEnd : SubmissionImpl.NO_ESTIMATE);
        }
    }
}
