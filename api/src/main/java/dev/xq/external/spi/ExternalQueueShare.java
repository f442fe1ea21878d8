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
 * <p>Since 1.3, a process on the whole device may instead be narrowed ({@link #narrows()}):
 * space then changes launch by launch, not only when the process starts.
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

    /**
     * Whether the process can be narrowed instead of held: it runs on the whole device, and while
     * {@link #narrow(int)} says so its launches go to a part of the device (on NVIDIA, a green
     * context), leaving the rest to the queues the policy prefers. For such a queue the scheduler
     * narrows where it would hold behind a preferred queue; holds for any other reason (an
     * operator's, the application's, a budget's) stay holds.
     *
     * @return whether {@link #narrow(int)} is honoured
     * @since 1.3
     */
    default boolean narrows() {
        return false;
    }

    /**
     * Narrows the queue's launches from now on: 0, the whole device; n &gt; 0, the device less
     * n multiprocessors, which the preferred queues keep (rounded by the owner to what its
     * hardware partitions allow). Launches already made keep where they run.
     *
     * @param reserveSms the multiprocessors to leave to others, or 0
     * @since 1.3
     */
    default void narrow(int reserveSms) {
    }

    /**
     * Splits what the queue may use among the best-effort processes that have work on its device
     * at once: the part left by {@link #narrow(int)} (or the whole device) is cut in {@code count}
     * equal parts, of which this process's launches use the {@code index}-th, so that two
     * best-effort processes do not fight over the same multiprocessors (under MPS without limits
     * long kernels of one starve the other). {@code count} 1: all of it.
     *
     * @param index this process's part, in [0, count)
     * @param count how many processes share the part
     * @since 1.3
     */
    default void part(int index, int count) {
    }

    /**
     * As {@link #part(int, int)}, a part of its own size: of the part left by {@link #narrow(int)}
     * (or the whole device) cut in sixteenths, this process's launches use {@code width}
     * sixteenths from the {@code offset}-th on (each rounded down to the device's partition step,
     * so that processes given adjacent sixteenths do not overlap). {@code part(0, 1)} gives all of
     * it back.
     *
     * @param offset in [0, 15]
     * @param width in [1, 16 - offset]
     * @since 1.4
     */
    default void share(int offset, int width) {
    }

    /**
     * @return the multiprocessors this queue's recent commands could fill at once (its widest
     *     launches of the last seconds: threads over threads per multiprocessor; a CUDA graph, the
     *     whole device), 0 when not known
     * @since 1.3
     */
    default int widthSms() {
        return 0;
    }

    /**
     * @return the multiprocessors this queue's current stretch of work could fill at once (its
     *     widest launches of its last milliseconds of launching; a stretch begun after a quiet
     *     spell counts as {@link #widthSms()} until it has launched a few milliseconds), 0 when not
     *     known; by default {@link #widthSms()}. What the scheduler holds others behind: a chat
     *     server's request is wide for its prefill, then a few dozen milliseconds of small launches
     * @since 1.7
     */
    default int stretchWidthSms() {
        return widthSms();
    }

    /** @return the multiprocessors of the queue's device, 0 when not known @since 1.3 */
    default int deviceSms() {
        return 0;
    }

    /**
     * @return whether the process runs in a device context of its own (on NVIDIA: not a client
     *     of the node's MPS server while one runs), which the GPU time-slices against the
     *     server's: narrowing the server's clients leaves it nothing, so they are held in time
     *     behind it or let run ({@link dev.xq.policy.spi.QueueSpace#ownContext()})
     * @since 1.4
     */
    default boolean ownContext() {
        return false;
    }

    /**
     * A lag at least this long counts as slow in {@link #slowLags()}: an eager decoder's kernels
     * ended within 0.06-0.16 ms of its launches at P99 beside training and GEMMs on the rest of the
     * device, 2.8-10 ms behind them beside a memory-bound loop.
     *
     * @since 1.5
     */
    long SLOW_LAG_MICROS = 1_000;

    /**
     * How many busy periods of the queue the process has timed its device lag over: the longest
     * that a batch of its commands ended after the last of them was launched. A lag near zero says
     * the device keeps up with its launches; a long one, that its kernels run slower than it
     * launches them (another process's memory traffic: a split of multiprocessors does not split
     * memory bandwidth).
     *
     * @return the count so far, 0 when the process tells none
     * @since 1.5
     */
    default long lags() {
        return 0;
    }

    /**
     * @return how many of {@link #lags()} were {@link #SLOW_LAG_MICROS} or longer
     * @since 1.5
     */
    default long slowLags() {
        return 0;
    }

    /**
     * How many times the queue's process has waited on the device with work of its in flight (a
     * synchronize of a stream, of its context or of an event), counted by the process and told
     * now and then; every queue of the process gives the same count. Under the GPU's own time
     * slicing a process that waits often gives the device up at each wait, so a count against
     * the device time between two readings says how much work it does between waits.
     *
     * @return the count so far, -1 when the process tells none
     * @since 1.6
     */
    default long hostWaits() {
        return -1;
    }
}
