package dev.xq.policy.edf;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.lang.annotation.Annotation;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeadlinePoliciesTest {

    static final long MS = 1_000_000;

    record Config(int kedf_k, boolean kedf_demote_hopeless) implements KedfConfig {
        Config(int kedf_k) {
            this(kedf_k, true);
        }

        @Override
        public Class<? extends Annotation> annotationType() {
            return KedfConfig.class;
        }
    }

    private static RecordingActions decide(Policy p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    private static Hint deadlineMs(long ms) {
        return new Hint.Deadline(ms * 1000);
    }

    /** Absolute deadlines: 1 -> 12 ms, 2 -> 9 ms, 3 -> 9 ms (ready later than 2), 4 -> 9 ms (same as 3, higher handle), 5 -> none. */
    private static SchedulerView mixed(long now) {
        return view(now,
                queue(1).hint(deadlineMs(10)).readySince(2 * MS).build(),
                queue(5).readySince(0).build(),
                queue(4).hint(deadlineMs(6)).readySince(3 * MS).build(),
                queue(3).hint(deadlineMs(6)).readySince(3 * MS).build(),
                queue(2).hint(deadlineMs(8)).readySince(1 * MS).build());
    }

    @Test
    void edfRunsTheEarliestAbsoluteDeadlineAlone() {
        RecordingActions a = decide(new EarliestDeadlineFirst(), mixed(4 * MS));
        assertEquals(List.of(2L), a.running(), "9 ms, ready at 1 ms, beats the other 9 ms deadlines ready at 3 ms");
        assertNull(a.wake);
    }

    @Test
    void kedfRanksDeadlinesThenReadySinceThenHandleAndPutsNoDeadlineLast() {
        RecordingActions two = decide(new KEarliestDeadlineFirst(2, new RecordingLogger().logger), mixed(4 * MS));
        assertEquals(List.of(3L, 2L), two.running(), "9 ms ready at 1 ms, then handle 3 wins the 9 ms tie at 3 ms over handle 4");

        RecordingActions four = decide(new KEarliestDeadlineFirst(4, new RecordingLogger().logger), mixed(4 * MS));
        assertEquals(List.of(1L, 4L, 3L, 2L), four.running());
        assertFalse(four.runs(5), "no deadline comes after every queue with one, even an older one");

        RecordingActions five = decide(new KEarliestDeadlineFirst(5, new RecordingLogger().logger), mixed(4 * MS));
        assertTrue(five.runs(5), "with room left the queue without a deadline runs too");
    }

    @Test
    void withoutDeadlinesTheOldestReadyQueueRuns() {
        RecordingActions a = decide(new EarliestDeadlineFirst(), view(10 * MS,
                queue(1).readySince(5 * MS).build(),
                queue(2).readySince(3 * MS).build()));
        assertEquals(List.of(2L), a.running());
    }

    @Test
    void idleQueueIsResumedOnlyIfItWouldWinOnArrival() {
        // Running: deadline at 2 ms + 8 ms = 10 ms; now 4 ms.
        RecordingActions a = decide(new EarliestDeadlineFirst(), view(4 * MS,
                queue(1).hint(deadlineMs(8)).readySince(2 * MS).build(),
                queue(2).hint(deadlineMs(5)).build(),
                queue(3).hint(deadlineMs(7)).build(),
                queue(4).build()));
        assertTrue(a.runs(2), "4 + 5 = 9 ms < 10 ms: would preempt, so it may launch at once");
        assertFalse(a.runs(3), "4 + 7 = 11 ms > 10 ms: waits for the next decision");
        assertFalse(a.runs(4));
    }

    @Test
    void devicesAreIndependent() {
        RecordingActions a = decide(new EarliestDeadlineFirst(), view(4 * MS,
                queue(1).hint(deadlineMs(1)).readySince(2 * MS).build(),
                queue(2).device("d1").hint(deadlineMs(100)).readySince(2 * MS).build()));
        assertTrue(a.runs(1) && a.runs(2));
    }

    @Test
    void appHeldQueueDoesNotTakeASlot() {
        RecordingActions a = decide(new EarliestDeadlineFirst(), view(4 * MS,
                queue(1).hint(deadlineMs(1)).readySince(2 * MS).suspendedByApp().build(),
                queue(2).hint(deadlineMs(100)).readySince(2 * MS).suspended().build()));
        assertTrue(a.runs(2));
    }

    @Test
    void kedfConfigurationIsChecked() {
        RecordingLogger log = new RecordingLogger();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KEarliestDeadlineFirst(0, log.logger));
        assertEquals("kedf.k 0 is out of range [1, 4096]", e.getMessage());
        KEarliestDeadlineFirst kedf = new KEarliestDeadlineFirst(2, log.logger);
        kedf.modified(new Config(5000), java.util.Map.of());
        assertEquals(2, kedf.k(), "a refused update changes nothing");
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("kedf.k 5000 is out of range"), log.all());
        kedf.modified(new Config(7), java.util.Map.of());
        assertEquals(7, kedf.k());
        assertThrows(IllegalArgumentException.class, () -> new KEarliestDeadlineFirst(3, log.logger).activate(new Config(-1), java.util.Map.of()));
        assertEquals(KEarliestDeadlineFirst.DEFAULT_K, new KEarliestDeadlineFirst().k());
    }

    @Test
    void kedfDefaultMatchesTheMetatypeDefault() throws Exception {
        assertEquals(KEarliestDeadlineFirst.DEFAULT_K, (int) KedfConfig.class.getMethod("kedf_k").getDefaultValue());
        assertEquals(4, KEarliestDeadlineFirst.DEFAULT_K);
    }

    @Test
    void kedfRefusedConfigLeavesDecisionsAlone() {
        KEarliestDeadlineFirst kedf = new KEarliestDeadlineFirst(1, new RecordingLogger().logger);
        kedf.modified(new Config(0), java.util.Map.of());
        assertSame(1, kedf.k());
        assertEquals(List.of(2L), decide(kedf, mixed(4 * MS)).running());
    }

    record EdfSettings(boolean edf_demote_hopeless) implements EdfConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return EdfConfig.class;
        }
    }

    /**
     * At 10 ms: q1 is due at 11 ms with 4 ms of work left (can only miss); q2 is due at 20 ms with
     * 3 ms left (can make it).
     */
    private static SchedulerView oneHopeless() {
        return view(10 * MS,
                queue(1).hint(deadlineMs(6)).readySince(5 * MS).work(3, 1, MS).build(),
                queue(2).hint(deadlineMs(10)).readySince(10 * MS).work(2, 1, MS).build());
    }

    @Test
    void edfRunsAQueueThatCanStillMakeItsDeadlineBeforeOneThatCanOnlyMiss() {
        assertEquals(List.of(2L), decide(new EarliestDeadlineFirst(), oneHopeless()).running());
        assertEquals(List.of(1L), decide(new EarliestDeadlineFirst(false), oneHopeless()).running(), "textbook EDF");
    }

    @Test
    void theWorkOfEarlierMeetableDeadlinesCountsAgainstLaterOnes() {
        // At 10 ms, 2 ms of work each: q1 due 12 (ends 12: makes it), q2 due 13 (would end 14 behind q1:
        // hopeless), q3 due 20 (ends 14 behind q1 alone: makes it). q4 has no deadline and stays last.
        SchedulerView v = view(10 * MS,
                queue(1).hint(deadlineMs(2)).readySince(10 * MS).work(2, 0, MS).build(),
                queue(2).hint(deadlineMs(3)).readySince(10 * MS).work(1, 1, MS).build(),
                queue(3).hint(deadlineMs(10)).readySince(10 * MS).work(2, 0, MS).build(),
                queue(4).readySince(0).work(5, 0, MS).build());
        assertEquals(List.of(1L, 3L), decide(new KEarliestDeadlineFirst(2, new RecordingLogger().logger), v).running());
        assertEquals(List.of(1L, 2L), decide(new KEarliestDeadlineFirst(2, false, new RecordingLogger().logger), v).running());
        assertEquals(List.of(1L, 2L, 3L), decide(new KEarliestDeadlineFirst(3, new RecordingLogger().logger), v).running(),
                "a demoted queue still runs before queues without a deadline");
    }

    @Test
    void aQueueWithoutAMeasuredCommandTimeIsDemotedOnlyOnceItsDeadlineHasPassed() {
        SchedulerView due = view(10 * MS,
                queue(1).hint(deadlineMs(6)).readySince(5 * MS).work(50, 0, 0).build(),
                queue(2).hint(deadlineMs(10)).readySince(10 * MS).work(2, 0, MS).build());
        assertEquals(List.of(1L), decide(new EarliestDeadlineFirst(), due).running());
        SchedulerView late = view(10 * MS,
                queue(1).hint(deadlineMs(4)).readySince(5 * MS).work(50, 0, 0).build(),
                queue(2).hint(deadlineMs(10)).readySince(10 * MS).work(2, 0, MS).build());
        assertEquals(List.of(2L), decide(new EarliestDeadlineFirst(), late).running());
    }

    @Test
    void demotionIsConfigurable() throws Exception {
        EarliestDeadlineFirst edf = new EarliestDeadlineFirst();
        edf.log = new RecordingLogger().logger;
        edf.configure(new EdfSettings(false), java.util.Map.of());
        assertFalse(edf.demoteHopeless());
        assertEquals(List.of(1L), decide(edf, oneHopeless()).running());
        edf.configure(new EdfSettings(true), java.util.Map.of());
        assertEquals(List.of(2L), decide(edf, oneHopeless()).running());
        assertTrue((boolean) EdfConfig.class.getMethod("edf_demote_hopeless").getDefaultValue());

        KEarliestDeadlineFirst kedf = new KEarliestDeadlineFirst(1, new RecordingLogger().logger);
        kedf.modified(new Config(1, false), java.util.Map.of());
        assertEquals(List.of(1L), decide(kedf, oneHopeless()).running());
        kedf.modified(new Config(0, true), java.util.Map.of());
        assertEquals(List.of(1L), decide(kedf, oneHopeless()).running(), "a refused update changes neither knob");

        // a switch spelt otherwise than true or false (DS reads 'yes' as false): refused, the value in force stays
        edf.configure(new EdfSettings(false), java.util.Map.of("edf.demote.hopeless", "yes"));
        assertTrue(edf.demoteHopeless(), "'yes' refused: demotion stays on");
        kedf.modified(new Config(1, true), java.util.Map.of("kedf.demote.hopeless", "yes"));
        assertEquals(List.of(1L), decide(kedf, oneHopeless()).running(), "'yes' refused: kedf keeps its knobs");
    }
}
