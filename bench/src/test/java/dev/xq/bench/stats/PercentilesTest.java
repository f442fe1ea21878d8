package dev.xq.bench.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PercentilesTest {

    @Test
    void interpolatesBetweenClosestRanks() {
        Percentiles p = Percentiles.of(new double[] {4, 1, 3, 2, 5});
        assertEquals(1.0, p.at(0));
        assertEquals(3.0, p.at(50));
        assertEquals(5.0, p.at(100));
        // rank 0.25 * 4 = 1 -> 2; rank 0.99 * 4 = 3.96 -> 4 + 0.96
        assertEquals(2.0, p.at(25), 1e-12);
        assertEquals(4.96, p.at(99), 1e-12);
    }

    @Test
    void p99OfHundredValuesIsNearTheTop() {
        double[] v = new double[100];
        for (int i = 0; i < 100; i++) {
            v[i] = i + 1;
        }
        Percentiles p = Percentiles.of(v);
        assertEquals(99.01, p.at(99), 1e-9);
        assertEquals(50.5, p.at(50), 1e-9);
        assertEquals(50.5, p.mean(), 1e-9);
        assertEquals(100, p.max());
    }

    @Test
    void singleValueIsEveryPercentile() {
        Percentiles p = Percentiles.of(new double[] {7.5});
        assertEquals(7.5, p.at(0));
        assertEquals(7.5, p.at(99));
    }

    @Test
    void emptySampleGivesNaNNotAnError() {
        Percentiles p = Percentiles.of(new double[0]);
        assertTrue(Double.isNaN(p.at(50)));
        assertTrue(Double.isNaN(p.mean()));
        assertEquals(0, p.count());
    }

    @Test
    void doesNotReorderTheCallersArray() {
        double[] v = {3, 1, 2};
        Percentiles.of(v);
        assertEquals(3, v[0]);
    }

    @Test
    void rejectsBadInput() {
        Percentiles p = Percentiles.of(new double[] {1});
        var e = assertThrows(IllegalArgumentException.class, () -> p.at(101));
        assertTrue(e.getMessage().contains("101"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> p.at(-0.5));
        assertThrows(IllegalArgumentException.class, () -> p.at(Double.NaN));
        var n = assertThrows(IllegalArgumentException.class, () -> Percentiles.of(new double[] {1, Double.NaN}));
        assertTrue(n.getMessage().contains("NaN"));
    }
}
