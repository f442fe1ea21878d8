package dev.xq.hal.cuda;

import dev.xq.hal.spi.HalException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Puts CUDA event timestamps on the {@link System#nanoTime()} clock.
 *
 * <p>CUDA tells only the time between two events (cuEventElapsedTime, ~0.5 us resolution). So
 * the clock keeps a <em>base</em> event and a set of calibration points: events recorded on an
 * otherwise idle stream whose host time is known to within a few microseconds. To place one,
 * {@link #calibrate} records an event and spins on cuEventQuery until it has happened: the
 * device stamped it between the host time just before the record call and the first query
 * that saw it; the middle of that interval is taken, and the narrowest of several tries wins.
 * A try made while the device or the host is busy is wide and its middle may be off by half
 * its width, so each point is weighted by one over its width squared (and one wider than
 * 100 us is dropped).
 *
 * <p>A weighted least-squares line through the points of the last 1.5 s maps device time to
 * host time.
 * Its slope matters: the host and GPU clocks drift apart by 10-20 parts per million (measured
 * on an H100), which with a single anchor renewed each second put the mapping up to ~15 us off.
 * The slope is used only once the points span 0.5 s (a shorter span would turn the points'
 * microseconds of scatter into a wild rate). The base moves to the newest point each second so
 * that cuEventElapsedTime's float milliseconds keep sub-0.2 us resolution.
 *
 * <p>Used by one thread at a time: the device's opener, then its completion thread. The
 * statistics getters may be read from any thread.
 */
final class DeviceClock implements AutoCloseable {

    static final long UNKNOWN = Long.MIN_VALUE;
    private static final long RENEW_NANOS = 100_000_000L;
    private static final long OVERDUE_NANOS = 1_000_000_000L;
    private static final long REBASE_NANOS = 1_000_000_000L;
    private static final long WINDOW_NANOS = 1_500_000_000L;
    private static final long MIN_SPAN_FOR_RATE_NANOS = 500_000_000L;
    private static final double MAX_RATE_PPM = 200;
    /** A try wider than this (a busy device, a descheduled thread) is never a point. */
    private static final long WIDEST_NANOS = 100_000L;
    private static final int TRIES = 5;
    private static final int MAX_POINTS = 32;
    /** After a renewal that found no narrow enough try, the next is not due before this. */
    private static final long RETRY_NANOS = 10_000_000L;
    private static final long GIVE_UP_NANOS = 10_000_000L;
    /** While the clock is coarse (no narrow point yet), a renewal is due this soon after each try. */
    private static final long COARSE_RETRY_NANOS = 1_000_000L;

    private final CudaApi api;
    private final MemorySegment stream;
    private final MemorySegment[] slots = new MemorySegment[3];
    private final Arena arena = Arena.ofShared();
    private final MemorySegment millis = arena.allocate(CudaApi.MILLIS);
    private int baseSlot = -1;

    // calibration points: device time since the base event (ns), host time, when taken
    private final double[] px = new double[MAX_POINTS];
    private final long[] py = new long[MAX_POINTS];
    private final double[] pw = new double[MAX_POINTS];
    private int points;
    // the fitted line: host = hostRef + offset + rate * x
    private long hostRef;
    private double offset;
    private double rate = 1.0;

    private long calibratedAt;
    private long retryAt;
    /**
     * No point narrower than {@link #WIDEST_NANOS} yet: there is no line, or it rests on a wide
     * first point and its times may be off by half that width.
     */
    private volatile boolean coarse = true;
    private volatile long widthNanos;
    private volatile int calibrations;
    private volatile int rejected;
    private volatile long maxJumpNanos;
    private volatile long sumAbsJumpNanos;
    private volatile int jumps;
    private volatile double ratePpm;

    /** @param stream an idle stream of the device's context, used for nothing else */
    DeviceClock(CudaApi api, MemorySegment stream) {
        this.api = api;
        this.stream = stream;
        for (int i = 0; i < slots.length; i++) {
            slots[i] = api.eventCreate(CudaApi.CU_EVENT_DEFAULT);
        }
    }

    /** Calibrates with five tries. */
    boolean calibrate() {
        return calibrate(TRIES);
    }

    /**
     * Places the clock when a device opens: one calibration, then up to {@code moreRounds} more
     * while it is still {@link #coarse} (a busy host at open can make every try of the first point
     * wide, and its times would be off by up to half that width until the next renewal).
     */
    void place(int moreRounds) {
        calibrate();
        for (int i = 0; i < moreRounds && coarse; i++) {
            calibrate();
        }
    }

    /**
     * Places a calibration point from the narrowest of {@code tries} tries (each spins a few
     * microseconds), unless none was narrow enough.
     *
     * @return whether a point was added
     * @throws HalException if recording or querying the event fails (the context is broken)
     */
    boolean calibrate(int tries) {
        int best = -1;
        long bestMid = 0;
        long bestWidth = Long.MAX_VALUE;
        for (int t = 0; t < tries; t++) {
            int trial = freeSlot(best);
            MemorySegment ev = slots[trial];
            long t0 = System.nanoTime();
            int rc = api.eventRecord(ev, stream);
            if (rc != CudaApi.CUDA_SUCCESS) {
                throw api.failure(rc, "cuEventRecord", "clock calibration");
            }
            while ((rc = api.eventQuery(ev)) == CudaApi.CUDA_ERROR_NOT_READY) {
                if (System.nanoTime() - t0 > GIVE_UP_NANOS) {
                    break;
                }
                Thread.onSpinWait();
            }
            long t1 = System.nanoTime();
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
        long now = System.nanoTime();
        if (best < 0 || (baseSlot >= 0 && bestWidth > WIDEST_NANOS)) {
            rejected++;
            retryAt = now + (coarse ? COARSE_RETRY_NANOS : RETRY_NANOS);
            if (now - calibratedAt > OVERDUE_NANOS) {
                calibratedAt = now;
            }
            return false;
        }
        // 1 us floor: below it the width is the host clock's granularity, not the point's quality
        double weight = 1.0 / Math.pow(Math.max(bestWidth, 1_000L), 2);
        if (baseSlot < 0) {
            // the first point is the base even when wide (there is nothing else), but then the clock
            // is coarse and renewals are due every millisecond until a narrow point arrives
            baseSlot = best;
            hostRef = bestMid;
            addPoint(0, bestMid, weight);
            coarse = bestWidth > WIDEST_NANOS;
            retryAt = coarse ? now + COARSE_RETRY_NANOS : now;
        } else {
            long x = elapsedNanos(slots[baseSlot], slots[best]);
            if (x == UNKNOWN) {
                rejected++;
                return false;
            }
            long predicted = map(x);
            long jump = bestMid - predicted;
            maxJumpNanos = Math.max(maxJumpNanos, Math.abs(jump));
            sumAbsJumpNanos += Math.abs(jump);
            jumps++;
            addPoint(x, bestMid, weight);
            coarse = false;
            if (x > REBASE_NANOS) {
                for (int i = 0; i < points; i++) {
                    px[i] -= x;
                }
                baseSlot = best;
            }
        }
        dropOld(bestMid);
        fit();
        widthNanos = bestWidth;
        calibratedAt = now;
        calibrations++;
        return true;
    }

    private void addPoint(double x, long host, double weight) {
        if (points == MAX_POINTS) {
            System.arraycopy(px, 1, px, 0, points - 1);
            System.arraycopy(py, 1, py, 0, points - 1);
            System.arraycopy(pw, 1, pw, 0, points - 1);
            points--;
        }
        px[points] = x;
        py[points] = host;
        pw[points] = weight;
        points++;
    }

    private void dropOld(long newest) {
        int keep = 0;
        while (keep < points - 1 && newest - py[keep] > WINDOW_NANOS) {
            keep++;
        }
        if (keep > 0) {
            System.arraycopy(px, keep, px, 0, points - keep);
            System.arraycopy(py, keep, py, 0, points - keep);
            System.arraycopy(pw, keep, pw, 0, points - keep);
            points -= keep;
        }
    }

    /** Weighted least squares host = hostRef + offset + rate * x; rate 1 while the points span too little. */
    private void fit() {
        double w = 0;
        double mx = 0;
        double my = 0;
        for (int i = 0; i < points; i++) {
            w += pw[i];
            mx += pw[i] * px[i];
            my += pw[i] * (py[i] - hostRef);
        }
        mx /= w;
        my /= w;
        double r = 1.0;
        if (px[points - 1] - px[0] >= MIN_SPAN_FOR_RATE_NANOS) {
            double sxy = 0;
            double sxx = 0;
            for (int i = 0; i < points; i++) {
                double dx = px[i] - mx;
                sxy += pw[i] * dx * (py[i] - hostRef - my);
                sxx += pw[i] * dx * dx;
            }
            r = sxx > 0 ? sxy / sxx : 1.0;
            double limit = MAX_RATE_PPM / 1e6;
            r = Math.max(1 - limit, Math.min(1 + limit, r));
        }
        rate = r;
        offset = my - r * mx;
        ratePpm = (r - 1) * 1e6;
    }

    private long map(double x) {
        return hostRef + Math.round(offset + rate * x);
    }

    /** A slot that is neither the base nor {@code keep}. */
    private int freeSlot(int keep) {
        for (int i = 0; i < slots.length; i++) {
            if (i != baseSlot && i != keep) {
                return i;
            }
        }
        throw new IllegalStateException("no free calibration slot");
    }

    /** @return whether a renewal is due (the completion thread renews when it has time) */
    boolean due(long now) {
        return (coarse || now - calibratedAt > RENEW_NANOS) && now - retryAt >= 0;
    }

    /**
     * @return whether the clock has no point narrower than 100 us yet: none at all, or only a wide
     *     first one (the host or the device was busy when the clock was first placed), whose times
     *     may be off by up to half its width until a renewal finds a narrow point
     */
    boolean coarse() {
        return coarse;
    }

    /** @return whether the mapping is so old that it must be renewed before the next conversion */
    boolean overdue(long now) {
        return now - calibratedAt > OVERDUE_NANOS;
    }

    /** @return the host time of a completed event, or {@link #UNKNOWN} if there is no base or CUDA cannot tell */
    long toNanos(MemorySegment event) {
        if (baseSlot < 0) {
            return UNKNOWN;
        }
        long e = elapsedNanos(slots[baseSlot], event);
        return e == UNKNOWN ? UNKNOWN : map(e);
    }

    /** @return nanoseconds from {@code a} to {@code b} (both completed), or {@link #UNKNOWN} if CUDA cannot tell */
    long elapsedNanos(MemorySegment a, MemorySegment b) {
        int rc = api.elapsed(millis, a, b);
        if (rc != CudaApi.CUDA_SUCCESS) {
            return UNKNOWN;
        }
        return Math.round(millis.get(CudaApi.MILLIS, 0) * 1_000_000.0);
    }

    /** @return the width of the interval the last point was placed in: twice its uncertainty */
    long widthNanos() {
        return widthNanos;
    }

    int calibrations() {
        return calibrations;
    }

    /** @return calibrations not used because every try was wider than 100 us */
    int rejected() {
        return rejected;
    }

    /** @return the largest difference between a new point and the line before it: the mapping's error */
    long maxJumpNanos() {
        return maxJumpNanos;
    }

    /** @return the mean absolute difference between a new point and the line before it */
    long meanJumpNanos() {
        int n = jumps;
        return n == 0 ? 0 : sumAbsJumpNanos / n;
    }

    /** @return how much faster the host clock runs than the GPU's, in parts per million, as fitted */
    double ratePpm() {
        return ratePpm;
    }

    @Override
    public void close() {
        for (MemorySegment s : slots) {
            api.eventDestroy(s);
        }
        arena.close();
    }
}
