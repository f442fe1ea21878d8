package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.spi.SpaceRule;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code hpf}: on each device, the ready queues with the highest {@code Priority} hint
 * (0 when a queue has none) run together; every other ready queue is suspended. This is
 * XSched's HPF, deciding space beside time ({@link Policy#decidesSpace()}): a queue that can be
 * narrowed ({@link QueueSpace#narrowable()}) goes where {@link SpaceRule} puts it, narrowed
 * behind the queues above it instead of held, or held in time behind a busy one wider than half
 * the device ({@code holdBehindWide}).
 *
 * <p>Queues that are idle, or held by their application, are resumed exactly when they would
 * run if they became ready now, i.e. when their priority is at least the device's top ready
 * priority (all of them when the device has no ready queue). A high-priority queue then
 * launches the moment work arrives, while a lower one cannot slip commands in front of the
 * running queues before the next decision suspends it.
 *
 * <p>Stateless apart from its configuration: the decision depends on the view alone, so the
 * policy can be swapped in at any moment.
 */
@Component(configurationPid = HighestPriorityFirst.PID,
        property = {Policy.NAME_PROPERTY + "=" + HighestPriorityFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = HpfConfig.class)
public final class HighestPriorityFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "hpf";

    @org.osgi.service.component.annotations.Reference(service = org.osgi.service.log.LoggerFactory.class)
    org.osgi.service.log.Logger log;
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.hpf";

    // Written by Config Admin's thread, read by the deciding one.
    private volatile boolean holdBehindWide = SpaceRule.DEFAULT_HOLD_BEHIND_WIDE;

    /** For Declarative Services, and tests: the defaults. */
    public HighestPriorityFirst() {
    }

    HighestPriorityFirst(boolean holdBehindWide) {
        this.holdBehindWide = holdBehindWide;
    }

    @Activate
    @Modified
    void configure(HpfConfig config, java.util.Map<String, Object> raw) {
        java.util.List<String> bad = dev.xq.runtime.config.ConfigCheck.problems(HpfConfig.class, raw);
        if (!bad.isEmpty()) {
            // 'yes' would be read as false without a word: refused, the value in force stays
            String said = "policy " + NAME + " configuration refused, keeping holdBehindWide=" + holdBehindWide + ": " + String.join("; ", bad);
            if (log != null) {
                log.error(said);
            } else {
                System.getLogger(HighestPriorityFirst.class.getName()).log(System.Logger.Level.ERROR, said);
            }
            return;
        }
        dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, HpfConfig.class, raw, line -> {
            if (log != null) {
                log.warn(line);
            } else {
                System.getLogger(HighestPriorityFirst.class.getName()).log(System.Logger.Level.WARNING, line);
            }
        });
        holdBehindWide = config.holdBehindWide();
    }

    boolean holdBehindWide() {
        return holdBehindWide;
    }

    @Override
    public String description() {
        return "highest priority first: per device, the ready queues with the highest priority hint run, the rest wait "
                + "(queues that can be narrowed run beside them on the rest of the device)";
    }

    @Override
    public boolean decidesSpace() {
        return true;
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        Decision decision = new Decision(view);
        boolean spaced = !view.spaces().isEmpty();
        boolean wide = holdBehindWide;
        for (List<QueueView> queues : view.queuesByDevice()) {
            int top = Integer.MIN_VALUE;
            for (QueueView q : queues) {
                if (q.runnable()) {
                    top = Math.max(top, q.priority());
                }
            }
            SpaceRule.Above above = spaced ? new SpaceRule.Above(view, queues) : null;
            for (QueueView q : queues) {
                boolean run = q.priority() >= top;
                if (above != null && view.space(q.handle()).narrowable()) {
                    SpaceRule.decide(decision, view, above, q, !run, wide);
                } else {
                    decision.set(q, run);
                }
            }
        }
        decision.applyTo(view, actions);
    }
}
