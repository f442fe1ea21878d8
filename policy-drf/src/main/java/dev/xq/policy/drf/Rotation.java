package dev.xq.policy.drf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.QueueView;
import java.util.List;

/**
 * The turn-taking that {@code bandwidth} and {@code bandwidth-group} share, for one device.
 *
 * <p>Members (queues or groups) with ready work take turns in a fixed cyclic order. A round lasts
 * the smallest {@code Timeslice} hint among the device's ready queues, else the configured
 * length; each ready member's slice is that round times its utilization over the sum of the
 * ready members' utilizations (at least {@value #MIN_SLICE_NANOS} ns). Over many rounds each
 * member's share of device time therefore approaches its utilization over the sum; idle
 * members' shares go to the others (work-conserving).
 *
 * <p>All of it follows from the view: the member whose queues are resumed holds the turn, and its
 * slice began when it was last resumed. The moment it became ready is not used: a queue that
 * goes idle and ready again between two decisions would restart its slice with it. So a queue
 * that was resumed while the device was idle, or never suspended at all, holds a slice that may
 * already be over when a second queue arrives, and yields at once. When the slice is over, or
 * the holder has no more ready work, the turn passes to the next ready member after it (after
 * the member resumed last when none holds the turn), and a timer is set for the end of the new
 * slice.
 */
final class Rotation {

    static final long MIN_SLICE_NANOS = 100_000;

    private Rotation() {
    }

    /** A member of the rotation as this device sees it now. */
    interface Member {
        /** @return the member's utilization (percent) */
        int utilization();

        /** @return whether it has a ready queue its application does not hold */
        boolean ready();

        /** @return whether its queues are resumed and one of them is ready */
        boolean holdsTurn();

        /** @return when its current turn began (valid if it holds the turn); 0 if it was never resumed */
        long turnStart();

        /** @return the latest moment one of its queues was resumed; 0 if never */
        long lastResumed();
    }

    /** Which member runs now, and when to decide again. */
    record Turn(int member, long wakeNanos) {
        static final long NO_WAKE = Long.MIN_VALUE;
    }

    /**
     * @param members in their fixed cyclic order; at least one is ready
     * @param roundNanos the round length to use
     */
    static Turn choose(List<? extends Member> members, long roundNanos, long now) {
        int ready = 0;
        long utilSum = 0;
        int holder = -1;
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            if (!m.ready()) {
                continue;
            }
            ready++;
            utilSum += m.utilization();
            if (m.holdsTurn() && (holder < 0 || earlier(m.turnStart(), members.get(holder).turnStart()))) {
                holder = i;
            }
        }
        if (holder >= 0) {
            if (ready == 1) {
                return new Turn(holder, Turn.NO_WAKE);
            }
            long start = members.get(holder).turnStart();
            long end = start + slice(members.get(holder), roundNanos, utilSum);
            // A holder never resumed has no known start: its turn counts as over.
            if (start != 0 && now - end < 0) {
                return new Turn(holder, end);
            }
        }
        int after = holder;
        if (after < 0) {
            long latest = Long.MIN_VALUE;
            for (int i = 0; i < members.size(); i++) {
                long r = members.get(i).lastResumed();
                if (r != 0 && r >= latest) {
                    latest = r;
                    after = i;
                }
            }
        }
        int n = members.size();
        for (int step = 1; step <= n; step++) {
            int i = Math.floorMod(after + step, n);
            if (members.get(i).ready()) {
                return new Turn(i, ready == 1 ? Turn.NO_WAKE : now + slice(members.get(i), roundNanos, utilSum));
            }
        }
        throw new IllegalArgumentException("no ready member to choose from");
    }

    private static boolean earlier(long start, long than) {
        return start == 0 ? than != 0 : than != 0 && start < than;
    }

    private static long slice(Member m, long roundNanos, long utilSum) {
        return Math.max(MIN_SLICE_NANOS, roundNanos * m.utilization() / utilSum);
    }

    /** @return the round length: the smallest timeslice hint among the ready queues, else the default */
    static long roundNanos(List<QueueView> queues, long defaultNanos) {
        long round = Long.MAX_VALUE;
        for (QueueView q : queues) {
            if (q.runnable()) {
                Hint.Timeslice t = q.hint(Hint.Timeslice.class).orElse(null);
                if (t != null) {
                    round = Math.min(round, t.micros() * 1000);
                }
            }
        }
        return round == Long.MAX_VALUE ? defaultNanos : round;
    }

    /** @return whether the queue holds a turn: resumed by the scheduler and ready */
    static boolean holdsTurn(QueueView q) {
        return !q.suspended() && q.runnable();
    }
}
