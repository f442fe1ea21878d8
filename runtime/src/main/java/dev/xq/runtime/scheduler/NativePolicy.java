package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;

/** The built-in policy and the fallback: every queue runs, as the hardware would do alone. */
final class NativePolicy implements Policy {

    static final String DESCRIPTION = "built-in: every queue runs; the hardware arbitrates (also the fallback)";
    static final NativePolicy INSTANCE = new NativePolicy();

    @Override
    public String description() {
        return DESCRIPTION;
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        for (QueueView q : view.queues()) {
            if (q.suspended()) {
                actions.resume(q.handle());
            }
        }
    }
}
