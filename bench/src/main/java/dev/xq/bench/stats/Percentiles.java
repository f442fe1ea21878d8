package dev.xq.bench.stats;

import java.util.Arrays;

/**
 * Order statistics of a sample, by linear interpolation between the closest ranks (the
 * definition most plotting tools use, so the table and the CDF plots agree).
 */
public final class Percentiles {

    private final double[] sorted;

    private Percentiles(double[] sorted) {
        this.sorted = sorted;
    }

    /** @return the statistics of a copy of {@code values}; NaN values are rejected */
    public static Percentiles of(double[] values) {
        double[] copy = values.clone();
        for (double v : copy) {
            if (Double.isNaN(v)) {
                throw new IllegalArgumentException("sample contains NaN; every value must be a number");
            }
        }
        Arrays.sort(copy);
        return new Percentiles(copy);
    }

    /** @return how many values the sample holds */
    public int count() {
        return sorted.length;
    }

    /**
     * @param p in [0, 100]
     * @return the p-th percentile, or NaN for an empty sample
     */
    public double at(double p) {
        if (!(p >= 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile " + p + " is out of range [0, 100]");
        }
        if (sorted.length == 0) {
            return Double.NaN;
        }
        double rank = p / 100.0 * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = (int) Math.ceil(rank);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
    }

    /** @return the arithmetic mean, or NaN for an empty sample */
    public double mean() {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (double v : sorted) {
            sum += v;
        }
        return sum / sorted.length;
    }

    /** @return the largest value, or NaN for an empty sample */
    public double max() {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1];
    }

    /** @return the sorted values (a copy), e.g. for a CDF plot */
    public double[] sortedValues() {
        return sorted.clone();
    }
}
