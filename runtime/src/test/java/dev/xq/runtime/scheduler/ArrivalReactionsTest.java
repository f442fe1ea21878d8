package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.QueueView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The node's reaction to arrivals that hold others: counted once per arrival, only where others were held for it. */
class ArrivalReactionsTest {

    static final long MS = 1_000_000L;
    static final long US = 1_000L;

    static QueueView view(long handle, boolean ready, boolean suspended, long readySince) {
        return new QueueView(handle, "q" + handle, "d0", "g" + handle, ready, suspended, false, ready ? readySince : 0, 0, 0,
                ready ? 1 : 0, 0, 0, 0, List.of(), PreemptionLevel.BLOCK);
    }

    @Test
    void anArrivalThatHeldOthersIsCountedOnceFromItsStampToTheDecisionApplied() {
        ArrivalReactions r = new ArrivalReactions(false);
        long t = 1000 * MS;
        // A arrives at t; the decision 350 us later holds B (busy since long before: not an arrival now)
        r.decided(List.of(view(1, true, false, t), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1, t + 350 * US);
        assertEquals(1, r.total(), "A's arrival, which held B");
        assertArrayEquals(new long[] {350 * US}, r.sorted());
        // a later decision while A is still ready since the same stamp: not counted again
        r.decided(List.of(view(1, true, false, t), view(2, true, true, t - 50 * MS)), Map.of(2L, true), 1, t + 2 * MS);
        assertEquals(1, r.total());
        // A's next arrival 25 ms on, held others after 500 us
        long t2 = t + 25 * MS;
        r.decided(List.of(view(1, true, false, t2), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1, t2 + 500 * US);
        assertEquals(2, r.total());
        assertArrayEquals(new long[] {350 * US, 500 * US}, r.sorted());
        assertTrue(r.summary().startsWith("2 arrivals that held others (the latest 2: P50 350 us"), r.summary());
    }

    /**
     * Two runs against one node (an A/B's modes, seconds apart): the printed figures are the
     * current run's; the tail the guards follow keeps every recent reaction.
     */
    @Test
    void aPauseWithoutReactionsBeginsANewRunForTheFiguresNotForTheTail() {
        ArrivalReactions r = new ArrivalReactions(false);
        long t = 1000 * MS;
        // the first run: ten arrivals held others after 2 ms each
        for (int n = 0; n < 10; n++) {
            long at = t + n * 25 * MS;
            r.decided(List.of(view(1, true, false, at), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1, at + 2 * MS);
        }
        assertTrue(r.summary().startsWith("10 arrivals that held others (the latest 10: P50 2000 us"), r.summary());
        // 1.5 s without one (the paired reading's stop): the same run
        long t2 = t + 10 * 25 * MS + 1_500 * MS;
        r.decided(List.of(view(1, true, false, t2), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1, t2 + 2 * MS);
        assertEquals(11, r.run().length, r.summary());
        // the next run, 5 s later: 100 us each
        long t3 = t2 + 5_000 * MS;
        for (int n = 0; n < 4; n++) {
            long at = t3 + n * 25 * MS;
            r.decided(List.of(view(3, true, false, at), view(4, true, false, t3 - 50 * MS)), Map.of(4L, true), 1, at + 100 * US);
        }
        assertEquals(15, r.total());
        assertArrayEquals(new long[] {100 * US, 100 * US, 100 * US, 100 * US}, r.run(), r.summary());
        assertTrue(r.summary().startsWith("15 arrivals that held others (the latest 4 since a pause of 3 s without one: P50 100 us, P90 100 us,"),
                r.summary());
        assertEquals(15, r.sorted().length, "the tail's window keeps both runs");
    }

    @Test
    void arrivalsThatHeldNothingOrWereHeldThemselvesAreNotCounted() {
        ArrivalReactions r = new ArrivalReactions(false);
        long t = 1000 * MS;
        // nothing held by the decision
        r.decided(List.of(view(1, true, false, t)), Map.of(), 0, t + 300 * US);
        // B arrives and is held itself (A runs): B's arrival is not a reaction
        r.decided(List.of(view(1, true, false, t), view(2, true, false, t + MS)), Map.of(2L, true), 1, t + MS + 200 * US);
        // a stamp from far before (ready for over a second): not an arrival's reaction
        r.decided(List.of(view(3, true, false, t - 2_000 * MS), view(2, true, false, t + MS)), Map.of(2L, true), 1, t + 3 * MS);
        assertEquals(0, r.total(), r.summary());
        assertEquals("no arrival held others", r.summary());
    }

    /**
     * The tail the guards' grace follows: nothing before {@link ArrivalReactions#TAIL_MIN}
     * reactions, then their P99, found again every {@link ArrivalReactions#TAIL_EVERY} more.
     */
    @Test
    void theTailIsTheP99OfTheLatestReactionsOnceThereAreEnough() {
        ArrivalReactions r = new ArrivalReactions(false);
        long t = 1000 * MS;
        int n = 0;
        // reactions of 300 us, every 50th 3 ms (the host's tail)
        for (; n < ArrivalReactions.TAIL_MIN - 1; n++) {
            long at = t + n * 25 * MS;
            r.decided(List.of(view(1, true, false, at), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1,
                    at + (n % 50 == 49 ? 3 * MS : 300 * US));
        }
        assertEquals(0, r.tailNanos(), "too few reactions yet: " + r.summary());
        for (; n < 200; n++) {
            long at = t + n * 25 * MS;
            r.decided(List.of(view(1, true, false, at), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1,
                    at + (n % 50 == 49 ? 3 * MS : 300 * US));
        }
        assertEquals(200, r.total());
        assertEquals(3 * MS, r.tailNanos(), "4 of 200 at 3 ms: the P99 is one of them: " + r.summary());
        // 400 more at 300 us: the tail falls once it is found again
        for (; n < 600; n++) {
            long at = t + n * 25 * MS;
            r.decided(List.of(view(1, true, false, at), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1, at + 300 * US);
        }
        assertEquals(300 * US, r.tailNanos(), "4 of 600 at 3 ms: under 1 %: " + r.summary());
    }

    /**
     * Where the node's first word of an arrival is timed, its reaction is split at it: the way to
     * the node (the interposer, its tracker, the socket) and the node's own part; reactions whose
     * word is unknown, or timed outside the reaction, count in the whole only.
     */
    @Test
    void aReactionIsSplitAtTheNodesFirstWordWhereThatIsKnown() {
        ArrivalReactions r = new ArrivalReactions(false);
        long t = 1000 * MS;
        for (int n = 0; n < 10; n++) {
            long at = t + n * 25 * MS;
            long word = n < 6 ? at + (n + 1) * 100 * US : n < 8 ? 0 : at - US; // 6 timed, 2 unknown, 2 before the stamp
            r.decided(List.of(view(1, true, false, at), view(2, true, false, t - 50 * MS)), Map.of(2L, true), 1, at + 800 * US,
                    (h, since) -> h == 1 && since == at ? word : 0);
        }
        assertEquals(10, r.total());
        long[][] parts = r.split();
        assertArrayEquals(new long[] {100 * US, 200 * US, 300 * US, 400 * US, 500 * US, 600 * US}, parts[0], "to the word");
        assertArrayEquals(new long[] {200 * US, 300 * US, 400 * US, 500 * US, 600 * US, 700 * US}, parts[1], "from it to applied");
        assertTrue(r.summary().contains("; of 6 with the node's first word timed: to the word P50 300 us"), r.summary());
    }
}
