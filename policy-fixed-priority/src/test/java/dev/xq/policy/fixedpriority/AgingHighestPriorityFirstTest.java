package dev.xq.policy.fixedpriority;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

class AgingHighestPriorityFirstTest {

    static final long MS = 1_000_000;

    /** Config Admin's view of the PID, as SCR would hand it over. */
    record Config(long aging_threshold, double aging_rate, long aging_quantum) implements AgingConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return AgingConfig.class;
        }
    }

    // threshold 10 ms, 0.5 levels/ms, quantum 5 ms
    private final RecordingLogger log = new RecordingLogger();
    private final AgingHighestPriorityFirst policy = new AgingHighestPriorityFirst(AgingSettings.of(10_000, 0.5, 5_000), log.logger);

    private RecordingActions decide(SchedulerView view) {
        RecordingActions a = new RecordingActions();
        policy.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    @Test
    void lowQueueReachesTheTopAfterThresholdPlusGapOverRate() {
        // p 5 vs p 1: 10 ms threshold + 4 levels / 0.5 per ms = 18 ms after lo became ready at 1 ms.
        long reaches = 1 * MS + 10 * MS + 8 * MS;
        RecordingActions before = decide(view(reaches - 1,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).suspended().build()));
        assertTrue(before.runs(1));
        assertFalse(before.runs(2));
        assertEquals(reaches, before.wake, "the timer fires exactly when the waiting queue reaches the top");

        RecordingActions at = decide(view(reaches,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).suspended().build()));
        assertTrue(at.runs(2), "aged queue runs");
        assertTrue(at.runs(1), "aging never suspends the top queue");
        assertEquals(reaches + 5 * MS, at.wake, "its quantum ends 5 ms later");
    }

    @Test
    void agedQueueKeepsRunningForItsQuantumThenFallsBack() {
        long resumed = 30 * MS;
        RecordingActions during = decide(view(resumed + 4 * MS,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).resumedAt(resumed).build()));
        assertTrue(during.runs(2));
        assertEquals(resumed + 5 * MS, during.wake);

        RecordingActions after = decide(view(resumed + 5 * MS,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).resumedAt(resumed).build()));
        assertFalse(after.runs(2), "after its quantum it is back to priority 1");
        assertTrue(after.runs(1));
    }

    @Test
    void waitingRestartsAtTheEndOfTheQuantum() {
        long resumed = 30 * MS;
        long quantumEnd = resumed + 5 * MS;
        // Second wait: from the quantum's end, 10 ms threshold + 8 ms to climb.
        RecordingActions a = decide(view(quantumEnd + 17 * MS,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).resumedAt(resumed).suspended().build()));
        assertFalse(a.runs(2));
        assertEquals(quantumEnd + 18 * MS, a.wake);
    }

    @Test
    void queueThatArrivesLaterPreemptsAnAgedQueue() {
        long resumed = 30 * MS;
        RecordingActions a = decide(view(resumed + 1 * MS,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).resumedAt(resumed).build(),
                queue(3).priority(7).readySince(resumed + MS / 2).build()));
        assertTrue(a.runs(3));
        assertFalse(a.runs(2), "the aged queue only ties with queues that were ready when it was resumed");
        assertFalse(a.runs(1));
    }

    @Test
    void higherQueueGoingIdleAndReadyAgainDoesNotRestartTheWait() {
        // lo waits since 1 ms; hi's ready-since moved to 24 ms (it went idle and came back between decisions).
        SchedulerView at = view(19 * MS,
                queue(1).priority(5).readySince(18 * MS).build(),
                queue(2).priority(1).readySince(1 * MS).suspended().build());
        assertTrue(decide(at).runs(2), "1 ms + 10 ms threshold + 8 ms climb = 19 ms");
    }

    @Test
    void queueThatRanLongBeforeBeingPreemptedMayJoinTheTopForOneQuantum() {
        // The documented price of not knowing when a queue was suspended: bg ran from 1 ms until fg
        // arrived at 500 ms; its wait counts from 1 ms + 5 ms quantum, so it has aged already.
        RecordingActions a = decide(view(505 * MS,
                queue(1).priority(5).readySince(500 * MS).build(),
                queue(2).priority(1).readySince(1 * MS).resumedAt(1 * MS).suspended().build()));
        assertTrue(a.runs(2));
        assertTrue(a.runs(1));
        assertEquals(510 * MS, a.wake, "for one quantum");
    }

    @Test
    void badValuesAreRejectedNamingValueAndRange() {
        IllegalArgumentException t = assertThrows(IllegalArgumentException.class, () -> AgingSettings.of(-1, 1, 1));
        assertEquals("aging.threshold -1 us is out of range [0, 3600000000] us", t.getMessage());
        IllegalArgumentException r = assertThrows(IllegalArgumentException.class, () -> AgingSettings.of(0, 0, 1));
        assertEquals("aging.rate 0.0 levels/ms is out of range [1.0E-6, 1000000.0] levels/ms", r.getMessage());
        assertThrows(IllegalArgumentException.class, () -> AgingSettings.of(0, Double.NaN, 1));
        assertThrows(IllegalArgumentException.class, () -> AgingSettings.of(0, Double.POSITIVE_INFINITY, 1));
        IllegalArgumentException q = assertThrows(IllegalArgumentException.class, () -> AgingSettings.of(0, 1, 0));
        assertEquals("aging.quantum 0 us is out of range [1, 3600000000] us", q.getMessage());
        assertThrows(IllegalArgumentException.class, () -> AgingSettings.of(3_600_000_001L, 1, 1));
    }

    @Test
    void badUpdateChangesNothingAndIsLogged() {
        AgingSettings before = policy.settings();
        policy.modified(new Config(10_000, -2, 5_000), java.util.Map.of());
        assertSame(before, policy.settings());
        assertTrue(log.all().contains("aging.rate -2.0"), log.all());
        assertTrue(log.lines.getLast().startsWith("error"), log.all());

        policy.modified(new Config(1_000, 2, 500), java.util.Map.of());
        assertEquals(AgingSettings.of(1_000, 2, 500), policy.settings());
    }

    @Test
    void badConfigurationAtStartFailsActivation() {
        AgingHighestPriorityFirst fresh = new AgingHighestPriorityFirst(AgingSettings.DEFAULTS, log.logger);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> fresh.activate(new Config(1, 1, -7), java.util.Map.of()));
        assertTrue(e.getMessage().contains("aging.quantum -7"));
    }

    @Test
    void defaultsMatchTheMetatypeDefaults() throws Exception {
        assertEquals(AgingSettings.of(
                (long) AgingConfig.class.getMethod("aging_threshold").getDefaultValue(),
                (double) AgingConfig.class.getMethod("aging_rate").getDefaultValue(),
                (long) AgingConfig.class.getMethod("aging_quantum").getDefaultValue()), new AgingHighestPriorityFirst().settings());
    }

    @Test
    void queueHeldAtTheEndOfItsQuantumAsksToAgeAgainWithoutAnotherEvent() {
        // Bug found by the aging scenario: a top queue that never goes idle sends no events, so
        // the held queue's next turn has to come from a timer set when its quantum ends.
        long resumed = 30 * MS;
        long quantumEnd = resumed + 5 * MS;
        RecordingActions held = decide(view(quantumEnd,
                queue(1).priority(5).readySince(0).resumedAt(0).build(),
                queue(2).priority(1).readySince(1 * MS).resumedAt(resumed).build()));
        assertFalse(held.runs(2));
        assertEquals(quantumEnd + 10 * MS + 8 * MS, held.wake, "threshold + 4 levels at 0.5/ms after the quantum ended");
    }
}
