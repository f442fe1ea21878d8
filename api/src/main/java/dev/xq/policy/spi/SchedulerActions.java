package dev.xq.policy.spi;

import org.osgi.annotation.versioning.ProviderType;

/**
 * What a policy may do. Actions are recorded during {@link Policy#schedule} and applied when
 * it returns; a handle that is not in the view is ignored.
 */
@ProviderType
public interface SchedulerActions {

    /** Holds the queue back at its preemption level. */
    void suspend(long handle);

    /** Lets the queue run again (an application's own suspend still applies). */
    void resume(long handle);

    /**
     * Lets the queue run on its device less {@code leaveSms} multiprocessors, which the queues the
     * policy prefers keep ({@link QueueSpace}, {@link SpaceRule}). Honoured for a queue whose
     * {@link QueueSpace#narrowable()} is true; by default, and for any other queue, a
     * {@link #suspend}.
     *
     * @param leaveSms the multiprocessors to leave to others, at least 1
     * @since 1.3
     */
    default void narrow(long handle, int leaveSms) {
        suspend(handle);
    }

    /**
     * Asks to be called again at {@code nanos} ({@link System#nanoTime()} clock) even if nothing
     * happens; the earliest request of one decision wins.
     */
    void wakeAt(long nanos);
}
