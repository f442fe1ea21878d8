package dev.xq.runtime.engine;

import java.util.List;

/**
 * The hold on arrival (docs/runtime.md) of one queue: the core names the queues it is on top of
 * (the policy held each of them whenever this one had work; empty when it is not on top). When
 * the queue becomes ready, they are suspended at once, on the submitting thread, before its
 * first command is launched and before the policy decides: the decision that follows (the
 * announce) confirms that or resumes them. At level 2 this keeps their next command from
 * starting while this queue's launch and the decision run (tens of microseconds each on a
 * busy host, against the ~0.1 ms a command of theirs then holds the device).
 */
final class HoldOnArrival {

    /** The queues the owner is on top of; empty unless it is on top of its device. */
    private volatile List<NodeQueue> queues = List.of();

    /** The core names the queues the owner is on top of (empty: it is not on top). */
    void set(List<NodeQueue> others) {
        queues = List.copyOf(others);
    }

    /** @return the queues held when the owner becomes ready */
    List<NodeQueue> queues() {
        return queues;
    }

    /**
     * Holds them: called when the owner became ready (and is not held itself: a queue held itself
     * would not take the device from them).
     *
     * @return whether the owner is on top of its device: its whole company is held now
     */
    boolean holdOthers() {
        List<NodeQueue> others = queues;
        if (others.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        for (NodeQueue o : others) {
            if (!o.isSuspendedByScheduler()) {
                o.schedule(true, now);
            }
        }
        return true;
    }
}
