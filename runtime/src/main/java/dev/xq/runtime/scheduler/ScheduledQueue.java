package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;

/**
 * What the scheduler needs of a queue: a view to decide on and a way to apply the decision.
 * Both kinds of queue implement it: the node's own (commands submitted through the API) and
 * external ones (commands launched by a process through the interposer).
 */
public interface ScheduledQueue {
    long handle();

    /** A snapshot for the policy; {@code null} once closed. Cheap: it runs in every decision. */
    QueueView view();

    /** Whether the last decision applied holds it back. */
    boolean isSuspendedByScheduler();

    /**
     * Applies the decision taken at {@code decisionNanos}; a resume records that time as the
     * queue's last resume, so policy timers computed from the view line up with it.
     */
    void schedule(boolean suspend, long decisionNanos);

    /**
     * Keeps the queue clear of a foreseen arrival of a queue preferred over it (see
     * {@code ArrivalGuards}): what it launches from now on should be done by {@code horizonNanos};
     * after {@code untilNanos} the guard lapses. Both 0: no guard. A queue that cannot bound what
     * it launches ignores it.
     */
    default void guard(long horizonNanos, long untilNanos) {
    }

    /**
     * Whether the scheduler holds this queue now in a way that keeps back all its work, and the
     * queue tells the scheduler by itself ({@code Scheduler.signal(queue)}) when work comes: then,
     * idle, decisions may leave it out until it does ({@link DormantQueues}). Default: no.
     */
    default boolean wakesWhenHeld() {
        return false;
    }
}
