package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.SchedulerActions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Collects one decision's actions; the last word on a queue wins; handles the view does not know are ignored. */
final class ActionRecorder implements SchedulerActions {
    final Map<Long, Boolean> decided = new LinkedHashMap<>();
    private final Set<Long> known;
    long wake = Long.MAX_VALUE;

    ActionRecorder(Set<Long> known) {
        this.known = known;
    }

    @Override
    public void suspend(long handle) {
        if (known.contains(handle)) {
            decided.put(handle, Boolean.TRUE);
        }
    }

    @Override
    public void resume(long handle) {
        if (known.contains(handle)) {
            decided.put(handle, Boolean.FALSE);
        }
    }

    @Override
    public void wakeAt(long nanos) {
        wake = Math.min(wake, nanos);
    }

    /**
     * Resumes the queues this decision hands the device, before any suspend: a queue handed the
     * device gets its work back on the hardware (restore, reactivate, launch) while the other one
     * is still being interrupted, so the device switches with no gap but the save itself.
     * @return how many queues were resumed
     */
    int applyResumes(Map<Long, ScheduledQueue> byHandle, long decisionNanos) {
        return apply(byHandle, decisionNanos, false);
    }

    /** Suspends the queues this decision holds back; after {@link #applyResumes}. @return how many */
    int applySuspends(Map<Long, ScheduledQueue> byHandle, long decisionNanos) {
        return apply(byHandle, decisionNanos, true);
    }

    private int apply(Map<Long, ScheduledQueue> byHandle, long decisionNanos, boolean suspend) {
        int n = 0;
        for (var e : decided.entrySet()) {
            if (e.getValue() == suspend) {
                ScheduledQueue q = byHandle.get(e.getKey());
                if (q.isSuspendedByScheduler() != suspend) {
                    q.schedule(suspend, decisionNanos);
                    n++;
                }
            }
        }
        return n;
    }
}
