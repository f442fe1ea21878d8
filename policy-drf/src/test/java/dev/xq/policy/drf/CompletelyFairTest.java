package dev.xq.policy.drf;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import dev.xq.policy.testkit.Views;
import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

class CompletelyFairTest {

    static final long MS = 1_000_000;

    record Config(long cfs_latency, long cfs_min_granularity) implements CfsConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return CfsConfig.class;
        }
    }

    private final RecordingLogger log = new RecordingLogger();
    private final CompletelyFair cfs = new CompletelyFair(CfsSettings.DEFAULTS, log.logger);

    private RecordingActions decide(SchedulerView view) {
        RecordingActions a = new RecordingActions();
        cfs.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    private static double share(Simulation sim, long handle, long... all) {
        long total = 0;
        for (long h : all) {
            total += sim.queue(h).runNanos;
        }
        return (double) sim.queue(handle).runNanos / total;
    }

    private static Simulation device() {
        return new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
    }

    /** Runs until {@code end}, checking after every decision that exactly one ready queue of d0 runs. */
    private static void runOneAtATime(Simulation sim, CompletelyFair p, long end, long eventPeriod) {
        sim.decide(p);
        while (sim.now() < end) {
            sim.run(p, Math.min(end, sim.now() + eventPeriod), eventPeriod);
            long running = sim.view().queues().stream().filter(q -> q.ready() && !q.suspended()).count();
            assertEquals(1, running, "queues running at " + sim.now());
        }
    }

    @Test
    void weightsFollowLinuxNiceScale() {
        assertEquals(1024, NiceWeights.weight(0));
        assertEquals(15, NiceWeights.weight(19), "Linux's nice 19 weighs 15");
        assertEquals(88818, NiceWeights.weight(-20));
        assertEquals(820, NiceWeights.weight(1), 1, "Linux: 820");
        assertEquals(1277, NiceWeights.weight(-1), 3, "Linux: 1277");
        for (int nice = -20; nice < 19; nice++) {
            double step = (double) NiceWeights.weight(nice) / NiceWeights.weight(nice + 1);
            // Rounding to whole weights shows at the light end (Linux too: 18 then 15).
            assertEquals(1.25, step, nice < 5 ? 0.005 : 0.06, "nice " + nice + " to " + (nice + 1));
        }
        assertEquals(0, NiceWeights.nice(queue(1).build()), "no hint is nice 0");
        assertEquals(-3, NiceWeights.nice(queue(1).priority(3).build()));
        assertEquals(-20, NiceWeights.nice(queue(1).priority(1000).build()), "clamped");
        assertEquals(19, NiceWeights.nice(queue(1).priority(-1000).build()), "clamped");
    }

    @Test
    void threeQueuesWeighingOneTwoFourShareTheDeviceByWeight() {
        Simulation sim = device();
        sim.add(1, "d0", "a");
        sim.add(2, "d0", "b", new Hint.Priority(3));
        sim.add(3, "d0", "c", new Hint.Priority(6));
        sim.ready(1);
        sim.ready(2);
        sim.ready(3);
        runOneAtATime(sim, cfs, 3_000 * MS, 700_000);
        double total = 1024 + 2000 + 3906;
        assertEquals(1024 / total, share(sim, 1, 1, 2, 3), 0.005);
        assertEquals(2000 / total, share(sim, 2, 1, 2, 3), 0.005);
        assertEquals(3906 / total, share(sim, 3, 1, 2, 3), 0.005);
        assertEquals(1 / 7.0, share(sim, 1, 1, 2, 3), 0.015);
        assertEquals(2 / 7.0, share(sim, 2, 1, 2, 3), 0.015);
        assertEquals(4 / 7.0, share(sim, 3, 1, 2, 3), 0.015);
        // a's turn is the 1 ms minimum (6 ms * 1024 / 6930 is less): about 440 turns for its 440 ms.
        assertTrue(sim.queue(1).resumes >= 400, "a got " + sim.queue(1).resumes + " turns");
    }

    @Test
    void equalWeightsShareEquallyWhenQueuesGoIdleAndReadyBetweenDecisions() {
        Simulation sim = device();
        sim.add(1, "d0", "a");
        sim.add(2, "d0", "b");
        sim.ready(1);
        sim.ready(2);
        sim.decide(cfs);
        while (sim.now() < 2_000 * MS) {
            sim.run(cfs, sim.now() + 1 * MS, 1 * MS);
            for (long h = 1; h <= 2; h++) {
                sim.idle(h);
                sim.ready(h);
            }
        }
        assertEquals(0.5, share(sim, 1, 1, 2), 0.02);
    }

    @Test
    void aQueueBackFromIdlenessBanksNoCredit() {
        Simulation sim = device();
        sim.add(1, "d0", "a");
        sim.add(2, "d0", "b");
        sim.add(3, "d0", "c");
        sim.ready(1);
        sim.ready(2);
        sim.ready(3);
        runOneAtATime(sim, cfs, 10 * MS, 100_000);
        sim.idle(3);
        runOneAtATime(sim, cfs, 1_000 * MS, 500_000);
        assertTrue(share(sim, 1, 1, 2) > 0.45 && share(sim, 1, 1, 2) < 0.55, "a and b shared while c was idle");
        long cBefore = sim.queue(3).runNanos;
        sim.ready(3);
        // 100 us events; c's turn among three equal queues is max(1 ms, 6 ms / 3) = 2 ms.
        long longestRun = 0;
        long runStart = -1;
        sim.decide(cfs);
        while (sim.now() < 1_100 * MS) {
            sim.run(cfs, sim.now() + 100_000, 100_000);
            boolean cRuns = !sim.queue(3).suspended;
            if (cRuns && runStart < 0) {
                runStart = sim.now();
            } else if (!cRuns && runStart >= 0) {
                longestRun = Math.max(longestRun, sim.now() - runStart);
                runStart = -1;
            }
        }
        if (runStart >= 0) {
            longestRun = Math.max(longestRun, sim.now() - runStart);
        }
        assertTrue(longestRun > 0, "c ran");
        assertTrue(longestRun <= 2 * MS + 100_000, "c ran " + longestRun + " ns at a stretch, more than one turn");
        double cShare = (double) (sim.queue(3).runNanos - cBefore) / (100 * MS);
        assertEquals(1 / 3.0, cShare, 0.05, "c gets a third after it came back, not a burst");
    }

    @Test
    void aNewQueueStartsAtTheLeastVirtualRuntime() {
        decide(view(10 * MS, queue(1).readySince(0).ran(8 * MS).build()));
        decide(view(20 * MS, queue(1).readySince(0).ran(18 * MS).build()));
        assertEquals(10 * MS, cfs.vruntime(1), 1, "charged 10 ms since the first look, at weight 1024");
        // Queue 2 arrives with device time used before it was ever seen: not charged.
        RecordingActions a = decide(view(21 * MS, queue(1).readySince(0).ran(19 * MS).resumedAt(1 * MS).build(),
                queue(2).priority(5).readySince(21 * MS).ran(50 * MS).suspended().build()));
        assertEquals(11 * MS, cfs.vruntime(1), 1);
        assertEquals(11 * MS, cfs.vruntime(2), 1, "placed at the least virtual runtime of the ready ones");
        // a alone renewed its turn at the decision at 20 ms; with b (1024 * 1.25^5 = 3125) ready it is 6 ms * 1024 / 4149.
        assertTrue(a.runs(1), "the arrival waits for the end of the turn");
        assertFalse(a.runs(2));
        long end = 20 * MS + 6 * MS * 1024 / 4149;
        assertEquals(end, a.wake, 1);
        RecordingActions next = decide(view(end + 1, queue(1).readySince(0).ran(19 * MS + 1).resumedAt(1 * MS).build(),
                queue(2).priority(5).readySince(21 * MS).ran(50 * MS).suspended().build()));
        assertTrue(next.runs(2), "then b, whose virtual runtime is now the least");
        assertFalse(next.runs(1));
        assertEquals(end + 1 + 6 * MS * 3125 / 4149, next.wake, 1);
    }

    @Test
    void aLoneQueueRunsWithoutTimerAndIdleQueuesWaitForTheirTurn() {
        RecordingActions alone = decide(view(5 * MS, queue(1).readySince(0).build(), queue(2).build()));
        assertTrue(alone.runs(1));
        assertFalse(alone.runs(2), "an arrival must not cut into the running turn");
        assertNull(alone.wake);

        RecordingActions allIdle = decide(view(6 * MS, queue(1).build(), queue(2).suspended().build()));
        assertTrue(allIdle.runs(1) && allIdle.runs(2), "with no work anywhere, the first arrival starts at once");
    }

    @Test
    void theHolderKeepsItsTurnUntilItsSliceEnds() {
        RecordingActions first = decide(view(10 * MS, queue(1).readySince(0).build(), queue(2).readySince(0).suspended().build()));
        assertTrue(first.runs(1), "tie: lowest handle");
        assertEquals(13 * MS, first.wake, "two equal queues: 3 ms each");
        // Queue 1 ran 2 ms; its turn goes on although its virtual runtime is now the larger.
        RecordingActions during = decide(view(12 * MS, queue(1).readySince(0).resumedAt(10 * MS).ran(2 * MS).build(),
                queue(2).readySince(0).suspended().build()));
        assertTrue(during.runs(1));
        assertFalse(during.runs(2));
        assertEquals(13 * MS, during.wake);
        RecordingActions after = decide(view(13 * MS, queue(1).readySince(0).resumedAt(10 * MS).ran(3 * MS).build(),
                queue(2).readySince(0).suspended().build()));
        assertTrue(after.runs(2));
        assertFalse(after.runs(1));
        assertEquals(16 * MS, after.wake);
    }

    @Test
    void timeUsedWhileAnotherPolicyDecidedIsNotCharged() {
        decide(view(10 * MS, queue(1).readySince(0).build(), queue(2).readySince(0).suspended().build()));
        decide(view(11 * MS, queue(1).readySince(0).ran(1 * MS).build(), queue(2).readySince(0).suspended().build()));
        assertEquals(1 * MS, cfs.vruntime(1), 1);
        // 5 s later: queue 1 ran 4 s meanwhile under another policy.
        decide(view(5_011 * MS, queue(1).readySince(0).ran(4_001 * MS).build(), queue(2).readySince(0).ran(500 * MS).build()));
        assertEquals(1 * MS, cfs.vruntime(1), 1);
        assertEquals(0, cfs.vruntime(2), 1);
    }

    @Test
    void goneQueuesAreForgotten() {
        decide(view(10 * MS, queue(1).readySince(0).build(), queue(-1).readySince(0).build()));
        assertEquals(0, cfs.vruntime(-1));
        decide(view(11 * MS, queue(1).readySince(0).build()));
        assertTrue(Double.isNaN(cfs.vruntime(-1)));
    }

    @Test
    void badConfigIsRejectedAndChangesNothing() {
        assertEquals("cfs.latency 99 us is out of range [100, 10000000] us",
                assertThrows(IllegalArgumentException.class, () -> CfsSettings.of(99, 100)).getMessage());
        assertEquals("cfs.latency 10000001 us is out of range [100, 10000000] us",
                assertThrows(IllegalArgumentException.class, () -> CfsSettings.of(10_000_001, 100)).getMessage());
        assertEquals("cfs.min.granularity 7000 us is out of range [100, 6000] us (at most cfs.latency)",
                assertThrows(IllegalArgumentException.class, () -> CfsSettings.of(6_000, 7_000)).getMessage());
        assertEquals("cfs.min.granularity 99 us is out of range [100, 6000] us (at most cfs.latency)",
                assertThrows(IllegalArgumentException.class, () -> CfsSettings.of(6_000, 99)).getMessage());
        CfsSettings before = cfs.settings();
        cfs.modified(new Config(1_000, 2_000), java.util.Map.of());
        assertSame(before, cfs.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("cfs.min.granularity 2000"), log.all());
        cfs.modified(new Config(2_000, 500), java.util.Map.of());
        assertEquals(CfsSettings.of(2_000, 500), cfs.settings());
        // a value DS cannot read as a number (it would throw naming no key): refused by key, the settings stay
        CfsSettings kept = cfs.settings();
        cfs.modified(new Config(3_000, 500), java.util.Map.of("cfs.latency", "soon"));
        assertSame(kept, cfs.settings());
        assertTrue(log.all().contains("cfs.latency 'soon' is not a whole number"), log.all());
        // a misspelt key changes nothing and is said with the keys allowed
        cfs.modified(new Config(3_000, 500), java.util.Map.of("cfs.latencyy", "3000"));
        assertTrue(log.all().contains("dev.xq.policy.cfs: cfs.latencyy is no setting here, ignored; allowed: cfs.latency, cfs.min.granularity"),
                log.all());
        assertThrows(IllegalArgumentException.class, () -> new CompletelyFair(CfsSettings.DEFAULTS, log.logger).activate(new Config(50, 50), java.util.Map.of()));
        assertEquals(CfsSettings.DEFAULTS, new CompletelyFair().settings());
    }

    @Test
    void minimumGranularityBoundsShortTurns() {
        CompletelyFair p = new CompletelyFair(CfsSettings.of(6_000, 2_000), log.logger);
        RecordingActions a = new RecordingActions();
        SchedulerView v = view(10 * MS, queue(1).priority(-10).readySince(0).build(), queue(2).priority(10).readySince(0).suspended().build());
        p.schedule(v, a);
        assertTrue(a.runs(1), "tie at 0: lowest handle");
        assertEquals(12 * MS, a.wake, "nice 10 next to nice -10 would get microseconds; at least 2 ms");
    }
}
