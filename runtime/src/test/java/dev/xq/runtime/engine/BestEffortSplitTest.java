package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
    void theLongCommandsGetTheWidthAtWhichTwoFitTheGap() {
        // equal halves: 43 ms each at 8 sixteenths, one fits 0.9 x 84 ms; at 10 sixteenths 34 ms, two fit
        assertEquals(1, BestEffortSplit.fits(GEMM, 8));
        assertEquals(2, BestEffortSplit.fits(GEMM, 10));
        assertArrayEquals(new int[] {10, 6}, BestEffortSplit.split(List.of(GEMM, TRITON), null));
        assertArrayEquals(new int[] {6, 10}, BestEffortSplit.split(List.of(TRITON, GEMM), null), "laid out in the order given");
    }

    @Test
    void equalPartsWhereNothingFitsAGap() {
        assertNull(BestEffortSplit.split(List.of(TRITON, new Process(200_000L, 0)), null), "no gap: equal parts");
        // a 21 ms kernel beside a 25 ms beat: no width fits one in 0.9 x 20 ms
        assertNull(BestEffortSplit.split(List.of(new Process(21_300_000L, 20 * MS), TRITON), null));
        assertNull(BestEffortSplit.split(List.of(GEMM), null), "one process: all of it");
        assertNull(BestEffortSplit.split(List.of(GEMM, TRITON, TRITON, TRITON, TRITON), null), "more than four: equal parts");
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
        // two GEMMs a gap at 10 leave the others 3 each (log 2 + 2 log 3 = 2.89); one at 5 leaves them
        // 5 and 6 (log 30 = 3.40): one a gap, as at equal thirds, and the others more
        assertArrayEquals(new int[] {5, 5, 6}, BestEffortSplit.split(List.of(GEMM, TRITON, new Process(300_000L, 0)), null));
        assertEquals(1, BestEffortSplit.fits(GEMM, 5));
        assertEquals(0, BestEffortSplit.fits(GEMM, 4), "at 4 sixteenths a GEMM takes 85 ms: none fits");
    }
}
