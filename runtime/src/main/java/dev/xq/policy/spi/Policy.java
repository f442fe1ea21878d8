package dev.xq.policy.spi;

/**
 * A scheduling policy: decides which queues run. Register as an OSGi service with
 * {@code xq.policy=<name>}; the name must be unique on the node and must not be
 * {@code native}.
 */
public interface Policy {

    /** The service property that names the policy. */
    String NAME_PROPERTY = "xq.policy";

    /** @return one line for operators saying what the policy does */
    String description();

    /**
     * Decides. Called on every queue state change, command completion, hint change, timer the
     * policy asked for, policy swap and device change. Queues the policy says nothing about keep
     * their current state, so a policy can act on changes only.
     */
    void schedule(SchedulerView view, SchedulerActions actions);
}
