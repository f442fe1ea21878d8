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
     * Asks to be called again at {@code nanos} ({@link System#nanoTime()} clock) even if nothing
     * happens; the earliest request of one decision wins.
     */
    void wakeAt(long nanos);
}
