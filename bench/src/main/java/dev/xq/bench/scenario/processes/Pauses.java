package dev.xq.bench.scenario.processes;

import dev.xq.bench.stats.Percentiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The mix scenario's paired reading ({@code pause=S}): while a mode runs, its best-effort (BE)
 * processes are stopped (SIGSTOP) for S seconds of every 2 S and continued (SIGCONT) in between, and
 * each latency-critical (LC) tenant's requests are split by what ran beside them: "alone" (issued
 * and finished while the BE processes were stopped, after a settling time for the work they had
 * already queued on the device) and "shared" (issued and finished while they ran, after the same
 * settling time once they were continued). Why: on a cloud GPU host the host CPU's speed moves in
 * phases of seconds (a pure-Python tick 23 to 44 ms on the H200 with the machine idle), and an
 * eager tenant's latency is made on the host: the same decoder alone, run six times back to back,
 * gave P99s 0.68 to 1.46 x each other. Both halves of a paired reading meet the same host, slice
 * after slice.
 */
final class Pauses {

    /**
     * How long after a stop (or a continue) a request must start to count as alone (or shared):
     * work a BE process queued before it was stopped still runs (a trainer's launched step, up to
     * four 21 ms GEMMs), and a continued one takes a moment to fill the device again.
     */
    static final long SETTLE_MS = 250;

    /** One stop: the BE processes were stopped from {@code stopMs} to {@code contMs} (epoch ms). */
    record Span(long stopMs, long contMs) { }

    /** Sends a signal to processes. */
    interface Signaller {
        void signal(String signal, List<Long> pids) throws IOException, InterruptedException;
    }

    /** Sends it with {@code kill -SIGNAL PID...}. */
    static final Signaller KILL = (signal, pids) -> {
        if (pids.isEmpty()) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(p -> cmd.add(Long.toString(p)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        p.waitFor();
    };

    /** The clock the loop reads and sleeps on (epoch ms); a test's may be virtual. */
    interface Clock {
        long now();

        void sleepUntil(long epochMs) throws InterruptedException;
    }

    static final Clock WALL = new Clock() {
        @Override
        public long now() {
            return System.currentTimeMillis();
        }

        @Override
        public void sleepUntil(long epochMs) throws InterruptedException {
            long d = epochMs - System.currentTimeMillis();
            if (d > 0) {
                Thread.sleep(d);
            }
        }
    };

    private Pauses() { }

    /**
     * Alternates from {@code startMs}: BE running for {@code pauseMs}, stopped for {@code pauseMs},
     * and so on until {@code endMs}; the processes are always continued before it returns,
     * interrupted or not (a stopped process left behind would hang the run).
     * @return the stops made, in order
     */
    static List<Span> alternate(List<Long> pids, long startMs, long pauseMs, long endMs, Signaller sig, Clock clock)
            throws IOException {
        List<Span> spans = new ArrayList<>();
        boolean stopped = false;
        long stopAt = 0;
        try {
            long next = startMs + pauseMs;
            while (next + pauseMs <= endMs) {
                clock.sleepUntil(next);
                sig.signal("STOP", pids);
                stopped = true;
                stopAt = clock.now();
                clock.sleepUntil(next + pauseMs);
                sig.signal("CONT", pids);
                stopped = false;
                spans.add(new Span(stopAt, clock.now()));
                next += 2 * pauseMs;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (stopped) {
                continueAll(pids, sig);
                spans.add(new Span(stopAt, clock.now()));
            }
        }
        return spans;
    }

    private static void continueAll(List<Long> pids, Signaller sig) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            sig.signal("CONT", pids);
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * One LC tenant's paired reading in one mode.
     * @param sharedP99 P99 (ms) of its requests made while the BE processes ran
     * @param aloneP99 P99 (ms) of those made while they were stopped
     */
    record Paired(double sharedP99, double aloneP99, double sharedP50, double aloneP50, int shared, int alone,
                  double ratioLow, double ratioHigh, long aloneSettleMs) {

        /** A reading without its range (NaN: not reckoned). */
        Paired(double sharedP99, double aloneP99, double sharedP50, double aloneP50, int shared, int alone) {
            this(sharedP99, aloneP99, sharedP50, aloneP50, shared, alone, Double.NaN, Double.NaN);
        }

        /** A reading whose stops settled for {@link #SETTLE_MS}. */
        Paired(double sharedP99, double aloneP99, double sharedP50, double aloneP50, int shared, int alone,
               double ratioLow, double ratioHigh) {
            this(sharedP99, aloneP99, sharedP50, aloneP50, shared, alone, ratioLow, ratioHigh, SETTLE_MS);
        }

        /** @return shared P99 over alone P99; NaN without enough requests on either side */
        double ratio() {
            return shared >= MIN_SIDE && alone >= MIN_SIDE && aloneP99 > 0 ? sharedP99 / aloneP99 : Double.NaN;
        }

        /** @return whether the range is known (a ratio and its {@link #RESAMPLES} resamples) */
        boolean ranged() {
            return !Double.isNaN(ratio()) && !Double.isNaN(ratioLow) && !Double.isNaN(ratioHigh);
        }
    }

    /** How many times {@link #range} resamples a reading's halves. */
    static final int RESAMPLES = 2000;

    /**
     * How far a ratio of two P99s of this size moves by chance: each half resampled with
     * replacement ({@link #RESAMPLES} times, a fixed seed, so a reading always gets the same range),
     * the ratio of the resamples' P99s each time; the 5th and 95th percentiles of those ratios.
     * With 80 requests a half, a P99 is about the second slowest request, and one slow request
     * more or less on either side moves the ratio by a tenth or more: two modes' readings whose
     * ranges overlap are not told apart by this run.
     *
     * @return {low, high}; NaNs with fewer than {@link #MIN_SIDE} on either side
     */
    static double[] range(double[] shared, double[] alone) {
        if (shared.length < MIN_SIDE || alone.length < MIN_SIDE) {
            return new double[] {Double.NaN, Double.NaN};
        }
        SplittableRandom rnd = new SplittableRandom(54L);
        double[] ratios = new double[RESAMPLES];
        double[] s = new double[shared.length];
        double[] a = new double[alone.length];
        int n = 0;
        for (int r = 0; r < RESAMPLES; r++) {
            for (int i = 0; i < s.length; i++) {
                s[i] = shared[rnd.nextInt(shared.length)];
            }
            for (int i = 0; i < a.length; i++) {
                a[i] = alone[rnd.nextInt(alone.length)];
            }
            double ap = Percentiles.of(a).at(99);
            if (ap > 0) {
                ratios[n++] = Percentiles.of(s).at(99) / ap;
            }
        }
        if (n == 0) {
            return new double[] {Double.NaN, Double.NaN};
        }
        Percentiles p = Percentiles.of(Arrays.copyOf(ratios, n));
        return new double[] {p.at(5), p.at(95)};
    }

    /** The fewest requests on each side for a ratio. */
    static final int MIN_SIDE = 10;

    /**
     * Splits requests (issue times {@code tMs}, epoch ms; latencies {@code latMs}, ms) by the stops.
     * A request is alone when it lies in a stop, starting at least {@link #SETTLE_MS} after it began;
     * shared when it overlaps no stop and starts at least {@link #SETTLE_MS} after the last one
     * ended; any other (across a stop's edge, settling) is left out.
     * @return null when the times and latencies do not pair up (a tenant that reports no times)
     */
    static Paired split(double[] tMs, double[] latMs, List<Span> spans) {
        return split(tMs, latMs, spans, SETTLE_MS);
    }

    /**
     * As {@link #split(double[], double[], List)}, a request alone only when it starts
     * {@code aloneSettleMs} or more after its stop began ({@link #aloneSettleMs}: a stopped process's
     * work already on the device runs on).
     */
    static Paired split(double[] tMs, double[] latMs, List<Span> spans, long aloneSettleMs) {
        if (tMs == null || latMs == null || tMs.length != latMs.length || tMs.length == 0) {
            return null;
        }
        List<Double> shared = new ArrayList<>();
        List<Double> alone = new ArrayList<>();
        for (int i = 0; i < tMs.length; i++) {
            int side = side(tMs[i], latMs[i], spans, aloneSettleMs);
            if (side == ALONE) {
                alone.add(latMs[i]);
            } else if (side == SHARED) {
                shared.add(latMs[i]);
            }
        }
        double[] r = range(shared.stream().mapToDouble(Double::doubleValue).toArray(),
                alone.stream().mapToDouble(Double::doubleValue).toArray());
        return new Paired(pct(shared, 99), pct(alone, 99), pct(shared, 50), pct(alone, 50), shared.size(), alone.size(),
                r[0], r[1], aloneSettleMs);
    }

    private static final int ALONE = 1;
    private static final int SHARED = 0;
    private static final int NEITHER = -1;

    /** Which half a request issued at {@code a} (epoch ms) and lasting {@code lat} ms falls in ({@link #split}). */
    private static int side(double a, double lat, List<Span> spans, long aloneSettleMs) {
        double b = a + lat;
        boolean isAlone = false;
        boolean touches = false;
        boolean settling = false;
        for (Span s : spans) {
            if (a >= s.stopMs() + aloneSettleMs && b <= s.contMs()) {
                isAlone = true;
            }
            if (b > s.stopMs() && a < s.contMs()) {
                touches = true;
            }
            if (a >= s.contMs() && a < s.contMs() + SETTLE_MS) {
                settling = true;
            }
        }
        return isAlone ? ALONE : !touches && !settling ? SHARED : NEITHER;
    }

    /**
     * The launching thread's CPU time per request, shared over alone, split as {@link #split}
     * splits the latencies: an eager tenant's latency is its host's work, and where its own work
     * took longer in the shared half (a ratio over 1 in the mode that missed, not in native
     * sharing's) the host slowed it, whatever the scheduler did; alike in both modes, it did not.
     * A request that did not mark its CPU time (a negative value) is left out. For kinds that read
     * a result between launches (decodeg, chat) the time includes the thread's spinning in those
     * reads, so there it mixes the device's part in.
     *
     * @param cpuMs each request's CPU time (ms), in the order of {@code tMs}
     * @return {P50 ratio, P95 ratio}; NaNs where the arrays do not pair up or either half has
     *         fewer than {@link #MIN_SIDE} requests with a time
     */
    static double[] cpuRatios(double[] tMs, double[] latMs, double[] cpuMs, List<Span> spans, long aloneSettleMs) {
        double[] none = {Double.NaN, Double.NaN};
        if (tMs == null || latMs == null || cpuMs == null || tMs.length != latMs.length || tMs.length != cpuMs.length) {
            return none;
        }
        List<Double> shared = new ArrayList<>();
        List<Double> alone = new ArrayList<>();
        for (int i = 0; i < tMs.length; i++) {
            if (cpuMs[i] < 0) {
                continue;
            }
            int side = side(tMs[i], latMs[i], spans, aloneSettleMs);
            if (side == ALONE) {
                alone.add(cpuMs[i]);
            } else if (side == SHARED) {
                shared.add(cpuMs[i]);
            }
        }
        if (shared.size() < MIN_SIDE || alone.size() < MIN_SIDE) {
            return none;
        }
        double a50 = pct(alone, 50);
        double a95 = pct(alone, 95);
        return new double[] {a50 > 0 ? pct(shared, 50) / a50 : Double.NaN, a95 > 0 ? pct(shared, 95) / a95 : Double.NaN};
    }

    /**
     * The paired verdict's own noise: the requests of the alone half (as {@link #split} finds them)
     * split by their stop, those of the even-numbered stops against those of the odd-numbered ones,
     * and the larger of their two P99s over the smaller. Nothing differs between the two parts but
     * chance (the same tenant, host and mode, nothing beside it), so this is what the verdict's
     * shared/alone ratio reads where the company changes nothing, from about half as many requests
     * a side. Read on the H100 (sessions 116-122), the eager decoder's parts disagreed by 1.13-1.18
     * x at the median and by over 1.10 in most readings; a CUDA graph's by 1.01.
     *
     * @return the ratio (1 or more); NaN where the arrays do not pair up, there are fewer than two
     *         stops, or either part has fewer than {@link #MIN_SIDE} requests
     */
    static double aloneSplit(double[] tMs, double[] latMs, List<Span> spans, long aloneSettleMs) {
        if (tMs == null || latMs == null || tMs.length != latMs.length || spans.size() < 2) {
            return Double.NaN;
        }
        List<Double> even = new ArrayList<>();
        List<Double> odd = new ArrayList<>();
        for (int i = 0; i < tMs.length; i++) {
            if (side(tMs[i], latMs[i], spans, aloneSettleMs) != ALONE) {
                continue;
            }
            for (int k = 0; k < spans.size(); k++) {
                Span s = spans.get(k);
                if (tMs[i] >= s.stopMs() && tMs[i] < s.contMs()) {
                    (k % 2 == 0 ? even : odd).add(latMs[i]);
                    break;
                }
            }
        }
        if (even.size() < MIN_SIDE || odd.size() < MIN_SIDE) {
            return Double.NaN;
        }
        double a = pct(even, 99);
        double b = pct(odd, 99);
        return a > 0 && b > 0 ? Math.max(a, b) / Math.min(a, b) : Double.NaN;
    }

    /**
     * How long after a stop begins the latency-critical tenants are alone. SIGSTOP stops a process,
     * not the work it has already put on the device: a best-effort tenant that synchronizes every
     * few long kernels (the family's GEMM at n=16384: four of ~165 ms) leaves up to one
     * synchronization's worth running. So a stop settles for {@link #SETTLE_MS} plus the longest,
     * over the best-effort tenants, of their median time between two synchronizations (what one
     * may have in flight), but never past half the shortest stop: a tenant held by the scheduler
     * synchronizes seldom with little on the device, and the alone side keeps requests to read.
     * Measured when it was built (H200, a batch tenant beside such GEMMs, their stops 1.5 s):
     * natively 1.01 x with the fixed 250 ms (its "alone" P99 30.4 ms, the GEMM's kernels still
     * running), 2.35 x settled 750 ms (alone P99 13.1 ms, as with the GEMM gone).
     *
     * @param doneTimes each best-effort tenant's synchronizations (epoch ms, MixScenario.doneTimes)
     * @param spans the stops
     * @return the settling time of a stop's alone side, ms
     */
    static long aloneSettleMs(List<double[]> doneTimes, List<Span> spans) {
        long shortest = Long.MAX_VALUE;
        for (Span s : spans) {
            shortest = Math.min(shortest, s.contMs() - s.stopMs());
        }
        long settle = aloneSettleMs(doneTimes);
        return spans.isEmpty() ? settle : Math.max(SETTLE_MS, Math.min(settle, shortest / 2));
    }

    /** @return {@link #SETTLE_MS} plus the longest median interval of {@code doneTimes}, uncapped */
    static long aloneSettleMs(List<double[]> doneTimes) {
        double longest = 0;
        for (double[] d : doneTimes) {
            if (d == null || d.length < 3) {
                continue;
            }
            double[] gaps = new double[d.length - 1];
            for (int i = 1; i < d.length; i++) {
                gaps[i - 1] = d[i] - d[i - 1];
            }
            java.util.Arrays.sort(gaps);
            longest = Math.max(longest, gaps[gaps.length / 2]);
        }
        return SETTLE_MS + (long) Math.ceil(longest);
    }

    /** How long after a continue a shared request counts as early ({@link #byPhase}). */
    static final long EARLY_MS = 750;

    /**
     * The shared requests of {@link #split} by when they start: early, within {@link #EARLY_MS} of
     * the latest continue (the first 500 ms once {@link #SETTLE_MS} has passed), or late (later, or
     * before any stop). A scheduler slow to take back processes that were stopped shows in the
     * early ones alone; a tenant that never stops meets only what the late ones show. And the
     * steady ones: every shared request but those before the first stop, the mix's start, where
     * every process has just begun beside the others and the node learns them (session 97: three of
     * its latency-critical misses were made there, in native sharing too the decoder's first
     * second is often slow); a service runs for hours, a run for 12 s, where the start's 1.5 s hold
     * a quarter of the shared requests.
     * @return {early P99, early count, late P99, late count, steady P99, steady count} (a P99 NaN
     *     with fewer than {@link #MIN_SIDE}); null when the times and latencies do not pair up
     */
    static double[] byPhase(double[] tMs, double[] latMs, List<Span> spans) {
        if (tMs == null || latMs == null || tMs.length != latMs.length || tMs.length == 0) {
            return null;
        }
        List<Double> early = new ArrayList<>();
        List<Double> late = new ArrayList<>();
        List<Double> steady = new ArrayList<>();
        for (int i = 0; i < tMs.length; i++) {
            double a = tMs[i];
            double b = a + latMs[i];
            boolean touches = false;
            double lastCont = Double.NEGATIVE_INFINITY;
            for (Span s : spans) {
                if (b > s.stopMs() && a < s.contMs()) {
                    touches = true;
                }
                if (s.contMs() <= a && s.contMs() > lastCont) {
                    lastCont = s.contMs();
                }
            }
            if (touches || a < lastCont + SETTLE_MS) {
                continue; // alone, across a stop's edge, or settling: not shared
            }
            (a < lastCont + EARLY_MS ? early : late).add(latMs[i]);
            if (lastCont > Double.NEGATIVE_INFINITY) {
                steady.add(latMs[i]);
            }
        }
        return new double[] {early.size() >= MIN_SIDE ? pct(early, 99) : Double.NaN, early.size(),
                late.size() >= MIN_SIDE ? pct(late, 99) : Double.NaN, late.size(),
                steady.size() >= MIN_SIDE ? pct(steady, 99) : Double.NaN, steady.size()};
    }

    /**
     * A best-effort tenant's pace around the stops, read from the times its work was seen done
     * (its synchronizations, epoch ms, as the PyTorch tenants report them in {@code sync_ms}).
     *
     * @param afterContMs for each stop, how long after the continue its first synchronization
     *     came (NaN: none came after it)
     * @param steadyMs the median interval between two synchronizations with no stop between them
     *     (NaN: fewer than two such)
     * @param steadyMeanMs the mean of the same intervals (NaN: fewer than two such): the pace
     *     between the stops with every hold inside them counted, which the median leaves out (a
     *     GEMM held for seconds at a time between its steady stretches had a median interval 1.02
     *     of native's and a mean one 0.70; H200, session 63)
     * @param steadyGaps how many such intervals there were
     */
    /**
     * @param startPerSec synchronizations a second from the first to the first stop (the run's start:
     *     where a scheduler learns the set; NaN where none came before it)
     * @param afterStartPerSec synchronizations a second in the stretches between the later
     *     continues and the next stops (and from the last continue to the last synchronization)
     */
    record Resume(double[] afterContMs, double steadyMs, double steadyMeanMs, int steadyGaps, double startPerSec,
                  double afterStartPerSec) {

        /** @return the median of {@link #afterContMs} (NaN: none) */
        double medianAfterContMs() {
            List<Double> v = new ArrayList<>();
            for (double d : afterContMs) {
                if (!Double.isNaN(d)) {
                    v.add(d);
                }
            }
            return v.isEmpty() ? Double.NaN : pct(v, 50);
        }
    }

    /**
     * Where the stops cost a held tenant more than a free one: a process stopped while its
     * launches wait for the node's leave has nothing on the device through the stop, where one
     * sharing natively has what it had queued (a GEMM's four 21 ms kernels), which runs on; back,
     * the first has all of it still to do. The steady interval is the pace with the stops left out
     * (its median and its mean).
     *
     * @return null where there is nothing to read (no synchronization times, or no stops)
     */
    static Resume resume(double[] doneMs, List<Span> spans) {
        if (doneMs.length == 0 || spans.isEmpty()) {
            return null;
        }
        double[] d = doneMs.clone();
        Arrays.sort(d);
        double[] after = new double[spans.size()];
        for (int k = 0; k < spans.size(); k++) {
            long cont = spans.get(k).contMs();
            int i = Arrays.binarySearch(d, cont);
            int at = i >= 0 ? i : -i - 1;
            after[k] = at < d.length ? d[at] - cont : Double.NaN;
        }
        List<Double> gaps = new ArrayList<>();
        for (int i = 1; i < d.length; i++) {
            boolean across = false;
            for (Span sp : spans) {
                if (sp.stopMs() < d[i] && sp.contMs() > d[i - 1]) {
                    across = true;
                    break;
                }
            }
            if (!across) {
                gaps.add(d[i] - d[i - 1]);
            }
        }
        double mean = gaps.size() < 2 ? Double.NaN : gaps.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        // the run's start (its first synchronization to the first stop) and the stretches after it
        long firstStop = spans.get(0).stopMs();
        int early = 0;
        int later = 0;
        for (int i = 1; i < d.length; i++) {
            if (d[i] <= firstStop) {
                early++;
            }
        }
        double laterMs = 0;
        for (int k = 0; k < spans.size(); k++) {
            long from = spans.get(k).contMs();
            double to = k + 1 < spans.size() ? spans.get(k + 1).stopMs() : d[d.length - 1];
            if (to <= from) {
                continue;
            }
            laterMs += to - from;
            for (double t : d) {
                if (t > from && t <= to) {
                    later++;
                }
            }
        }
        double start = d[0] < firstStop && early > 0 ? early / ((firstStop - d[0]) / 1000.0) : Double.NaN;
        double afterStart = laterMs > 0 && later > 0 ? later / (laterMs / 1000.0) : Double.NaN;
        return new Resume(after, gaps.size() < 2 ? Double.NaN : pct(gaps, 50), mean, gaps.size(), start, afterStart);
    }

    private static double pct(List<Double> v, double q) {
        if (v.isEmpty()) {
            return Double.NaN;
        }
        return Percentiles.of(v.stream().mapToDouble(Double::doubleValue).toArray()).at(q);
    }
}
