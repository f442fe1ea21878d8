package dev.xq.policy.edf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The deadline ranking that {@code edf} and {@code kedf} share: on each device the {@code k}
 * best-ranked ready queues run.
 *
 * <p>Rank: queues with a {@code Deadline} hint first, by absolute deadline (the moment the queue
 * became ready plus the hint); then queues without one, which are treated as having an infinitely
 * late deadline (so they run only when fewer than {@code k} queues with deadlines are ready, and
 * then oldest first); ties by the moment the queue became ready, then by handle.
 *
 * <p>With demotion on (the default of both policies), queues that can only miss go behind every
 * queue that can still make its deadline, and before queues without one. Walking the deadlines
 * in order, a queue can still make it when now + the work of the earlier queues that can still
 * make theirs + its own remaining work (pending and in-flight commands times its measured command
 * time) is not past its deadline; the work is added up as if the device ran one queue at a time.
 * Plain EDF under overload lets a queue that has already missed delay the next one past its
 * deadline as well (the domino effect); demotion trades the missed queues' tail latency for
 * fewer misses. A queue without a measured command time counts as having no work left.
 *
 * <p>An idle queue (or one its application holds) is resumed when it would rank among the
 * {@code k} best were it to become ready now, so an urgent arrival launches at once while a lax
 * one waits for the next decision instead of slipping work in beside the queues that should run.
 * Absolute deadlines do not move, so no timers are needed.
 */
final class DeadlineOrder {

    private DeadlineOrder() {
    }

    /** How a queue's deadline stands: tiers run in this order. */
    private static final int MEETABLE = 0;
    private static final int HOPELESS = 1;
    private static final int NO_DEADLINE = 2;

    /** A queue's place in the order; lower runs first. */
    private record Rank(int tier, long deadlineNanos, long readySinceNanos, long handle) implements Comparable<Rank> {

        static Rank of(QueueView q, long readySince) {
            Hint.Deadline d = q.hint(Hint.Deadline.class).orElse(null);
            return d == null
                    ? new Rank(NO_DEADLINE, Long.MAX_VALUE, readySince, q.handle())
                    : new Rank(MEETABLE, readySince + d.micros() * 1000, readySince, q.handle());
        }

        Rank hopeless() {
            return new Rank(HOPELESS, deadlineNanos, readySinceNanos, handle);
        }

        @Override
        public int compareTo(Rank o) {
            int c = Integer.compare(tier, o.tier);
            if (c == 0) {
                c = Long.compare(deadlineNanos, o.deadlineNanos);
            }
            if (c == 0) {
                c = Long.compare(readySinceNanos, o.readySinceNanos);
            }
            return c != 0 ? c : Long.compare(handle, o.handle);
        }
    }

    /** @return the device time a queue's remaining commands need, from its measured command time (0 while unmeasured) */
    static long remainingWorkNanos(QueueView q) {
        return (long) (q.pending() + q.inFlight()) * q.estimatedCommandNanos();
    }

    static void schedule(SchedulerView view, int k, boolean demoteHopeless, Decision decision) {
        long now = view.nowNanos();
        for (List<QueueView> queues : view.queuesByDevice()) {
            Map<QueueView, Rank> ranks = new IdentityHashMap<>();
            List<QueueView> ready = new ArrayList<>(queues.size());
            for (QueueView q : queues) {
                if (q.runnable()) {
                    ranks.put(q, Rank.of(q, q.readySinceNanos()));
                    ready.add(q);
                }
            }
            ready.sort(Comparator.comparing(ranks::get));
            if (demoteHopeless) {
                // Walk the deadlines in order, adding up the work that runs before each: a queue
                // that would end past its deadline even so can only miss, and goes behind every
                // queue that can still make it (which it would otherwise drag past theirs too).
                long ahead = 0;
                for (QueueView q : ready) {
                    Rank r = ranks.get(q);
                    if (r.tier() != MEETABLE) {
                        break;
                    }
                    long work = remainingWorkNanos(q);
                    if (now + ahead + work - r.deadlineNanos() > 0) {
                        ranks.put(q, r.hopeless());
                    } else {
                        ahead += work;
                    }
                }
                ready.sort(Comparator.comparing(ranks::get));
            }
            Rank last = ready.size() < k ? null : ranks.get(ready.get(k - 1));
            for (QueueView q : queues) {
                Rank own = q.runnable() ? ranks.get(q) : Rank.of(q, now);
                decision.set(q, last == null || own.compareTo(last) <= 0);
            }
        }
    }
}
