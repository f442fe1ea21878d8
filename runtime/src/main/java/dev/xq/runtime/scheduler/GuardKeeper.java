package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies the {@link ArrivalGuards} after each decision: hands each queue the guard it gets now
 * (only the ones that changed), and lifts every guard when the guards are turned off. Called by
 * the one deciding thread; {@link #given()} may be called from any thread.
 *
 * <p>Order matters around the decision's own holds and lets-go: a guard given is written before
 * the queue is let go (it resumes under it), and a guard lifted is written only after the
 * decision's holds ({@link #lift()}): lifted first, a queue about to be held at another's arrival
 * saw neither guard nor gate for a moment, and the launches it had waiting for the guard's end
 * went then, into the arriving queue's way (H200, ResNet-50 inference beside training: the
 * training stream had work in flight at about half of the inference arrivals, most of them so).
 */
final class GuardKeeper {

    private final ArrivalGuards guards = new ArrivalGuards(); // guarded by itself
    /** Guards to lift once the decision's holds are written ({@link #lift()}); deciding thread only. */
    private final java.util.ArrayList<ScheduledQueue> lifts = new java.util.ArrayList<>();
    private volatile boolean on = true;

    void on(boolean on) {
        this.on = on;
    }

    boolean on() {
        return on;
    }

    /** Sets the longest linger ({@link ArrivalGuards}); 0 turns lingers off. */
    void lingerNanos(long nanos) {
        synchronized (guards) {
            guards.lingerNanos(nanos);
        }
    }

    long lingerNanos() {
        synchronized (guards) {
            return guards.lingerNanos();
        }
    }

    /** Turns the wide beats on or off ({@link ArrivalGuards}). */
    void wideBeats(boolean on) {
        synchronized (guards) {
            guards.wideBeats(on);
        }
    }

    boolean wideBeats() {
        synchronized (guards) {
            return guards.wideBeats();
        }
    }

    /** Turns spells of learning with nothing to learn on or off ({@link ArrivalGuards#fruitlessSpells}). */
    void fruitlessSpells(boolean on) {
        synchronized (guards) {
            guards.fruitlessSpells(on);
        }
    }

    boolean fruitlessSpells() {
        synchronized (guards) {
            return guards.fruitlessSpells();
        }
    }

    /** Sets the best-effort processes held while a narrow one is within a request ({@link ArrivalGuards#holdBesideNarrow}). */
    void holdBesideNarrow(java.util.Set<String> names) {
        synchronized (guards) {
            guards.holdBesideNarrow(names);
        }
    }

    java.util.Set<String> holdBesideNarrow() {
        synchronized (guards) {
            return guards.holdBesideNarrow();
        }
    }

    /** Turns holding beside a slowed narrow tenant on or off ({@link ArrivalGuards#holdBesideSlowed}). */
    void holdBesideSlowed(boolean on) {
        synchronized (guards) {
            guards.holdBesideSlowed(on);
        }
    }

    boolean holdBesideSlowed() {
        synchronized (guards) {
            return guards.holdBesideSlowed();
        }
    }

    /** Where {@link ArrivalGuards} tells what it found (the node's log). */
    void notes(java.util.function.Consumer<String> notes) {
        synchronized (guards) {
            guards.notes(notes);
        }
    }

    /** Turns the whole device for commands that fit the gaps only there on or off ({@link ArrivalGuards#wholeBesideReserve}). */
    void wholeBesideReserve(boolean on) {
        synchronized (guards) {
            guards.wholeBesideReserve(on);
        }
    }

    boolean wholeBesideReserve() {
        synchronized (guards) {
            return guards.wholeBesideReserve();
        }
    }

    /** Turns taking wide queues whose returns find no beat for requests at random on or off ({@link ArrivalGuards#randomReturns}). */
    void randomReturns(boolean on) {
        synchronized (guards) {
            guards.randomReturns(on);
        }
    }

    boolean randomReturns() {
        synchronized (guards) {
            return guards.randomReturns();
        }
    }

    /** Turns a narrow tenant on a beat keeping its reserve on or off ({@link ArrivalGuards#narrowBeatsKeepReserve}). */
    void narrowBeatsKeepReserve(boolean on) {
        synchronized (guards) {
            guards.narrowBeatsKeepReserve(on);
        }
    }

    boolean narrowBeatsKeepReserve() {
        synchronized (guards) {
            return guards.narrowBeatsKeepReserve();
        }
    }

    /** Turns the guards of queues the wide beats leave narrowed on or off ({@link ArrivalGuards#narrowedGuards}). */
    void narrowedGuards(boolean on) {
        synchronized (guards) {
            guards.narrowedGuards(on);
        }
    }

    boolean narrowedGuards() {
        synchronized (guards) {
            return guards.narrowedGuards();
        }
    }

    /** Sets how long after a foreseen arrival a guard still holds ({@link ArrivalGuards}). */
    void graceNanos(long nanos) {
        synchronized (guards) {
            guards.graceNanos(nanos);
        }
    }

    long graceNanos() {
        synchronized (guards) {
            return guards.graceNanos();
        }
    }

    /** The node's reaction to arrivals lately, for the grace in use ({@link ArrivalGuards#reactionNanos}). */
    void reactionNanos(long nanos) {
        synchronized (guards) {
            guards.reactionNanos(nanos);
        }
    }

    /** How far the reaction may lengthen the grace ({@link ArrivalGuards#reactionCapNanos(long)}). */
    void reactionCapNanos(long nanos) {
        synchronized (guards) {
            guards.reactionCapNanos(nanos);
        }
    }

    long reactionCapNanos() {
        synchronized (guards) {
            return guards.reactionCapNanos();
        }
    }

    /** The grace in use ({@link ArrivalGuards#grace}). */
    long graceInUseNanos() {
        synchronized (guards) {
            return guards.grace();
        }
    }

    /** @return the guards in force: handle to {horizon, until} nanos (status and tests) */
    Map<Long, long[]> given() {
        synchronized (guards) {
            Map<Long, long[]> m = new HashMap<>();
            guards.given().forEach((h, g) -> m.put(h, new long[] {g.horizonNanos(), g.untilNanos()}));
            return m;
        }
    }

    /**
     * After a decision by {@code policyName}: learns from it, puts off the resumes a linger holds
     * back (in {@code decided}), and tells the queues whose guard changed, except those whose guard
     * goes: {@link #lift()} tells them, once the decision's holds are applied.
     *
     * @return when the deciding thread must decide again for a linger to end; Long.MAX_VALUE for none
     */
    long apply(String policyName, long now, List<QueueView> views, Map<Long, Boolean> decided,
               Map<Long, ScheduledQueue> byHandle) {
        return apply(policyName, now, views, decided, byHandle, ArrivalGuards.Space.NONE);
    }

    /** {@link #apply(String, long, List, Map, Map)} for a decision that placed queues in space (the wide beats). */
    long apply(String policyName, long now, List<QueueView> views, Map<Long, Boolean> decided,
               Map<Long, ScheduledQueue> byHandle, ArrivalGuards.Space space) {
        Map<Long, ArrivalGuards.Guard> changes;
        long wake = Long.MAX_VALUE;
        synchronized (guards) {
            if (on) {
                changes = guards.update(policyName, now, views, decided, space);
                wake = guards.lingerWake();
            } else {
                Map<Long, ArrivalGuards.Guard> given = guards.given();
                if (given.isEmpty()) {
                    return wake;
                }
                changes = new HashMap<>();
                for (Long h : given.keySet()) {
                    changes.put(h, ArrivalGuards.Guard.NONE);
                }
                guards.clear();
            }
        }
        for (var e : changes.entrySet()) {
            ScheduledQueue q = byHandle.get(e.getKey());
            if (q == null) {
                continue;
            }
            if (e.getValue().horizonNanos() == 0) {
                lifts.add(q);
            } else {
                q.guard(e.getValue().horizonNanos(), e.getValue().untilNanos());
            }
        }
        return wake;
    }

    /**
     * @return when the deciding thread must decide again, just past the earliest lapse of a guard
     *     the last {@link #apply} left in force (for the next one); Long.MAX_VALUE for none
     */
    long lapseWake() {
        synchronized (guards) {
            return on ? guards.lapseWake() : Long.MAX_VALUE;
        }
    }

    /** Lifts the guards the last {@link #apply} took away; called once that decision's holds are written. */
    void lift() {
        for (ScheduledQueue q : lifts) {
            q.guard(0, 0);
        }
        lifts.clear();
    }
}
