package dev.xq.policy.fixedpriority;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

class MultiLevelFeedbackTest {

    static final long MS = 1_000_000;
    static final long GB = 1L << 30;

    record Config(int mlfq_levels, long mlfq_slice, int mlfq_slice_growth, long mlfq_boost_period, String mlfq_boost_scope)
            implements MlfqConfig {
        Config(int levels, long slice, int growth, long boostPeriod) {
            this(levels, slice, growth, boostPeriod, "all");
        }

        @Override
        public Class<? extends Annotation> annotationType() {
            return MlfqConfig.class;
        }
    }

    private final RecordingLogger log = new RecordingLogger();
    // levels 0..3, 10 / 20 / 40 / 80 ms, boost every 1 s
    private final MultiLevelFeedback mlfq = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 1_000_000), log.logger);

    private RecordingActions decide(SchedulerView view) {
        RecordingActions a = new RecordingActions();
        mlfq.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    @Test
    void aShortBurstQueueStaysOnTopWhileALongRunningOneSinksAndTheBoostLiftsIt() {
        // The defaults (levels 0..3, 10 / 20 / 40 / 80 ms, boost every 100 ms) but textbook boosts (scope all).
        MultiLevelFeedback mlfq = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 100_000, MlfqSettings.BoostScope.ALL), log.logger);
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, GB));
        sim.add(1, "d0", "interactive");
        sim.add(2, "d0", "batch");
        sim.ready(2);
        sim.decide(mlfq);
        int batchLowest = 0;
        boolean batchBackOnTop = false;
        boolean batchSankAgain = false;
        // Interactive: 1 ms of work every 20 ms (5% of the device); batch: always ready.
        for (long t = 0; t < 2_500 * MS; t += 100_000) {
            long phase = t % (20 * MS);
            if (phase == 3 * MS) {
                sim.ready(1);
            } else if (phase == 4 * MS) {
                sim.idle(1);
            }
            sim.run(mlfq, t + 100_000, 100_000);
            assertEquals(0, mlfq.level(1), "interactive sank at " + sim.now());
            batchLowest = Math.max(batchLowest, mlfq.level(2));
            if (sim.now() > 1_000 * MS && sim.now() < 1_001 * MS) {
                batchBackOnTop |= mlfq.level(2) == 0;
            }
            if (batchBackOnTop && sim.now() < 1_100 * MS) {
                batchSankAgain |= mlfq.level(2) == 3;
            }
        }
        assertEquals(3, batchLowest, "batch sank to the bottom");
        assertTrue(batchBackOnTop, "the boost at 1 s lifted batch to the top");
        assertEquals(2_500 * MS / 20, sim.queue(1).runNanos, 25 * MS, "interactive had its 1 ms per 20 ms, less what it shared");
        assertEquals(0, sim.maxWait(1), "interactive work never waits: it is resumed while idle and runs at once");
        double batchShare = (double) sim.queue(2).runNanos / sim.now();
        assertTrue(batchShare > 0.9, "batch is not starved: " + batchShare);
        assertTrue(batchSankAgain, "and sank to the bottom again before the next boost");
    }

    @Test
    void nothingWaitsLongerThanTheBoostPeriod() {
        nothingWaitsLongerThanTheBoostPeriod(MlfqSettings.BoostScope.ALL);
    }

    @Test
    void nothingWaitsLongerThanTheBoostPeriodWhenOnlyWaitingQueuesAreLifted() {
        nothingWaitsLongerThanTheBoostPeriod(MlfqSettings.BoostScope.WAITING);
    }

    private void nothingWaitsLongerThanTheBoostPeriod(MlfqSettings.BoostScope scope) {
        // levels 0..2, 10 / 20 / 40 ms, boost every 100 ms
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(3, 10_000, 2, 100_000, scope), log.logger);
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, GB));
        // Twenty interactive queues take turns, 5 ms each per 100 ms: each stays on top, together they never leave the device.
        for (long h = 1; h <= 20; h++) {
            sim.add(h, "d0", "i" + h);
        }
        sim.add(99, "d0", "batch");
        sim.ready(99);
        sim.decide(p);
        long batchRanBefore = 0;
        for (long t = 0; t < 1_000 * MS; t += 100_000) {
            long phase = (t + 3 * MS) % (100 * MS);
            long turn = phase / (5 * MS) + 1;
            if (phase % (5 * MS) == 0) {
                sim.idle(turn == 1 ? 20 : turn - 1);
                sim.ready(turn);
            }
            sim.run(p, t + 100_000, 100_000);
            if (sim.now() % (100 * MS) == 0 && sim.now() > 0) {
                assertTrue(sim.queue(99).runNanos > batchRanBefore, "batch ran in the period before " + sim.now());
                batchRanBefore = sim.queue(99).runNanos;
            }
        }
        assertTrue(sim.maxWait(99) > 50 * MS, "batch did wait (else this test shows nothing): " + sim.maxWait(99));
        assertTrue(sim.maxWait(99) <= 100 * MS, "batch waited " + sim.maxWait(99) + " ns, more than the boost period");
        for (long h = 1; h <= 20; h++) {
            assertEquals(0, sim.maxWait(h), "interactive " + h);
        }
    }

    @Test
    void newQueuesStartOnTopAndRunTogetherWhateverTheirPriority() {
        RecordingActions a = decide(view(10 * MS, queue(1).priority(10).readySince(0).ran(500 * MS).build(),
                queue(2).priority(-5).readySince(0).suspended().build()));
        assertTrue(a.runs(1) && a.runs(2), "both on the top level; priority hints are ignored");
        assertEquals(0, mlfq.level(1), "device time used before the policy saw the queue does not count");
        assertEquals(20 * MS, a.wake, "the slice timer: 10 ms");
    }

    @Test
    void aQueueSinksOneLevelPerUsedSliceAndSlicesGrow() {
        decide(view(10 * MS, queue(1).readySince(0).build(), queue(2).readySince(0).build()));
        RecordingActions sunk = decide(view(21 * MS, queue(1).readySince(0).ran(10 * MS).build(), queue(2).readySince(0).ran(9 * MS).build()));
        assertEquals(1, mlfq.level(1));
        assertEquals(0, mlfq.level(2));
        assertFalse(sunk.runs(1), "below a ready top queue it waits");
        assertTrue(sunk.runs(2));
        assertEquals(21 * MS + 1 * MS, sunk.wake, "queue 2 has 1 ms of its slice left");
        // Level 1's slice is 20 ms: 19 ms more is not enough.
        decide(view(22 * MS, queue(1).readySince(0).ran(29 * MS).build(), queue(2).readySince(0).ran(10 * MS).build()));
        assertEquals(1, mlfq.level(1));
        assertEquals(1, mlfq.level(2));
        RecordingActions both = decide(view(23 * MS, queue(1).readySince(0).ran(30 * MS).build(), queue(2).readySince(0).ran(10 * MS).build()));
        assertEquals(2, mlfq.level(1));
        assertTrue(both.runs(2));
        assertFalse(both.runs(1));
        assertEquals(23 * MS + 20 * MS, both.wake, "when queue 2 has used level 1's 20 ms, it sinks beside queue 1");
    }

    @Test
    void anIdleQueueOnTopIsResumedSoItsWorkStartsAtOnce() {
        decide(view(10 * MS, queue(1).readySince(0).build(), queue(2).build()));
        RecordingActions a = decide(view(30 * MS, queue(1).readySince(0).ran(20 * MS).build(), queue(2).build()));
        assertEquals(1, mlfq.level(1));
        assertTrue(a.runs(1), "alone, the sunk queue runs");
        assertTrue(a.runs(2), "the idle top queue stays resumed");
        assertNull(a.wake, "one ready queue: no timer");
        RecordingActions arrival = decide(view(31 * MS, queue(1).readySince(0).ran(21 * MS).build(), queue(2).readySince(31 * MS).build()));
        assertTrue(arrival.runs(2));
        assertFalse(arrival.runs(1), "suspended below the arrival");
        assertEquals(41 * MS, arrival.wake, "the arrival's top slice ends first (then both run on level 1)");
        RecordingActions later = decide(view(35 * MS, queue(1).readySince(0).ran(21 * MS).build(), queue(2).readySince(31 * MS).ran(2 * MS).build()));
        assertEquals(35 * MS + 8 * MS, later.wake);
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(2, 10_000, 2, 1_000_000), log.logger);
        p.schedule(view(10 * MS, queue(1).readySince(0).build(), queue(2).build()), new RecordingActions());
        p.schedule(view(30 * MS, queue(1).readySince(0).ran(20 * MS).build(), queue(2).build()), new RecordingActions());
        RecordingActions bottom = new RecordingActions();
        p.schedule(view(31 * MS, queue(1).readySince(0).ran(21 * MS).build(), queue(2).readySince(31 * MS).build()), bottom);
        assertFalse(bottom.runs(1));
        assertEquals(41 * MS, bottom.wake, "two levels: the top slice timer still comes first");
        RecordingActions topOnly = new RecordingActions();
        p.schedule(view(45 * MS, queue(1).readySince(0).ran(21 * MS).build(), queue(2).readySince(31 * MS).ran(10 * MS).build()), topOnly);
        assertTrue(topOnly.runs(1) && topOnly.runs(2), "both on the bottom level");
        assertNull(topOnly.wake, "nobody waits, nobody can sink further: no timer");
    }

    @Test
    void theBoostLiftsEveryQueueAndForgetsUsedTime() {
        decide(view(10 * MS, queue(1).readySince(0).build(), queue(2).build()));
        decide(view(990 * MS, queue(1).readySince(0).ran(970 * MS).build(), queue(2).build()));
        decide(view(995 * MS, queue(1).readySince(0).ran(975 * MS).build(), queue(2).build()));
        assertEquals(1, mlfq.level(1), "975 ms used, but one level per decision");
        RecordingActions a = decide(view(1_000 * MS, queue(1).readySince(0).ran(980 * MS).build(), queue(2).readySince(999 * MS).build()));
        assertEquals(0, mlfq.level(1));
        assertTrue(a.runs(1) && a.runs(2));
        decide(view(1_005 * MS, queue(1).readySince(0).ran(985 * MS).build(), queue(2).readySince(999 * MS).build()));
        assertEquals(0, mlfq.level(1), "5 ms since the boost");
    }

    @Test
    void underScopeWaitingABoostLeavesARunningQueueWhereItIsAndLiftsTheOthers() {
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 1_000_000, MlfqSettings.BoostScope.WAITING), log.logger);
        // Queue 1 runs alone and sinks to level 2 (10 ms on level 0, 20 ms on level 1); queue 2 also sinks to level 1, then goes idle.
        p.schedule(view(1 * MS, queue(1).readySince(0).build(), queue(2).readySince(0).build()), new RecordingActions());
        p.schedule(view(12 * MS, queue(1).readySince(0).ran(11 * MS).build(), queue(2).readySince(0).ran(11 * MS).build()), new RecordingActions());
        p.schedule(view(40 * MS, queue(1).readySince(0).ran(32 * MS).build(), queue(2).ran(11 * MS).build()), new RecordingActions());
        assertEquals(2, p.level(1));
        assertEquals(1, p.level(2));
        // The boost at 1 s: queue 1 is running (ready, on the highest ready level), queue 2 is idle.
        RecordingActions a = new RecordingActions();
        p.schedule(view(1_000 * MS, queue(1).readySince(0).ran(500 * MS).build(), queue(2).ran(11 * MS).build()), a);
        assertEquals(2, p.level(1), "a running queue keeps its level");
        assertEquals(0, p.level(2), "an idle queue is lifted");
        assertTrue(a.runs(1) && a.runs(2), "queue 2 is idle on a higher level: resumed so its work starts at once");
        // Queue 2 gets work and runs; queue 1 waits on level 2 from 1.5 s. The boost at 2 s leaves it where it is (it has
        // waited half a boost period); its own timer lifts it beside queue 2 once it has waited a whole one, at 2.5 s.
        RecordingActions b = new RecordingActions();
        p.schedule(view(1_500 * MS, queue(1).readySince(0).ran(500 * MS).build(), queue(2).readySince(1_400 * MS).ran(12 * MS).build()), b);
        assertFalse(b.runs(1));
        assertTrue(b.runs(2));
        assertTrue(b.wake != null && b.wake <= 2_500 * MS, "a timer no later than the moment queue 1 has waited a whole boost period: " + b.log);
        RecordingActions c = new RecordingActions();
        p.schedule(view(2_000 * MS, queue(1).readySince(0).ran(500 * MS).build(), queue(2).readySince(1_400 * MS).ran(13 * MS).build()), c);
        assertEquals(2, p.level(1), "a queue kept waiting for less than a boost period is not lifted by the boost");
        assertFalse(c.runs(1));
        assertEquals(0, p.level(2));
        assertTrue(c.wake != null && c.wake <= 2_500 * MS, "its hold still counts from 1.5 s: " + c.log);
        RecordingActions d = new RecordingActions();
        p.schedule(view(2_499 * MS, queue(1).readySince(0).ran(500 * MS).build(), queue(2).readySince(1_400 * MS).ran(14 * MS).build()), d);
        assertFalse(d.runs(1), "999 ms of waiting");
        RecordingActions e = new RecordingActions();
        p.schedule(view(2_500 * MS, queue(1).readySince(0).ran(500 * MS).build(), queue(2).readySince(1_400 * MS).ran(15 * MS).build()), e);
        assertEquals(0, p.level(1), "a queue kept waiting a whole boost period is lifted");
        assertTrue(e.runs(1) && e.runs(2));
    }

    @Test
    void underScopeWaitingABoostDuringAShortBurstDoesNotLiftTheBatchItHeldBack() {
        // The mlfq scenario's tail: batch runs alone on the bottom level; short work arrives and holds it back; a boost
        // falls within the burst. Lifting batch then would put it beside the short work for the rest of the burst.
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 100_000, MlfqSettings.BoostScope.WAITING), log.logger);
        MultiLevelFeedback all = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 100_000, MlfqSettings.BoostScope.ALL), log.logger);
        for (MultiLevelFeedback m : new MultiLevelFeedback[] {p, all}) {
            long ran = 0;
            for (long t = 1; t < 95; t++) {
                ran += MS;
                m.schedule(view(t * MS, queue(1).build(), queue(2).readySince(0).ran(ran).build()), new RecordingActions());
            }
            assertEquals(3, m.level(2), "batch sank to the bottom");
            // short arrives at 99.5 ms: batch is held back
            RecordingActions arrive = new RecordingActions();
            m.schedule(view(99_500_000, queue(1).readySince(99_500_000).build(), queue(2).readySince(0).ran(ran).build()), arrive);
            assertTrue(arrive.runs(1) && !arrive.runs(2));
            // the boost at 100 ms, during the burst
            RecordingActions atBoost = new RecordingActions();
            m.schedule(view(100 * MS, queue(1).readySince(99_500_000).ran(500_000).build(), queue(2).readySince(0).ran(ran).build()), atBoost);
            assertEquals(0, m.level(1));
            if (m == p) {
                assertEquals(3, m.level(2), "waiting: batch was held back for 0.5 ms, not a boost period: it stays down");
                assertTrue(atBoost.runs(1) && !atBoost.runs(2), "so the short work keeps the device");
            } else {
                assertEquals(0, m.level(2), "all: batch is lifted beside the short work");
                assertTrue(atBoost.runs(1) && atBoost.runs(2));
            }
        }
    }

    @Test
    void underScopeWaitingABoostAppliedAtTheArrivalOfWorkLeavesTheQueueThatRanAloneWhereItIs() {
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 1_000_000, MlfqSettings.BoostScope.WAITING), log.logger);
        p.schedule(view(1 * MS, queue(1).readySince(0).build(), queue(2).build()), new RecordingActions());
        p.schedule(view(12 * MS, queue(1).readySince(0).ran(11 * MS).build(), queue(2).build()), new RecordingActions());
        p.schedule(view(40 * MS, queue(1).readySince(0).ran(32 * MS).build(), queue(2).build()), new RecordingActions());
        assertEquals(2, p.level(1));
        // No decision at the boost moment (1 s: nobody waited, so no timer); the next one is queue 2's arrival at 1.003 s.
        RecordingActions a = new RecordingActions();
        p.schedule(view(1_003 * MS, queue(1).readySince(0).ran(990 * MS).build(), queue(2).readySince(1_002 * MS).build()), a);
        assertEquals(2, p.level(1), "queue 1 ran alone until the boost: it was not kept waiting, so it is not lifted");
        assertTrue(a.runs(2));
        assertFalse(a.runs(1), "queue 2's work goes first");
    }

    @Test
    void underScopeAllTheSameBoostLiftsTheRunningQueueToo() {
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 1_000_000, MlfqSettings.BoostScope.ALL), log.logger);
        p.schedule(view(1 * MS, queue(1).readySince(0).build()), new RecordingActions());
        p.schedule(view(12 * MS, queue(1).readySince(0).ran(11 * MS).build()), new RecordingActions());
        p.schedule(view(40 * MS, queue(1).readySince(0).ran(32 * MS).build()), new RecordingActions());
        assertEquals(2, p.level(1));
        p.schedule(view(1_000 * MS, queue(1).readySince(0).ran(500 * MS).build(), queue(2).build()), new RecordingActions());
        assertEquals(0, p.level(1));
    }

    @Test
    void underScopeWaitingALongRunningQueueStaysBelowTheShortOneAcrossBoosts() {
        // As in the first test (interactive 1 ms per 20 ms, batch always ready), but boosts come while batch runs alone.
        MultiLevelFeedback p = new MultiLevelFeedback(MlfqSettings.of(4, 10_000, 2, 100_000, MlfqSettings.BoostScope.WAITING), log.logger);
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, GB));
        sim.add(1, "d0", "interactive");
        sim.add(2, "d0", "batch");
        sim.ready(2);
        sim.decide(p);
        boolean sank = false;
        for (long t = 0; t < 2_500 * MS; t += 100_000) {
            long phase = t % (20 * MS);
            if (phase == 3 * MS) {
                sim.ready(1);
            } else if (phase == 4 * MS) {
                sim.idle(1);
            }
            sim.run(p, t + 100_000, 100_000);
            assertEquals(0, p.level(1), "interactive sank at " + sim.now());
            sank |= p.level(2) == 3;
            if (sank) {
                assertEquals(3, p.level(2), "batch was lifted at " + sim.now() + " although it was never kept waiting at a boost");
            }
        }
        assertTrue(sank, "batch sank to the bottom");
        assertEquals(0, sim.maxWait(1), "interactive work never waits");
        double batchShare = (double) sim.queue(2).runNanos / sim.now();
        assertTrue(batchShare > 0.9, "batch is not starved: " + batchShare);
    }

    @Test
    void goneQueuesAreForgotten() {
        decide(view(10 * MS, queue(1).readySince(0).build(), queue(-1).readySince(0).build()));
        assertEquals(0, mlfq.level(-1));
        decide(view(11 * MS, queue(1).readySince(0).build()));
        assertEquals(-1, mlfq.level(-1));
    }

    @Test
    void badConfigIsRejectedAndChangesNothing() {
        assertEquals("mlfq.levels 0 is out of range [1, 16]",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(0, 10_000, 2, 1_000_000)).getMessage());
        assertEquals("mlfq.levels 17 is out of range [1, 16]",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(17, 10_000, 2, 1_000_000)).getMessage());
        assertEquals("mlfq.slice 99 us is out of range [100, 10000000] us",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(4, 99, 2, 1_000_000)).getMessage());
        assertEquals("mlfq.slice.growth 0 is out of range [1, 16] (1: every level has mlfq.slice)",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(4, 10_000, 0, 1_000_000)).getMessage());
        assertEquals("mlfq.slice 10000 us times mlfq.slice.growth 16 per level gives level 5 a slice over 3600000000 us; "
                        + "lower mlfq.levels (16), mlfq.slice.growth or mlfq.slice",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(16, 10_000, 16, 1_000_000)).getMessage());
        assertEquals("mlfq.boost.period 10000 us is out of range [10001, 3600000000] us (longer than mlfq.slice 10000 us, or no queue would ever sink)",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(4, 10_000, 2, 10_000)).getMessage());
        assertEquals("mlfq.boost.period 3600000001 us is out of range [10001, 3600000000] us (longer than mlfq.slice 10000 us, or no queue would ever sink)",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.of(4, 10_000, 2, 3_600_000_001L)).getMessage());
        MlfqSettings before = mlfq.settings();
        mlfq.modified(new Config(4, 10_000, 2, 5_000), java.util.Map.of());
        assertSame(before, mlfq.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("mlfq.boost.period 5000"), log.all());
        mlfq.modified(new Config(2, 1_000, 4, 50_000), java.util.Map.of());
        assertEquals(MlfqSettings.of(2, 1_000, 4, 50_000), mlfq.settings());
        assertEquals(4 * MS, mlfq.settings().sliceNanos(1));
        assertThrows(IllegalArgumentException.class, () -> new MultiLevelFeedback(MlfqSettings.DEFAULTS, log.logger).activate(new Config(0, 1, 1, 1), java.util.Map.of()));
        assertEquals("mlfq.boost.scope 'some' is not allowed; allowed: all, waiting",
                assertThrows(IllegalArgumentException.class, () -> MlfqSettings.from(new Config(4, 10_000, 2, 100_000, "some"))).getMessage());
        MlfqSettings kept = mlfq.settings();
        mlfq.modified(new Config(4, 10_000, 2, 100_000, "Waiting"), java.util.Map.of());
        assertSame(kept, mlfq.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("mlfq.boost.scope 'Waiting' is not allowed"), log.all());
        mlfq.modified(new Config(4, 10_000, 2, 100_000, "waiting"), java.util.Map.of());
        assertEquals(MlfqSettings.BoostScope.WAITING, mlfq.settings().boostScope());
        assertEquals(MlfqSettings.DEFAULTS, new MultiLevelFeedback().settings());
        assertEquals(MlfqSettings.BoostScope.WAITING, MlfqSettings.DEFAULTS.boostScope(), "the default meets the mlfq scenario's goal");
        assertEquals(MlfqSettings.of(4, 10_000, 2, 100_000, MlfqSettings.BoostScope.WAITING), MlfqSettings.DEFAULTS);
    }
}
