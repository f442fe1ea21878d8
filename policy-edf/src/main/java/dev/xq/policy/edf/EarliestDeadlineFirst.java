package dev.xq.policy.edf;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import org.osgi.service.component.annotations.Component;

/**
 * Policy {@code edf}: on each device the ready queue with the earliest absolute deadline runs
 * alone; the ranking (deadline = ready-since + {@code Deadline} hint, queues without a deadline
 * after all that have one, ties by ready-since then handle) is described in {@link DeadlineOrder}.
 * Equal to {@code kedf} with K = 1. Stateless.
 */
@Component(property = Policy.NAME_PROPERTY + "=" + EarliestDeadlineFirst.NAME)
public final class EarliestDeadlineFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "edf";

    @Override
    public String description() {
        return "earliest deadline first: per device, the ready queue whose deadline (ready-since + deadline hint) comes first runs";
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        Decision decision = new Decision(view);
        DeadlineOrder.schedule(view, 1, decision);
        decision.applyTo(view, actions);
    }
}
