package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class NarrowedTimeTest {

    private static final long MS = 1_000_000L;

    /** Narrowed half of each 40 ms beat for 20 s: about half, and the region weighed by that half. */
    @Test
    void aProcessNarrowedHalfTheTimeWeighsHalfWayToItsRegion() {
        NarrowedTime t = new NarrowedTime();
        long now = 0;
        for (int i = 0; i < 500; i++) {
            t.observe(7, 24, now);
            now += 20 * MS;
            t.observe(7, 0, now);
            now += 20 * MS;
        }
        assertEquals(0.5, t.fraction(7), 0.02, "half the time narrowed");
        assertEquals(24, t.reserve(7), "the reserve it met");
        // 132 multiprocessors, a region of 104: 1 - 0.5 * 28/132
        assertEquals(1 - 0.5 * 28 / 132.0, t.weight(7, 104, 132), 0.005);
    }

    /** Never narrowed weighs 1; narrowed throughout weighs its region; an unknown process 1. */
    @Test
    void neverNarrowedWeighsOneAndAlwaysNarrowedItsRegion() {
        NarrowedTime t = new NarrowedTime();
        for (long now = 0; now < 10_000 * MS; now += 5 * MS) {
            t.observe(1, 0, now);
            t.observe(2, 66, now);
        }
        assertEquals(0, t.fraction(1), 1e-12);
        assertEquals(1.0, t.weight(1, 64, 132), 1e-12);
        assertEquals(1.0, t.fraction(2), 1e-9);
        assertEquals(64 / 132.0, t.weight(2, 64, 132), 1e-9);
        assertEquals(1.0, t.weight(3, 64, 132), 1e-12, "never seen");
        assertEquals(1.0, t.weight(2, 132, 132), 1e-12, "a region of the whole device weighs nothing");
    }

    /**
     * The mean follows time, not calls: narrowed for one second in one call, then free for one
     * second in a thousand calls, reads the same as the other way round.
     */
    @Test
    void theMeanIsWeighedByTimeNotByCalls() {
        NarrowedTime a = new NarrowedTime();
        NarrowedTime b = new NarrowedTime();
        a.observe(1, 0, 0);
        b.observe(1, 0, 0);
        for (int k = 0; k < 4; k++) {
            long base = k * 2000 * MS;
            a.observe(1, 30, base);
            a.observe(1, 0, base + 1000 * MS);
            for (int i = 1; i <= 1000; i++) {
                a.observe(1, 0, base + 1000 * MS + i * MS);
            }
            b.observe(1, 30, base);
            for (int i = 1; i <= 1000; i++) {
                b.observe(1, 30, base + i * MS);
            }
            b.observe(1, 0, base + 1000 * MS);
            b.observe(1, 0, base + 2000 * MS);
        }
        assertEquals(a.fraction(1), b.fraction(1), 1e-9);
        assertTrue(a.fraction(1) > 0.1 && a.fraction(1) < 0.9, "between: " + a.fraction(1));
    }

    /** Property: whatever the pattern, the fraction stays in [0, 1] and the weight between region/sms and 1. */
    @Test
    void fractionAndWeightStayInTheirBounds() {
        Random r = new Random(119);
        NarrowedTime t = new NarrowedTime();
        long now = 0;
        for (int i = 0; i < 20_000; i++) {
            long pid = 1 + r.nextInt(5);
            now += r.nextInt(50) * MS;
            t.observe(pid, r.nextBoolean() ? 0 : 8 + r.nextInt(120), now);
            double f = t.fraction(pid);
            assertTrue(f >= 0 && f <= 1, "fraction " + f);
            int region = 8 + r.nextInt(124);
            double w = t.weight(pid, region, 132);
            assertTrue(w >= region / 132.0 - 1e-12 && w <= 1 + 1e-12, "weight " + w + " region " + region);
        }
    }
}
