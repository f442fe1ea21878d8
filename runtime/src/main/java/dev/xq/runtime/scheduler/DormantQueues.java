package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The queues decisions leave out while they sleep: idle (nothing ready, pending or in flight, at
 * every decision) for at least {@value #IDLE_NANOS} ns, held by the scheduler, and of a kind that
 * tells the scheduler by itself when work comes ({@link ScheduledQueue#wakesWhenHeld()}); or never
 * used at all (nothing completed, no device time: a stream opened and not launched on), held or
 * let go, and of a kind that tells the scheduler of its first work either way
 * ({@link ScheduledQueue#wakesWhenUsed()}).
 *
 * <p>Why: every decision viewed, decided and applied every queue of the node. One local user
 * holding 4,096 idle streams (the per-user cap) beside a victim that works 1 ms every 20 ms made
 * the node hold and let go all 4,096 with each of the victim's tasks, about 1.5 ms of CPU a
 * decision (about 45 ticks of the node's CPU in a 1.3 s victim run against 6 without them, 2-vCPU
 * VM, {@code bench/hostile}): views read every slot's counters, the policy went over them, the
 * action recorder, the slots' gates, the arrival guards and the top-of-device bookkeeping too. A
 * queue that is held and idle gives a policy nothing to decide: whatever the policy would do with
 * it, it launches nothing until work comes, and work coming is an event the scheduler hears about
 * ({@link #touch}: for a process's stream its WAKE line, sent on every step from idle to active).
 *
 * <p>What changes for a sleeping queue: it stays held until its next work wakes it and a
 * decision looks at it again, so the first command after a second or more of idleness waits for
 * one decision even where the policy, asked meanwhile, would have let it go (it shows as
 * suspended meanwhile); a policy that keeps state per queue sees it leave and come back. Every
 * {@value #SWEEP_EVERY_NANOS} ns while queues sleep the scheduler's loop thread reads every
 * sleeper's view outside any decision (a sweep), and one with work (its event somehow missed), no
 * longer held (a never-used one let go: used now) or closed wakes for the next decision; the
 * others stay out: letting thousands go and
 * holding them again at each sweep, or reading them inside a decision, cost the victim's tail. A
 * change of the policy deciding wakes every queue.
 *
 * <p>Who else hears of it: a sleeper cannot run and has nothing in flight, so it delays no other
 * queue, and the contention rule (the tenant-alone and on-top rules, the engine's
 * {@code ContentionRule}) does not count it as anyone's company while it sleeps; it learns of each
 * queue falling asleep and waking through the scheduler's source, which this is given
 * ({@link Scheduler.Source#queueSlept}, {@link Scheduler.Source#queueWoke}: the node's core passes
 * them on to it). A queue leaves its sleep only in {@link #begin}, on the deciding thread, before
 * the policy runs and before any action of that decision is applied, and the source is told there
 * and returns only once what the wake implies is done; a sleeper cannot be let go before that, as
 * no decision sees it while it sleeps (see {@link Scheduler.Source#queueWoke}).
 *
 * <p>Threads: {@link #touch} from any thread; {@link #sweep} and {@link #sweepDue} from the loop
 * thread; the rest from the deciding thread only (one at a time: the scheduler's single-decider
 * rule orders them).
 */
final class DormantQueues {

    /** Told of each queue falling asleep and waking (the scheduler's source: the node's core). */
    private final Scheduler.Source source;

    DormantQueues(Scheduler.Source source) {
        this.source = source;
    }

    /**
     * Tells the source that {@code q} fell asleep ({@code true}: {@link Scheduler.Source#queueSlept})
     * or woke ({@link Scheduler.Source#queueWoke}).
     */
    private void tell(ScheduledQueue q, boolean slept) {
        try {
            if (slept) {
                source.queueSlept(q);
            } else {
                source.queueWoke(q);
            }
        } catch (RuntimeException e) {
            // never lose the decision to a listener; the contention rule's own calls do not throw
        }
    }

    /** How long a queue must have been idle, at decisions, before it sleeps (once held). */
    static final long IDLE_NANOS = 1_000_000_000L;
    /** How often, at most, a decision reads the sleepers' views. */
    static final long SWEEP_EVERY_NANOS = 1_000_000_000L;
    /** Sleepers read at one turn of the scheduler's loop. */
    static final int SWEEP_SLICE = 256;

    /** Queues with news since the last decision began (any thread). */
    private final Set<ScheduledQueue> touched = ConcurrentHashMap.newKeySet();
    // the deciding thread's; identity maps: no boxing of handles on the per-queue path
    private final Map<ScheduledQueue, Boolean> asleep = new IdentityHashMap<>();
    private Map<ScheduledQueue, Long> idleSince = new IdentityHashMap<>();
    private boolean asleepChanged;
    private List<? extends ScheduledQueue> lastAll;
    private List<ScheduledQueue> awake = List.of();
    private String policy = "";
    /** The sleepers as of the last decision, for the sweep (the loop thread's, outside decisions). */
    private volatile ScheduledQueue[] sleepers = new ScheduledQueue[0];
    private volatile long lastSweepNanos;
    // the loop thread's: the pass under way
    private ScheduledQueue[] pass;
    private int cursor;

    /** Something about {@code q} changed (work came, a hint, a suspension by its owner): it is looked at in the next decision. */
    void touch(ScheduledQueue q) {
        touched.add(q);
    }

    /** @return whether a view shows a queue that never had work: nothing completed, no device time */
    static boolean neverUsed(QueueView v) {
        return v.completed() == 0 && v.runNanos() == 0;
    }

    /** @return whether a view shows nothing to do: nothing ready, pending or in flight */
    static boolean idle(QueueView v) {
        return !v.ready() && v.pending() == 0 && v.inFlight() == 0;
    }

    /** A decision begins: the touched queues wake; every queue wakes when the policy deciding changed. */
    void begin(String policyName) {
        for (Iterator<ScheduledQueue> it = touched.iterator(); it.hasNext();) {
            ScheduledQueue q = it.next();
            it.remove();
            if (asleep.remove(q) != null) {
                asleepChanged = true;
                tell(q, false); // before this decision can let it go (Source.queueWoke)
            }
            idleSince.remove(q);
        }
        if (!policyName.equals(policy)) {
            policy = policyName;
            if (!asleep.isEmpty()) {
                for (ScheduledQueue q : asleep.keySet()) {
                    tell(q, false);
                }
                asleep.clear();
                asleepChanged = true;
            }
            idleSince = new IdentityHashMap<>(); // the new policy looks at every queue afresh
        }
    }

    /**
     * @param all the queues of the node (the source keeps the same list between opens and closes)
     * @return the ones awake: kept between decisions while neither that list nor the sleepers
     *         change, so that a decision beside thousands of sleepers goes over the few awake only
     */
    List<? extends ScheduledQueue> awake(List<? extends ScheduledQueue> all) {
        if (asleep.isEmpty()) {
            return all;
        }
        if (all != lastAll || asleepChanged) {
            List<ScheduledQueue> a = new ArrayList<>(Math.max(16, all.size() - asleep.size()));
            for (ScheduledQueue q : all) {
                if (!asleep.containsKey(q)) {
                    a.add(q);
                }
            }
            awake = a;
            lastAll = all;
            if (asleepChanged) {
                publish(); // only the sleepers' change is news for the sweep, not the node's list
            }
        }
        return awake;
    }

    private void publish() {
        asleepChanged = false;
        sleepers = asleep.keySet().toArray(new ScheduledQueue[0]);
    }

    /** The decision was applied: queues idle long enough and held now fall asleep. */
    void end(long now, List<QueueView> views, Map<Long, ScheduledQueue> byHandle) {
        for (QueueView v : views) {
            ScheduledQueue q = byHandle.get(v.handle());
            if (q == null) {
                continue;
            }
            if (idle(v)) {
                Long first = idleSince.get(q);
                if (neverUsed(v) && (q.wakesWhenHeld() || q.wakesWhenUsed()) && !touched.contains(q)) {
                    // never used yet (a stream opened and not launched on): nothing to wait for,
                    // asleep at once, held or let go: its first work is an event either way (a
                    // user churning thousands of unused streams kept each awake, in every
                    // decision, for its first second, and those let go, never held, for as long
                    // as they stayed open: issue 41)
                    // (also when an earlier decision saw it idle but touched: opened during it)
                    asleep.put(q, Boolean.TRUE);
                    idleSince.remove(q);
                    asleepChanged = true;
                    tell(q, true);
                } else if (first == null) {
                    idleSince.put(q, now);
                } else if (now - first >= IDLE_NANOS && q.wakesWhenHeld() && !touched.contains(q)) {
                    asleep.put(q, Boolean.TRUE);
                    idleSince.remove(q); // asleep: the sweep watches it now
                    asleepChanged = true;
                    tell(q, true);
                }
            } else {
                idleSince.remove(q);
            }
        }
        if (idleSince.size() > 4 * (views.size() + 64)) {
            // queues that closed while idle and awake: keep only the ones this decision saw
            Map<ScheduledQueue, Long> kept = new IdentityHashMap<>();
            for (QueueView v : views) {
                ScheduledQueue q = byHandle.get(v.handle());
                Long first = q == null ? null : idleSince.get(q);
                if (first != null) {
                    kept.put(q, first);
                }
            }
            idleSince = kept;
        }
        if (asleepChanged) {
            lastAll = null; // the awake list is made again at the next decision
            publish();
        }
    }

    /** @return whether queues sleep and a sweep is due or under way (the loop thread asks) */
    boolean sweepDue(long now) {
        return pass != null || (sleepers.length > 0 && now - lastSweepNanos >= SWEEP_EVERY_NANOS);
    }

    /**
     * Reads sleepers' views, outside any decision (the scheduler's loop thread): a pass over all
     * once a second, {@value #SWEEP_SLICE} at each of the loop's turns (at most 50 ms apart), so
     * that thousands are not read in one burst beside a tenant on a small host. One with work, no
     * longer held, or closed is touched, to be seen by the next decision.
     *
     * @return whether one was
     */
    boolean sweep(long now) {
        if (pass == null) {
            pass = sleepers;
            cursor = 0;
            lastSweepNanos = now;
        }
        boolean woke = false;
        int end = Math.min(pass.length, cursor + SWEEP_SLICE);
        for (int i = cursor; i < end; i++) {
            ScheduledQueue q = pass[i];
            QueueView v = q.view();
            if (v == null || !idle(v) || !(q.wakesWhenHeld() || neverUsed(v) && q.wakesWhenUsed())) {
                touch(q);
                woke = true;
            }
        }
        cursor = end;
        if (cursor >= pass.length) {
            pass = null;
        }
        return woke;
    }

    /** @return how many queues the last decision left asleep (status) */
    int sleeping() {
        return sleepers.length;
    }
}
