package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code hhpf} (heterogeneous highest priority first): one priority order across all
 * devices of the node, by group (a process's queues, or a tenant's), so that a group's queues
 * on every device go together.
 *
 * <ul>
 * <li>A group's priority is the highest {@code Priority} hint (0 when absent) among its queues
 * on any device: all its open queues ({@code hhpf.group.priority=all}, the default), or only
 * those with work that the application does not hold ({@code ready}).</li>
 * <li>Each queue ranks at its group's priority, or at its own hint where that is higher (an idle
 * queue under {@code ready}, whose hint would lift the group once it has work). A queue with no
 * group ranks at its own hint.</li>
 * <li>Then as under {@code hpf}: per device the ready queues of the highest rank run together,
 * every other ready queue is suspended; idle queues and queues their application holds are
 * resumed when their rank is at least the device's top ready rank.</li>
 * </ul>
 *
 * <p>So a group whose work on device A has priority 5 ranks at 5 on device B too, even where its
 * queue on B has no hint, and if group X outranks group Y on one device it outranks Y on every
 * device. Under {@code hpf} the order is per device: X's hint-less queue on B would lose to Y's
 * queue with priority 1 while X's queue on A ran above everything.
 *
 * <p>The policy SPI hands a policy the queues of every device in one {@link SchedulerView}, so
 * the group priorities are computed from the whole node at each decision; nothing is kept
 * between decisions, and the decision depends on the view alone (O(queues)).
 */
@Component(configurationPid = HeterogeneousHighestPriorityFirst.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + HeterogeneousHighestPriorityFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = HhpfConfig.class)
public final class HeterogeneousHighestPriorityFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "hhpf";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.hhpf";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile HhpfSettings settings;

    /** For Declarative Services. */
    public HeterogeneousHighestPriorityFirst() {
        this.settings = HhpfSettings.DEFAULTS;
    }

    HeterogeneousHighestPriorityFirst(HhpfSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(HhpfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(HhpfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, HhpfConfig.class, raw, log::warn);
            settings = HhpfSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(HhpfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(HhpfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, HhpfConfig.class, raw, log::warn);
            settings = HhpfSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    HhpfSettings settings() {
        return settings;
    }

    @Override
    public String description() {
        return "heterogeneous highest priority first: one order across all devices, a group's queues everywhere rank at its highest priority hint";
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        Map<String, Integer> groups = groupPriorities(view, settings);
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            int n = queues.size();
            int[] ranks = new int[n];
            int top = Integer.MIN_VALUE;
            for (int i = 0; i < n; i++) {
                QueueView q = queues.get(i);
                ranks[i] = rank(q, groups);
                if (q.runnable()) {
                    top = Math.max(top, ranks[i]);
                }
            }
            for (int i = 0; i < n; i++) {
                decision.set(queues.get(i), ranks[i] >= top);
            }
        }
        decision.applyTo(view, actions);
    }

    /** @return each group's priority over every device of the view */
    static Map<String, Integer> groupPriorities(SchedulerView view, HhpfSettings s) {
        Map<String, Integer> groups = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (q.group() != null && (!s.readyOnly() || q.runnable())) {
                groups.merge(q.group(), q.priority(), Math::max);
            }
        }
        return groups;
    }

    /** @return the queue's rank: its group's priority, or its own hint where higher */
    static int rank(QueueView q, Map<String, Integer> groups) {
        Integer g = q.group() == null ? null : groups.get(q.group());
        return g == null ? q.priority() : Math.max(g, q.priority());
    }
}
