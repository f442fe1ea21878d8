package dev.xq.policy.spi;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A scheduling policy: decides which queues run. Register as an OSGi service with
 * {@code xq.policy=<name>}; the name must be unique on the node and must not be
 * {@code native}. Add {@code xq.policy.bounded=true} ({@link #BOUNDED_PROPERTY}) where every
 * decision is short and never blocks.
 */
@ConsumerType
public interface Policy {

    /** The service property that names the policy. */
    String NAME_PROPERTY = "xq.policy";

    /**
     * Service property ({@code Boolean} or {@code "true"}) by which a policy promises that every
     * decision is short and never blocks, loops or waits for another thread. The node may then
     * run its decisions on the thread that posted the event (an application submitting, a
     * driver reporting a completion) instead of handing each event to its scheduler thread,
     * which saves an OS wake-up per event (its tail is milliseconds on a busy or virtual host).
     * Without it, the policy always decides on the scheduler thread. The watchdog still sets an
     * overrunning policy aside, but cannot take back a posting thread stuck inside it.
     *
     * @since 1.2
     */
    String BOUNDED_PROPERTY = "xq.policy.bounded";

    /** @return one line for operators saying what the policy does */
    String description();

    /**
     * Whether the policy decides space itself: its holds are holds, and it narrows queues
     * ({@link Decision#narrow}, {@link SchedulerActions#narrow}) where it wants them to run beside
     * the queues it prefers. A policy that does not (the default) decides time only, and the node
     * turns its holds of narrowable queues behind higher-priority ones into narrowings by
     * {@link SpaceRule}'s defaults.
     *
     * @return true if the policy's decisions say where queues run, not only when
     * @since 1.3
     */
    default boolean decidesSpace() {
        return false;
    }

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
