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
     * Decides. Called when a queue becomes ready or idle, is created, closed or broken, when a
     * hint, a queue's configuration or an application suspend changes, at the time the policy
     * asked for with {@link SchedulerActions#wakeAt}, on a policy swap and when devices come or
     * go. Not on every completion: a policy that meters device time asks for timers. Queues the
     * policy says nothing about keep their current state, so a policy can act on changes only.
     *
     * <p>Trial calls: when the policy registers and when it is selected, the node calls it a few
     * times off the scheduler's thread, with the live queues plus made-up ready queues (negative
     * handles, named {@code warm-up}) on every device, and throws the actions away. This loads the
     * policy's classes before its first real decision. A policy that keeps state per queue
     * should expect such handles and never see them again.
     */
    void schedule(SchedulerView view, SchedulerActions actions);
}
