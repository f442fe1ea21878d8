package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 41: many idle, held queues of processes (a user's 4,096 streams) are left out of the
 * decisions about the others once they have slept a second, and come back with their next work.
 */
class DormantQueuesTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);

    /** An owner that counts how often the node read its counters (once per view). */
    static final class Counted extends ExternalQueueTest.Owner {
        final AtomicInteger reads = new AtomicInteger();

        @Override
        public ExternalCounters counters() {
            reads.incrementAndGet();
            return super.counters();
        }
    }

    /** As hpf: every queue under the highest priority with work is held, idle or not. */
    static final class HoldLower implements Policy {
        @Override
        public String description() {
            return "test: hold everything under the highest priority with work";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            int top = view.queues().stream().filter(QueueView::ready).mapToInt(QueueView::priority).max().orElse(Integer.MIN_VALUE);
            for (QueueView q : view.queues()) {
                if (q.priority() < top) {
                    actions.suspend(q.handle());
                } else {
                    actions.resume(q.handle());
                }
            }
        }
    }

    @BeforeEach
    void start() {
        core.start();
        core.scheduler().register("hold", new HoldLower(), "test", 1);
        core.scheduler().select("hold", true);
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    private static ExternalCounters busy() {
        return new ExternalCounters(0, 1, 10, 9, 0, 9_000_000, 1_000_000, System.nanoTime());
    }

    @Test
    void idleHeldQueuesSleepAndTheirWorkWakesThem() throws Exception {
        ExternalQueueTest.Owner hi = new ExternalQueueTest.Owner();
        ExternalQueue qhi = core.open(new ExternalQueueSpec("serve/default", "cuda0", "2:serve", 2, List.of(new Hint.Priority(2)), null), hi);
        List<Counted> idle = new ArrayList<>();
        List<ExternalQueue> handles = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Counted o = new Counted();
            o.counters = ExternalQueueTest.USED_IDLE; // they worked before (never used, they sleep at once, let go)
            idle.add(o);
            handles.add(core.open(new ExternalQueueSpec("flood/s" + i, "cuda0", "3:flood", 3, List.of(new Hint.Priority(1)), null), o));
        }
        hi.counters = busy();
        qhi.changed();
        assertTrue(ExternalQueueTest.eventually(() -> idle.stream().allMatch(ExternalQueueTest.Owner::holding)),
                "the 200 idle queues are held while the preferred one works");
        // held and idle for more than a second, seen by decisions meanwhile: they fall asleep
        long until = System.nanoTime() + 1_300_000_000L;
        while (System.nanoTime() < until) {
            qhi.changed();
            Thread.sleep(20);
        }
        assertTrue(ExternalQueueTest.eventually(() -> core.scheduler().dormantQueues() == 200),
                "asleep: " + core.scheduler().dormantQueues());
        int before = idle.stream().mapToInt(o -> o.reads.get()).sum();
        int decisions = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < 20 && System.nanoTime() - t0 < 600_000_000L; i++) {
            qhi.changed(); // decisions about the preferred queue alone
            Thread.sleep(5);
            decisions++;
        }
        int read = idle.stream().mapToInt(o -> o.reads.get()).sum() - before;
        // one decision in a second may look at every queue (200 reads); never one per decision
        assertTrue(read <= 200, read + " counter reads of the sleeping queues in " + decisions + " decisions (at most one look at all)");
        // work comes to one of them while the preferred queue still works: it wakes, and is held as before
        Counted woken = idle.get(7);
        woken.counters = busy();
        int w0 = woken.reads.get();
        handles.get(7).changed();
        assertTrue(ExternalQueueTest.eventually(() -> woken.reads.get() > w0), "the woken queue is looked at");
        assertTrue(woken.holding(), "still held behind the preferred queue");
        // the preferred queue goes idle: the queue with work is let go at once; the sleepers stay held
        // (nothing to run) and out of the decisions, also in the sweeps that read them once a second
        hi.counters = ExternalQueueTest.USED_IDLE;
        qhi.changed();
        assertTrue(ExternalQueueTest.eventually(() -> !woken.holding()), "the queue with work runs once the preferred one is idle");
        int sleeperHolds = 0;
        for (int i = 0; i < idle.size(); i++) {
            if (i != 7) {
                sleeperHolds += (int) idle.get(i).held.stream().filter(h -> h).count();
            }
        }
        Thread.sleep(1_200); // a sweep
        int sleeperHoldsLater = 0;
        for (int i = 0; i < idle.size(); i++) {
            if (i != 7) {
                sleeperHoldsLater += (int) idle.get(i).held.stream().filter(h -> h).count();
                assertTrue(idle.get(i).holding(), "sleeper " + i + " still held");
            }
        }
        assertEquals(sleeperHolds, sleeperHoldsLater, "the sweep neither let the sleepers go nor held them again");
        // a sleeper whose work came without its event (missed) is found by a sweep
        Counted missed = idle.get(9);
        missed.counters = busy();
        assertTrue(ExternalQueueTest.eventually(() -> !missed.holding()), "a sleeper with work, never touched, let go by a sweep");
        // the policy changes: every queue wakes and the new one decides on all of them
        core.scheduler().register("hold2", new HoldLower(), "test", 2);
        core.scheduler().select("hold2", true);
        assertTrue(ExternalQueueTest.eventually(() -> idle.stream().noneMatch(ExternalQueueTest.Owner::holding)),
                "every idle queue let go by the new policy: " + idle.stream().filter(ExternalQueueTest.Owner::holding).count() + " held");
        assertEquals(0, core.scheduler().dormantQueues(), "none asleep once let go");
    }

    @Test
    void heldQueuesNeverUsedSleepAtOnceUsedOnesAfterASecond() throws Exception {
        ExternalQueueTest.Owner hi = new ExternalQueueTest.Owner();
        ExternalQueue qhi = core.open(new ExternalQueueSpec("serve/default", "cuda0", "2:serve", 2, List.of(new Hint.Priority(2)), null), hi);
        hi.counters = busy();
        qhi.changed();
        // a user's streams opened and never launched on, and one that worked and is idle now
        List<Counted> unused = new ArrayList<>();
        List<ExternalQueue> unusedHandles = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            Counted o = new Counted();
            unused.add(o);
            unusedHandles.add(core.open(new ExternalQueueSpec("churn/s" + i, "cuda0", "3:churn", 3, List.of(new Hint.Priority(1)), null), o));
        }
        Counted worked = new Counted();
        worked.counters = new ExternalCounters(0, 0, 10, 10, 0, 9_000_000, 1_000_000, 0); // idle, its counts kept
        core.open(new ExternalQueueSpec("churn/used", "cuda0", "3:churn", 3, List.of(new Hint.Priority(1)), null), worked);
        qhi.changed();
        assertTrue(ExternalQueueTest.eventually(() -> unused.stream().allMatch(ExternalQueueTest.Owner::holding) && worked.holding()),
                "held behind the preferred queue");
        assertTrue(ExternalQueueTest.eventually(() -> {
            qhi.changed();
            return core.scheduler().dormantQueues() == 64;
        }), "the 64 never used asleep at once, well inside the second the used one waits: " + core.scheduler().dormantQueues());
        long t0 = System.nanoTime();
        while (core.scheduler().dormantQueues() != 65 && System.nanoTime() - t0 < 3_000_000_000L) {
            qhi.changed();
            Thread.sleep(20);
        }
        assertEquals(65, core.scheduler().dormantQueues(), "the used one after its second idle");
        assertTrue(System.nanoTime() - t0 >= 500_000_000L, "the used one did not sleep at once");
        // the first work of one never used wakes it, as any sleeper's
        Counted first = unused.get(5);
        first.counters = busy();
        int r0 = first.reads.get();
        unusedHandles.get(5).changed();
        assertTrue(ExternalQueueTest.eventually(() -> first.reads.get() > r0), "looked at again with its first work");
    }

    @Test
    void queuesNeverUsedSleepLetGoTooAndTheirFirstWorkWakesThem() throws Exception {
        // nothing preferred works: the policy lets every queue go; a user's streams opened and never
        // launched on stayed awake in every decision for as long as they were open (issue 41's churn)
        List<Counted> unused = new ArrayList<>();
        List<ExternalQueue> handles = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            Counted o = new Counted();
            unused.add(o);
            handles.add(core.open(new ExternalQueueSpec("churn/s" + i, "cuda0", "3:churn", 3, List.of(new Hint.Priority(1)), null), o));
        }
        Counted worked = new Counted();
        worked.counters = new ExternalCounters(0, 0, 10, 10, 0, 9_000_000, 1_000_000, 0); // idle, its counts kept
        ExternalQueue qWorked = core.open(new ExternalQueueSpec("churn/used", "cuda0", "3:churn", 3, List.of(new Hint.Priority(1)), null),
                worked);
        ExternalQueueTest.Owner hi = new ExternalQueueTest.Owner();
        hi.counters = new ExternalCounters(0, 0, 10, 10, 0, 9_000_000, 1_000_000, 0); // it worked before: never asleep, let go
        ExternalQueue qhi = core.open(new ExternalQueueSpec("serve/default", "cuda0", "2:serve", 2, List.of(new Hint.Priority(2)), null), hi);
        assertTrue(ExternalQueueTest.eventually(() -> {
            qhi.changed();
            return core.scheduler().dormantQueues() == 64;
        }), "the 64 never used asleep, let go: " + core.scheduler().dormantQueues());
        assertTrue(unused.stream().noneMatch(ExternalQueueTest.Owner::holding), "asleep, not held");
        // the used one, idle and let go, stays awake; a second and a sweep later the never used stay asleep
        long until = System.nanoTime() + 1_400_000_000L;
        while (System.nanoTime() < until) {
            qhi.changed();
            Thread.sleep(20);
        }
        assertEquals(64, core.scheduler().dormantQueues(), "only the never used asleep (the used ones let go stay awake)");
        int before = unused.stream().mapToInt(o -> o.reads.get()).sum();
        int decisions = 0;
        for (int i = 0; i < 20; i++) {
            qhi.changed();
            Thread.sleep(5);
            decisions++;
        }
        int read = unused.stream().mapToInt(o -> o.reads.get()).sum() - before;
        assertTrue(read <= 64, read + " counter reads of the sleepers in " + decisions + " decisions (at most one sweep's look at all)");
        // the preferred one works now: the sleepers are not held (nothing of theirs can run), the used one is
        hi.counters = busy();
        qhi.changed();
        assertTrue(ExternalQueueTest.eventually(worked::holding), "the awake one is held behind the preferred queue");
        assertTrue(unused.stream().noneMatch(ExternalQueueTest.Owner::holding), "the sleepers are left as they were");
        // the first work of one: its event wakes it, and the next decision holds it behind the preferred queue
        Counted first = unused.get(5);
        first.counters = busy();
        handles.get(5).changed();
        assertTrue(ExternalQueueTest.eventually(first::holding), "woken by its first work and held");
        // the others asleep, and the used one too: held now, and idle for more than a second
        assertEquals(64, core.scheduler().dormantQueues(), "63 never used and the used one asleep");
        // a sleeper whose first work came without its event (missed) is found by a sweep
        Counted missed = unused.get(9);
        missed.counters = busy();
        assertTrue(ExternalQueueTest.eventually(missed::holding), "a never-used sleeper with work found by a sweep and held");
        qWorked.changed();
    }

    @Test
    void aQueueAsleepLetGoHasItsConfiguredLimitsUntilItsWorkWakesIt() throws Exception {
        dev.xq.api.QueueConfig cfg = dev.xq.api.QueueConfig.defaults().withThreshold(8).withBatch(4).withWindowMicros(300);
        ExternalQueueTest.Owner other = new ExternalQueueTest.Owner();
        other.counters = ExternalQueueTest.USED_IDLE;
        ExternalQueue qo = core.open(new ExternalQueueSpec("other/default", "cuda7", "8:other", 8, List.of(new Hint.Priority(2)), cfg), other);
        ExternalQueueTest.Owner solo = new ExternalQueueTest.Owner();
        ExternalQueue q = core.open(new ExternalQueueSpec("solo/default", "cuda7", "9:solo", 9, List.of(new Hint.Priority(1)), cfg), solo);
        // beside company, never used: let go (nothing preferred works), and asleep at the first
        // decision that sees it idle; its first launches will go before a decision sees them, under
        // its configured limits
        assertTrue(ExternalQueueTest.eventually(() -> core.scheduler().dormantQueues() == 1), "asleep");
        assertTrue(!solo.holding(), "not held");
        assertTrue(solo.config.windowMicros() == 300 && solo.config.threshold() == 8, "its configured limits: " + solo.config);
        // the company leaves while it sleeps: its answer is not kept while it sleeps, so the limits stay
        qo.close();
        Thread.sleep(100);
        assertEquals(1, core.scheduler().dormantQueues(), "still asleep");
        assertTrue(solo.config.windowMicros() == 300, "asleep let go, still bounded: " + solo.config);
        // its first work: awake, alone now, the limits lifted
        solo.counters = busy();
        q.changed();
        assertTrue(ExternalQueueTest.eventually(() -> core.scheduler().dormantQueues() == 0 && solo.config.windowMicros() == 0),
                "awake and alone: no window (" + solo.config + ")");
    }

    @Test
    void aQueueNeverUsedAloneOnItsDeviceStaysAwake() throws Exception {
        ExternalQueueTest.Owner solo = new ExternalQueueTest.Owner();
        ExternalQueue q = core.open(new ExternalQueueSpec("solo/default", "cuda8", "9:solo", 9, List.of(new Hint.Priority(1)), null), solo);
        for (int i = 0; i < 20; i++) {
            q.changed();
            Thread.sleep(5);
        }
        assertEquals(0, core.scheduler().dormantQueues(), "alone, let go: nobody waits for its first launches, it stays awake");
        assertEquals(dev.xq.api.QueueConfig.MAX_THRESHOLD, solo.config.threshold(), "alone: its limits lifted");
    }
}
