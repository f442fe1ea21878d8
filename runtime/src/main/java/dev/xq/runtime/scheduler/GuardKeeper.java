package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies the {@link ArrivalGuards} after each decision: hands each queue the guard it gets now
 * (only the ones that changed), and lifts every guard when the guards are turned off. Called by
 * the one deciding thread; {@link #given()} may be called from any thread.
 */
final class GuardKeeper {

    private final ArrivalGuards guards = new ArrivalGuards(); // guarded by itself
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
     * back (in {@code decided}), and tells the queues whose guard changed.
     *
     * @return when the deciding thread must decide again for a linger to end; Long.MAX_VALUE for none
     */
    long apply(String policyName, long now, List<QueueView> views, Map<Long, Boolean> decided,
               Map<Long, ScheduledQueue> byHandle) {
        Map<Long, ArrivalGuards.Guard> changes;
        long wake = Long.MAX_VALUE;
        synchronized (guards) {
            if (on) {
                changes = guards.update(policyName, now, views, decided);
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
            if (q != null) {
                q.guard(e.getValue().horizonNanos(), e.getValue().untilNanos());
            }
        }
        return wake;
    }
}
