package dev.xq.runtime.engine;

import java.util.List;

/**
 * A split of what best-effort processes may use on one device weighted by what fits: in sixteenths,
 * the one that maximises the sum of the logarithms of what each process gets done (proportional
 * fairness). A process whose commands run between the requests of a wide tenant on a beat (the
 * wide beats) gets done the whole commands that fit a gap at its width ({@value #SAFETY} of the gap
 * for the reckoning's errors), the others an amount in proportion to their width. Equal halves
 * leave a long-command process idle for the part of each gap its commands do not fill (21 ms GEMMs
 * on half of an H200 take about 43 ms: one fits a gap of 84 ms, two do at 80 of 128
 * multiprocessors), while a short-command one uses its half throughout.
 *
 * <p>Pure: the node's core ({@link XqCore#decided}) gives it the processes' commands and gaps.
 */
final class BestEffortSplit {

    /** Sixteenths of the device. */
    static final int UNITS = 16;
    /** The share of a gap a process's commands are reckoned to fill at most. */
    static final double SAFETY = 0.9;
    /** A split in force is kept unless another is better by more than this (in the sum of logarithms): estimates move. */
    static final double HYSTERESIS = 0.05;
    /** The most processes weighed (more split in equal parts). */
    static final int MAX_PROCESSES = 4;

    /**
     * One process: its longest command at the whole device (ns, 0 when not known) and the gap a
     * wide tenant above it leaves for its commands (ns, 0 when none).
     */
    record Process(long commandNanos, long gapNanos) {
        boolean gapped() {
            return commandNanos > 0 && gapNanos > 0;
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
        int n = processes.size();
        if (n < 2 || n > MAX_PROCESSES) {
            return null;
        }
        boolean[] gapped = new boolean[n];
        boolean any = false;
        for (int i = 0; i < n; i++) {
            Process p = processes.get(i);
            // one that fits no command in its gap even on all of it counts in proportion to its width
            gapped[i] = p.gapped() && fits(p, UNITS - (n - 1)) > 0;
            any |= gapped[i];
        }
        if (!any) {
            return null;
        }
        int[] x = new int[n];
        int[] best = new int[n];
        double[] bestScore = {Double.NEGATIVE_INFINITY};
        search(processes, gapped, x, 0, UNITS, best, bestScore);
        if (bestScore[0] == Double.NEGATIVE_INFINITY) {
            return null;
        }
        if (current != null && current.length == n) {
            double kept = score(processes, gapped, current);
            if (kept > Double.NEGATIVE_INFINITY && kept >= bestScore[0] - HYSTERESIS) {
                return current.clone();
            }
        }
        return best;
    }

    /** Whole commands of {@code p} that fit its gap at {@code units} sixteenths. */
    static long fits(Process p, int units) {
        double atWidth = p.commandNanos() * (double) UNITS / units;
        return (long) Math.floor(SAFETY * p.gapNanos() / atWidth);
    }

    private static void search(List<Process> ps, boolean[] gapped, int[] x, int i, int left, int[] best, double[] bestScore) {
        int n = x.length;
        if (i == n - 1) {
            x[i] = left;
            double s = score(ps, gapped, x);
            // ties: the one nearest equal parts
            if (s > bestScore[0] + 1e-12 || (Math.abs(s - bestScore[0]) <= 1e-12 && spread(x) < spread(best))) {
                bestScore[0] = s;
                System.arraycopy(x, 0, best, 0, n);
            }
            return;
        }
        for (int u = 1; u <= left - (n - 1 - i); u++) {
            x[i] = u;
            search(ps, gapped, x, i + 1, left - u, best, bestScore);
        }
    }

    private static double score(List<Process> ps, boolean[] gapped, int[] x) {
        double s = 0;
        for (int i = 0; i < x.length; i++) {
            if (x[i] < 1) {
                return Double.NEGATIVE_INFINITY;
            }
            double v = gapped[i] ? fits(ps.get(i), x[i]) : x[i];
            if (v <= 0) {
                return Double.NEGATIVE_INFINITY;
            }
            s += Math.log(v);
        }
        return s;
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
