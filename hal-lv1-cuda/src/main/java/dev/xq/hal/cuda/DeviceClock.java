package dev.xq.hal.cuda;

import dev.xq.hal.spi.HalException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Puts CUDA event timestamps on the {@link System#nanoTime()} clock.
 *
 * <p>CUDA tells only the time between two events (cuEventElapsedTime, ~0.5 us resolution), so
 * the clock keeps an <em>anchor</em>: an event recorded on an otherwise idle stream whose host
 * time is known to within a few microseconds. The host time of any later (or earlier) event is
 * the anchor's host time plus the elapsed time between them. To know the anchor's host time,
 * {@link #calibrate()} records an event and spins on cuEventQuery until it has happened: the
 * device stamped it between the host time just before the record call and the first query
 * that saw it, and the middle of that interval is taken. The narrowest of five tries wins.
 *
 * <p>The anchor is renewed every second: cuEventElapsedTime returns float milliseconds, whose
 * resolution stays under 0.2 us only within about 2 s of the anchor, and the host and GPU
 * oscillators drift apart by some parts per million.
 *
 * <p>Used by one thread at a time: the device's opener, then its completion thread.
 */
final class DeviceClock implements AutoCloseable {

    static final long UNKNOWN = Long.MIN_VALUE;
    private static final long RENEW_NANOS = 1_000_000_000L;
    /** A calibration wider than this (a busy device, a descheduled thread) is not used if an anchor exists. */
    private static final long WIDEST_NANOS = 100_000L;
    private static final long GIVE_UP_NANOS = 10_000_000L;
    private static final int TRIES = 5;

    private final CudaApi api;
    private final MemorySegment stream;
    private final MemorySegment[] slots = new MemorySegment[3];
    private final Arena arena = Arena.ofShared();
    private final MemorySegment millis = arena.allocate(CudaApi.MILLIS);
    private int anchorSlot = -1;
    private long anchorNanos;
    private long widthNanos;
    private long calibratedAt;
    private int calibrations;

    /** @param stream an idle stream of the device's context, used for nothing else */
    DeviceClock(CudaApi api, MemorySegment stream) {
        this.api = api;
        this.stream = stream;
        for (int i = 0; i < slots.length; i++) {
            slots[i] = api.eventCreate(CudaApi.CU_EVENT_DEFAULT);
        }
    }

    /**
     * Records a new anchor. Keeps the old one if every try was wider than 100 us.
     *
     * @return whether a new anchor was taken
     * @throws HalException if recording or querying the event fails (the context is broken)
     */
    boolean calibrate() {
        int best = -1;
        long bestMid = 0;
        long bestWidth = Long.MAX_VALUE;
        for (int t = 0; t < TRIES; t++) {
            int trial = freeSlot(best);
            MemorySegment ev = slots[trial];
            long t0 = System.nanoTime();
            int rc = api.eventRecord(ev, stream);
            if (rc != CudaApi.CUDA_SUCCESS) {
                throw api.failure(rc, "cuEventRecord", "clock calibration");
            }
            long t1;
            while ((rc = api.eventQuery(ev)) == CudaApi.CUDA_ERROR_NOT_READY) {
                if (System.nanoTime() - t0 > GIVE_UP_NANOS) {
                    break;
                }
                Thread.onSpinWait();
            }
            t1 = System.nanoTime();
            if (rc == CudaApi.CUDA_ERROR_NOT_READY) {
                continue;
            }
            if (rc != CudaApi.CUDA_SUCCESS) {
                throw api.failure(rc, "cuEventQuery", "clock calibration");
            }
            if (t1 - t0 < bestWidth) {
                best = trial;
                bestWidth = t1 - t0;
                bestMid = t0 + (t1 - t0) / 2;
            }
        }
        if (best < 0 || (bestWidth > WIDEST_NANOS && anchorSlot >= 0)) {
            calibratedAt = System.nanoTime();
            return false;
        }
        anchorSlot = best;
        anchorNanos = bestMid;
        widthNanos = bestWidth;
        calibratedAt = System.nanoTime();
        calibrations++;
        return true;
    }

    /** A slot that is neither the anchor nor {@code keep}. */
    private int freeSlot(int keep) {
        for (int i = 0; i < slots.length; i++) {
            if (i != anchorSlot && i != keep) {
                return i;
            }
        }
        throw new IllegalStateException("no free calibration slot");
    }

    /** Renews the anchor if it is older than a second. */
    void renewIfOld(long now) {
        if (now - calibratedAt > RENEW_NANOS) {
            calibrate();
        }
    }

    /** @return the host time of a completed event, or {@link #UNKNOWN} if there is no anchor or CUDA cannot tell */
    long toNanos(MemorySegment event) {
        if (anchorSlot < 0) {
            return UNKNOWN;
        }
        long e = elapsedNanos(slots[anchorSlot], event);
        return e == UNKNOWN ? UNKNOWN : anchorNanos + e;
    }

    /** @return nanoseconds from {@code a} to {@code b} (both completed), or {@link #UNKNOWN} if CUDA cannot tell */
    long elapsedNanos(MemorySegment a, MemorySegment b) {
        int rc = api.elapsed(millis, a, b);
        if (rc != CudaApi.CUDA_SUCCESS) {
            return UNKNOWN;
        }
        return Math.round(millis.get(CudaApi.MILLIS, 0) * 1_000_000.0);
    }

    /** @return the width of the interval the current anchor was placed in: twice its uncertainty */
    long widthNanos() {
        return widthNanos;
    }

    int calibrations() {
        return calibrations;
    }

    @Override
    public void close() {
        for (MemorySegment s : slots) {
            api.eventDestroy(s);
        }
        arena.close();
    }
}
