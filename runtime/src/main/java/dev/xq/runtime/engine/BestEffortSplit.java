package dev.xq.runtime.engine;

import java.util.List;

/**
 * A split of what best-effort processes may use on one device weighted by what fits: in sixteenths,
 * the one that maximises the sum of the logarithms of what each process gets done (proportional
 * fairness). A process whose commands run between the requests of a wide tenant on a beat (the
 * wide beats) gets done the whole commands that fit a gap at its width ({@value #SAFETY} of the gap
 * for the reckoning's errors), reckoned at the multiprocessors the interposer gives the width
 * (rounded down to 8). The others get done what their width lets them: in proportion to it where
 * their commands are long (a GEMM's rate fell to 0.76, 0.43 and 0.21 of its rate on the whole H200
 * at 75, 50 and 25 % of it), but short commands ({@value #SHORT_COMMAND_NANOS} ns or less at the
 * whole device: launch-bound processes) gain little past half the device and lose less than their
 * width below it (Triton's row softmax kept 1.03, 0.92 and 0.53, bf16 training 1.05, 0.95 and
 * 0.66): {@code min(1, 2w)^0.75} of the device's w. Equal halves leave a long-command process idle
 * for the part of each gap its commands do not fill (21 ms GEMMs on half of an H200 take about
 * 43 ms: one fits a gap of 84 ms, two do at 88 of 132 multiprocessors), while a short-command one
 * uses its half throughout and would do nearly as much on a third.
 *
 * <p>Pure: the node's core ({@link XqCore#decided}) gives it the processes' commands and gaps.
 */
final class BestEffortSplit {

    /** Sixteenths of the device. */
    static final int UNITS = 16;
    /**
     * The share of a gap a process's commands are reckoned to fill at most. 0.9 until the first
     * GPU run (session 36): 23.5-29 ms estimates of the same GEMM and an 81-88 ms gap made two fit
     * at ten sixteenths and not, by a few hundred microseconds, and the cut went back and forth;
     * a width too narrow costs a command a beat, one too wide little (the others are launch-bound).
     */
    static final double SAFETY = 0.85;
    /** Commands this short (at the whole device) mark a process whose rate hardly needs width. */
    static final long SHORT_COMMAND_NANOS = 1_000_000L;
    /** How a short-command process's rate falls below half the device: {@code (2w)^SHORT_EXPONENT}. */
    static final double SHORT_EXPONENT = 0.75;
    /** Green contexts come in multiples of this many multiprocessors (Hopper). */
    static final int STEP = 8;
    /** A split in force is kept unless another is better by more than this (in the sum of logarithms): estimates move. */
    static final double HYSTERESIS = 0.05;
    /**
     * How much more a cut must be reckoned to get done than turns to be taken over them (the
     * product of the processes' commands a gap). A cut's widths are ones its kernels never ran at,
     * and a narrowed kernel fits its gap only when launched at its start: two GEMM processes
     * (23.4 and 25.9 ms estimates, a 91 ms gap), reckoned at 2 and 1 a gap cut 10/6 against 1.5
     * and 1 by turns, were cut, starved (nothing completed for half a second, left narrowed five
     * seconds) and got 0.45-0.47 of native sharing, the batch beside them 4.7 x its standalone P99;
     * taking turns in the other runs of the build, 0.63-1.00 (H200, session 42).
     */
    static final double CUT_OVER_TURNS = 1.5;
    /** The most processes weighed (more split in equal parts). */
    static final int MAX_PROCESSES = 4;

    /**
     * One process: its longest command at the whole device (ns, 0 when not known) and the gap a
     * wide tenant above it leaves for its commands (ns, 0 when none).
     */
    record Process(long commandNanos, long gapNanos) {
        /**
         * Counted by the commands that fit its gap: long commands only. Short ones fill a gap at
         * any width, and what they get done is the short-command curve's (on the H200 Triton in a
         * gap was counted in proportion to its width, and the cut stayed equal beside GEMMs).
         */
        boolean gapped() {
            return commandNanos > SHORT_COMMAND_NANOS && gapNanos > 0;
        }
    }

    private BestEffortSplit() {
    }

    /**
     * @param processes in the order their parts are laid out (pid order)
     * @param current the split in force (widths in sixteenths, in the same order), or null
     * @return the widths in sixteenths, one per process, adding up to {@link #UNITS}; null: no
     *     process's commands fit a gap at any width, or too many processes (equal parts then)
     */
    static int[] split(List<Process> processes, int[] current) {
        return split(processes, current, 0);
    }

    /**
     * @param deviceSms the device's multiprocessors (0: not known, widths reckoned as sixteenths of it)
     * @see #split(List, int[])
     */
    static int[] split(List<Process> processes, int[] current, int deviceSms) {
        return split(processes, current, deviceSms, false);
    }

    /**
     * How much better (in the sum of logarithms) a cut by width alone must be than the one in force
     * to replace it. Without a gap a process's worth depends only on whether its commands are
     * short or long, not on their estimates, so the cut moves only when a process changes class;
     * {@link #HYSTERESIS} would keep the first cut for good (the short-command curve against
     * linear is worth 0.018: nine sixteenths and seven against halves).
     */
    static final double WIDTH_HYSTERESIS = 0.01;

    /**
     * @param byWidth where no process has a gap, weigh the parts all the same, each process by
     *     what its width lets it do ({@link #speed}), once every command is known (until then,
     *     null: equal parts); off, no gap means null
     * @see #split(List, int[], int)
     */
    static int[] split(List<Process> processes, int[] current, int deviceSms, boolean byWidth) {
        int n = processes.size();
        if (n < 2 || n > MAX_PROCESSES) {
            return null;
        }
        boolean[] gapped = new boolean[n];
        boolean any = false;
        boolean known = true;
        for (int i = 0; i < n; i++) {
            Process p = processes.get(i);
            // one that fits no command in its gap even on all of it counts in proportion to its width
            gapped[i] = p.gapped() && fits(p, UNITS - (n - 1), deviceSms) > 0;
            any |= gapped[i];
            known &= p.commandNanos() > 0;
        }
        if (!any && !(byWidth && known)) {
            return null;
        }
        double hysteresis = any ? HYSTERESIS : WIDTH_HYSTERESIS;
        int[] x = new int[n];
        int[] best = new int[n];
        double[] bestScore = {Double.NEGATIVE_INFINITY};
        search(processes, gapped, deviceSms, x, 0, UNITS, best, bestScore);
        if (bestScore[0] == Double.NEGATIVE_INFINITY) {
            return null;
        }
        if (current != null && current.length == n) {
            double kept = score(processes, gapped, deviceSms, current);
            if (kept > Double.NEGATIVE_INFINITY && kept >= bestScore[0] - hysteresis) {
                return current.clone();
            }
        }
        return best;
    }

    /**
     * Every cut as good as the best (the same sum of logarithms, to rounding), in the order the
     * search meets them: two processes alike beside one gap (two GEMM processes: two of one's
     * kernels fit at ten sixteenths, one of the other's at six) have two, one for each, and the
     * node takes them in turn ({@link XqCore}); empty where {@link #split} has none.
     */
    static List<int[]> bestCuts(List<Process> processes, int deviceSms) {
        int n = processes.size();
        if (n < 2 || n > MAX_PROCESSES) {
            return List.of();
        }
        boolean[] gapped = new boolean[n];
        boolean any = false;
        for (int i = 0; i < n; i++) {
            Process p = processes.get(i);
            gapped[i] = p.gapped() && fits(p, UNITS - (n - 1), deviceSms) > 0;
            any |= gapped[i];
        }
        if (!any) {
            return List.of();
        }
        List<int[]> all = new java.util.ArrayList<>();
        collect(processes, gapped, deviceSms, new int[n], 0, UNITS, all);
        double best = Double.NEGATIVE_INFINITY;
        for (int[] x : all) {
            best = Math.max(best, score(processes, gapped, deviceSms, x));
        }
        if (best == Double.NEGATIVE_INFINITY) {
            return List.of();
        }
        List<int[]> out = new java.util.ArrayList<>();
        for (int[] x : all) {
            if (score(processes, gapped, deviceSms, x) >= best - 1e-9) {
                out.add(x);
            }
        }
        return out;
    }

    /** The most processes that take turns on the whole of what they may use ({@link #alternate}). */
    static final int MAX_ALTERNATING = 3;

    /**
     * Whether two or three processes none of which has a gap (no wide tenant on a beat above them:
     * one whose requests come at random, or none at all) take turns on all of what they may use
     * instead of splitting it, where the node is told to ({@code bestEffortTurnsWithoutGap}, off
     * by default). A split of multiprocessors does not split the memory bandwidth: beside a CUDA
     * graph at random, a bf16 trainer on its part next to Triton's memory-bound row softmax ran at
     * 0.72-0.84 of native sharing in nine runs while Triton ran at 1.07-1.37 (H200, sessions
     * 81-89); in turns, as natively, each has all of it while it runs. Every process's command
     * must be known (a first estimate does not start turns).
     */
    static boolean ungappedTurns(List<Process> processes) {
        int n = processes.size();
        if (n < 2 || n > MAX_ALTERNATING) {
            return false;
        }
        for (Process p : processes) {
            if (p.gapNanos() > 0 || p.commandNanos() <= 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the processes get more done taking turns, one a gap, on the whole of what they may
     * use than cut in parts: two or three processes, each with long commands that fit a gap at the
     * whole width or with short ones (counted by their rate on the whole device for their share of
     * the time), one at least with long ones. Each is counted by {@code fits(p, all) / n} a gap taking turns, and by its
     * average over the cuts as good as each other (which the node takes in turn) cut; ties go to
     * the turns, whose estimate is the one measured (at the whole width), where a cut's is scaled
     * to a width no kernel of the process ran at. Two GEMM processes of 21.4 ms beside an 88 ms
     * gap on an H200: three whole-width kernels fit a gap, one and a half each; cut 10/6 and 11/5
     * in turn, reckoned at three a gap too, they got 0.53-0.62 of native sharing, about two
     * kernels a gap; taking turns, 0.94-0.97. A cut must do {@link #CUT_OVER_TURNS} times as
     * much to be taken.
     *
     * @param inForce whether the turns are in force: they stay unless a cut is better by more
     *     than {@link #HYSTERESIS} on top
     */
    static boolean alternate(List<Process> processes, int deviceSms, boolean inForce) {
        int n = processes.size();
        if (n < 2 || n > MAX_ALTERNATING) {
            return false;
        }
        double turns = 0;
        boolean anyGapped = false;
        for (Process p : processes) {
            if (!p.gapped() && p.commandNanos() > 0 && p.gapNanos() > 0) {
                // short commands: on its turn it has the whole device for a share of the time
                // (what the cut gives it is reckoned the same way, by its width)
                turns += Math.log(speed(p, UNITS, deviceSms) / n);
                continue;
            }
            anyGapped = true;
            // on its turn a process has all of the device (not the 128 of 132 multiprocessors
            // sixteen sixteenths come to: a 30.7 ms command fitted one 74 ms gap so, two whole)
            long whole = p.gapped() ? (long) Math.floor(SAFETY * p.gapNanos() / (double) p.commandNanos()) : 0;
            if (whole <= 0 && p.gapped() && p.commandNanos() < p.gapNanos()) {
                // one whole command fits the gap as the guard reckons it (the gap less the node's
                // reaction), though not within the safety: the only way it runs between the
                // requests at all (a 21.5 ms GEMM beside a graph's 21.8 ms gap and Triton: cut,
                // the GEMM had half the device, 44.5 ms a kernel, and ran narrowed beside the
                // graph's requests: 0.44 of native sharing, the graph at 1.45 x its standalone P99,
                // H200)
                whole = 1;
            }
            if (whole <= 0) {
                return false;
            }
            turns += Math.log(whole / (double) n);
        }
        if (!anyGapped) {
            return false;
        }
        List<int[]> cuts = bestCuts(processes, deviceSms);
        if (cuts.isEmpty()) {
            return true;
        }
        double cut = 0;
        for (int i = 0; i < n; i++) {
            double sum = 0;
            for (int[] x : cuts) {
                sum += fits(processes.get(i), x[i], deviceSms);
            }
            if (sum <= 0) {
                return true;
            }
            cut += Math.log(sum / cuts.size());
        }
        double favour = Math.log(CUT_OVER_TURNS);
        return inForce ? turns >= cut - favour - HYSTERESIS : turns >= cut - favour - 1e-9;
    }

    private static void collect(List<Process> ps, boolean[] gapped, int sms, int[] x, int i, int left, List<int[]> out) {
        int n = x.length;
        if (i == n - 1) {
            x[i] = left;
            out.add(x.clone());
            return;
        }
        for (int u = 1; u <= left - (n - 1 - i); u++) {
            x[i] = u;
            collect(ps, gapped, sms, x, i + 1, left - u, out);
        }
    }

    /** Whole commands of {@code p} that fit its gap at {@code units} sixteenths (of a device of unknown size). */
    static long fits(Process p, int units) {
        return fits(p, units, 0);
    }

    /** Whole commands of {@code p} that fit its gap at {@code units} sixteenths of a device of {@code deviceSms}. */
    static long fits(Process p, int units, int deviceSms) {
        double atWidth = p.commandNanos() / fraction(units, deviceSms);
        return (long) Math.floor(SAFETY * p.gapNanos() / atWidth);
    }

    /**
     * The share of the device {@code units} sixteenths come to: as the interposer makes a part
     * (cuda_narrow.c), the region split in multiples of {@value #STEP} multiprocessors, rounded down.
     */
    static double fraction(int units, int deviceSms) {
        if (deviceSms < STEP) {
            return units / (double) UNITS;
        }
        int region = deviceSms / STEP * STEP;
        int n = Math.max(STEP, region * units / UNITS / STEP * STEP);
        return Math.min(1.0, n / (double) deviceSms);
    }

    /** What a process with no gap gets done at {@code units} sixteenths, against all of the device. */
    static double speed(Process p, int units, int deviceSms) {
        double f = fraction(units, deviceSms);
        if (p.commandNanos() > 0 && p.commandNanos() <= SHORT_COMMAND_NANOS) {
            return Math.pow(Math.min(1.0, 2 * f), SHORT_EXPONENT);
        }
        return f;
    }

    private static void search(List<Process> ps, boolean[] gapped, int sms, int[] x, int i, int left, int[] best,
                               double[] bestScore) {
        int n = x.length;
        if (i == n - 1) {
            x[i] = left;
            double s = score(ps, gapped, sms, x);
            // ties: the one nearest equal parts
            if (s > bestScore[0] + 1e-12 || (Math.abs(s - bestScore[0]) <= 1e-12 && spread(x) < spread(best))) {
                bestScore[0] = s;
                System.arraycopy(x, 0, best, 0, n);
            }
            return;
        }
        for (int u = 1; u <= left - (n - 1 - i); u++) {
            x[i] = u;
            search(ps, gapped, sms, x, i + 1, left - u, best, bestScore);
        }
    }

    private static double score(List<Process> ps, boolean[] gapped, int sms, int[] x) {
        double s = 0;
        for (int i = 0; i < x.length; i++) {
            if (x[i] < 1) {
                return Double.NEGATIVE_INFINITY;
            }
            double v = gapped[i] ? fits(ps.get(i), x[i], sms) : speed(ps.get(i), x[i], sms);
            if (v <= 0) {
                return Double.NEGATIVE_INFINITY;
            }
            s += Math.log(v);
        }
        return s;
    }

    /**
     * Parts in proportion to weights an operator gave (the scheduler's {@code bestEffortShares}),
     * in sixteenths: each at least one, the rest by largest remainder, ties to the earlier process.
     *
     * @param weights one per process, each 1 or more; 2 to {@link #MAX_PROCESSES} of them
     * @return the widths in sixteenths, adding up to {@link #UNITS}
     * @throws IllegalArgumentException for fewer than 2 or more than {@link #MAX_PROCESSES}
     *     weights, or a weight below 1
     */
    static int[] proportional(int[] weights) {
        int n = weights.length;
        if (n < 2 || n > MAX_PROCESSES) {
            throw new IllegalArgumentException(n + " weights; allowed: 2 to " + MAX_PROCESSES);
        }
        long total = 0;
        for (int w : weights) {
            if (w < 1) {
                throw new IllegalArgumentException("weight " + w + "; allowed: 1 or more");
            }
            total += w;
        }
        int[] out = new int[n];
        double[] rest = new double[n];
        int left = UNITS - n; // one each first
        int given = 0;
        for (int i = 0; i < n; i++) {
            double exact = (double) left * weights[i] / total;
            out[i] = 1 + (int) Math.floor(exact);
            rest[i] = exact - Math.floor(exact);
            given += out[i];
        }
        while (given < UNITS) {
            int best = 0;
            for (int i = 1; i < n; i++) {
                if (rest[i] > rest[best]) {
                    best = i;
                }
            }
            out[best]++;
            rest[best] = -1;
            given++;
        }
        return out;
    }

    private static int spread(int[] x) {
        int lo = Integer.MAX_VALUE;
        int hi = Integer.MIN_VALUE;
        for (int v : x) {
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        return x.length == 0 || lo == Integer.MAX_VALUE ? Integer.MAX_VALUE : hi - lo;
    }
}
