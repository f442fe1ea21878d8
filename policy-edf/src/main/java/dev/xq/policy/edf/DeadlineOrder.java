package dev.xq.policy.edf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.List;

/**
 * The deadline ranking that {@code edf} and {@code kedf} share: on each device the {@code k}
 * best-ranked ready queues run.
 *
 * <p>Rank: queues with a {@code Deadline} hint first, by absolute deadline (the moment the queue
 * became ready plus the hint); then queues without one, which are treated as having an infinitely
 * late deadline (so they run only when fewer than {@code k} queues with deadlines are ready, and
 * then oldest first); ties by the moment the queue became ready, then by handle.
 *
 * <p>An idle queue (or one its application holds) is resumed when it would rank among the
 * {@code k} best were it to become ready now, so an urgent arrival launches at once while a lax
 * one waits for the next decision instead of slipping work in beside the queues that should run.
 * Absolute deadlines do not move, so no timers are needed.
 */
final class DeadlineOrder {

    private DeadlineOrder() {
    }

    /** A queue's place in the order; lower runs first. */
    private record Rank(boolean hasDeadline, long deadlineNanos, long readySinceNanos, long handle) implements Comparable<Rank> {

        static Rank of(QueueView q, long readySince) {
            Hint.Deadline d = q.hint(Hint.Deadline.class).orElse(null);
            return d == null
                    ? new Rank(false, Long.MAX_VALUE, readySince, q.handle())
                    : new Rank(true, readySince + d.micros() * 1000, readySince, q.handle());
        }

        @Override
        public int compareTo(Rank o) {
            if (hasDeadline != o.hasDeadline) {
                return hasDeadline ? -1 : 1;
            }
            int c = Long.compare(deadlineNanos, o.deadlineNanos);
            if (c == 0) {
                c = Long.compare(readySinceNanos, o.readySinceNanos);
            }
            return c != 0 ? c : Long.compare(handle, o.handle);
        }
    }

    static void schedule(SchedulerView view, int k, Decision decision) {
        long now = view.nowNanos();
        for (List<QueueView> queues : Devices.queuesByDevice(view)) {
            List<Rank> ready = new ArrayList<>(queues.size());
            for (QueueView q : queues) {
                if (Devices.runnable(q)) {
                    ready.add(Rank.of(q, q.readySinceNanos()));
                }
            }
            ready.sort(null);
            Rank last = ready.size() < k ? null : ready.get(k - 1);
            for (QueueView q : queues) {
                Rank own = Devices.runnable(q) ? Rank.of(q, q.readySinceNanos()) : Rank.of(q, now);
                decision.set(q, last == null || own.compareTo(last) <= 0);
            }
        }
    }
}
