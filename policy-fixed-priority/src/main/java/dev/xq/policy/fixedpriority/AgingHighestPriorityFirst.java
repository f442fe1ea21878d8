package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code hpf-aging}: {@link HighestPriorityFirst} plus anti-starvation aging.
 *
 * <p>Per device, let {@code top} be the highest base priority ({@code Priority} hint, 0 when
 * absent) among ready queues. Queues at {@code top} run. A ready queue below {@code top} that is
 * suspended ages: once it has waited longer than {@code aging.threshold}, its effective priority
 * rises by {@code aging.rate} levels per ms of further waiting; when it reaches {@code top} it is
 * resumed and runs beside the top queues (aging never lifts a queue above {@code top}, so it never
 * suspends a top queue, and top queues never age). For {@code aging.quantum} after it was resumed
 * it keeps the priority of the queues that were already ready then; afterwards it falls back to
 * its base priority, is suspended, and starts to wait again. A queue that became ready after the
 * aged queue was resumed and outranks it preempts it as usual.
 *
 * <p><b>Waiting bound.</b> With p_hi the top priority and p_lo a waiting queue's priority, the
 * queue waits at most
 * <pre>  W = aging.threshold + (p_hi - p_lo + 1) / aging.rate ms + the in-flight work of the running queues</pre>
 * from the moment it became ready, or from the end of its last quantum, to the moment it is
 * resumed (a timer fires exactly when it reaches {@code top}, so no other event is needed; the
 * in-flight term is what preemption level 1 lets run after a suspend). If a queue was cut off
 * less than {@code aging.quantum} after it was resumed, by a higher queue that became ready
 * after that resume (or went idle and ready again between two decisions, which looks the same
 * in the view), its wait counts from where that quantum would have ended, which adds at most
 * one quantum to W. The same holds for a queue that goes idle and becomes ready again inside
 * its own quantum (an application that submits its next task as soon as one ends): measured
 * from the new work's arrival, it waits at most W + {@code aging.quantum}. The test
 * {@code AgingBoundTest} checks the first two on a simulated clock; {@code ./xq bench aging}
 * measures the last on a node.
 *
 * <p><b>Waiting clock.</b> The view has no "suspended since" time, so a queue is taken to wait
 * since the later of: it became ready; its last resume plus {@code aging.quantum}. Nothing
 * that the queues above it do (going idle and ready again, taking turns) moves this clock, so
 * the bound holds however they behave. The price: a queue that ran much longer than a quantum
 * before a higher queue preempted it counts as having waited since its quantum ended, so at the
 * next decision it may join the top queues for one quantum at once.
 *
 * <p>Idle queues, and queues their application holds, are resumed when their base priority is at
 * least {@code top}, as under {@code hpf}. Stateless apart from its configuration.
 */
@Component(configurationPid = AgingHighestPriorityFirst.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + AgingHighestPriorityFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = AgingConfig.class)
public final class AgingHighestPriorityFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "hpf-aging";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.hpf-aging";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile AgingSettings settings;

    /** For Declarative Services. */
    public AgingHighestPriorityFirst() {
        this.settings = AgingSettings.DEFAULTS;
    }

    AgingHighestPriorityFirst(AgingSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(AgingConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(AgingConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, AgingConfig.class, raw, log::warn);
            settings = AgingSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(AgingConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(AgingConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, AgingConfig.class, raw, log::warn);
            settings = AgingSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    AgingSettings settings() {
        return settings;
    }

    @Override
    public String description() {
        return "highest priority first with aging: a queue waiting longer than aging.threshold climbs to the top priority and runs for aging.quantum";
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        AgingSettings s = settings;
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            decide(queues, view.nowNanos(), s, decision);
        }
        decision.applyTo(view, actions);
    }

    private static void decide(List<QueueView> queues, long now, AgingSettings s, Decision decision) {
        int top = Integer.MIN_VALUE;
        for (QueueView q : queues) {
            if (q.runnable()) {
                top = Math.max(top, q.priority());
            }
        }
        if (top == Integer.MIN_VALUE) {
            for (QueueView q : queues) {
                decision.run(q);
            }
            return;
        }
        ReadyOrder order = null;
        for (QueueView q : queues) {
            int base = q.priority();
            if (base >= top) {
                decision.run(q);
                continue;
            }
            if (!q.runnable()) {
                decision.hold(q);
                continue;
            }
            long resumed = q.lastResumedNanos();
            if (!q.suspended()) {
                boolean inQuantum = resumed != 0 && now - resumed < s.quantumNanos();
                if (inQuantum && order == null) {
                    order = new ReadyOrder(queues);
                }
                // It ties with the queues that were ready when it was resumed; later arrivals outrank it.
                if (inQuantum && Math.max(base, order.maxPriorityReadyBy(resumed)) >= top) {
                    decision.run(q);
                    decision.wakeAt(resumed + s.quantumNanos());
                } else {
                    decision.hold(q);
                    // Held at the end of its quantum: it must age again without waiting for another
                    // event, which a top queue that never goes idle would never send.
                    decision.wakeAt(waitingSince(q, s) + s.thresholdNanos() + s.nanosToGain(top - base));
                }
                continue;
            }
            long reachesTop = waitingSince(q, s) + s.thresholdNanos() + s.nanosToGain(top - base);
            if (now - reachesTop >= 0) {
                decision.run(q);
                decision.wakeAt(now + s.quantumNanos());
            } else {
                decision.hold(q);
                decision.wakeAt(reachesTop);
            }
        }
    }

    private static long waitingSince(QueueView q, AgingSettings s) {
        long resumed = q.lastResumedNanos();
        return resumed == 0 ? q.readySinceNanos() : Math.max(q.readySinceNanos(), resumed + s.quantumNanos());
    }
}
