package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The device clock on the CUDA double, through the same FFM calls it makes on a GPU. The
 * double stamps an event when its stream's thread reaches it, on {@link System#nanoTime()}, so
 * a mapped time can be checked against the stamp itself; {@link CudaDouble#lateStamps} makes a
 * calibration's tries wide, as a busy host or device does.
 */
class DeviceClockTest {

    /** Every try of a late calibration is stamped this late: its middle lies ~2 ms before the stamp. */
    private static final long LATE_NANOS = 4_000_000L;

    private final CudaDouble cuda = new CudaDouble();
    private CudaApi api;
    private int device;
    private MemorySegment stream;
    private DeviceClock clock;

    @BeforeEach
    void open() {
        api = cuda.api();
        assertEquals(0, api.init(0));
        device = api.device(0);
        assertEquals(0, api.setCurrent(api.primaryContextRetain(device)));
        stream = api.streamCreate(CudaApi.CU_STREAM_NON_BLOCKING, 0);
        clock = new DeviceClock(api, stream);
    }

    @AfterEach
    void close() {
        clock.close();
        api.streamDestroy(stream);
        api.primaryContextRelease(device);
        cuda.close();
    }

    @Test
    void aClockWithNoPointIsCoarse() {
        assertTrue(clock.coarse());
        assertEquals(DeviceClock.UNKNOWN, clock.toNanos(recordAndWait()));
    }

    @Test
    void aWideFirstPointLeavesTheClockCoarseAndARenewalDueWithinAMillisecond() {
        cuda.lateStampNanos = LATE_NANOS;
        cuda.lateStamps.set(5);
        assertTrue(clock.calibrate(), "the first point is the base, however wide");
        long after = System.nanoTime();
        assertTrue(clock.widthNanos() >= LATE_NANOS, "width " + clock.widthNanos());
        assertTrue(clock.coarse());
        assertTrue(clock.due(after + 1_000_001L), "a renewal is due 1 ms after a coarse point, not 100 ms");
        assertFalse(clock.overdue(after + 1_000_001L));
    }

    @Test
    void placingTheClockTriesAgainWhileItsFirstPointIsWide() {
        cuda.lateStampNanos = LATE_NANOS;
        cuda.lateStamps.set(5);
        clock.place(4);
        assertEquals(0, cuda.lateStamps.get());
        int rounds = clock.calibrations() + clock.rejected();
        assertTrue(rounds >= 2, "calibrations made: " + rounds);
        assertTrue(cuda.eventsRecordedOn(stream) >= 10, "tries: " + cuda.eventsRecordedOn(stream));
        assertTrue(rounds == 5 || !clock.coarse(), "stopped after " + rounds + " rounds while coarse");
    }

    @Test
    void aNarrowPointOutweighsAWideFirstOne() {
        cuda.lateStampNanos = LATE_NANOS;
        cuda.lateStamps.set(5);
        clock.calibrate();
        MemorySegment early = recordAndWait();
        // off by up to half the point's width (less when the try saw its stamp late)
        long before = clock.toNanos(early) - cuda.stampOf(early);
        // renew as the completion thread would, until a try is narrow (at once on an idle host)
        long giveUp = System.nanoTime() + 5_000_000_000L;
        while (clock.coarse() && System.nanoTime() < giveUp) {
            clock.calibrate();
        }
        assertFalse(clock.coarse(), "no try narrower than 100 us in 5 s");
        MemorySegment late = recordAndWait();
        long error = clock.toNanos(late) - cuda.stampOf(late);
        assertTrue(Math.abs(error) < 200_000L, "mapped " + error / 1000 + " us from the stamp (was " + before / 1000 + ")");
        // the first event, mapped again, moves with the line
        assertTrue(Math.abs(clock.toNanos(early) - cuda.stampOf(early)) < 200_000L);
    }

    private MemorySegment recordAndWait() {
        MemorySegment ev = api.eventCreate(CudaApi.CU_EVENT_DEFAULT);
        assertEquals(0, api.eventRecord(ev, stream));
        assertEquals(0, api.eventSynchronize(ev));
        return ev;
    }
}
