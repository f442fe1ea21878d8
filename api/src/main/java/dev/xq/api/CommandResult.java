package dev.xq.api;

/**
 * A completed command.
 * @param sequence the command's number within its queue, from 1
 * @param submitNanos when it was submitted ({@link System#nanoTime()})
 * @param startNanos when the device started it, as the driver measured it ({@link System#nanoTime()} clock)
 * @param endNanos when the device finished it
 */
public record CommandResult(long sequence, long submitNanos, long startNanos, long endNanos) {
    /** @return device time in nanoseconds */
    public long deviceNanos() {
        return endNanos - startNanos;
    }
}
