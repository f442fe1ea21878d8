package dev.xq.external.spi;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Implemented, beside {@link ExternalQueueControl}, by an owner whose process shares the device
 * in space with the others: its kernels run at the same time as theirs (on NVIDIA, as a client
 * of an MPS server the node runs), on at most {@link #smSharePercent()} of the device's
 * multiprocessors, a share fixed when the process created its context.
 *
 * <p>Space and time are then decided together: a process given the whole device is never held
 * nor throttled by the scheduler ({@link #heldInTime()} false), because its company already
 * runs beside it on capped shares, and holding it would only leave idle the multiprocessors it
 * could use; a process on a capped share may still be held while a queue the policy prefers has
 * work, if the owner says so. An operator's or the application's own suspend applies always.
 *
 * @since 1.2
 */
@ConsumerType
public interface ExternalQueueShare {

    /** @return the share of the device's multiprocessors the process may use at once, in [1, 100] */
    int smSharePercent();

    /** @return whether the scheduler's holds and in-flight limits apply to this queue */
    boolean heldInTime();

    /**
     * A queue on a capped share that is held in time is held only behind a preferred queue whose
     * commands fill the device: one whose commands take at least this long on average (or whose
     * length is not known yet, or a queue of the node's own). Behind a preferred queue of short
     * commands, a launch-bound tenant that leaves most of the device idle, the capped share
     * already leaves it room, and a hold would only idle the device (measured on an H200: a
     * best-effort training process at 0.35 of its native-sharing speed held behind an eager
     * decoder, 0.96 beside it on its share, the decoder's P99 1.02 and 1.05 x standalone).
     *
     * @return the shortest average command, in microseconds, of a preferred queue that holds this
     *     one; 0: every preferred queue with work holds it
     */
    long holdBehindMicros();
}
