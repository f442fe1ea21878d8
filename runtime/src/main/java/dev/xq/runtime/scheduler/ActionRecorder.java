package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SpaceRule;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Collects one decision's actions; the last word on a queue wins; handles the view does not know are ignored. */
final class ActionRecorder implements SchedulerActions {
    final Map<Long, Boolean> decided = new LinkedHashMap<>();
    private final Set<Long> known;
    /** The policy decides space: its suspends are holds in time, its resumes the whole device. */
    private final boolean space;
    /** The queues narrowed by this decision and what each leaves; null until the first. */
    private Map<Long, Integer> narrowed;
    long wake = Long.MAX_VALUE;

    ActionRecorder(Set<Long> known) {
        this(known, false);
    }

    ActionRecorder(Set<Long> known, boolean decidesSpace) {
        this.known = known;
        this.space = decidesSpace;
    }

    @Override
    public void suspend(long handle) {
        if (known.contains(handle)) {
            decided.put(handle, Boolean.TRUE);
            if (narrowed != null) {
                narrowed.remove(handle);
            }
        }
    }

    @Override
    public void resume(long handle) {
        if (known.contains(handle)) {
            decided.put(handle, Boolean.FALSE);
            if (narrowed != null) {
                narrowed.remove(handle);
            }
        }
    }

    /** A narrowing counts as a hold for the rest of the scheduler (guards, the queues on top). */
    @Override
    public void narrow(long handle, int leaveSms) {
        if (leaveSms < 1) {
            suspend(handle); // what narrowing to nothing means; Decision refuses it, a hand-written policy may not
            return;
        }
        if (known.contains(handle)) {
            decided.put(handle, Boolean.TRUE);
            if (narrowed == null) {
                narrowed = new HashMap<>();
            }
            narrowed.put(handle, leaveSms);
        }
    }

    /** @return whether this decision narrowed any queue */
    boolean narrows() {
        return narrowed != null && !narrowed.isEmpty();
    }

    /** @return what this decision narrowed {@code handle} to leave, 0 when it did not narrow it */
    int narrowedLeave(long handle) {
        Integer n = narrowed == null ? null : narrowed.get(handle);
        return n == null ? 0 : n;
    }

    /**
     * Turns this decision's narrowing of {@code handle} into a hold in time ({@code hold}) or a
     * run on the whole device (ArrivalGuards' wide beats); a queue it did not narrow is left alone.
     */
    void unnarrow(long handle, boolean hold) {
        if (narrowed != null && narrowed.remove(handle) != null) {
            decided.put(handle, hold);
        }
    }

    /**
     * Narrows a queue this decision narrowed to leave {@code leaveSms} instead (ArrivalGuards' wide
     * beats, beside a narrow tenant's reserve); a queue it did not narrow is left alone.
     */
    void renarrow(long handle, int leaveSms) {
        if (narrowed != null && leaveSms > 0 && narrowed.containsKey(handle)) {
            narrowed.put(handle, leaveSms);
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
                Integer leave = narrowed == null ? null : narrowed.get(e.getKey());
                if (leave != null || (space && q.placed())) {
                    // space decided by the policy: applied every time (the reserve may change while the state stays)
                    boolean was = q.isSuspendedByScheduler();
                    q.place(leave != null ? leave : suspend ? SpaceRule.HOLD : 0, decisionNanos);
                    n += was != suspend ? 1 : 0;
                } else if (q.isSuspendedByScheduler() != suspend || (suspend && q.holdStale())) {
                    if (space) {
                        q.place(suspend ? SpaceRule.HOLD : 0, decisionNanos);
                    } else {
                        q.schedule(suspend, decisionNanos);
                    }
                    n++;
                }
            }
        }
        return n;
    }
}
