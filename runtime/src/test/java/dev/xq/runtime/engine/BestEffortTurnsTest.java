package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.SchedulerActions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BestEffortTurnsTest {

    private static final long MS = 1_000_000L;

    /** What one decision asked for. */
    private static final class Recorded implements SchedulerActions {
        final Set<Long> held = new HashSet<>();
        long wake = Long.MAX_VALUE;

        @Override
        public void suspend(long handle) {
            held.add(handle);
        }

        @Override
        public void resume(long handle) {
            held.remove(handle);
        }

        @Override
        public void wakeAt(long nanos) {
            wake = Math.min(wake, nanos);
        }
    }

    private final BestEffortTurns turns = new BestEffortTurns();

    /** Pid 100 (queue 1, 21 ms commands) and pid 200 (queues 2 and 3, 200 us), both busy unless said. */
    private Recorded decide(long now, boolean gemmBusy, boolean trainBusy) {
        List<BestEffortTurns.Entry> e = new ArrayList<>();
        e.add(new BestEffortTurns.Entry(100, "cuda0", 1, gemmBusy, 21 * MS));
        e.add(new BestEffortTurns.Entry(200, "cuda0", 2, trainBusy, 200_000));
        e.add(new BestEffortTurns.Entry(200, "cuda0", 3, false, 0));
        Recorded r = new Recorded();
        turns.decide(now, e, r);
        return r;
    }

    @Test
    void oneAtATimeAndTheTurnPassesAfterFourOfItsHoldersCommands() {
        long t = 1_000 * MS;
        Recorded r = decide(t, true, true);
        assertEquals(Set.of(2L, 3L), r.held, "pid 100 first (pid order), pid 200 held, all its queues");
        assertEquals(t + 84 * MS, r.wake, "the turn of 21 ms commands: 84 ms");
        r = decide(t + 80 * MS, true, true);
        assertEquals(Set.of(2L, 3L), r.held, "still pid 100's turn");
        r = decide(t + 84 * MS, true, true);
        assertEquals(Set.of(1L), r.held, "pid 200's turn");
        assertEquals(t + 134 * MS, r.wake, "a turn of short commands: 50 ms");
        r = decide(t + 134 * MS, true, true);
        assertEquals(Set.of(2L, 3L), r.held, "back to pid 100");
        assertEquals(2, turns.passes());
    }

    @Test
    void anIdleHolderPassesItsTurnAfterTwoMilliseconds() {
        long t = 1_000 * MS;
        decide(t, true, true);
        Recorded r = decide(t + 10 * MS, false, true);
        assertEquals(Set.of(2L, 3L), r.held, "idle for less than 2 ms: its turn still");
        assertEquals(t + 12 * MS, r.wake, "asked to decide again when the 2 ms are over");
        r = decide(t + 12 * MS, false, true);
        assertEquals(Set.of(1L), r.held, "passed on");
    }

    @Test
    void nobodyIsHeldWithoutCompanyOrWhenTheOtherHasNothingToDo() {
        long t = 1_000 * MS;
        Recorded r = decide(t, true, false);
        assertTrue(r.held.isEmpty(), "pid 200 never had work: no turns " + r.held);
        assertEquals(Long.MAX_VALUE, r.wake);
        r = decide(t + 1 * MS, true, true);
        assertEquals(Set.of(2L, 3L), r.held, "now both have work");
        // pid 100 idle, but pid 200 waits for nothing: the turn stays
        r = decide(t + 60 * MS, false, false);
        assertEquals(Set.of(2L, 3L), r.held, "a turn passes only to a process that waits");
        r = decide(t + 90 * MS, false, false);
        assertEquals(Set.of(2L, 3L), r.held, "a turn passes only to a process that waits");
        // 100 ms after their last work neither counts: no turns, no holds
        r = decide(t + 400 * MS, false, false);
        assertTrue(r.held.isEmpty(), r.held.toString());
    }

    @Test
    void devicesTakeTurnsApart() {
        long t = 1_000 * MS;
        List<BestEffortTurns.Entry> e = List.of(
                new BestEffortTurns.Entry(100, "cuda0", 1, true, MS),
                new BestEffortTurns.Entry(200, "cuda1", 2, true, MS));
        Recorded r = new Recorded();
        turns.decide(t, e, r);
        assertTrue(r.held.isEmpty(), "one process on each device: " + r.held);
    }
}
