package dev.xq.bench.stats;

import java.util.random.RandomGenerator;

/**
 * Gaps between request arrivals drawn from a log-normal distribution with a given mean and
 * shape σ. With σ = 2 most gaps are short and a few are very long: bursts, as in serving
 * traces.
 */
public final class LogNormalArrivals {

    private final double mu;
    private final double sigma;
    private final RandomGenerator random;

    /**
     * @param meanNanos the mean gap, &gt; 0
     * @param sigma the shape (standard deviation of the gap's logarithm), in (0, 10]
     */
    public LogNormalArrivals(double meanNanos, double sigma, RandomGenerator random) {
        if (!(meanNanos > 0) || Double.isInfinite(meanNanos)) {
            throw new IllegalArgumentException("mean gap " + meanNanos + " ns must be a positive finite number");
        }
        if (!(sigma > 0 && sigma <= 10)) {
            throw new IllegalArgumentException("sigma " + sigma + " is out of range (0, 10]");
        }
        // E[X] = exp(mu + sigma^2 / 2), solved for mu so that the mean is the one asked for.
        this.mu = Math.log(meanNanos) - sigma * sigma / 2;
        this.sigma = sigma;
        this.random = random;
    }

    /** @return the median gap in nanoseconds, exp(mu) */
    public double medianNanos() {
        return Math.exp(mu);
    }

    /** @return the next gap in nanoseconds, at least 1 */
    public long nextGapNanos() {
        double g = Math.exp(mu + sigma * random.nextGaussian());
        return (long) Math.max(1, Math.min(g, Long.MAX_VALUE / 4.0));
    }
}
