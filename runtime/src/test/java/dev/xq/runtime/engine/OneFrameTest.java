package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link BestEffortSpace#inOneFrame}: best-effort parts laid out one after another across processes of different reserves. */
class OneFrameTest {

    /** The multiprocessors [start, end) a part {offset, width} of a region gets, as cuda_narrow.c reckons them. */
    private static int[] range(int[] part, int region, boolean last) {
        int start = region * part[0] / 16 / 8 * 8;
        int n = last ? (region - start) / 8 * 8 : Math.max(8, region * part[1] / 16 / 8 * 8);
        return new int[] {start, start + n};
    }

    private static int[][] ranges(int[][] parts, int[] regions) {
        int[][] r = new int[parts.length][];
        for (int i = 0; i < parts.length; i++) {
            r[i] = range(parts[i], regions[i], i == parts.length - 1);
        }
        return r;
    }

    /**
     * A GEMM process narrowed by a wide tenant's reserve (64 of 132 leaves 64) beside Triton
     * without one: halves of the GEMM's region, the GEMM on 0-31 and Triton from 32 to the end
     * of the device (not from 64, leaving 32-63 idle).
     */
    @Test
    void besideAWideTenantsReserveTheSecondPartStartsWhereTheFirstEnds() {
        int[] regions = {BestEffortSpace.regionSms(132, 64), 132};
        assertEquals(64, regions[0]);
        int[][] parts = BestEffortSpace.inOneFrame(new int[] {8, 8}, regions);
        assertArrayEquals(new int[] {0, 8}, parts[0]);
        assertArrayEquals(new int[] {4, 12}, parts[1]);
        int[][] r = ranges(parts, regions);
        assertArrayEquals(new int[] {0, 32}, r[0]);
        assertArrayEquals(new int[] {32, 128}, r[1], "to the end of the device, in steps of 8");
        // as before (each one's sixteenths of its own region): Triton from 64, 32-63 idle
        assertArrayEquals(new int[] {64, 128}, range(new int[] {8, 8}, 132, true));
    }

    /** Beside an eager decoder's reserve (24 leaves 104 of 132): 0-47 and 48 on, not 64 on. */
    @Test
    void besideADecodersReserveToo() {
        int[] regions = {BestEffortSpace.regionSms(132, 24), 132};
        int[][] r = ranges(BestEffortSpace.inOneFrame(new int[] {8, 8}, regions), regions);
        assertArrayEquals(new int[] {0, 48}, r[0]);
        assertArrayEquals(new int[] {48, 128}, r[1]);
    }

    /** Processes of one region get the cut as it is given: each offset the widths before it. */
    @Test
    void oneRegionForAllIsTheCutAsGiven() {
        for (int region : new int[] {64, 104, 132}) {
            int[] w = {5, 3, 8};
            int[][] parts = BestEffortSpace.inOneFrame(w, new int[] {region, region, region});
            assertArrayEquals(new int[] {0, 5}, parts[0], "region " + region);
            assertArrayEquals(new int[] {5, 3}, parts[1], "region " + region);
            assertArrayEquals(new int[] {8, 8}, parts[2], "region " + region);
        }
    }

    /**
     * Any cut of two to four processes, any reserves: no part overlaps the one before it, none
     * leaves more than a step of 8 multiprocessors before the next, and the last runs to the end of
     * its region (wherever each part of the frame is a step or more).
     */
    @Test
    void partsNeverOverlapAndLeaveAtMostAStepBetweenThem() {
        Random rnd = new Random(117);
        int checked = 0;
        for (int trial = 0; trial < 20_000; trial++) {
            int n = 2 + rnd.nextInt(3);
            int sms = rnd.nextBoolean() ? 132 : 114 + rnd.nextInt(30);
            int[] regions = new int[n];
            for (int i = 0; i < n; i++) {
                int reserve = rnd.nextInt(3) == 0 ? 0 : 8 * (1 + rnd.nextInt(8));
                regions[i] = BestEffortSpace.regionSms(sms, reserve);
            }
            int[] w = new int[n];
            int left = 16;
            for (int i = 0; i < n - 1; i++) {
                w[i] = 1 + rnd.nextInt(left - (n - 1 - i));
                left -= w[i];
            }
            w[n - 1] = left;
            int frame = Arrays.stream(regions).min().orElseThrow();
            boolean big = true;
            int cum = 0;
            for (int i = 0; i < n; i++) {
                int a = frame * cum / 16 / 8 * 8;
                cum += w[i];
                int b = frame * cum / 16 / 8 * 8;
                big &= b - a >= 8;
            }
            if (!big) {
                continue;
            }
            checked++;
            int[][] parts = BestEffortSpace.inOneFrame(w, regions);
            int[][] r = ranges(parts, regions);
            String what = "widths " + Arrays.toString(w) + ", regions " + Arrays.toString(regions) + ": parts "
                    + Arrays.deepToString(parts) + ", multiprocessors " + Arrays.deepToString(r);
            assertEquals(0, r[0][0], what);
            for (int i = 1; i < n; i++) {
                assertTrue(r[i][0] >= r[i - 1][1], "no overlap: " + what);
                assertTrue(r[i][0] - r[i - 1][1] <= 8, "at most a step between: " + what);
            }
            assertTrue(regions[n - 1] - r[n - 1][1] < 8, "the last to the end of its region: " + what);
            for (int[] p : parts) {
                assertTrue(p[0] >= 0 && p[1] >= 1 && p[0] + p[1] <= 16, "sixteenths: " + what);
            }
        }
        assertTrue(checked > 5_000, "cuts checked: " + checked);
    }
}
