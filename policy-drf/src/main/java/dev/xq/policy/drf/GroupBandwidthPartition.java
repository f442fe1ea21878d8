package dev.xq.policy.drf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code bandwidth-group} (XSched's PUP, per-process utilization partition): like
 * {@code bandwidth}, but the members taking turns are the groups (tenants, processes) of a
 * device, in name order. A group's utilization is the largest {@code Utilization} hint among its
 * queues on the device ({@code bandwidth.default.utilization} if none has one). During a group's
 * slice all its queues on the device run, idle ones included, so its new work starts at once;
 * every other group's queues are suspended. Turn taking is described in {@link Rotation}; a
 * group's turn began at the earliest resume among its running queues. Unlike XSched, a group does
 * not bank the unused rest of a slice. The same policy is also registered under XSched's name
 * {@code pup} ({@link ProcessUtilizationPartition}, which says why it is not a second policy).
 * Stateless apart from its configuration.
 */
@Component(configurationPid = GroupBandwidthPartition.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + GroupBandwidthPartition.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = BandwidthConfig.class)
public final class GroupBandwidthPartition implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "bandwidth-group";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.bandwidth-group";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile BandwidthSettings settings;

    /** For Declarative Services. */
    public GroupBandwidthPartition() {
        this.settings = BandwidthSettings.DEFAULTS;
    }

    GroupBandwidthPartition(BandwidthSettings settings, Logger log) {
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
        return "group bandwidth partition (XSched's PUP; also selectable as pup): per device, groups take turns with slices proportional to their utilization hints";
    }

    /** A group's queues on one device. */
    private static final class GroupMember implements Rotation.Member {
        final List<QueueView> queues = new ArrayList<>();
        int utilization;
        boolean hinted;

        void add(QueueView q) {
            queues.add(q);
            Hint.Utilization u = q.hint(Hint.Utilization.class).orElse(null);
            if (u != null) {
                utilization = hinted ? Math.max(utilization, u.percent()) : u.percent();
                hinted = true;
            }
        }

        @Override
        public int utilization() {
            return utilization;
        }

        @Override
        public boolean ready() {
            for (QueueView q : queues) {
                if (q.runnable()) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public boolean holdsTurn() {
            for (QueueView q : queues) {
                if (Rotation.holdsTurn(q)) {
                    return true;
                }
            }
            return false;
        }

        /** The earliest resume among its running queues (never-resumed ones aside): when the group's turn began. */
        @Override
        public long turnStart() {
            long start = 0;
            for (QueueView q : queues) {
                long r = q.lastResumedNanos();
                if (Rotation.holdsTurn(q) && r != 0 && (start == 0 || r < start)) {
                    start = r;
                }
            }
            return start;
        }

        @Override
        public long lastResumed() {
            long latest = 0;
            for (QueueView q : queues) {
                latest = Math.max(latest, q.lastResumedNanos());
            }
            return latest;
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
            Map<String, GroupMember> groups = new TreeMap<>();
            for (QueueView q : queues) {
                groups.computeIfAbsent(DominantResourceFairness.tenantOf(q), g -> new GroupMember()).add(q);
            }
            List<GroupMember> members = new ArrayList<>(groups.values());
            for (GroupMember g : members) {
                if (!g.hinted) {
                    g.utilization = s.defaultUtilization();
                }
            }
            Rotation.Turn turn = Rotation.choose(members, Rotation.roundNanos(queues, s.roundNanos()), view.nowNanos());
            GroupMember chosen = members.get(turn.member());
            for (GroupMember g : members) {
                for (QueueView q : g.queues) {
                    decision.set(q, g == chosen);
                }
            }
            if (turn.wakeNanos() != Rotation.Turn.NO_WAKE) {
                decision.wakeAt(turn.wakeNanos());
            }
        }
        decision.applyTo(view, actions);
    }
}
