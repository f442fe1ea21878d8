package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.List;
import org.osgi.service.component.annotations.Component;

/**
 * Policy {@code hpf}: on each device, the ready queues with the highest {@code Priority} hint
 * (0 when a queue has none) run together; every other ready queue is suspended. This is
 * XSched's HPF.
 *
 * <p>Queues that are idle, or held by their application, are resumed exactly when they would
 * run if they became ready now, i.e. when their priority is at least the device's top ready
 * priority (all of them when the device has no ready queue). A high-priority queue then
 * launches the moment work arrives, while a lower one cannot slip commands in front of the
 * running queues before the next decision suspends it.
 *
 * <p>Stateless: the decision depends on the view alone, so the policy can be swapped in at
 * any moment.
 */
@Component(property = {Policy.NAME_PROPERTY + "=" + HighestPriorityFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
public final class HighestPriorityFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "hpf";

    @Override
    public String description() {
        return "highest priority first: per device, the ready queues with the highest priority hint run, the rest wait";
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            int top = Integer.MIN_VALUE;
            for (QueueView q : queues) {
                if (q.runnable()) {
                    top = Math.max(top, q.priority());
                }
            }
            for (QueueView q : queues) {
                decision.set(q, q.priority() >= top);
            }
        }
        decision.applyTo(view, actions);
    }
}
