package dev.xq.policy.drf;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code cfs} (XSched's CFS, after Linux's completely fair scheduler): weighted fair share
 * of device time by virtual runtime. Each queue weighs {@link NiceWeights#weight(QueueView)}:
 * Linux's nice scale, nice = the {@code Priority} hint negated (no hint: nice 0, weight 1024).
 * Its virtual runtime grows by the device time its commands use times 1024 / weight, so a queue
 * of twice the weight may use twice the device time for the same virtual runtime. Over a run
 * with the same queues always ready, each gets device time in proportion to its weight
 * (priorities 0, 3, 6 weigh 1024, 2000, 3906: shares 0.148, 0.289, 0.564, near 1:2:4).
 *
 * <p>Per device one ready queue runs at a time (its turn). A turn lasts {@code cfs.latency}
 * times the queue's weight over the ready queues' total weight, at least
 * {@code cfs.min.granularity}; when it is over (a timer is set for it) or the queue has no more
 * work, the ready queue with the least virtual runtime runs next (on a tie, one other than the
 * queue whose turn ended, then the lowest handle). A lone ready queue runs with no timer; when
 * no queue of the device has work, all are resumed so the first arrival starts at once. Idle
 * queues are held while another queue of the device has work, so an arrival waits for its turn
 * instead of cutting into the current one (no wake-up preemption: an arrival waits at most one
 * turn).
 *
 * <p><b>No banked credit.</b> A queue that was idle (or held by its application), or is new,
 * gets on becoming ready a virtual runtime of at least the least virtual runtime of the queues
 * that were already ready on its device (of the device's running minimum when none is), as CFS
 * places a waking task: idling earns nothing, so a queue back from idleness runs for one turn
 * and then takes turns like the others. Going idle and ready again between two decisions counts
 * the same.
 *
 * <p><b>What is charged.</b> Device time comes from the view ({@code runNanos}, completed
 * commands), so commands that were still in flight at the end of a turn are charged to their own
 * queue when they complete, not to the next one. Device time used while this policy was not
 * deciding (more than {@link CfsSettings#forgetAfterNanos()}, at least 1 s, since its previous
 * decision: another policy was selected) is not charged, so a swap does not settle old accounts.
 *
 * <p>Unlike the other policies of this bundle it keeps state between decisions: virtual runtimes
 * per queue and each device's minimum. State of queues that are gone (and of the node's trial
 * queues) is dropped at the next decision. Decisions are serialised on the instance, so a trial
 * decision off the scheduler's thread cannot interleave with a real one; each is O(queues).
 */
@Component(configurationPid = CompletelyFair.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + CompletelyFair.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = CfsConfig.class)
public final class CompletelyFair implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "cfs";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.cfs";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile CfsSettings settings;

    /** What the policy keeps of one queue. */
    private static final class Entity {
        /** Virtual runtime, in nanoseconds of a nice-0 queue. */
        double vruntime;
        /** runNanos when last charged. */
        long charged;
        /** Whether it was runnable at the previous decision, and since when. */
        boolean wasReady;
        long readySince;
    }

    /** A device's turn and running minimum. */
    private static final class DeviceState {
        double minVruntime;
        long holder = Long.MIN_VALUE;
        long turnStart;
    }

    // Guarded by this.
    private final Map<Long, Entity> entities = new HashMap<>();
    private final Map<String, DeviceState> devices = new HashMap<>();
    private boolean decided;
    private long lastDecision;

    /** For Declarative Services. */
    public CompletelyFair() {
        this.settings = CfsSettings.DEFAULTS;
    }

    CompletelyFair(CfsSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(CfsConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(CfsConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, CfsConfig.class, raw, log::warn);
            settings = CfsSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(CfsConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(CfsConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, CfsConfig.class, raw, log::warn);
            settings = CfsSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    CfsSettings settings() {
        return settings;
    }

    /** @return the queue's virtual runtime in nanoseconds of a nice-0 queue, NaN if unknown (for tests) */
    synchronized double vruntime(long handle) {
        Entity e = entities.get(handle);
        return e == null ? Double.NaN : e.vruntime;
    }

    @Override
    public String description() {
        return "completely fair: per device, the ready queue with the least device time per weight runs (weight on Linux's nice scale, nice = -priority)";
    }

    @Override
    public synchronized void schedule(SchedulerView view, SchedulerActions actions) {
        CfsSettings s = settings;
        long now = view.nowNanos();
        boolean charge = decided && now - lastDecision <= s.forgetAfterNanos();
        decided = true;
        lastDecision = now;
        Set<Long> seen = new HashSet<>();
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            DeviceState d = devices.computeIfAbsent(String.valueOf(queues.getFirst().device()), k -> new DeviceState());
            decide(queues, d, now, charge, s, decision, seen);
        }
        entities.keySet().retainAll(seen);
        decision.applyTo(view, actions);
    }

    private void decide(List<QueueView> queues, DeviceState d, long now, boolean charge, CfsSettings s, Decision decision, Set<Long> seen) {
        // Charge device time and find the least virtual runtime among queues that stayed ready.
        double minStayed = Double.POSITIVE_INFINITY;
        long totalWeight = 0;
        int ready = 0;
        for (QueueView q : queues) {
            seen.add(q.handle());
            Entity e = entities.get(q.handle());
            if (e == null) {
                e = new Entity();
                e.charged = q.runNanos();
                entities.put(q.handle(), e);
            }
            long used = q.runNanos() - e.charged;
            e.charged = q.runNanos();
            if (charge && used > 0) {
                e.vruntime += used * (double) NiceWeights.NICE_0_WEIGHT / NiceWeights.weight(q);
            }
            if (q.runnable()) {
                totalWeight += NiceWeights.weight(q);
                ready++;
                if (stayedReady(q, e)) {
                    minStayed = Math.min(minStayed, e.vruntime);
                }
            }
        }
        if (ready == 0) {
            for (QueueView q : queues) {
                entities.get(q.handle()).wasReady = false;
                decision.run(q);
            }
            d.holder = Long.MIN_VALUE;
            return;
        }
        // Place queues that became ready: no credit for the time they were idle.
        double floor = minStayed == Double.POSITIVE_INFINITY ? d.minVruntime : minStayed;
        QueueView holder = null;
        QueueView least = null;
        double minReady = Double.POSITIVE_INFINITY;
        for (QueueView q : queues) {
            Entity e = entities.get(q.handle());
            if (!q.runnable()) {
                e.wasReady = false;
                continue;
            }
            if (!stayedReady(q, e)) {
                e.vruntime = Math.max(e.vruntime, floor);
                e.wasReady = true;
                e.readySince = q.readySinceNanos();
            }
            minReady = Math.min(minReady, e.vruntime);
            if (q.handle() == d.holder) { // even if the view still shows it suspended: it may predate our resume
                holder = q;
            }
        }
        d.minVruntime = Math.max(d.minVruntime, minReady);
        if (holder != null) {
            long end = d.turnStart + s.sliceNanos(NiceWeights.weight(holder), totalWeight);
            if (now - end < 0) {
                runOnly(queues, holder, decision);
                if (ready > 1) {
                    decision.wakeAt(end);
                }
                return;
            }
        }
        // The turn is over (or nobody holds one): the least virtual runtime runs next.
        for (QueueView q : queues) {
            if (q.runnable() && (least == null || before(q, least, holder))) {
                least = q;
            }
        }
        d.holder = least.handle();
        d.turnStart = now;
        runOnly(queues, least, decision);
        if (ready > 1) {
            decision.wakeAt(now + s.sliceNanos(NiceWeights.weight(least), totalWeight));
        }
    }

    /** @return whether {@code q} goes before {@code other}: less virtual runtime, then not the last holder, then lower handle */
    private boolean before(QueueView q, QueueView other, QueueView lastHolder) {
        double v = entities.get(q.handle()).vruntime;
        double w = entities.get(other.handle()).vruntime;
        if (v != w) {
            return v < w;
        }
        if ((q == lastHolder) != (other == lastHolder)) {
            return other == lastHolder;
        }
        return q.handle() < other.handle();
    }

    /** @return whether the queue was ready at the previous decision and has not been idle since */
    private static boolean stayedReady(QueueView q, Entity e) {
        return e.wasReady && e.readySince == q.readySinceNanos();
    }

    private static void runOnly(List<QueueView> queues, QueueView chosen, Decision decision) {
        for (QueueView q : queues) {
            decision.set(q, q == chosen);
        }
    }
}
