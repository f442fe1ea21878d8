package dev.xq.hal.kfd;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Spaces suspends on one device at least {@code minIntervalNanos} apart by waiting: each one
 * unmaps every user queue of the GPU, and a burst that makes a preemption time out resets it.
 */
final class RateLimiter {

    private final long minIntervalNanos;
    private final LongSupplier clock;
    private final LongConsumer sleeper;
    private long last;
    private boolean any;

    RateLimiter(long minIntervalNanos) {
        this(minIntervalNanos, System::nanoTime, RateLimiter::park);
    }

    RateLimiter(long minIntervalNanos, LongSupplier clock, LongConsumer sleeper) {
        this.minIntervalNanos = minIntervalNanos;
        this.clock = clock;
        this.sleeper = sleeper;
    }

    private static void park(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /** Waits until the next suspend is allowed and records it. @return nanoseconds waited */
    synchronized long acquire() {
        long waited = 0;
        if (any) {
            long wait = last + minIntervalNanos - clock.getAsLong();
            if (wait > 0) {
                sleeper.accept(wait);
                waited = wait;
            }
        }
        last = clock.getAsLong();
        any = true;
        return waited;
    }
}
