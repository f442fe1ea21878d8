package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SpaceRule;

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
     * Whether a decision that holds it must be applied again although it is held already: its
     * current hold is not the one such a decision gives (a process's queue held in time while its
     * process was stopped, where a hold is a narrowing; {@code ExternalQueueImpl}). Default: no.
     */
    default boolean holdStale() {
        return false;
    }

    /**
     * With {@code -Dxq.trace.wideBeats=true}: when the node was first told of the work the queue
     * has been ready with since {@code readySinceNanos} (its owner's word read; {@link
     * System#nanoTime()}), 0 unknown. The node's reaction to an arrival ({@code ArrivalReactions})
     * is split by it into the word's way to the node and the node's own part. Default: unknown.
     */
    default long toldNanos(long readySinceNanos) {
        return 0;
    }

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

    /**
     * Whether the queue tells the scheduler by itself when its <em>first</em> work comes, held or
     * not, and would launch nothing a decision needs to see before that: then, never used (nothing
     * completed, no device time) and idle, decisions may leave it out while it is let go too
     * ({@link DormantQueues}); its first launch goes through as a just opened queue's does, and
     * its event brings it to the next decision. Default: no.
     */
    default boolean wakesWhenUsed() {
        return false;
    }

    /** @return its place in space for policies ({@link QueueSpace#NONE}: decided in time only) */
    default QueueSpace space() {
        return QueueSpace.NONE;
    }

    /**
     * Applies a decision of a policy that decides space itself: {@link SpaceRule#HOLD} holds the
     * queue in time, 0 lets it run on the whole device, n &gt; 0 lets it run on the device less n
     * multiprocessors. A queue that cannot be narrowed is held for n &gt; 0.
     */
    default void place(int leaveSms, long decisionNanos) {
        schedule(leaveSms != 0, decisionNanos);
    }

    /**
     * @return in how many equal parts the device is split among the best-effort processes with
     *     work, of which this queue's process has one (1: not split, or not a process queue)
     */
    default int partCount() {
        return 1;
    }

    /**
     * @return the fraction of what it may use that this queue's process has among the best-effort
     *     processes with work (1/{@link #partCount()} for equal parts; 1: not split)
     */
    default double partFraction() {
        return 1.0 / Math.max(1, partCount());
    }

    /**
     * The wide beats found {@code availNanos} between the requests of a wide queue above this one
     * for its commands (at {@code now}): what a split among best-effort processes weighted by what
     * fits may use. Default: nothing.
     */
    default void fitGap(long availNanos, long now) {
    }

    /**
     * Whether the scheduler's holds and limits pass this queue by: its process has the whole
     * device in space (a latency-critical MPS client), so a hold decided for it is never applied.
     * Default: no (every queue the node holds in time).
     */
    default boolean spaceOnly() {
        return false;
    }

    /**
     * Whether the process that owns this queue is stopped now (SIGSTOP, a debugger, job control):
     * it can neither launch nor see its commands end, so its making no progress says nothing of
     * how the scheduler treats it. Default: never (the node's own queues).
     */
    default boolean ownerStopped() {
        return false;
    }

    /**
     * @return whether best-effort processes take turns on all of what they may use and it is
     *     another's turn: the wide beats then hold it between a wide queue's requests too
     */
    default boolean offTurn() {
        return false;
    }

    /** @return whether {@link #place} matters even when the suspended state stays (a narrowable queue's reserve may change) */
    default boolean placed() {
        return false;
    }

    /**
     * @return {busy periods timed, of which slow}: the device lag its process told the node
     *     ({@link dev.xq.external.spi.ExternalQueueShare#lags()}); {0, 0} where none is told
     */
    default long[] lags() {
        return new long[2];
    }
}
