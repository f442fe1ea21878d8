package dev.xq.external.spi;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Implemented, beside {@link ExternalQueueControl}, by an owner that can keep its queue clear of
 * a foreseen arrival: the node foresaw that a queue preferred over this one arrives at about
 * {@code horizonNanos} ({@link System#nanoTime()}), and asks that what this queue launches from
 * now on be done by then; after {@code untilNanos} the request lapses (the other queue is late).
 * The owner admits a command only if its own estimate says it ends in time, and otherwise holds it
 * until the other queue is there (then the node holds this queue anyway) or the request lapses.
 *
 * @since 1.1
 */
@ConsumerType
public interface ExternalQueueGuard {
    /**
     * Sets or lifts (both 0) the guard. Called by the deciding thread: must not block.
     */
    void guard(long horizonNanos, long untilNanos);
}
