package dev.xq.policy.spi;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import java.util.List;
import java.util.Optional;

/**
 * One XQueue as a policy sees it at the moment of a decision.
 *
 * @param handle the queue's handle, used in {@link SchedulerActions}
 * @param group the tenant or process the queue belongs to
 * @param ready whether it has work (pending or in flight)
 * @param suspended whether the scheduler holds it back now (the previous decision)
 * @param suspendedByApp whether the application holds it back (the policy cannot change that)
 * @param readySinceNanos when it last became ready ({@link System#nanoTime()} clock); 0 when idle
 * @param runNanos device time its commands used so far, completed commands only
 * @param lastResumedNanos when the scheduler last let it run; 0 if never
 * @param pending commands held by XQ
 * @param inFlight commands launched to the hardware and not yet ended
 * @param completed commands completed so far
 * @param estimatedCommandNanos measured device time per command (0 before the first completion)
 * @param hints its hints
 * @param level the preemption level in use
 */
public record QueueView(long handle, String name, String device, String group,
                        boolean ready, boolean suspended, boolean suspendedByApp,
                        long readySinceNanos, long runNanos, long lastResumedNanos,
                        int pending, int inFlight, long completed, long estimatedCommandNanos,
                        List<Hint> hints, PreemptionLevel level) {

    public QueueView {
        hints = List.copyOf(hints);
    }

    /** @return the hint of this type, if set */
    public <H extends Hint> Optional<H> hint(Class<H> type) {
        for (Hint h : hints) {
            if (type.isInstance(h)) {
                return Optional.of(type.cast(h));
            }
        }
        return Optional.empty();
    }

    /**
     * @return whether the scheduler can actually let the queue run: it has work and its
     *         application does not hold it
     * @since 1.2
     */
    public boolean runnable() {
        return ready && !suspendedByApp;
    }

    /** @return the priority hint's value, or 0 when there is none */
    public int priority() {
        return hint(Hint.Priority.class).map(Hint.Priority::value).orElse(0);
    }
}
