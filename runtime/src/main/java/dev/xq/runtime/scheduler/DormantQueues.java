package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
    /** How often, at most, the awake list is made again from the whole list (a net under the changes kept). */
    static final long FULL_READ_EVERY_NANOS = 1_000_000_000L;
    /** How often, at most, a decision reads the sleepers' views. */
    static final long SWEEP_EVERY_NANOS = 1_000_000_000L;
    /** Sleepers read at one turn of the scheduler's loop. */
    static final int SWEEP_SLICE = 256;

    /** Queues with news since the last decision began (any thread). */
    private final Set<ScheduledQueue> touched = ConcurrentHashMap.newKeySet();
    /**
     * The sleepers: changed by the deciding thread only, read by the sweep (the loop thread) as it
     * begins a pass (a concurrent set: no copy of thousands at each decision that puts one to sleep).
     * Queues have identity equality.
     */
    private final Set<ScheduledQueue> asleep = ConcurrentHashMap.newKeySet();
    // the deciding thread's; identity maps: no boxing of handles on the per-queue path
    private Map<ScheduledQueue, Long> idleSince = new IdentityHashMap<>();
    private String policy = "";
    /**
     * The queues awake, by handle (the order of the node's list): kept by the opens and closes the
     * source reports ({@link Scheduler.Source#queueChangesSince}) and by queues falling asleep and
     * waking, so that a decision beside thousands of sleepers, while a user opens and closes
     * streams ten times a second, goes over what changed and the few awake, not over all of them
     * (issue 41: 640 opens and 640 closes a second made each decision go over 4,096 queues three
     * times, two thirds of the node's CPU under that flood).
     */
    private final TreeMap<Long, ScheduledQueue> awakeByHandle = new TreeMap<>();
    /** The awake list handed to decisions, made again from {@link #awakeByHandle} when it changed. */
    private List<ScheduledQueue> awakeList = List.of();
    private boolean awakeChanged = true;
    /** The source's list version {@link #awakeByHandle} reflects; -1: none (read the whole list). */
    private long version = -1;
    private long fullReadNanos;
    private List<? extends ScheduledQueue> lastAll;
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
            if (asleep.remove(q)) {
                awake(q);
                tell(q, false); // before this decision can let it go (Source.queueWoke)
            }
            idleSince.remove(q);
        }
        if (!policyName.equals(policy)) {
            policy = policyName;
            if (!asleep.isEmpty()) {
                for (ScheduledQueue q : List.copyOf(asleep)) {
                    asleep.remove(q);
                    awake(q);
                    tell(q, false);
                }
            }
            idleSince = new IdentityHashMap<>(); // the new policy looks at every queue afresh
        }
    }

    private void awake(ScheduledQueue q) {
        if (awakeByHandle.put(q.handle(), q) != q) {
            awakeChanged = true;
        }
    }

    private void notAwake(ScheduledQueue q) {
        if (awakeByHandle.remove(q.handle(), q)) {
            awakeChanged = true;
        }
    }

    /** A queue a decision found closed (no view): out of the awake list. */
    void gone(ScheduledQueue q) {
        notAwake(q);
    }

    /**
     * The queues a decision goes over: every open queue not asleep. From the opens and closes the
     * source reports since the last one; from the whole list (over the sleepers, dropping the
     * ones closed) where the source keeps no such record or it no longer reaches back, and at most
     * every {@value #FULL_READ_EVERY_NANOS} ns anyway.
     *
     * @param now the decision's time (System.nanoTime)
     */
    List<? extends ScheduledQueue> awake(Scheduler.Source source, long now) {
        Scheduler.QueueChanges c = version < 0 || now - fullReadNanos >= FULL_READ_EVERY_NANOS ? null
                : source.queueChangesSince(version);
        if (c == null) {
            long v = source.queuesVersion(); // before the list: every change at or below it is in the list
            List<? extends ScheduledQueue> all = source.schedulerQueues();
            if (v < 0 && all == lastAll && !awakeChanged) {
                return awakeList; // no versions kept: the same list and nobody fell asleep or woke
            }
            Set<ScheduledQueue> open = java.util.Collections.newSetFromMap(new IdentityHashMap<>(all.size() * 2));
            awakeByHandle.clear();
            for (ScheduledQueue q : all) {
                open.add(q);
                if (!asleep.contains(q)) {
                    awakeByHandle.put(q.handle(), q);
                }
            }
            for (ScheduledQueue q : List.copyOf(asleep)) {
                if (!open.contains(q)) {
                    closedAsleep(q);
                }
            }
            lastAll = all;
            version = v;
            fullReadNanos = now;
            awakeChanged = true;
        } else {
            for (int i = 0; i < c.queues().size(); i++) {
                ScheduledQueue q = c.queues().get(i);
                if (c.opened().get(i)) {
                    if (!asleep.contains(q)) {
                        awake(q);
                    }
                } else {
                    notAwake(q);
                    if (asleep.contains(q)) {
                        closedAsleep(q);
                    }
                }
            }
            version = c.version();
        }
        if (awakeChanged) {
            awakeList = List.copyOf(awakeByHandle.values());
            awakeChanged = false;
        }
        return awakeList;
    }

    /** A sleeper closed: no longer asleep (the source hears it woke, as it did when a sweep found it closed). */
    private void closedAsleep(ScheduledQueue q) {
        if (asleep.remove(q)) {
            idleSince.remove(q);
            tell(q, false);
        }
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
                    asleep.add(q);
                    notAwake(q);
                    idleSince.remove(q);
                    tell(q, true);
                } else if (first == null) {
                    idleSince.put(q, now);
                } else if (now - first >= IDLE_NANOS && q.wakesWhenHeld() && !touched.contains(q)) {
                    asleep.add(q);
                    notAwake(q);
                    idleSince.remove(q); // asleep: the sweep watches it now
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
    }

    /** @return whether queues sleep and a sweep is due or under way (the loop thread asks) */
    boolean sweepDue(long now) {
        return pass != null || (!asleep.isEmpty() && now - lastSweepNanos >= SWEEP_EVERY_NANOS);
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
            pass = asleep.toArray(new ScheduledQueue[0]); // once a pass (a second), on this thread
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
        return asleep.size();
    }
}
