package dev.xq.policy.edf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.List;
import org.osgi.service.component.annotations.Component;

/**
 * Policy {@code lax}, with XSched's laxity semantics. A ready queue with a
 * {@code Laxity(micros, priority, criticalPriority)} hint has effective priority
 * {@code priority} while its laxity lasts and {@code criticalPriority} once it is used up, i.e.
 * once {@code now - readySince >= micros}; a queue without the hint has priority 0 (its
 * {@code Priority} hint is not consulted, as in XSched). On each device the ready queues with the
 * highest effective priority run together, the others wait. A timer fires at the moment a queue
 * turns critical whenever that changes who runs.
 *
 * <p>An idle queue (or one its application holds) is resumed when the priority it would have if
 * it became ready now ({@code criticalPriority} for zero laxity) is at least the device's top
 * effective priority. Stateless.
 */
@Component(property = {Policy.NAME_PROPERTY + "=" + LeastLaxityFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
public final class LeastLaxityFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "lax";

    @Override
    public String description() {
        return "laxity: a queue runs at its laxity priority until its laxity is used up, then at its critical priority; the highest run";
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        long now = view.nowNanos();
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            int top = Integer.MIN_VALUE;
            for (QueueView q : queues) {
                if (q.runnable()) {
                    top = Math.max(top, effectivePriority(q, q.readySinceNanos(), now));
                }
            }
            for (QueueView q : queues) {
                if (!q.runnable()) {
                    decision.set(q, effectivePriority(q, now, now) >= top);
                    continue;
                }
                decision.set(q, effectivePriority(q, q.readySinceNanos(), now) >= top);
                Hint.Laxity lax = q.hint(Hint.Laxity.class).orElse(null);
                if (lax != null && lax.criticalPriority() > lax.priority() && lax.criticalPriority() >= top) {
                    decision.wakeAt(criticalAt(lax, q.readySinceNanos()));
                }
            }
        }
        decision.applyTo(view, actions);
    }

    private static long criticalAt(Hint.Laxity lax, long readySince) {
        return readySince + lax.micros() * 1000;
    }

    private static int effectivePriority(QueueView q, long readySince, long now) {
        Hint.Laxity lax = q.hint(Hint.Laxity.class).orElse(null);
        if (lax == null) {
            return 0;
        }
        return now - criticalAt(lax, readySince) >= 0 ? lax.criticalPriority() : lax.priority();
    }
}
