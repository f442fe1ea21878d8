package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.engine.BestEffortSplit.Process;
import java.util.List;
import org.junit.jupiter.api.Test;

class BestEffortSplitTest {

    private static final long MS = 1_000_000L;
    /** 21.3 ms GEMMs in an 84 ms gap between a large batch's requests (H200, bulk+gemm+triton). */
    private static final Process GEMM = new Process(21_300_000L, 84 * MS);
    /** Triton's row softmax: 150 us commands, no gap of its own (held in time behind the batch). */
    private static final Process TRITON = new Process(150_000L, 0);

    @Test
    void operatorsWeightsCutInProportionEachAtLeastOneSixteenth() {
        assertArrayEquals(new int[] {8, 8}, BestEffortSplit.proportional(new int[] {1, 1}));
        assertArrayEquals(new int[] {12, 4}, BestEffortSplit.proportional(new int[] {3, 1}), "14 past one each: 10.5 and 3.5, the tie to the first");
        assertArrayEquals(new int[] {15, 1}, BestEffortSplit.proportional(new int[] {100, 1}), "at least one each");
        assertArrayEquals(new int[] {6, 5, 5}, BestEffortSplit.proportional(new int[] {1, 1, 1}));
        assertArrayEquals(new int[] {7, 4, 3, 2}, BestEffortSplit.proportional(new int[] {50, 25, 15, 10}));
        for (int[] w : new int[][] {{1, 2}, {7, 3, 9}, {1, 1, 1, 97}, {100, 100, 1, 1}}) {
            assertEquals(BestEffortSplit.UNITS, java.util.Arrays.stream(BestEffortSplit.proportional(w)).sum(), java.util.Arrays.toString(w));
        }
        assertThrows(IllegalArgumentException.class, () -> BestEffortSplit.proportional(new int[] {1}));
        assertThrows(IllegalArgumentException.class, () -> BestEffortSplit.proportional(new int[] {1, 1, 1, 1, 1}));
        assertThrows(IllegalArgumentException.class, () -> BestEffortSplit.proportional(new int[] {0, 1}));
    }

    @Test
    void theLongCommandsGetTheWidthAtWhichTwoFitTheGap() {
        // equal halves: 43 ms each at 8 sixteenths, one fits 0.85 x 84 ms; at 10 sixteenths 34 ms, two fit
        assertEquals(1, BestEffortSplit.fits(GEMM, 8));
        assertEquals(2, BestEffortSplit.fits(GEMM, 10));
        assertArrayEquals(new int[] {10, 6}, BestEffortSplit.split(List.of(GEMM, TRITON), null));
        assertArrayEquals(new int[] {6, 10}, BestEffortSplit.split(List.of(TRITON, GEMM), null), "laid out in the order given");
    }

    @Test
    void twoProcessesAlikeHaveCutsAsGoodAsEachOther() {
        Process a = new Process(21_300_000L, 85 * MS);
        Process b = new Process(21_330_000L, 85 * MS);
        List<int[]> ties = BestEffortSplit.bestCuts(List.of(a, b), 132);
        // two kernels fit 0.85 x 85 ms at 10 to 14 sixteenths, one at 5 to 9: one gets two, the other one
        assertEquals(List.of("[5, 11]", "[6, 10]", "[10, 6]", "[11, 5]"), ties.stream().map(java.util.Arrays::toString).toList());
        assertArrayEquals(new int[] {6, 10}, BestEffortSplit.split(List.of(a, b), null, 132), "the one nearest equal parts first");
        // a process that gets more from its width: one best cut, no turns
        assertEquals(1, BestEffortSplit.bestCuts(List.of(new Process(23_500_000L, 87 * MS), new Process(80_000L, 0)), 132).size());
        assertTrue(BestEffortSplit.bestCuts(List.of(new Process(80_000L, 0), new Process(90_000L, 0)), 132).isEmpty(), "no gap");
    }

    @Test
    void equalPartsWhereNothingFitsAGap() {
        assertNull(BestEffortSplit.split(List.of(TRITON, new Process(200_000L, 0)), null), "no gap: equal parts");
        // a 21 ms kernel beside a 25 ms beat: no width fits one in 0.9 x 20 ms
        assertNull(BestEffortSplit.split(List.of(new Process(21_300_000L, 20 * MS), TRITON), null));
        assertNull(BestEffortSplit.split(List.of(GEMM), null), "one process: all of it");
        assertNull(BestEffortSplit.split(List.of(GEMM, TRITON, TRITON, TRITON, TRITON), null), "more than four: equal parts");
        // short commands in a gap fill it at any width: no weighing by the gap (before: counted in
        // proportion to the width, beside a GEMM without a gap the cut came out equal all the same)
        assertNull(BestEffortSplit.split(List.of(new Process(23_000_000L, 0), new Process(87_000L, 85 * MS)), null, 132));
        assertFalse(new Process(1_000_000L, 85 * MS).gapped(), "1 ms is short");
        assertTrue(new Process(1_000_001L, 85 * MS).gapped());
    }

    /**
     * Without a gap, by width (bestEffortWidths): a long-command process gets more of a
     * short-command one's width than halves give it, alike ones keep halves, and nothing is
     * weighed until every command is known; off, null as before.
     */
    @Test
    void withoutAGapTheWidthsWeighTheCutWhenAsked() {
        Process gemm = new Process(21_300_000L, 0);
        Process train = new Process(200_000L, 0);
        assertNull(BestEffortSplit.split(List.of(train, gemm), null, 132), "off: equal parts");
        // log 9 + 0.75 log(112/132) = 2.074 against halves' 2.056 and 10/6's 2.064
        assertArrayEquals(new int[] {7, 9}, BestEffortSplit.split(List.of(train, gemm), null, 132, true));
        assertArrayEquals(new int[] {9, 7}, BestEffortSplit.split(List.of(gemm, train), null, 132, true), "in the order given");
        // halves in force give way (0.018 better, over the width hysteresis) ...
        assertArrayEquals(new int[] {7, 9}, BestEffortSplit.split(List.of(train, gemm), new int[] {8, 8}, 132, true));
        // ... and the trainer's commands grown long: halves are best, 7/9 only 0.016 worse: back to halves
        Process longTrain = new Process(1_200_000L, 0);
        assertArrayEquals(new int[] {8, 8}, BestEffortSplit.split(List.of(longTrain, gemm), new int[] {7, 9}, 132, true));
        // alike: halves, four alike: quarters
        assertArrayEquals(new int[] {8, 8}, BestEffortSplit.split(List.of(gemm, new Process(23_000_000L, 0)), null, 132, true));
        assertArrayEquals(new int[] {8, 8}, BestEffortSplit.split(List.of(train, new Process(90_000L, 0)), null, 132, true));
        assertArrayEquals(new int[] {4, 4, 4, 4}, BestEffortSplit.split(List.of(gemm, gemm, gemm, gemm), null, 132, true));
        // a command not known yet (a process that has not run one): equal parts until it is
        assertNull(BestEffortSplit.split(List.of(new Process(0L, 0), gemm), null, 132, true));
        // a gap found: the gap's rule and its hysteresis, as without the option
        assertArrayEquals(BestEffortSplit.split(List.of(GEMM, TRITON), null, 0),
                BestEffortSplit.split(List.of(GEMM, TRITON), null, 0, true));
    }

    @Test
    void aSplitInForceStaysWhileItIsNearlyAsGood() {
        // 9 of 16 fits one GEMM (score log 1 + log 7) against 10 (log 2 + log 6): 0.54 worse, replaced
        assertArrayEquals(new int[] {10, 6}, BestEffortSplit.split(List.of(GEMM, TRITON), new int[] {9, 7}));
        // 11 fits two as 10 does (log 2 + log 5 against log 2 + log 6: 0.18 worse): replaced too
        assertArrayEquals(new int[] {10, 6}, BestEffortSplit.split(List.of(GEMM, TRITON), new int[] {11, 5}));
        // a gap that moves a little: at 83 ms still two at 10; the split in force stays
        assertArrayEquals(new int[] {10, 6}, BestEffortSplit.split(List.of(new Process(21_300_000L, 83 * MS), TRITON), new int[] {10, 6}));
    }

    @Test
    void threeProcessesShareTheSixteenths() {
        // the GEMMs two a gap at 10 leave the others 3 each (log 2 + 1.5 log 0.375 = -0.78); one at 5
        // leaves them 5 and 6 (0.75 log 0.625 + 0.75 log 0.75 = -0.57): one a gap, as at equal
        // thirds, and the others more
        assertArrayEquals(new int[] {5, 5, 6}, BestEffortSplit.split(List.of(GEMM, TRITON, new Process(300_000L, 0)), null));
        assertEquals(1, BestEffortSplit.fits(GEMM, 5));
        assertEquals(0, BestEffortSplit.fits(GEMM, 4), "at 4 sixteenths a GEMM takes 85 ms: none fits");
    }

    /** Session 36 on the H200 (132 multiprocessors, parts in multiples of 8 of 128): the estimates the node had. */
    @Test
    void onTheH200TheGemmsGetTheWidthWhereTwoFitWithRoomToSpare() {
        Process triton = new Process(80_000L, 0);
        // 23.5 ms at 132: 35.3 ms at 88 (11 sixteenths), two in 70.5 of 0.85 x 87 = 74 ms; at 80 (10) 38.8 ms, one
        Process gemm = new Process(23_500_000L, 87 * MS);
        assertEquals(1, BestEffortSplit.fits(gemm, 10, 132));
        assertEquals(2, BestEffortSplit.fits(gemm, 11, 132));
        assertArrayEquals(new int[] {11, 5}, BestEffortSplit.split(List.of(gemm, triton), null, 132));
        // 26 ms: two fit from 12 sixteenths (96 multiprocessors, 35.8 ms)
        Process slower = new Process(26_000_000L, 87 * MS);
        assertEquals(1, BestEffortSplit.fits(slower, 11, 132));
        assertArrayEquals(new int[] {12, 4}, BestEffortSplit.split(List.of(slower, triton), new int[] {11, 5}, 132),
                "an estimate that grows moves the cut to where two still fit, not back to one");
        // the flapping of that run: at 0.9 and in plain sixteenths 23.6 ms fitted two at 10/16 and
        // 24.7 ms did not (10/6 and 6/10 in turn); both fit two at 11 of 132's parts now
        assertArrayEquals(new int[] {11, 5}, BestEffortSplit.split(List.of(new Process(24_650_000L, 87_446_000L), triton), null, 132));
    }

    @Test
    void shortCommandsNeedLittleWidthLongOnesAllOfIt() {
        Process shortCommands = new Process(150_000L, 0);
        Process longCommands = new Process(5 * MS, 0);
        assertEquals(1.0, BestEffortSplit.speed(shortCommands, 8, 0), 1e-9, "half the device: all of its rate");
        assertEquals(Math.pow(0.5, 0.75), BestEffortSplit.speed(shortCommands, 4, 0), 1e-9, "a quarter: 0.59 (measured 0.53-0.66)");
        assertEquals(0.25, BestEffortSplit.speed(longCommands, 4, 0), 1e-9, "in proportion");
        assertEquals(0.25, BestEffortSplit.speed(new Process(0, 0), 4, 0), 1e-9, "not known: in proportion");
        // parts are multiples of 8 of what 132 rounds to: 4 sixteenths are 32 multiprocessors
        assertEquals(32 / 132.0, BestEffortSplit.fraction(4, 132), 1e-9);
        assertEquals(8 / 132.0, BestEffortSplit.fraction(1, 132), 1e-9, "never below one step");
        // two long-command processes beside a gapped GEMM in thirds: as before, in proportion to the width
        Process gemm = new Process(21_300_000L, 84 * MS);
        assertArrayEquals(new int[] {10, 6}, BestEffortSplit.split(List.of(gemm, longCommands), null));
    }

    @Test
    void processesWhoseCommandsAllFitAGapTakeTurnsOnAllOfIt() {
        // session 38's two GEMM processes: 21.4 ms beside an 88.4 ms gap: three fit whole
        Process gemm = new Process(21_400_000L, 88_400_000L);
        assertEquals(3, BestEffortSplit.fits(gemm, 16, 132));
        assertTrue(BestEffortSplit.alternate(List.of(gemm, gemm), 132, false), "1.5 each by turns, as much cut: turns");
        // three of them: one a gap each by turns, cut 5/5/6 leaves 40 multiprocessors, 70.6 ms a kernel: one each too
        assertTrue(BestEffortSplit.alternate(List.of(gemm, gemm, gemm), 132, false));
        assertFalse(BestEffortSplit.alternate(List.of(gemm, gemm, gemm, gemm), 132, false), "four: cut");
        // session 38's first seconds: 23.5 and 30.7 ms beside a 73.8 ms gap; two of each fit the
        // whole device (132), one of the slower fits 128 of it (sixteen sixteenths): one each a gap
        // by turns, as much as the cut 7/9 gives
        List<Process> unlike = List.of(new Process(23_549_000L, 73_813_000L), new Process(30_710_000L, 73_813_000L));
        assertEquals(1, BestEffortSplit.fits(unlike.get(1), 16, 132));
        assertTrue(BestEffortSplit.alternate(unlike, 132, false), "turns reckoned on all of the device");
        // beside a short-command process (Triton uses its part throughout): cut
        assertFalse(BestEffortSplit.alternate(List.of(gemm, new Process(80_000L, 88_400_000L)), 132, false));
        // a command longer than the gap fits no turn
        assertFalse(BestEffortSplit.alternate(List.of(gemm, new Process(90 * MS, 88_400_000L)), 132, false));
        // no gap for one of them
        assertFalse(BestEffortSplit.alternate(List.of(gemm, new Process(21_400_000L, 0)), 132, false));
        // a gap where a cut does better: 10 ms commands beside a 100 ms gap fit eight whole (four
        // each by turns), cut 8/8 four each too (64 multiprocessors, 20.6 ms): ties go to the turns
        Process ten = new Process(10 * MS, 100 * MS);
        assertTrue(BestEffortSplit.alternate(List.of(ten, ten), 132, false));
        // unlike ones: a 50 ms command fits one whole (0.5 by turns) and the 10 ms one eight (4): cut
        // 10/6 gives the long one one at 80 multiprocessors (82.5 ms) and the short one three at 48 (27.5 ms)
        // (a cut must do half as much again: 1 x 3 against 0.5 x 4 is just that, and ties go to the turns)
        Process fifty = new Process(50 * MS, 100 * MS);
        assertTrue(BestEffortSplit.alternate(List.of(fifty, ten), 132, false), "1 x 3 is 1.5 x (0.5 x 4): turns");
        assertFalse(BestEffortSplit.alternate(List.of(new Process(43 * MS, 100 * MS), new Process(8 * MS, 100 * MS)), 132, false),
                "0.5 x 5 by turns against 1 x 4 cut 9/7 (78.8 and 18.9 ms at their widths), 1.6 x: cut");
        assertTrue(BestEffortSplit.alternate(List.of(new Process(40 * MS, 100 * MS), ten), 132, false),
                "40 ms: two whole, one by turns; log 1 + log 4 > log 1 + log 3");
        // session 42's cut that starved: 23.4 and 25.9 ms beside a 91 ms gap, 3 and 2 whole (1.5 x 1
        // by turns) against 2 x 1 cut 10/6: not enough to cut
        List<Process> s42 = List.of(new Process(23_363_000L, 91_001_000L), new Process(25_933_000L, 91_001_000L));
        assertEquals(2, BestEffortSplit.fits(s42.get(1), 16, 132));
        assertEquals(2, BestEffortSplit.fits(s42.get(0), 10, 132));
        assertTrue(BestEffortSplit.alternate(s42, 132, false), "1.33 x is not 1.5 x: turns");
        // session 44's graph+triton+gemm: a 25 ms beat leaves 21.8 ms (less the node's reaction), a
        // 21.5 ms GEMM fits it whole once (not within the safety) and at no cut width: turns, the
        // only way it runs between the graph's requests (cut, it ran narrowed beside them)
        Process graphGap = new Process(21_500_000L, 21_849_000L);
        Process triton = new Process(80_000L, 21_849_000L);
        assertEquals(0, BestEffortSplit.fits(graphGap, 16, 132), "not within the safety");
        assertTrue(BestEffortSplit.alternate(List.of(graphGap, triton), 132, false), "one whole a turn: turns");
        assertFalse(BestEffortSplit.alternate(List.of(new Process(22_000_000L, 21_849_000L), triton), 132, false),
                "a command longer than the gap: no turn");
    }

    /** Turns without a gap: two or three processes, every command known, none with a gap. */
    @Test
    void turnsWithoutAGapNeedTwoOrThreeProcessesWithKnownCommandsAndNoGap() {
        Process trainer = new Process(1_600_000L, 0);
        Process triton = new Process(80_000L, 0);
        Process gemm = new Process(21_500_000L, 0);
        assertTrue(BestEffortSplit.ungappedTurns(List.of(trainer, triton)));
        assertTrue(BestEffortSplit.ungappedTurns(List.of(trainer, triton, gemm)));
        assertFalse(BestEffortSplit.ungappedTurns(List.of(trainer)), "one process: nothing to take turns with");
        assertFalse(BestEffortSplit.ungappedTurns(List.of(trainer, triton, gemm, new Process(900_000L, 0))), "four: more than alternate");
        assertFalse(BestEffortSplit.ungappedTurns(List.of(trainer, new Process(0, 0))), "a command not known yet");
        assertFalse(BestEffortSplit.ungappedTurns(List.of(trainer, new Process(21_500_000L, 88_000_000L))),
                "a gap found: the gap's rules decide");
    }
}
