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

    /**
     * Says that the queue's work in flight delays only queues this decision ranks below it (a
     * priority policy's top queue among all open ones on its device), so its launch limits protect
     * nobody: the node lets it keep up to its alone window in flight ({@code dev.xq.scheduler}
     * {@code aloneWindowMicros}), as if it were alone on the device. Holds for this decision only:
     * a queue not named in the next one gets its limits back. A node that does not know it ignores it.
     * @since 1.3
     */
    default void widen(long handle) {
    }
}
