package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link BestEffortSpace#inDeviceFrame}: the best-effort cut read in sixteenths of the device, narrowed processes within their regions. */
class DeviceFrameTest {

    /** The multiprocessors [start, end) a part {offset, width} of a region gets, as cuda_narrow.c reckons them. */
    static int[] range(int[] part, int region) {
        int start = region * part[0] / 16 / 8 * 8;
        int n = part[0] + part[1] == 16 && region - start >= 8 ? (region - start) / 8 * 8
                : Math.max(8, region * part[1] / 16 / 8 * 8);
        return new int[] {start, start + n};
    }

    private static int[][] laid(int[] widths, int[] regions) {
        int[][] parts = BestEffortSpace.inDeviceFrame(widths, regions);
        int[][] r = new int[parts.length][];
        for (int i = 0; i < parts.length; i++) {
            r[i] = range(parts[i], regions[i]);
        }
        return r;
    }

    /**
     * A GEMM process narrowed by a wide tenant's reserve (64 of 132 leaves 64) beside Triton: half
     * of the device each is the GEMM's whole region, 0-63, and Triton from 64 to the end, over the
     * reserve (halves of their own regions gave the GEMM 0-31 and left 32-63 to no one).
     */
    @Test
    void halfOfTheDeviceIsTheWholeOfTheGemmsRegion() {
        int[] regions = {BestEffortSpace.regionSms(132, 64), 132};
        int[][] parts = BestEffortSpace.inDeviceFrame(new int[] {8, 8}, regions);
        assertArrayEquals(new int[] {0, 16}, parts[0]);
        assertArrayEquals(new int[] {8, 8}, parts[1]);
        int[][] r = laid(new int[] {8, 8}, regions);
        assertArrayEquals(new int[] {0, 64}, r[0]);
        assertArrayEquals(new int[] {64, 128}, r[1], "to the end of the device, in steps of 8");
    }

    /** A cut that gives the GEMM a quarter of the device: 0-31, and Triton takes the rest of it. */
    @Test
    void whatTheNarrowedPartLeavesGoesToTheNext() {
        int[] regions = {64, 132};
        int[][] r = laid(new int[] {4, 12}, regions);
        assertArrayEquals(new int[] {0, 32}, r[0]);
        assertArrayEquals(new int[] {32, 128}, r[1]);
    }

    /** Two GEMM processes whose cut does not fit what the reserve leaves: shrunk alike to 32 and 32, Triton on the reserve. */
    @Test
    void narrowedPartsThatDoNotFitAreShrunkAlike() {
        int[] regions = {64, 64, 132};
        int[][] r = laid(new int[] {5, 5, 6}, regions);
        assertArrayEquals(new int[] {0, 32}, r[0]);
        assertArrayEquals(new int[] {32, 64}, r[1]);
        assertArrayEquals(new int[] {64, 128}, r[2]);
    }

    /** Beside an eager decoder's small reserve (24 leaves 104): a third of the device each, the GEMM within its region. */
    @Test
    void besideASmallReserveTheCutIsTheDevices() {
        int[] regions = {104, 132, 132};
        int[][] r = laid(new int[] {5, 5, 6}, regions);
        assertArrayEquals(new int[] {0, 40}, r[0]);
        assertArrayEquals(new int[] {40, 80}, r[1]);
        assertArrayEquals(new int[] {80, 128}, r[2]);
    }

    /** Regions all alike (no reserve, or one for all): the cut exactly as given. */
    @Test
    void oneRegionForAllIsTheCutAsGiven() {
        for (int region : new int[] {64, 104, 132}) {
            int[][] parts = BestEffortSpace.inDeviceFrame(new int[] {5, 3, 8}, new int[] {region, region, region});
            assertArrayEquals(new int[] {0, 5}, parts[0], "region " + region);
            assertArrayEquals(new int[] {5, 3}, parts[1], "region " + region);
            assertArrayEquals(new int[] {8, 8}, parts[2], "region " + region);
        }
    }

    /**
     * Any cut of two to four processes, any reserves, narrowest first: parts never overlap, each
     * stays within its region, none leaves more than a step of 8 before the next, the last runs
     * to the end of its region, and a narrowed part that fits is within a step of its sixteenths
     * of the device (wherever every part is worth two steps or more).
     */
    @Test
    void partsNeverOverlapStayInTheirRegionsAndLeaveAtMostAStep() {
        Random rnd = new Random(118);
        int checked = 0;
        for (int trial = 0; trial < 20_000; trial++) {
            int n = 2 + rnd.nextInt(3);
            int sms = rnd.nextBoolean() ? 132 : 114 + rnd.nextInt(30);
            int[] regions = new int[n];
            for (int i = 0; i < n; i++) {
                int reserve = rnd.nextInt(3) == 0 ? 0 : 8 * (1 + rnd.nextInt(8));
                regions[i] = BestEffortSpace.regionSms(sms, reserve);
            }
            Arrays.sort(regions);
            int[] w = new int[n];
            int left = 16;
            for (int i = 0; i < n - 1; i++) {
                w[i] = 1 + rnd.nextInt(left - (n - 1 - i));
                left -= w[i];
            }
            w[n - 1] = left;
            int frame = regions[n - 1];
            // what each part should get: the cut in the device's sixteenths, a region's parts shrunk alike to fit
            double[] want = new double[n];
            double at = 0;
            for (int i = 0; i < n; ) {
                int j = i;
                double sum = 0;
                while (j < n && regions[j] == regions[i]) {
                    sum += frame * w[j] / 16.0;
                    j++;
                }
                double scale = sum > regions[i] - at ? Math.max(0, regions[i] - at) / sum : 1;
                for (int k = i; k < j; k++) {
                    want[k] = frame * w[k] / 16.0 * scale;
                    at += want[k];
                }
                i = j;
            }
            if (Arrays.stream(want).limit(n - 1).anyMatch(x -> x < 16) || frame - at < 0) {
                continue;
            }
            checked++;
            int[][] parts = BestEffortSpace.inDeviceFrame(w, regions);
            int[][] r = laid(w, regions);
            String what = "widths " + Arrays.toString(w) + ", regions " + Arrays.toString(regions) + ": parts "
                    + Arrays.deepToString(parts) + ", multiprocessors " + Arrays.deepToString(r);
            assertEquals(0, r[0][0], what);
            for (int i = 0; i < n; i++) {
                assertTrue(r[i][1] <= regions[i], "within its region: " + what);
                assertTrue(parts[i][0] >= 0 && parts[i][1] >= 1 && parts[i][0] + parts[i][1] <= 16, "sixteenths: " + what);
                if (i > 0) {
                    assertTrue(r[i][0] >= r[i - 1][1], "no overlap: " + what);
                    assertTrue(r[i][0] - r[i - 1][1] <= 8, "at most a step between: " + what);
                }
                if (i < n - 1) {
                    assertTrue(Math.abs((r[i][1] - r[i][0]) - want[i]) <= 16, "near its sixteenths of the device: " + what);
                }
            }
            assertTrue(regions[n - 1] - r[n - 1][1] < 8, "the last to the end of its region: " + what);
        }
        assertTrue(checked > 3_000, "cuts checked: " + checked);
    }
}
