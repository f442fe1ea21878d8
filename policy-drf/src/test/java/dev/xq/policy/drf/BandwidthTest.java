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
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import dev.xq.policy.testkit.Views;
import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

class BandwidthTest {

    static final long MS = 1_000_000;

    record Config(long bandwidth_timeslice, int bandwidth_default_utilization) implements BandwidthConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return BandwidthConfig.class;
        }
    }

    private final RecordingLogger log = new RecordingLogger();
    private final BandwidthPartition up = new BandwidthPartition(BandwidthSettings.DEFAULTS, log.logger);
    private final GroupBandwidthPartition pup = new GroupBandwidthPartition(BandwidthSettings.DEFAULTS, log.logger);

    private static RecordingActions decide(Policy p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
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

    /** Runs the simulation and checks at every decision that at most {@code maxRunning} ready queues run. */
    private static void runChecked(Simulation sim, Policy p, long end, long eventPeriod, int maxRunning) {
        sim.decide(p);
        while (sim.now() < end) {
            sim.run(p, Math.min(end, sim.now() + eventPeriod), eventPeriod);
            long running = sim.view().queues().stream().filter(q -> q.ready() && !q.suspended()).count();
            assertTrue(running <= maxRunning && running >= 1, running + " queues run at " + sim.now());
        }
    }

    @Test
    void sharesConvergeToUtilizationRatio() {
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "a", new Hint.Utilization(75));
        sim.add(2, "d0", "b", new Hint.Utilization(25));
        sim.ready(1);
        sim.ready(2);
        runChecked(sim, up, 2_000 * MS, 700_000, 1);
        assertEquals(0.75, share(sim, 1, 1, 2), 0.02);
        assertEquals(0.25, share(sim, 2, 1, 2), 0.02);
        // 5 ms rounds: 400 of them, two turns each.
        assertTrue(sim.queue(2).resumes >= 390, "b got " + sim.queue(2).resumes + " turns");
    }

    @Test
    void threeQueuesAndAQueueWithoutHintUseTheDefault() {
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "a", new Hint.Utilization(50));
        sim.add(2, "d0", "b", new Hint.Utilization(30));
        sim.add(3, "d0", "c");
        BandwidthPartition p = new BandwidthPartition(BandwidthSettings.of(2_000, 20), log.logger);
        sim.ready(1);
        sim.ready(2);
        sim.ready(3);
        runChecked(sim, p, 3_000 * MS, 330_000, 1);
        assertEquals(0.5, share(sim, 1, 1, 2, 3), 0.02);
        assertEquals(0.3, share(sim, 2, 1, 2, 3), 0.02);
        assertEquals(0.2, share(sim, 3, 1, 2, 3), 0.02);
    }

    @Test
    void sliceLengthsFollowRoundAndUtilization() {
        // a holds the turn since 10 ms: slice 3.75 ms of a 5 ms round.
        RecordingActions a = decide(up, view(11 * MS,
                queue(1).hint(new Hint.Utilization(75)).readySince(0).resumedAt(10 * MS).build(),
                queue(2).hint(new Hint.Utilization(25)).readySince(0).suspended().build()));
        assertTrue(a.runs(1));
        assertFalse(a.runs(2));
        assertEquals(13_750_000L, a.wake);

        RecordingActions next = decide(up, view(13_750_000L,
                queue(1).hint(new Hint.Utilization(75)).readySince(0).resumedAt(10 * MS).build(),
                queue(2).hint(new Hint.Utilization(25)).readySince(0).suspended().build()));
        assertFalse(next.runs(1));
        assertTrue(next.runs(2));
        assertEquals(13_750_000L + 1_250_000L, next.wake);

        RecordingActions hinted = decide(up, view(10_500_000L,
                queue(1).hint(new Hint.Utilization(75)).hint(new Hint.Timeslice(1_000)).readySince(0).resumedAt(10 * MS).build(),
                queue(2).hint(new Hint.Utilization(25)).readySince(0).suspended().build()));
        assertEquals(10 * MS + 750_000L, hinted.wake, "the smallest timeslice hint sets the round: 1 ms");
    }

    @Test
    void idleQueuesAreSkippedAndWaitForTheirTurn() {
        RecordingActions alone = decide(up, view(50 * MS,
                queue(1).hint(new Hint.Utilization(25)).readySince(0).resumedAt(1 * MS).build(),
                queue(2).hint(new Hint.Utilization(75)).suspended().build()));
        assertTrue(alone.runs(1), "alone it keeps the device past its slice");
        assertFalse(alone.runs(2), "an arrival must not cut into the running turn");
        assertNull(alone.wake);

        RecordingActions arrival = decide(up, view(51 * MS,
                queue(1).hint(new Hint.Utilization(25)).readySince(0).resumedAt(50 * MS).build(),
                queue(2).hint(new Hint.Utilization(75)).readySince(51 * MS).suspended().build()));
        assertTrue(arrival.runs(1));
        assertEquals(50 * MS + 1_250_000L, arrival.wake, "the arrival waits at most the rest of the slice");

        RecordingActions allIdle = decide(up, view(51 * MS,
                queue(1).hint(new Hint.Utilization(25)).resumedAt(50 * MS).build(),
                queue(2).hint(new Hint.Utilization(75)).suspended().build()));
        assertTrue(allIdle.runs(1) && allIdle.runs(2), "with no work anywhere, the first arrival starts at once");
    }

    @Test
    void goingIdleAndReadyBetweenDecisionsDoesNotRestartTheSlice() {
        // a was resumed at 10 ms; it went idle and came back at 13 ms before the scheduler looked.
        RecordingActions a = decide(up, view(13_800_000L,
                queue(1).hint(new Hint.Utilization(75)).readySince(13 * MS).resumedAt(10 * MS).build(),
                queue(2).hint(new Hint.Utilization(25)).readySince(0).suspended().build()));
        assertTrue(a.runs(2), "a's 3.75 ms slice ended at 13.75 ms");
        assertFalse(a.runs(1));
    }

    @Test
    void sharesConvergeWhenQueuesGoIdleAndReadyBetweenDecisions() {
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "a", new Hint.Utilization(75));
        sim.add(2, "d0", "b", new Hint.Utilization(25));
        sim.ready(1);
        sim.ready(2);
        sim.decide(up);
        while (sim.now() < 2_000 * MS) {
            sim.run(up, sim.now() + 1 * MS, 1 * MS);
            for (long h = 1; h <= 2; h++) {
                sim.idle(h);
                sim.ready(h);
            }
        }
        assertEquals(0.25, share(sim, 2, 1, 2), 0.02);
    }

    @Test
    void turnPassesInHandleOrderAfterTheLastHolder() {
        RecordingActions a = decide(up, view(100 * MS,
                queue(1).readySince(0).suspended().resumedAt(10 * MS).build(),
                queue(2).suspended().resumedAt(90 * MS).build(),
                queue(3).readySince(0).suspended().resumedAt(80 * MS).build()));
        assertTrue(a.runs(3), "queue 2 went idle; the turn passes to the next ready queue after it, wrapping");
        assertFalse(a.runs(1));
    }

    @Test
    void groupSharesConvergeAndAGroupRunsAllItsQueues() {
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "A", new Hint.Utilization(75));
        sim.add(2, "d0", "A", new Hint.Utilization(10));
        sim.add(3, "d0", "B", new Hint.Utilization(25));
        sim.ready(1);
        sim.ready(2);
        sim.ready(3);
        runChecked(sim, pup, 2_000 * MS, 900_000, 2);
        double a = share(sim, 1, 1, 2, 3) + share(sim, 2, 1, 2, 3);
        assertEquals(0.75, a, 0.02, "group share is the largest hint among its queues");
        assertEquals(sim.queue(1).runNanos, sim.queue(2).runNanos, MS, "both of A's queues run during A's slice");
    }

    @Test
    void groupWithoutHintsGetsTheDefault() {
        RecordingActions a = decide(new GroupBandwidthPartition(BandwidthSettings.of(4_000, 25), log.logger), view(10_500_000L,
                queue(1).group("A").readySince(0).resumedAt(10 * MS).build(),
                queue(2).group("A").build(),
                queue(3).group("B").hint(new Hint.Utilization(75)).readySince(0).suspended().build()));
        assertTrue(a.runs(1) && a.runs(2), "the idle queue of the group holding the turn may start at once");
        assertFalse(a.runs(3));
        assertEquals(10 * MS + 1_000_000L, a.wake, "A: 25 of 100 -> 1 ms of a 4 ms round");
    }

    @Test
    void badConfigIsRejectedAndChangesNothing() {
        assertEquals("bandwidth.timeslice 99 us is out of range [100, 10000000] us",
                assertThrows(IllegalArgumentException.class, () -> BandwidthSettings.of(99, 50)).getMessage());
        assertEquals("bandwidth.default.utilization 0% is out of range [1, 100]%",
                assertThrows(IllegalArgumentException.class, () -> BandwidthSettings.of(5_000, 0)).getMessage());
        BandwidthSettings before = up.settings();
        up.modified(new Config(20_000_000, 50), java.util.Map.of());
        assertSame(before, up.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("bandwidth.timeslice 20000000"), log.all());
        pup.modified(new Config(1_000, 101), java.util.Map.of());
        assertSame(BandwidthSettings.DEFAULTS, pup.settings());
        pup.modified(new Config(1_000, 100), java.util.Map.of());
        assertEquals(BandwidthSettings.of(1_000, 100), pup.settings());
        assertThrows(IllegalArgumentException.class, () -> new BandwidthPartition(BandwidthSettings.DEFAULTS, log.logger).activate(new Config(0, 1), java.util.Map.of()));
        assertEquals(BandwidthSettings.DEFAULTS, new BandwidthPartition().settings());
    }
}
