package dev.xq.policy.edf;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.Simulation;
import dev.xq.policy.testkit.Views;
import org.junit.jupiter.api.Test;

class LaxityTest {

    static final long MS = 1_000_000;
    private final LeastLaxityFirst lax = new LeastLaxityFirst();

    private RecordingActions decide(SchedulerView view) {
        RecordingActions a = new RecordingActions();
        lax.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    /** Queue 1: laxity 5 ms at priority 1, then 10; queue 2: laxity 1 s at priority 5, then 5. Both ready at 2 ms. */
    private static SchedulerView twoAt(long now) {
        return view(now,
                queue(1).hint(new Hint.Laxity(5_000, 1, 10)).readySince(2 * MS).suspended().build(),
                queue(2).hint(new Hint.Laxity(1_000_000, 5, 5)).readySince(2 * MS).build());
    }

    @Test
    void queueTurnsCriticalExactlyWhenItsLaxityIsUsedUp() {
        RecordingActions before = decide(twoAt(7 * MS - 1));
        assertFalse(before.runs(1));
        assertTrue(before.runs(2));
        assertEquals(7 * MS, before.wake, "timer at ready-since + laxity");

        RecordingActions at = decide(twoAt(7 * MS));
        assertTrue(at.runs(1), "now - readySince = laxity: critical priority 10");
        assertFalse(at.runs(2));
        assertNull(at.wake, "nothing else turns critical in a way that matters");
    }

    @Test
    void queueWithoutLaxityHasPriorityZeroAndEqualPrioritiesRunTogether() {
        RecordingActions a = decide(view(3 * MS,
                queue(1).priority(100).readySince(2 * MS).build(),
                queue(2).hint(new Hint.Laxity(50_000, 0, 3)).readySince(2 * MS).build(),
                queue(3).hint(new Hint.Laxity(50_000, -1, 3)).readySince(2 * MS).build()));
        assertTrue(a.runs(1), "priority hints are not consulted: priority 0");
        assertTrue(a.runs(2));
        assertFalse(a.runs(3));
        assertEquals(52 * MS, a.wake);
    }

    @Test
    void noTimerWhenTurningCriticalChangesNothing() {
        RecordingActions a = decide(view(3 * MS,
                queue(1).hint(new Hint.Laxity(5_000, 1, 2)).readySince(2 * MS).build(),
                queue(2).hint(new Hint.Laxity(1_000, 9, 9)).readySince(2 * MS).build()));
        assertTrue(a.runs(2));
        assertNull(a.wake, "queue 1 turning critical at 2 stays below 9");
    }

    @Test
    void idleQueueWinsOnArrivalOnlyWithEnoughPriority() {
        RecordingActions a = decide(view(3 * MS,
                queue(1).hint(new Hint.Laxity(5_000, 4, 4)).readySince(2 * MS).build(),
                queue(2).hint(new Hint.Laxity(0, 1, 6)).build(),
                queue(3).hint(new Hint.Laxity(10, 1, 6)).build()));
        assertTrue(a.runs(2), "zero laxity: critical on arrival");
        assertFalse(a.runs(3));
    }

    @Test
    void criticalMomentMatchesOnASimulatedClock() {
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "rt", new Hint.Laxity(5_000, 1, 10));
        sim.add(2, "d0", "be", new Hint.Laxity(1_000_000_000, 5, 5));
        sim.ready(2);
        sim.decide(lax);
        sim.run(lax, 3 * MS, 10 * MS);
        sim.ready(1);
        sim.decide(lax);
        sim.run(lax, 100 * MS, 10 * MS);
        assertEquals(5 * MS, sim.maxWait(1), "it waited exactly its laxity, woken by the policy's own timer");
        assertTrue(sim.queue(2).waits == 0 && sim.maxWait(2) == 92 * MS, "the lax queue waits from then on");
    }
}
