package dev.xq.runtime.engine;

/** What a queue tells the node about itself; implemented by the node's core. */
public interface QueueEvents {
    /** The queue's scheduling-relevant state changed (ready, idle, hint, config, app suspend, error). */
    void changed(NodeQueue queue);

    /**
     * The queue became ready, is not held, and nothing on its device contests it: it is alone
     * there, or on top of its device with all of its company held already (the hold on
     * arrival). A decision is due, but nothing it could do needs to happen before the queue's
     * launches, so the posting thread need not make it (see {@link XqCore#arrivedUnopposed}).
     */
    default void arrivedUnopposed(NodeQueue queue) {
        changed(queue);
    }

    /**
     * A view found the queue's process back from a stop (its counters moved after it was found
     * stopped): the queue, held for the stop and perhaps asleep, must be decided for again. Safe
     * from a thread in a decision (the loop thread decides; see {@link XqCore#backFromStop}).
     */
    default void backFromStop(NodeQueue queue) {
        changed(queue);
    }

    /** The queue was closed and must be forgotten. */
    void closed(NodeQueue queue);

    /**
     * A process's queue that counted as no one's company since its open (it had never had work)
     * has its first event from its owner: company from now on. Called before {@link #changed}.
     */
    default void firstWork(NodeQueue queue) {
    }

    /** The queue's hints changed (after {@link #changed}): who shares the device with whom may have. */
    default void hinted(NodeQueue queue) {
    }

    /**
     * @return whether a queue preferred over {@code queue} (a higher priority hint) on its device
     *     has work and fills the device: commands of at least {@code minCommandNanos} on average,
     *     not measured yet, or a queue of the node's own
     */
    default boolean preferredFillsTheDevice(NodeQueue queue, long minCommandNanos) {
        return true;
    }

    /**
     * Where a narrowable queue goes when a policy that decides time only holds it ({@code held})
     * or lets it run, by {@link dev.xq.policy.spi.SpaceRule} with the node's defaults, beside the
     * queues preferred over it (a higher priority hint) on its device.
     *
     * @return {@link dev.xq.policy.spi.SpaceRule#HOLD}, 0 (the whole device) or the
     *     multiprocessors to leave to the preferred queues
     */
    default int spaceFor(NodeQueue queue, boolean held) {
        return held ? dev.xq.policy.spi.SpaceRule.HOLD : 0;
    }

    /**
     * What a queue that is never held in time but can be narrowed (a latency-critical process
     * below another, {@code ExternalQueueImpl#ranked}) leaves while the scheduler holds it: half
     * the device ({@link dev.xq.policy.spi.SpaceRule#cap}) while it is wider than half of it itself
     * and a queue of a higher priority on its device, in the same space (not in a context of its
     * own), also wider than half of it, has work; else 0 (the whole device). A narrow queue (an
     * eager decoder) takes little from a wide one above it, and narrowed it only pays the hops
     * between its stream and the narrowed one.
     */
    default int rankedLeave(NodeQueue queue) {
        return 0;
    }

    /** @return how long {@code Submission.await} spins around a command's expected end, ns (0: it parks) */
    /**
     * @return the window, in microseconds, of a process queue while an arrival guard is in force
     *     on it (0: its own window); see {@code XqCore#guardedWindowMicros(long)}
     */
    default long guardedWindowMicros() {
        return 0;
    }

    /**
     * @return the window, in microseconds, of a process queue while it is narrowed and a queue
     *     wider than half its device, preferred over it, is open there (0: unbounded); see
     *     {@code XqCore#narrowedWindowMicros(long)}
     */
    default long narrowedWindowMicros() {
        return 0;
    }

    /** @return the alone window, in microseconds (0: off); see {@code XqCore#aloneWindowMicros(long)} */
    default long aloneWindowMicros() {
        return 0;
    }

    /**
     * @return whether a queue preferred over {@code queue} (a higher priority hint) is open on its
     *     device and wider than half of it (or of unknown width: a queue of the node's own), busy
     *     or not: one that holds {@code queue} when it arrives and waits for what it left in flight;
     *     {@code decisionNanos} names the decision asking (the answer may be kept for all its queues)
     */
    default boolean widePreferredOpen(NodeQueue queue, long decisionNanos) {
        return true;
    }

    /**
     * @return whether any queue preferred over {@code queue} (a higher priority hint) is open on
     *     its device, busy or not, whatever its width; {@code decisionNanos} as for
     *     {@link #widePreferredOpen}
     */
    default boolean preferredOpen(NodeQueue queue, long decisionNanos) {
        return true;
    }

    /**
     * @return whether a queue off its turn is held by {@code queue}'s decision whatever the policy
     *     decided: in a spell of the measured cut on its device, or with no queue preferred over it
     *     open there (beside a preferred tenant the wide beats decide a turn's holds)
     */
    default boolean offTurnHolds(NodeQueue queue, long decisionNanos) {
        return true;
    }

    /** @return whether a process queue with a part and no queue preferred over it launches without limits; see {@code XqCore#bestEffortUnbounded(boolean)} */
    default boolean bestEffortUnbounded() {
        return false;
    }

    default long awaitSpinNanos() {
        return 0;
    }

    QueueEvents NONE = new QueueEvents() {
        @Override
        public void changed(NodeQueue queue) {
        }

        @Override
        public void closed(NodeQueue queue) {
        }
    };
}
