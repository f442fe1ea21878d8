package dev.xq.bench.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LogNormalArrivalsTest {

    @Test
    void logsOfTheGapsAreNormalWithTheAskedShape() {
        double mean = 1_000_000;
        double sigma = 2.0;
        LogNormalArrivals a = new LogNormalArrivals(mean, sigma, new SplittableRandom(42));
        int n = 200_000;
        double[] logs = new double[n];
        for (int i = 0; i < n; i++) {
            logs[i] = Math.log(a.nextGapNanos());
        }
        double m = Arrays.stream(logs).average().orElseThrow();
        double var = Arrays.stream(logs).map(x -> (x - m) * (x - m)).sum() / (n - 1);
        // mu = ln(mean) - sigma^2/2; standard errors are ~0.0045 and ~0.006 at this n
        assertEquals(Math.log(mean) - sigma * sigma / 2, m, 0.03);
        assertEquals(sigma, Math.sqrt(var), 0.03);
        double[] sorted = logs.clone();
        Arrays.sort(sorted);
        assertEquals(Math.log(a.medianNanos()), sorted[n / 2], 0.03);
    }

    @Test
    void meanGapMatchesTheTargetWithAMildShape() {
        // With sigma 2 the sample mean converges too slowly to test; sigma 0.5 checks the mu formula.
        LogNormalArrivals a = new LogNormalArrivals(500_000, 0.5, new SplittableRandom(7));
        int n = 200_000;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += a.nextGapNanos();
        }
        assertEquals(500_000, sum / n, 500_000 * 0.01);
    }

    @Test
    void burstyShapeHasMostGapsBelowTheMean() {
        LogNormalArrivals a = new LogNormalArrivals(1e6, 2.0, new SplittableRandom(3));
        int below = 0;
        for (int i = 0; i < 10_000; i++) {
            if (a.nextGapNanos() < 1e6) {
                below++;
            }
        }
        // P(X < mean) = Phi(sigma / 2) = Phi(1) ~ 0.841
        assertEquals(0.841, below / 10_000.0, 0.02);
    }

    @Test
    void gapsArePositive() {
        LogNormalArrivals a = new LogNormalArrivals(10, 5.0, new SplittableRandom(1));
        for (int i = 0; i < 10_000; i++) {
            assertTrue(a.nextGapNanos() >= 1);
        }
    }

    @Test
    void rejectsBadParameters() {
        var e = assertThrows(IllegalArgumentException.class, () -> new LogNormalArrivals(0, 2, new SplittableRandom()));
        assertTrue(e.getMessage().contains("0.0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new LogNormalArrivals(Double.NaN, 2, new SplittableRandom()));
        var s = assertThrows(IllegalArgumentException.class, () -> new LogNormalArrivals(1, 0, new SplittableRandom()));
        assertTrue(s.getMessage().contains("(0, 10]"), s.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new LogNormalArrivals(1, 11, new SplittableRandom()));
    }
}
