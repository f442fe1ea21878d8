package dev.xq.bench.stats;

/**
 * A span of device time [{@code start}, {@code end}) in nanoseconds, tagged with the tenant
 * whose command it was.
 */
public record Interval(String tenant, long start, long end) {
    public Interval {
        if (end < start) {
            throw new IllegalArgumentException("interval end " + end + " is before its start " + start);
        }
    }

    /** @return the length in nanoseconds */
    public long length() {
        return end - start;
    }
}
