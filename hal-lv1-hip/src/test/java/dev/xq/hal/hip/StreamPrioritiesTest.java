package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StreamPrioritiesTest {

    @Test
    void endsOfTheRangeMapToTheEndsOfTheDevicesRange() {
        assertEquals(1, StreamPriorities.toHip(-1000, 1, -1));
        assertEquals(-1, StreamPriorities.toHip(1000, 1, -1));
        assertEquals(0, StreamPriorities.toHip(-1000, 0, -7));
        assertEquals(-7, StreamPriorities.toHip(1000, 0, -7));
    }

    @Test
    void threeLevelRange() {
        assertEquals(1, StreamPriorities.toHip(-501, 1, -1));
        assertEquals(0, StreamPriorities.toHip(-499, 1, -1));
        assertEquals(0, StreamPriorities.toHip(0, 1, -1));
        assertEquals(0, StreamPriorities.toHip(499, 1, -1));
        assertEquals(-1, StreamPriorities.toHip(501, 1, -1));
    }

    @Test
    void twoLevelRangeNeedsMoreThanTheMiddleForTheUrgentLevel() {
        assertEquals(0, StreamPriorities.toHip(0, 0, -1));
        assertEquals(-1, StreamPriorities.toHip(1, 0, -1));
        assertEquals(0, StreamPriorities.toHip(-1000, 0, -1));
    }

    @Test
    void singleLevelRangeMapsEverythingToIt() {
        for (int p = -1000; p <= 1000; p += 250) {
            assertEquals(3, StreamPriorities.toHip(p, 3, 3));
        }
    }

    @Test
    void moreUrgentNeverMapsToALessUrgentStream() {
        int[][] ranges = {{1, -1}, {0, -1}, {0, -4}, {5, -5}, {2, 0}};
        for (int[] r : ranges) {
            int previous = Integer.MAX_VALUE;
            for (int p = -1000; p <= 1000; p++) {
                int h = StreamPriorities.toHip(p, r[0], r[1]);
                assertTrue(h <= previous, "priority " + p + " in " + r[0] + ".." + r[1] + " gave " + h + " after " + previous);
                assertTrue(h >= r[1] && h <= r[0], "inside the range");
                previous = h;
            }
        }
    }

    @Test
    void aReversedRangeIsNormalised() {
        assertEquals(-1, StreamPriorities.toHip(1000, -1, 1));
        assertEquals(1, StreamPriorities.toHip(-1000, -1, 1));
    }

    @Test
    void outOfRangeIsRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toHip(-1001, 1, -1));
        assertTrue(e.getMessage().contains("-1001") && e.getMessage().contains("[-1000, 1000]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toHip(1001, 1, -1));
    }
}
