package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import org.junit.jupiter.api.Test;

/** The launch rule that the engine and the interposer share (docs/processes.md, "The launch gate"). */
class LaunchGateTest {

    private static QueueConfig config(int threshold, int batch, long windowMicros) {
        return new QueueConfig(PreemptionLevel.BLOCK, threshold, batch, windowMicros);
    }

    @Test
    void atTheThresholdItStopsUntilABatchHasDrained() {
        LaunchGate g = new LaunchGate();
        QueueConfig c = config(8, 4, 0);
        for (int n = 0; n < 8; n++) {
            assertTrue(g.mayLaunch(n, c), "below the threshold: " + n);
        }
        assertFalse(g.mayLaunch(8, c));
        for (int n = 7; n > 4; n--) {
            assertFalse(g.mayLaunch(n, c), "still draining the batch: " + n);
        }
        assertTrue(g.mayLaunch(4, c), "threshold - batch reached");
        assertTrue(g.mayLaunch(5, c), "a new batch goes up to the threshold again");
    }

    @Test
    void newLimitsEndABatchInProgress() {
        LaunchGate g = new LaunchGate();
        assertFalse(g.mayLaunch(8, config(8, 4, 0)));
        assertFalse(g.mayLaunch(6, config(8, 4, 0)));
        g.reconfigured();
        assertTrue(g.mayLaunch(6, config(16, 8, 0)));
    }

    @Test
    void theWindowWaitsForAnEstimateThenBoundsTheWorkInFlight() {
        LaunchGate g = new LaunchGate();
        QueueConfig c = config(16, 8, 300);
        assertTrue(g.mayLaunch(0, c), "one command always goes");
        assertFalse(g.mayLaunch(1, c), "no second one of unknown size");
        g.completed(100_000);
        assertEquals(100_000, g.estimateNanos());
        assertTrue(g.mayLaunch(1, c), "two always go once there is an estimate");
        assertTrue(g.mayLaunch(2, c), "3 x 100 us fit in 300 us");
        assertFalse(g.mayLaunch(3, c), "4 x 100 us do not");
    }

    @Test
    void twoCommandsGoEvenWhenOneIsLongerThanTheWindow() {
        LaunchGate g = new LaunchGate();
        QueueConfig c = config(16, 8, 300);
        g.completed(5_000_000);
        assertTrue(g.mayLaunch(1, c));
        assertFalse(g.mayLaunch(2, c));
    }

    @Test
    void theEstimateFollowsAChangeOfCommandSize() {
        LaunchGate g = new LaunchGate();
        g.completed(1_000_000);
        for (int i = 0; i < 20; i++) {
            g.completed(100_000);
        }
        assertTrue(g.estimateNanos() < 110_000, "moved most of the way: " + g.estimateNanos());
    }
}
