package dev.xq.policy.drf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code bandwidth} (XSched's UP, utilization partition): on each device one ready queue
 * runs at a time, for a slice proportional to its {@code Utilization} hint
 * ({@code bandwidth.default.utilization} without one); queues take turns in handle order,
 * skipping idle ones, so over many rounds each queue's share of device time approaches its
 * utilization over the sum of the ready queues' utilizations (75/25 gives 0.75/0.25). Turn
 * taking and slice lengths are described in {@link Rotation}.
 *
 * <p>Idle queues stay suspended while another queue of the device has work, so an arrival waits
 * for its turn instead of cutting into the current slice; when no queue of the device has work,
 * all are resumed and the first arrival starts at once. Stateless apart from its configuration.
 */
@Component(configurationPid = BandwidthPartition.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + BandwidthPartition.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = BandwidthConfig.class)
public final class BandwidthPartition implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "bandwidth";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.bandwidth";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile BandwidthSettings settings;

    /** For Declarative Services. */
    public BandwidthPartition() {
        this.settings = BandwidthSettings.DEFAULTS;
    }

    BandwidthPartition(BandwidthSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(BandwidthConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(BandwidthConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, BandwidthConfig.class, raw, log::warn);
            settings = BandwidthSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(BandwidthConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(BandwidthConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, BandwidthConfig.class, raw, log::warn);
            settings = BandwidthSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    BandwidthSettings settings() {
        return settings;
    }

    @Override
    public String description() {
        return "bandwidth partition: per device, ready queues take turns with slices proportional to their utilization hints";
    }

    private record QueueMember(QueueView queue, int utilization) implements Rotation.Member {
        @Override
        public boolean ready() {
            return queue.runnable();
        }

        @Override
        public boolean holdsTurn() {
            return Rotation.holdsTurn(queue);
        }

        @Override
        public long turnStart() {
            return queue.lastResumedNanos();
        }

        @Override
        public long lastResumed() {
            return queue.lastResumedNanos();
        }
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        BandwidthSettings s = settings;
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            if (queues.stream().noneMatch(QueueView::runnable)) {
                queues.forEach(decision::run);
                continue;
            }
            List<QueueMember> members = new ArrayList<>(queues.size());
            for (QueueView q : queues) {
                members.add(new QueueMember(q, q.hint(Hint.Utilization.class).map(Hint.Utilization::percent).orElse(s.defaultUtilization())));
            }
            members.sort(Comparator.comparingLong(m -> m.queue().handle()));
            Rotation.Turn turn = Rotation.choose(members, Rotation.roundNanos(queues, s.roundNanos()), view.nowNanos());
            QueueView chosen = members.get(turn.member()).queue();
            for (QueueView q : queues) {
                decision.set(q, q == chosen);
            }
            if (turn.wakeNanos() != Rotation.Turn.NO_WAKE) {
                decision.wakeAt(turn.wakeNanos());
            }
        }
        decision.applyTo(view, actions);
    }
}
