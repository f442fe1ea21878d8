package dev.xq.bench.scenario.processes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The paired reading: BE processes stopped and continued in turn, LC requests split by what ran beside them. */
class PausesTest {

    /** A clock that jumps to each time asked for; interrupts the sleep numbered {@code interruptAt} (0: never). */
    private static final class VirtualClock implements Pauses.Clock {
        long now;
        int sleeps;
        final int interruptAt;

        VirtualClock(long start, int interruptAt) {
            this.now = start;
            this.interruptAt = interruptAt;
        }

        @Override
        public long now() {
            return now;
        }

        @Override
        public void sleepUntil(long epochMs) throws InterruptedException {
            if (++sleeps == interruptAt) {
                throw new InterruptedException("closed");
            }
            now = Math.max(now, epochMs);
        }
    }

    @Test
    void theBeProcessesRunThenStopInTurnUntilTheEndAndAreLeftRunning() throws Exception {
        List<String> sent = new ArrayList<>();
        var clock = new VirtualClock(1_000, 0);
        var spans = Pauses.alternate(List.of(7L, 9L), 1_000, 100, 1_450, (sig, pids) -> sent.add(sig + " " + pids), clock);
        assertEquals(List.of("STOP [7, 9]", "CONT [7, 9]", "STOP [7, 9]", "CONT [7, 9]"), sent);
        assertEquals(List.of(new Pauses.Span(1_100, 1_200), new Pauses.Span(1_300, 1_400)), spans);
    }

    @Test
    void interruptedWhileStoppedItContinuesThemFirst() throws Exception {
        List<String> sent = new ArrayList<>();
        // the second sleep is the one inside the first stop
        var clock = new VirtualClock(0, 2);
        var spans = Pauses.alternate(List.of(5L), 0, 100, 10_000, (sig, pids) -> sent.add(sig), clock);
        assertEquals(List.of("STOP", "CONT"), sent);
        assertEquals(1, spans.size());
        assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
    }

    @Test
    void requestsAreAloneInsideAStopAfterItSettlesSharedAwayFromStopsAndLeftOutAcrossAnEdge() {
        var stops = List.of(new Pauses.Span(10_000, 12_000), new Pauses.Span(14_000, 16_000));
        double[] t = {
            9_000, // shared
            9_990, // ends inside the first stop: left out
            10_100, // within the settling time of the stop: left out
            10_400, // alone
            11_990, // runs past the continue: left out
            12_100, // within the settling time after the continue: left out
            12_400, // shared
            15_000, // alone
        };
        double[] lat = {20, 20, 20, 30, 20, 20, 40, 50};
        var p = Pauses.split(t, lat, stops);
        assertEquals(2, p.shared());
        assertEquals(2, p.alone());
        assertEquals(40.0, p.sharedP99(), 0.5);
        assertEquals(50.0, p.aloneP99(), 0.5);
        // too few on a side for a ratio
        assertTrue(Double.isNaN(p.ratio()));
        // a tenant that reports no times has no paired reading
        assertNull(Pauses.split(new double[0], lat, stops));
        assertNull(Pauses.split(new double[] {1, 2}, lat, stops));
    }

    @Test
    void theRatioIsSharedP99OverAloneP99() {
        var stops = new ArrayList<Pauses.Span>();
        List<Double> ts = new ArrayList<>();
        List<Double> ls = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            long base = 100_000L * k;
            stops.add(new Pauses.Span(base + 50_000, base + 100_000));
            for (int i = 0; i < 20; i++) {
                ts.add(base + 1_000.0 + 1_000 * i); // shared: 30 ms
                ls.add(30.0);
                ts.add(base + 51_000.0 + 1_000 * i); // alone: 20 ms
                ls.add(20.0);
            }
        }
        var p = Pauses.split(ts.stream().mapToDouble(Double::doubleValue).toArray(),
                ls.stream().mapToDouble(Double::doubleValue).toArray(), stops);
        assertEquals(80, p.shared());
        assertEquals(80, p.alone());
        assertEquals(1.5, p.ratio(), 1e-9);
    }
}
