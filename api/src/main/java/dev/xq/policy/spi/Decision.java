package dev.xq.policy.spi;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A policy's decision under construction: run, hold or narrow for each queue, plus the earliest
 * timer.
 * {@link #applyTo} emits the actions in the view's queue order, so equal views give equal
 * action sequences whatever order the policy decided in. It belongs to one decision, which
 * runs on one thread, and is not thread-safe.
 */
public final class Decision {

    private final Map<Long, Boolean> run;
    /** the queues narrowed (and what each leaves to others); created on the first narrowing */
    private Map<Long, Integer> narrowed;
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
        set(q, true);
    }

    /** Holds {@code q} suspended; a later call for the same queue replaces this one. */
    public void hold(QueueView q) {
        set(q, false);
    }

    /** Runs {@code q} if {@code runIt}, else holds it. */
    public void set(QueueView q, boolean runIt) {
        run.put(q.handle(), runIt);
        if (narrowed != null) {
            narrowed.remove(q.handle());
        }
    }

    /**
     * Lets {@code q} run on its device less {@code leaveSms} multiprocessors, which the queues
     * the policy prefers keep ({@link SchedulerActions#narrow}); a later call for the same queue
     * replaces this one. Only for a queue whose {@link QueueSpace#narrowable()} is true; a
     * scheduler that cannot narrow holds the queue instead.
     *
     * @param leaveSms the multiprocessors to leave to others, at least 1
     * @throws IllegalArgumentException if {@code leaveSms} is below 1
     * @since 1.3
     */
    public void narrow(QueueView q, int leaveSms) {
        if (leaveSms < 1) {
            throw new IllegalArgumentException("leaveSms " + leaveSms + " must be at least 1 (run the queue instead)");
        }
        run.put(q.handle(), Boolean.FALSE);
        if (narrowed == null) {
            narrowed = new HashMap<>();
        }
        narrowed.put(q.handle(), leaveSms);
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
     * Emits one resume, suspend or narrow per decided queue of {@code view}, in view order, then
     * the earliest timer if any; queues nothing was decided for get no action.
     */
    public void applyTo(SchedulerView view, SchedulerActions actions) {
        for (QueueView q : view.queues()) {
            Boolean r = run.get(q.handle());
            if (r == null) {
                continue;
            }
            Integer leave = narrowed == null ? null : narrowed.get(q.handle());
            if (leave != null) {
                actions.narrow(q.handle(), leave);
            } else if (r) {
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
