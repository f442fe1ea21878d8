package dev.xq.hal.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StreamPrioritiesTest {

    @Test
    void endsOfTheRangeMapToTheEndsOfTheDevicesRange() {
        assertEquals(1, StreamPriorities.toDevice(-1000, 1, -1));
        assertEquals(-1, StreamPriorities.toDevice(1000, 1, -1));
        assertEquals(0, StreamPriorities.toDevice(-1000, 0, -7));
        assertEquals(-7, StreamPriorities.toDevice(1000, 0, -7));
    }

    @Test
    void threeLevelRange() {
        assertEquals(1, StreamPriorities.toDevice(-501, 1, -1));
        assertEquals(0, StreamPriorities.toDevice(-499, 1, -1));
        assertEquals(0, StreamPriorities.toDevice(0, 1, -1));
        assertEquals(0, StreamPriorities.toDevice(499, 1, -1));
        assertEquals(-1, StreamPriorities.toDevice(501, 1, -1));
    }

    @Test
    void twoLevelRangeNeedsMoreThanTheMiddleForTheUrgentLevel() {
        assertEquals(0, StreamPriorities.toDevice(0, 0, -1));
        assertEquals(-1, StreamPriorities.toDevice(1, 0, -1));
        assertEquals(0, StreamPriorities.toDevice(-1000, 0, -1));
    }

    @Test
    void singleLevelRangeMapsEverythingToIt() {
        for (int p = -1000; p <= 1000; p += 250) {
            assertEquals(3, StreamPriorities.toDevice(p, 3, 3));
        }
    }

    @Test
    void moreUrgentNeverMapsToALessUrgentStream() {
        int[][] ranges = {{1, -1}, {0, -1}, {0, -4}, {5, -5}, {2, 0}};
        for (int[] r : ranges) {
            int previous = Integer.MAX_VALUE;
            for (int p = -1000; p <= 1000; p++) {
                int h = StreamPriorities.toDevice(p, r[0], r[1]);
                assertTrue(h <= previous, "priority " + p + " in " + r[0] + ".." + r[1] + " gave " + h + " after " + previous);
                assertTrue(h >= r[1] && h <= r[0], "inside the range");
                previous = h;
            }
        }
    }

    @Test
    void aReversedRangeIsNormalised() {
        assertEquals(-1, StreamPriorities.toDevice(1000, -1, 1));
        assertEquals(1, StreamPriorities.toDevice(-1000, -1, 1));
    }

    @Test
    void outOfRangeIsRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toDevice(-1001, 1, -1));
        assertTrue(e.getMessage().contains("-1001") && e.getMessage().contains("[-1000, 1000]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toDevice(1001, 1, -1));
    }

    // CUDA ranges (0 .. -5 on Hopper, 0 .. -1 before)

    @Test
    void endsOfXqsRangeMapToTheEndsOfCudas() {
        // Hopper: least 0, greatest -5
        assertEquals(0, StreamPriorities.toDevice(-1000, 0, -5));
        assertEquals(-5, StreamPriorities.toDevice(1000, 0, -5));
        // older GPUs: 0 .. -1
        assertEquals(0, StreamPriorities.toDevice(-1000, 0, -1));
        assertEquals(-1, StreamPriorities.toDevice(1000, 0, -1));
    }

    @Test
    void higherXqPriorityNeverGivesALessUrgentStream() {
        int last = Integer.MAX_VALUE;
        for (int p = -1000; p <= 1000; p += 10) {
            int c = StreamPriorities.toDevice(p, 0, -5);
            assertTrue(c <= last, "priority " + p + " mapped to " + c + " after " + last);
            assertTrue(c <= 0 && c >= -5, "priority " + p + " mapped outside the range: " + c);
            last = c;
        }
    }

    @Test
    void middleIsRoundedToTheNearestLevel() {
        assertEquals(-1, StreamPriorities.toDevice(-600, 0, -5));
        assertEquals(-4, StreamPriorities.toDevice(600, 0, -5));
    }

    @Test
    void noPriorityIsCudasDefault() {
        assertEquals(0, StreamPriorities.toDevice(null, 0, -5));
        // a range that excludes 0 is clamped into
        assertEquals(-1, StreamPriorities.toDevice(null, -1, -3));
    }

    @Test
    void outOfRangeIsRefusedNamingTheValueCudaRange() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toDevice(1001, 0, -5));
        assertTrue(e.getMessage().contains("1001") && e.getMessage().contains("[-1000, 1000]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toDevice(-5000, 0, -5));
    }
}
