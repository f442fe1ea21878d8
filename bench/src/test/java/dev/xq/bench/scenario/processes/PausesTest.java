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
    void theLaunchingThreadsCpuTimeIsSplitAsTheLatenciesAre() {
        // one stop from 10 s to 20 s; 20 requests a half, 100 ms apart, each 20 ms long
        var stops = List.of(new Pauses.Span(10_000, 20_000));
        int n = 60;
        double[] t = new double[n];
        double[] lat = new double[n];
        double[] cpu = new double[n];
        for (int i = 0; i < n; i++) {
            // 20 shared (from 7 s), 20 alone (from 11 s), 20 in neither half's reach (21.0-21.2 s settling, then shared)
            t[i] = i < 20 ? 7_000 + i * 100 : i < 40 ? 11_000 + (i - 20) * 100 : 20_050 + (i - 40) * 100;
            lat[i] = 20;
            // shared requests' own work twice as long as alone ones' (18 ms against 9), whatever their latency
            cpu[i] = i < 20 || i >= 40 ? 18 : 9;
        }
        double[] r = Pauses.cpuRatios(t, lat, cpu, stops, Pauses.SETTLE_MS);
        assertEquals(2.0, r[0], 1e-9);
        assertEquals(2.0, r[1], 1e-9);
        // the requests within the settling time after the continue are left out, as split leaves them
        cpu[40] = 1_000;
        cpu[41] = 1_000;
        assertEquals(2.0, Pauses.cpuRatios(t, lat, cpu, stops, Pauses.SETTLE_MS)[1], 1e-9);
        // a request that did not mark its time (-1) is left out, not read as no work
        cpu[0] = -1;
        assertEquals(2.0, Pauses.cpuRatios(t, lat, cpu, stops, Pauses.SETTLE_MS)[0], 1e-9);
        // the same work on both halves reads 1
        double[] same = new double[n];
        java.util.Arrays.fill(same, 9);
        assertEquals(1.0, Pauses.cpuRatios(t, lat, same, stops, Pauses.SETTLE_MS)[0], 1e-9);
        // too few alone with a time, arrays that do not pair up, or none: no ratio
        double[] few = cpu.clone();
        for (int i = 20; i < 32; i++) {
            few[i] = -1;
        }
        assertTrue(Double.isNaN(Pauses.cpuRatios(t, lat, few, stops, Pauses.SETTLE_MS)[0]));
        assertTrue(Double.isNaN(Pauses.cpuRatios(t, lat, new double[] {1, 2}, stops, Pauses.SETTLE_MS)[1]));
        assertTrue(Double.isNaN(Pauses.cpuRatios(t, lat, new double[0], stops, Pauses.SETTLE_MS)[0]));
    }

    @Test
    void theAloneHalfIsSplitByItsStopsEvenAgainstOddForTheVerdictsOwnNoise() {
        // three stops of 2 s, 12 requests alone in each (from 400 ms after the stop began), shared ones between
        var stops = List.of(new Pauses.Span(10_000, 12_000), new Pauses.Span(14_000, 16_000), new Pauses.Span(18_000, 20_000));
        int n = 48;
        double[] t = new double[n];
        double[] lat = new double[n];
        for (int i = 0; i < 36; i++) {
            t[i] = stops.get(i / 12).stopMs() + 400 + (i % 12) * 100;
            lat[i] = i / 12 == 1 ? 30 : 20; // the odd stop's requests 30 ms, the even ones' 20
        }
        for (int i = 36; i < n; i++) {
            t[i] = 12_400 + (i - 36) * 100; // shared (between the first two stops): not read
            lat[i] = 500;
        }
        assertEquals(1.5, Pauses.aloneSplit(t, lat, stops, Pauses.SETTLE_MS), 1e-9);
        // the larger over the smaller, whichever part it is
        for (int i = 0; i < 36; i++) {
            lat[i] = i / 12 == 1 ? 20 : 30;
        }
        assertEquals(1.5, Pauses.aloneSplit(t, lat, stops, Pauses.SETTLE_MS), 1e-9);
        // alike: 1
        for (int i = 0; i < 36; i++) {
            lat[i] = 20;
        }
        assertEquals(1.0, Pauses.aloneSplit(t, lat, stops, Pauses.SETTLE_MS), 1e-9);
        // requests within a stop's settling time are not alone: the odd part left with 9, too few
        for (int i = 12; i < 15; i++) {
            t[i] = stops.get(1).stopMs() + 100;
        }
        assertTrue(Double.isNaN(Pauses.aloneSplit(t, lat, stops, Pauses.SETTLE_MS)));
        // one stop, or arrays that do not pair up: none
        assertTrue(Double.isNaN(Pauses.aloneSplit(t, lat, stops.subList(0, 1), Pauses.SETTLE_MS)));
        assertTrue(Double.isNaN(Pauses.aloneSplit(t, new double[] {1, 2}, stops, Pauses.SETTLE_MS)));
    }

    @Test
    void aStopSettlesForAsLongAsABestEffortTenantsWorkInFlightRunsOn() {
        // none, or too few synchronizations to tell: the fixed settling time
        assertEquals(Pauses.SETTLE_MS, Pauses.aloneSettleMs(List.of()));
        assertEquals(Pauses.SETTLE_MS, Pauses.aloneSettleMs(List.of(new double[] {1_000, 1_660})));
        // the longest of the tenants' median intervals: a GEMM synchronizing every ~660 ms (one
        // 2 s stop among its intervals) beside a trainer every ~100 ms
        double[] gemm = {0, 660, 1_320, 3_320, 3_980, 4_640};
        double[] trainer = {0, 100, 201, 300, 2_300, 2_401};
        assertEquals(Pauses.SETTLE_MS + 660, Pauses.aloneSettleMs(List.of(trainer, gemm)));
        assertEquals(Pauses.SETTLE_MS + 101, Pauses.aloneSettleMs(List.of(trainer)));
        // never past half the shortest stop (a tenant held by the scheduler synchronizes seldom)
        var twoStops = List.of(new Pauses.Span(0, 1_500), new Pauses.Span(3_000, 5_000));
        assertEquals(750, Pauses.aloneSettleMs(List.of(trainer, gemm), twoStops));
        assertEquals(Pauses.SETTLE_MS + 101, Pauses.aloneSettleMs(List.of(trainer), twoStops));
        assertEquals(Pauses.SETTLE_MS, Pauses.aloneSettleMs(List.of(gemm), List.of(new Pauses.Span(0, 300))));

        // a request 400 ms into a stop is alone with the fixed settling time, left out with 910 ms
        var stops = List.of(new Pauses.Span(10_000, 12_000));
        double[] t = {10_400, 11_000};
        double[] lat = {30, 13};
        var fixed = Pauses.split(t, lat, stops);
        assertEquals(2, fixed.alone());
        assertEquals(30.0, fixed.aloneP99(), 0.5);
        var drained = Pauses.split(t, lat, stops, Pauses.SETTLE_MS + 660);
        assertEquals(1, drained.alone());
        assertEquals(13.0, drained.aloneP99(), 0.5);
        assertEquals(Pauses.SETTLE_MS + 660, drained.aloneSettleMs());
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

    /** The spread of a paired ratio: halves resampled, a fixed seed; wide for few requests, absent for too few. */
    @Test
    void aReadingsRangeCoversItsRatioIsTheSameEveryTimeAndTellsAClearDifferenceFromNone() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(1);
        double[] a = new double[80];
        double[] b = new double[85];
        for (int i = 0; i < a.length; i++) {
            a[i] = 20 + 15 * r.nextDouble();
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = 20 + 15 * r.nextDouble();
        }
        double[] same = Pauses.range(b, a);
        assertTrue(same[0] < 1.0 && same[1] > 0.95 && same[0] < same[1], java.util.Arrays.toString(same));
        assertEquals(java.util.Arrays.toString(same), java.util.Arrays.toString(Pauses.range(b, a)), "a fixed seed");
        // twice as slow with the BE running: the whole range is far above 1
        double[] twice = b.clone();
        for (int i = 0; i < twice.length; i++) {
            twice[i] *= 2;
        }
        double[] far = Pauses.range(twice, a);
        assertTrue(far[0] > 1.5, java.util.Arrays.toString(far));
        // too few on a side: no range, and split's reading says so
        assertTrue(Double.isNaN(Pauses.range(java.util.Arrays.copyOf(b, Pauses.MIN_SIDE - 1), a)[0]));
        var p = new Pauses.Paired(30, 30, 20, 20, 5, 80);
        assertTrue(!p.ranged());
    }

    /** split() gives its reading the range of the same halves it split. */
    @Test
    void aSplitReadingCarriesItsRange() {
        var stops = List.of(new Pauses.Span(100_000, 200_000));
        double[] t = new double[200];
        double[] lat = new double[200];
        for (int i = 0; i < 100; i++) {
            t[i] = 1_000 + i * 900; // shared: before the stop
            lat[i] = 30 + (i % 10);
            t[100 + i] = 101_000 + i * 900; // alone
            lat[100 + i] = 20 + (i % 10);
        }
        var p = Pauses.split(t, lat, stops);
        assertTrue(p.ranged());
        assertTrue(p.ratioLow() <= p.ratio() && p.ratio() <= p.ratioHigh() + 1e-9, p.toString());
        assertTrue(p.ratioLow() > 1.0, p.toString());
    }

    /**
     * A mix whose start is slow (every process just begun, the node learning them) and the rest
     * not: the whole run's shared P99 is the start's, the steady one, after the first stop, is not.
     */
    @Test
    void theSteadySharedRequestsLeaveTheMixsStartOut() {
        var stops = new ArrayList<Pauses.Span>();
        List<Double> ts = new ArrayList<>();
        List<Double> ls = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            long base = 3_000L * k;
            stops.add(new Pauses.Span(base + 1_500, base + 3_000));
            for (int i = 0; i < 30; i++) {
                ts.add((double) base + 50 * i);
                ls.add(k == 0 && i < 10 ? 15.0 : 8.0); // the first half second of the run slow
            }
        }
        double[] t = ts.stream().mapToDouble(Double::doubleValue).toArray();
        double[] lat = ls.stream().mapToDouble(Double::doubleValue).toArray();
        var p = Pauses.split(t, lat, stops);
        double[] ph = Pauses.byPhase(t, lat, stops);
        assertEquals(15.0, p.sharedP99(), 1e-9, "the whole run's shared P99 is the start's");
        assertEquals(8.0, ph[4], 1e-9, java.util.Arrays.toString(ph));
        assertEquals(p.shared() - 30, (int) ph[5]);
    }

    /**
     * The shared requests by when they start: within 0.75 s of the latest continue (early), or
     * later or before any stop (late); together the shared ones of the split, the rest left out.
     */
    @Test
    void sharedRequestsSplitIntoEarlyAfterAContinueAndLate() {
        var stops = new ArrayList<Pauses.Span>();
        List<Double> ts = new ArrayList<>();
        List<Double> ls = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            long base = 3_000L * k;
            stops.add(new Pauses.Span(base + 1_500, base + 3_000));
            for (int i = 0; i < 30; i++) {
                double t = base + 50 * i; // 0-1.45 s of each running half
                ts.add(t);
                // after a continue (every half but the first): slow until 0.75 s in
                ls.add(k > 0 && 50 * i < Pauses.EARLY_MS ? 12.0 : 8.0);
            }
        }
        double[] t = ts.stream().mapToDouble(Double::doubleValue).toArray();
        double[] lat = ls.stream().mapToDouble(Double::doubleValue).toArray();
        double[] ph = Pauses.byPhase(t, lat, stops);
        var p = Pauses.split(t, lat, stops);
        // each half after a continue: 0.25-0.75 s early (10 requests), 0.75-1.45 s late; the first half all late
        assertEquals(30, (int) ph[1], java.util.Arrays.toString(ph));
        assertEquals(p.shared(), (int) (ph[1] + ph[3]), "early and late make up the shared ones");
        assertEquals(12.0, ph[0], 1e-9);
        assertEquals(8.0, ph[2], 1e-9);
        // steady: all but the first half, before any stop (the mix's start)
        assertEquals(p.shared() - 30, (int) ph[5], java.util.Arrays.toString(ph));
        assertEquals(12.0, ph[4], 1e-9);
        assertNull(Pauses.byPhase(new double[] {1, 2}, lat, stops));
    }

    /**
     * A best-effort tenant's pace around the stops: the first synchronization after each continue
     * (none after the last: NaN), and the median interval between synchronizations with no stop
     * between them (the ones across a stop left out, however long).
     */
    @Test
    void aBestEffortTenantsPaceIsReadAroundTheStops() {
        var stops = List.of(new Pauses.Span(1_000, 2_000), new Pauses.Span(3_000, 4_000), new Pauses.Span(5_000, 6_000));
        List<Double> done = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            long from = run == 0 ? 0 : 2_000L * run;
            // back after a continue: the first one 90 ms later, then every 100 ms until the stop
            for (double t = from + (run == 0 ? 100 : 90); t < from + 1_000; t += 100) {
                done.add(t);
            }
        }
        double[] d = done.stream().mapToDouble(Double::doubleValue).toArray();
        var r = Pauses.resume(d, stops);
        assertEquals(3, r.afterContMs().length);
        assertEquals(90.0, r.afterContMs()[0], 1e-9);
        assertEquals(90.0, r.afterContMs()[1], 1e-9);
        assertTrue(Double.isNaN(r.afterContMs()[2]), "nothing after the last continue: " + java.util.Arrays.toString(r.afterContMs()));
        assertEquals(90.0, r.medianAfterContMs(), 1e-9);
        assertEquals(100.0, r.steadyMs(), 1e-9, "the intervals across a stop (1.09-1.19 s) are left out");
        assertEquals(100.0, r.steadyMeanMs(), 1e-9);
        assertEquals(done.size() - 3, r.steadyGaps(), "every interval but the two across a stop, of " + done.size() + " ends");
        assertEquals(8 / 0.9, r.startPerSec(), 1e-9, "the start: eight after the first (100 ms) until the stop at 1 s");
        assertEquals(10.0, r.afterStartPerSec(), 1e-9, "ten a second in each later stretch; none after the last continue");
        assertNull(Pauses.resume(new double[0], stops));
        assertNull(Pauses.resume(d, List.of()));
    }

    /**
     * A hold between the stops counts in the mean interval and not in the median: nine intervals
     * of 100 ms and one of 1,000 leave the median at 100 and make the mean 190.
     */
    @Test
    void aHoldBetweenTheStopsCountsInTheMeanPace() {
        var stops = List.of(new Pauses.Span(5_000, 6_000), new Pauses.Span(7_000, 8_000));
        List<Double> done = new ArrayList<>();
        double t = 0;
        for (int i = 0; i <= 10; i++) {
            done.add(t);
            t += i == 4 ? 1_000 : 100;
        }
        var r = Pauses.resume(done.stream().mapToDouble(Double::doubleValue).toArray(), stops);
        assertEquals(10, r.steadyGaps());
        assertEquals(100.0, r.steadyMs(), 1e-9);
        assertEquals(190.0, r.steadyMeanMs(), 1e-9);
    }
}
