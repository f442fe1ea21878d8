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

    /** The queue was closed and must be forgotten. */
    void closed(NodeQueue queue);

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
     * How many multiprocessors a queue narrowed instead of held leaves to the queues preferred over
     * it (a higher priority hint) on its device: the widest of their recent launches, rounded up to
     * 8 (the partition step of green contexts on Hopper), at least 8 and at most half the device;
     * half the device for a queue whose width is not known (the node's own).
     *
     * @return the reserve, or -1 when no queue on the device is preferred over {@code queue}
     */
    default int reserveFor(NodeQueue queue) {
        return -1;
    }

    /** @return how long {@code Submission.await} spins around a command's expected end, ns (0: it parks) */
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
