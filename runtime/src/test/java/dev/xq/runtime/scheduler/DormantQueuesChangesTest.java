package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.QueueView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The awake list follows the opens and closes the source reports: a decision beside thousands of
 * sleepers, while a user opens and closes streams, goes over what changed, not over every open
 * queue (issue 41, the churning queue flood); the whole list is read where the source keeps no
 * record, where it no longer reaches back, and once a second anyway.
 */
class DormantQueuesChangesTest {

    /** A stream opened and never launched on: it sleeps at the end of the first decision that sees it. */
    static final class Q implements ScheduledQueue {
        final long handle;
        volatile boolean closed;

        Q(long handle) {
            this.handle = handle;
        }

        @Override
        public long handle() {
            return handle;
        }

        @Override
        public QueueView view() {
            return closed ? null : new QueueView(handle, "q" + handle, "cuda0", "g", false, true, false, 0, 0, 0, 0, 0, 0, 0, List.of(),
                    PreemptionLevel.BLOCK);
        }

        @Override
        public boolean isSuspendedByScheduler() {
            return true;
        }

        @Override
        public void schedule(boolean suspend, long decisionNanos) {
        }

        @Override
        public boolean wakesWhenUsed() {
            return true;
        }
    }

    /** A source that keeps versions and a log of changes (or none: {@code versioned} false), and counts whole reads. */
    static final class Source implements Scheduler.Source {
        final boolean versioned;
        final Map<Long, Q> open = new java.util.TreeMap<>();
        final List<Q> changed = new ArrayList<>();
        final List<Boolean> opened = new ArrayList<>();
        final List<Long> versions = new ArrayList<>();
        long version;
        int wholeReads;
        List<Q> list;

        Source(boolean versioned) {
            this.versioned = versioned;
        }

        void open(Q q) {
            open.put(q.handle, q);
            changed.add(q);
            opened.add(true);
            versions.add(++version);
            list = null;
        }

        void close(Q q) {
            q.closed = true;
            open.remove(q.handle);
            changed.add(q);
            opened.add(false);
            versions.add(++version);
            list = null;
        }

        @Override
        public List<? extends ScheduledQueue> schedulerQueues() {
            wholeReads++;
            if (list == null) {
                list = List.copyOf(open.values());
            }
            return list;
        }

        @Override
        public long queuesVersion() {
            return versioned ? version : -1;
        }

        @Override
        public Scheduler.QueueChanges queueChangesSince(long v) {
            if (!versioned) {
                return null;
            }
            List<Q> qs = new ArrayList<>();
            List<Boolean> op = new ArrayList<>();
            for (int i = 0; i < changed.size(); i++) {
                if (versions.get(i) > v) {
                    qs.add(changed.get(i));
                    op.add(opened.get(i));
                }
            }
            return new Scheduler.QueueChanges(version, qs, op);
        }

        @Override
        public List<DeviceView> deviceViews() {
            return List.of();
        }
    }

    /** One decision as the scheduler makes it: begin, the awake list, views, end. @return the queues it went over */
    private static List<? extends ScheduledQueue> decide(DormantQueues d, Source src, long now) {
        d.begin("p");
        List<? extends ScheduledQueue> awake = d.awake(src, now);
        List<QueueView> views = new ArrayList<>();
        Map<Long, ScheduledQueue> byHandle = new HashMap<>();
        for (ScheduledQueue q : awake) {
            QueueView v = q.view();
            if (v == null) {
                d.gone(q);
            } else {
                views.add(v);
                byHandle.put(q.handle(), q);
            }
        }
        d.end(now, views, byHandle);
        return awake;
    }

    @Test
    void aChurnOfStreamsBesideThousandsAsleepCostsWhatChanged() {
        Source src = new Source(true);
        DormantQueues d = new DormantQueues(src);
        long h = 0;
        List<Q> sleepers = new ArrayList<>();
        for (int i = 0; i < 4_000; i++) {
            Q q = new Q(++h);
            sleepers.add(q);
            src.open(q);
        }
        long t = 1_000_000_000L;
        assertEquals(4_000, decide(d, src, t).size(), "the first decision reads the whole list");
        assertEquals(1, src.wholeReads);
        assertEquals(4_000, d.sleeping(), "never used: asleep at once");
        // a user closes one session of 64 streams and opens another, ten times
        List<Q> session = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            for (Q q : session) {
                src.close(q);
            }
            session.clear();
            for (int i = 0; i < 64; i++) {
                Q q = new Q(++h);
                session.add(q);
                src.open(q);
            }
            t += 100_000_000L / 10; // within the second
            List<? extends ScheduledQueue> went = decide(d, src, t);
            assertEquals(64, went.size(), "round " + round + ": the decision went over the new streams only");
            assertTrue(went.containsAll(session));
            assertEquals(4_064, d.sleeping(), "the new ones asleep, the closed ones gone from the sleepers");
        }
        assertEquals(1, src.wholeReads, "no whole read within the second");
        // a sleeper's work wakes it: in the next decision, and only it
        d.touch(sleepers.get(5));
        List<? extends ScheduledQueue> woken = decide(d, src, t + 1);
        assertEquals(List.of(sleepers.get(5)), woken);
        // a second on: the whole list again, with the same result
        assertEquals(0, decide(d, src, t + 1_100_000_000L).size());
        assertEquals(2, src.wholeReads);
        assertEquals(4_064, d.sleeping());
    }

    @Test
    void aSourceWithoutARecordIsReadWholeWhenItsListChanges() {
        Source src = new Source(false);
        DormantQueues d = new DormantQueues(src);
        for (long i = 1; i <= 100; i++) {
            src.open(new Q(i));
        }
        assertEquals(100, decide(d, src, 1).size());
        assertEquals(0, decide(d, src, 2).size(), "all asleep");
        int reads = src.wholeReads;
        Q late = new Q(1_000);
        src.open(late);
        assertEquals(List.of(late), decide(d, src, 3), "the new queue is seen: the list was read whole");
        assertTrue(src.wholeReads > reads);
        src.close(late);
        assertEquals(0, decide(d, src, 4).size());
        assertEquals(100, d.sleeping(), "the closed sleeper is no longer one");
    }
}
