package dev.xq.runtime.engine;

import dev.xq.api.QueueConfig;

/**
 * Progressive launching (level 1): whether one more command may go to the hardware queue, from
 * the work in flight and the queue's limits. The interposer applies the same threshold and
 * batch inside processes, and a sharper window there (per-kind estimates, the work still to
 * run rather than the work launched: docs/processes.md, "The launch gate"); bringing that rule
 * here needs the start time of the running command from the queue, and is still to do.
 *
 * <ol>
 * <li>at {@code threshold} commands in flight, stop, and stay stopped until in flight has come
 *     down to {@code threshold - batch} (launch in batches, as XSched does);</li>
 * <li>the time budget: keep the estimated device time of the work in flight, the next command
 *     included, within {@code window}. Until a first completion gives an estimate, a command of
 *     unknown size could be long, so only one goes; after that two may always be in flight: with
 *     one, the device idles for every host round trip (completion seen, next launched).</li>
 * </ol>
 *
 * <p>Not thread-safe: the owning queue calls it under its state lock.
 */
final class LaunchGate {

    private boolean throttled;
    private long estimateNanos;
    private boolean estimated;

    /** @return whether the next command may be launched with {@code inFlight} already on the hardware */
    boolean mayLaunch(int inFlight, QueueConfig config) {
        if (inFlight >= config.threshold()) {
            throttled = true;
            return false;
        }
        if (throttled) {
            if (inFlight > config.threshold() - config.batch()) {
                return false;
            }
            throttled = false;
        }
        long window = config.windowMicros() * 1000L;
        if (window == 0 || inFlight == 0) {
            return true;
        }
        if (!estimated) {
            return false;
        }
        return inFlight < 2 || (inFlight + 1) * estimateNanos <= window;
    }

    /** A command ran for {@code nanos}: moving average with weight 1/4, which follows a change of command size within a few commands. */
    void completed(long nanos) {
        estimateNanos = estimated ? estimateNanos + (nanos - estimateNanos) / 4 : nanos;
        estimated = true;
    }

    /** New limits: a batch in progress under the old ones no longer holds. */
    void reconfigured() {
        throttled = false;
    }

    long estimateNanos() {
        return estimateNanos;
    }
}
