package dev.xq.bench.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class IntervalsTest {

    @Test
    void meanConcurrencyIsTimeAveragedAndClippedToTheWindow() {
        List<Interval> spans = List.of(
                new Interval("A", 0, 100),
                new Interval("A", 0, 50),
                new Interval("A", 150, 300),   // half outside the window
                new Interval("B", 0, 200));
        // A covers 100 + 50 + 50 = 200 of the window [0, 200)
        assertEquals(1.0, Intervals.meanConcurrency(spans, "A", 0, 200), 1e-12);
        assertEquals(1.0, Intervals.meanConcurrency(spans, "B", 0, 200), 1e-12);
        assertEquals(0.0, Intervals.meanConcurrency(spans, "C", 0, 200), 1e-12);
    }

    @Test
    void steadyStateOfThreeAndTwoIsSeenAsSuch() {
        // Three A tasks and two B tasks always running, replaced back to back every 10 units.
        List<Interval> spans = new java.util.ArrayList<>();
        for (long t = 0; t < 1000; t += 10) {
            for (int k = 0; k < 3; k++) {
                spans.add(new Interval("A", t, t + 10));
            }
            for (int k = 0; k < 2; k++) {
                spans.add(new Interval("B", t, t + 10));
            }
        }
        assertEquals(3.0, Intervals.meanConcurrency(spans, "A", 100, 900), 1e-12);
        TreeMap<Integer, Integer> a = Intervals.sampleConcurrency(spans, "A", 100, 900, 97);
        TreeMap<Integer, Integer> b = Intervals.sampleConcurrency(spans, "B", 100, 900, 97);
        // Back-to-back spans never count twice at the instant one ends and the next starts.
        assertEquals(Map.of(3, 97), a);
        assertEquals(Map.of(2, 97), b);
        assertEquals(3, Intervals.mostFrequent(a));
    }

    @Test
    void sampledHistogramCountsOverlaps() {
        List<Interval> spans = List.of(new Interval("A", 0, 60), new Interval("A", 40, 100));
        TreeMap<Integer, Integer> h = Intervals.sampleConcurrency(spans, "A", 0, 100, 10);
        // instants 0,10,...,90: 40 and 50 see two spans, the rest one
        assertEquals(Map.of(1, 8, 2, 2), h);
        assertEquals(1, Intervals.mostFrequent(h));
    }

    @Test
    void mostFrequentBreaksTiesTowardsMore() {
        TreeMap<Integer, Integer> h = new TreeMap<>(Map.of(1, 5, 2, 5));
        assertEquals(2, Intervals.mostFrequent(h));
    }

    @Test
    void rejectsEmptyWindowsAndBackwardSpans() {
        assertThrows(IllegalArgumentException.class, () -> Intervals.meanConcurrency(List.of(), "A", 5, 5));
        assertThrows(IllegalArgumentException.class, () -> Intervals.sampleConcurrency(List.of(), "A", 0, 1, 0));
        var e = assertThrows(IllegalArgumentException.class, () -> new Interval("A", 10, 5));
        assertEquals("interval end 5 is before its start 10", e.getMessage());
    }
}
