package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The queues decisions leave out while they sleep: idle (nothing ready, pending or in flight, at
 * every decision) for at least {@value #IDLE_NANOS} ns, held by the scheduler, and of a kind that
 * tells the scheduler by itself when work comes ({@link ScheduledQueue#wakesWhenHeld()}).
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
 * {@value #SWEEP_EVERY_NANOS} ns while queues sleep (the scheduler's loop makes a decision then if
 * nothing else does) one decision reads every sleeper's view, and one with work (its event somehow
 * missed) wakes; the others stay out of it: letting thousands go and holding them again at each
 * sweep cost the victim's tail. A change of the policy deciding wakes every queue.
 *
 * <p>Threads: {@link #touch} from any thread; the rest from the deciding thread only (one at a
 * time: the scheduler's single-decider rule orders them).
 */
final class DormantQueues {

    /** How long a queue must have been idle, at decisions, before it sleeps (once held). */
    static final long IDLE_NANOS = 1_000_000_000L;
    /** How often, at most, a decision reads the sleepers' views. */
    static final long SWEEP_EVERY_NANOS = 1_000_000_000L;

    /** Queues with news since the last decision began (any thread). */
    private final Set<ScheduledQueue> touched = ConcurrentHashMap.newKeySet();
    // the deciding thread's; identity maps: no boxing of handles on the per-queue path
    private Map<ScheduledQueue, Boolean> asleep = new IdentityHashMap<>();
    private Map<ScheduledQueue, Boolean> stillAsleep;
    private Map<ScheduledQueue, Long> idleSince = new IdentityHashMap<>();
    private volatile long lastSweepNanos;
    private boolean sweeping;
    private String policy = "";
    private volatile int sleeping;

    /** Something about {@code q} changed (work came, a hint, a suspension by its owner): it is looked at in the next decision. */
    void touch(ScheduledQueue q) {
        touched.add(q);
    }

    /** @return whether a view shows nothing to do: nothing ready, pending or in flight */
    static boolean idle(QueueView v) {
        return !v.ready() && v.pending() == 0 && v.inFlight() == 0;
    }

    /** A decision begins: the touched queues wake; every queue wakes when the policy deciding changed. */
    void begin(long now, String policyName) {
        for (Iterator<ScheduledQueue> it = touched.iterator(); it.hasNext();) {
            ScheduledQueue q = it.next();
            it.remove();
            asleep.remove(q);
            idleSince.remove(q);
        }
        if (!policyName.equals(policy)) {
            policy = policyName;
            asleep.clear();
        }
        sweeping = !asleep.isEmpty() && now - lastSweepNanos >= SWEEP_EVERY_NANOS;
        if (sweeping) {
            lastSweepNanos = now;
            stillAsleep = new IdentityHashMap<>(asleep.size() * 2);
        }
    }

    /**
     * @param q a queue of this decision
     * @return the view the decision gives the policy for {@code q}: none for a sleeper (read only in a
     *         sweep, where one with work wakes)
     */
    QueueView view(ScheduledQueue q) {
        if (asleep.isEmpty() || !asleep.containsKey(q)) {
            return q.view();
        }
        if (!sweeping) {
            return null;
        }
        QueueView v = q.view();
        if (v == null) {
            return null; // closed: forgotten at the sweep's end
        }
        if (idle(v) && q.wakesWhenHeld()) {
            stillAsleep.put(q, Boolean.TRUE);
            return null;
        }
        return v; // work came (its event missed), or no longer held: awake
    }

    /** The decision was applied: queues idle long enough and held now fall asleep. */
    void end(long now, List<QueueView> views, Map<Long, ScheduledQueue> byHandle) {
        if (sweeping) {
            asleep = stillAsleep; // the sleepers gone (closed) or awake are left behind
            stillAsleep = null;
            Map<ScheduledQueue, Long> kept = new IdentityHashMap<>();
            for (QueueView v : views) {
                ScheduledQueue q = byHandle.get(v.handle());
                Long first = q == null ? null : idleSince.get(q);
                if (first != null) {
                    kept.put(q, first);
                }
            }
            idleSince = kept; // only queues this decision saw: the closed ones go
        }
        for (QueueView v : views) {
            ScheduledQueue q = byHandle.get(v.handle());
            if (q == null) {
                continue;
            }
            if (idle(v)) {
                Long first = idleSince.get(q);
                if (first == null) {
                    idleSince.put(q, now);
                } else if (now - first >= IDLE_NANOS && q.wakesWhenHeld() && !touched.contains(q)) {
                    asleep.put(q, Boolean.TRUE);
                }
            } else {
                idleSince.remove(q);
            }
        }
        sleeping = asleep.size();
    }

    /** @return whether queues sleep and a sweep is due (the loop thread asks, to make a decision) */
    boolean sweepDue(long now) {
        return sleeping > 0 && now - lastSweepNanos >= SWEEP_EVERY_NANOS;
    }

    /** @return how many queues the last decision left asleep (status) */
    int sleeping() {
        return sleeping;
    }
}
