package dev.xq.policy.drf;

import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.HashMap;
import java.util.Map;

/**
 * One decision under construction: run or hold for each queue, plus the earliest timer.
 * Actions are emitted in the view's queue order so that equal views give equal action
 * sequences, whatever order the policy decided in.
 */
final class Decision {

    private final Map<Long, Boolean> run;
    private final long nowNanos;
    private long wakeNanos;
    private boolean wake;

    Decision(SchedulerView view) {
        this.run = HashMap.newHashMap(view.queues().size());
        this.nowNanos = view.nowNanos();
    }

    void run(QueueView q) {
        run.put(q.handle(), Boolean.TRUE);
    }

    void hold(QueueView q) {
        run.put(q.handle(), Boolean.FALSE);
    }

    void set(QueueView q, boolean runIt) {
        run.put(q.handle(), runIt);
    }

    /** Asks for a timer; moments not after the decision's own time are dropped (they would spin). */
    void wakeAt(long nanos) {
        if (nanos - nowNanos <= 0) {
            return;
        }
        if (!wake || nanos - wakeNanos < 0) {
            wakeNanos = nanos;
            wake = true;
        }
    }

    void applyTo(SchedulerView view, SchedulerActions actions) {
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
