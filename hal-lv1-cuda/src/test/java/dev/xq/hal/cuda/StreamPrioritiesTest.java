package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StreamPrioritiesTest {

    @Test
    void endsOfXqsRangeMapToTheEndsOfCudas() {
        // Hopper: least 0, greatest -5
        assertEquals(0, StreamPriorities.toCuda(-1000, 0, -5));
        assertEquals(-5, StreamPriorities.toCuda(1000, 0, -5));
        // older GPUs: 0 .. -1
        assertEquals(0, StreamPriorities.toCuda(-1000, 0, -1));
        assertEquals(-1, StreamPriorities.toCuda(1000, 0, -1));
    }

    @Test
    void higherXqPriorityNeverGivesALessUrgentStream() {
        int last = Integer.MAX_VALUE;
        for (int p = -1000; p <= 1000; p += 10) {
            int c = StreamPriorities.toCuda(p, 0, -5);
            assertTrue(c <= last, "priority " + p + " mapped to " + c + " after " + last);
            assertTrue(c <= 0 && c >= -5, "priority " + p + " mapped outside the range: " + c);
            last = c;
        }
    }

    @Test
    void middleIsRoundedToTheNearestLevel() {
        assertEquals(-1, StreamPriorities.toCuda(-600, 0, -5));
        assertEquals(-4, StreamPriorities.toCuda(600, 0, -5));
    }

    @Test
    void noPriorityIsCudasDefault() {
        assertEquals(0, StreamPriorities.toCuda(null, 0, -5));
        // a range that excludes 0 is clamped into
        assertEquals(-1, StreamPriorities.toCuda(null, -1, -3));
    }

    @Test
    void outOfRangeIsRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toCuda(1001, 0, -5));
        assertTrue(e.getMessage().contains("1001") && e.getMessage().contains("[-1000, 1000]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StreamPriorities.toCuda(-5000, 0, -5));
    }
}
