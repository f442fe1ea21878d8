package dev.xq.policy.fixedpriority;

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
 * Policy {@code mlfq} (XSched's MLFQ): a multi-level feedback queue that learns priorities from
 * how queues use the device, so that nobody has to declare them. Level 0 is the top, level
 * {@code mlfq.levels - 1} the bottom.
 *
 * <ul>
 * <li>A queue the policy has not seen before starts on the top level.</li>
 * <li>Per device, the ready queues on the highest level that has one run, together (as under
 * {@code hpf}); the ready queues below wait. Idle queues, and queues their application holds,
 * are resumed when their level is at least that high, so work arriving on the top level
 * launches at once, beside whatever runs, and the next decision suspends what is below it.</li>
 * <li>A queue that has used its level's slice of device time ({@code mlfq.slice} on the top,
 * times {@code mlfq.slice.growth} per level down) sinks one level. Device time counts across
 * bursts: going idle does not reset it, so a queue cannot stay on top by pausing just before
 * its slice ends. A queue stays on the top level as long as it uses less than
 * {@code mlfq.slice} of device time per boost period (by default 10 ms per 100 ms, a tenth of
 * the device): short interactive work stays there, long-running work sinks. A queue sinks at
 * most one level per decision, however much it used since the previous one.</li>
 * <li>Every {@code mlfq.boost.period} (at the multiples of it on the {@code System.nanoTime}
 * clock) every queue's used time is cleared and queues return to the top. Which ones is
 * {@code mlfq.boost.scope}. Under {@code waiting} (the default) a boost lifts the queues without
 * work (idle, or held by their application: they return with fresh work on top), and a queue
 * with work keeps its level, whether it runs or waits; a queue the policy holds back is lifted
 * by its own timer instead, the moment it has waited a whole {@code mlfq.boost.period} at a
 * stretch. Under {@code all} (textbook MLFQ) a boost lifts every queue, so a long-running queue
 * shares the top with the short ones at every boost until it has used a top slice again, a
 * tenth of the time at the defaults (the {@code mlfq} scenario measures what that does to the
 * short tasks' tail: its goal is missed in every run under {@code all}). Why a held queue is not
 * lifted at the boost under {@code waiting}: short work arriving at a fixed period holds batch
 * back for a moment at the same phase of every boost period, so a boost that lifted held queues
 * would, in a run whose phase puts a short burst on the boost moments, lift batch beside that
 * burst at every boost. Either way, <b>no ready queue waits longer than
 * {@code mlfq.boost.period}</b> at a stretch, plus the in-flight work of the running queues at
 * preemption level 1 (under {@code all} a timer is set for the next boost whenever a ready queue
 * waits, under {@code waiting} one for the moment each held queue has waited a period).</li>
 * </ul>
 *
 * <p>The {@code Priority} hint is ignored (not even a tie-breaker: queues on the same level run
 * together): the level is learned, not declared; declared priorities are {@code hpf}'s and
 * {@code hpf-aging}'s. Device time comes from the view ({@code runNanos}, completed commands),
 * so a queue's commands still in flight when a timer fires count at the next decision; timers
 * are set for the moment the running queues' slices would end when another queue of the device
 * is ready.
 *
 * <p>Keeps state between decisions: each queue's level and used time, which queues the previous
 * decision let run with work, and which it held back with work, since when. State of queues that are
 * gone (and of the node's trial queues) is dropped at the next decision. Device time used while
 * another policy was selected counts like any other until the next boost. Decisions are
 * serialised on the instance, so a trial decision off the scheduler's thread cannot interleave
 * with a real one; each is O(queues).
 */
@Component(configurationPid = MultiLevelFeedback.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + MultiLevelFeedback.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = MlfqConfig.class)
public final class MultiLevelFeedback implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "mlfq";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.mlfq";

    /** Shortest delay of a slice timer, so that commands in flight do not make it spin. */
    static final long MIN_TIMER_NANOS = 100_000;

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile MlfqSettings settings;

    /** What the policy keeps of one queue. */
    private static final class Entry {
        int level;
        /** Device time used on this level since it got there or since the last boost. */
        long used;
        /** runNanos when last charged. */
        long charged;
        /** Whether the previous decision held it back while it had work ({@code mlfq.boost.scope=waiting}). */
        boolean held;
        /** When it was first held in the stretch of holds that is still going on. */
        long heldSince;
    }

    // Guarded by this.
    private final Map<Long, Entry> entries = new HashMap<>();
    /** Queues that the previous decision let run while they had work (for {@code mlfq.boost.scope=waiting}). */
    private final Set<Long> ranWithWork = new HashSet<>();
    private long epoch = Long.MIN_VALUE;
    private long epochPeriod;

    /** For Declarative Services. */
    public MultiLevelFeedback() {
        this.settings = MlfqSettings.DEFAULTS;
    }

    MultiLevelFeedback(MlfqSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(MlfqConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(MlfqConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, MlfqConfig.class, raw, log::warn);
            settings = MlfqSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(MlfqConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(MlfqConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, MlfqConfig.class, raw, log::warn);
            settings = MlfqSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    MlfqSettings settings() {
        return settings;
    }

    /** @return the queue's level, -1 if the policy does not know it (for tests) */
    synchronized int level(long handle) {
        Entry e = entries.get(handle);
        return e == null ? -1 : e.level;
    }

    @Override
    public String description() {
        return "multi-level feedback queue: queues start on top, sink when they use their level's slice, return to the top every boost period "
                + "(mlfq.boost.scope " + settings.boostScope().word + ")";
    }

    @Override
    public synchronized void schedule(SchedulerView view, SchedulerActions actions) {
        MlfqSettings s = settings;
        long now = view.nowNanos();
        long e = Math.floorDiv(now, s.boostPeriodNanos());
        // A new period length starts a new count; a trial with an earlier clock never un-boosts.
        boolean boost = epochPeriod != s.boostPeriodNanos() || e > epoch;
        if (boost) {
            epoch = e;
            epochPeriod = s.boostPeriodNanos();
            boost(view, s);
        }
        long nextBoost = (e + 1) * s.boostPeriodNanos();
        Set<Long> seen = new HashSet<>();
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            decide(queues, now, nextBoost, boost, s, decision, seen);
        }
        entries.keySet().retainAll(seen);
        ranWithWork.retainAll(seen);
        decision.applyTo(view, actions);
    }

    /**
     * Lifts queues to the top and clears every queue's used time: all of them, or under
     * {@code mlfq.boost.scope=waiting} all but those that still have work and that the previous
     * decision either let run with work or held back (a held queue is lifted by its own timer
     * once it has waited a whole boost period, see {@link #decide}). The previous decision, not
     * this view: a boost is applied at the first decision after its moment, and that decision
     * may be the arrival of the very work that would make a queue that ran alone until then
     * look as if it waited.
     */
    private void boost(SchedulerView view, MlfqSettings s) {
        Set<Long> keep = new HashSet<>();
        if (s.boostScope() == MlfqSettings.BoostScope.WAITING) {
            for (QueueView q : view.queues()) {
                Entry e = entries.get(q.handle());
                if (q.runnable() && (ranWithWork.contains(q.handle()) || e != null && e.held)) {
                    keep.add(q.handle());
                }
            }
        }
        for (Map.Entry<Long, Entry> en : entries.entrySet()) {
            if (!keep.contains(en.getKey())) {
                en.getValue().level = 0;
            }
            en.getValue().used = 0;
        }
    }

    private void decide(List<QueueView> queues, long now, long nextBoost, boolean boost, MlfqSettings s, Decision decision, Set<Long> seen) {
        boolean waitingScope = s.boostScope() == MlfqSettings.BoostScope.WAITING;
        int best = Integer.MAX_VALUE;
        int ready = 0;
        for (QueueView q : queues) {
            seen.add(q.handle());
            Entry e = entries.get(q.handle());
            if (e == null) {
                e = new Entry();
                e.charged = q.runNanos();
                entries.put(q.handle(), e);
            }
            long used = q.runNanos() - e.charged;
            e.charged = q.runNanos();
            // At a boost, what was used before it is forgotten with the levels.
            if (!boost && used > 0) {
                e.used += used;
            }
            if (e.used >= s.sliceNanos(e.level)) {
                e.level = Math.min(e.level + 1, s.bottom());
                e.used = 0;
            }
            if (waitingScope && e.held && q.runnable() && now - e.heldSince >= s.boostPeriodNanos()) {
                // Kept waiting a whole boost period at a stretch: lifted now, not at the next boost.
                e.level = 0;
                e.used = 0;
            }
            if (q.runnable()) {
                best = Math.min(best, e.level);
                ready++;
            }
        }
        boolean waiting = false;
        for (QueueView q : queues) {
            Entry e = entries.get(q.handle());
            boolean runs = e.level <= best;
            decision.set(q, runs);
            if (runs && q.runnable()) {
                ranWithWork.add(q.handle());
            } else {
                ranWithWork.remove(q.handle());
            }
            if (!q.runnable()) {
                e.held = false;
                continue;
            }
            if (!runs) {
                if (!e.held) {
                    e.held = true;
                    e.heldSince = now;
                }
                if (waitingScope) {
                    decision.wakeAt(e.heldSince + s.boostPeriodNanos());
                } else {
                    waiting = true;
                }
            } else if (ready > 1 && e.level < s.bottom()) {
                // When it sinks, the queues it ran beside or above may run without it.
                decision.wakeAt(now + Math.max(MIN_TIMER_NANOS, s.sliceNanos(e.level) - e.used));
            }
            if (runs) {
                e.held = false;
            }
        }
        if (waiting) {
            decision.wakeAt(nextBoost);
        }
    }
}
