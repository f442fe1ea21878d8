package dev.xq.policy.spi;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A policy's decision under construction: run or hold for each queue, plus the earliest timer.
 * {@link #applyTo} emits the actions in the view's queue order, so equal views give equal
 * action sequences whatever order the policy decided in. It belongs to one decision, which
 * runs on one thread, and is not thread-safe.
 */
public final class Decision {

    private final Map<Long, Boolean> run;
    private final long nowNanos;
    private long wakeNanos;
    private boolean wake;

    /**
     * @param view the view being decided on; its time bounds the timers {@link #wakeAt} keeps
     * @throws NullPointerException if {@code view} is null
     */
    public Decision(SchedulerView view) {
        Objects.requireNonNull(view, "view");
        this.run = HashMap.newHashMap(view.queues().size());
        this.nowNanos = view.nowNanos();
    }

    /** Lets {@code q} run; a later call for the same queue replaces this one. */
    public void run(QueueView q) {
        run.put(q.handle(), Boolean.TRUE);
    }

    /** Holds {@code q} suspended; a later call for the same queue replaces this one. */
    public void hold(QueueView q) {
        run.put(q.handle(), Boolean.FALSE);
    }

    /** Runs {@code q} if {@code runIt}, else holds it. */
    public void set(QueueView q, boolean runIt) {
        run.put(q.handle(), runIt);
    }

    /** Asks for a timer; moments not after the decision's own time are dropped (they would spin). */
    public void wakeAt(long nanos) {
        if (nanos - nowNanos <= 0) {
            return;
        }
        if (!wake || nanos - wakeNanos < 0) {
            wakeNanos = nanos;
            wake = true;
        }
    }

    /**
     * Emits one resume or suspend per decided queue of {@code view}, in view order, then the
     * earliest timer if any; queues nothing was decided for get no action.
     */
    public void applyTo(SchedulerView view, SchedulerActions actions) {
        for (QueueView q : view.queues()) {
            Boolean r = run.get(q.handle());
            if (r == null) {
                continue;
            }
            if (r) {
                actions.resume(q.handle());
            } else {
                actions.suspend(q.handle());
            }
        }
        if (wake) {
            actions.wakeAt(wakeNanos);
        }
    }
}
