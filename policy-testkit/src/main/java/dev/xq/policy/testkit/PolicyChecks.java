package dev.xq.policy.testkit;

import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.HashSet;
import java.util.Set;

/** Invariants every decision of every policy must keep. */
public final class PolicyChecks {

    private PolicyChecks() {
    }

    /**
     * Every queue gets exactly one action; a device with a ready queue its application does not
     * hold keeps at least one such queue resumed; timers lie in the future.
     */
    public static void assertSafe(SchedulerView view, RecordingActions actions) {
        for (QueueView q : view.queues()) {
            Integer n = actions.decisions.get(q.handle());
            if (n == null || n != 1) {
                throw new AssertionError("queue " + q.handle() + " got " + n + " actions, expected 1; " + actions.log);
            }
        }
        Set<String> withWork = new HashSet<>();
        Set<String> served = new HashSet<>();
        for (QueueView q : view.queues()) {
            if (q.ready() && !q.suspendedByApp()) {
                withWork.add(q.device());
                if (actions.runs(q.handle())) {
                    served.add(q.device());
                }
            }
        }
        withWork.removeAll(served);
        if (!withWork.isEmpty()) {
            throw new AssertionError("devices " + withWork + " have ready queues but all are suspended; view " + view + " actions " + actions.log);
        }
        if (actions.wake != null && actions.wake <= view.nowNanos()) {
            throw new AssertionError("timer " + actions.wake + " is not after now " + view.nowNanos());
        }
    }
}
