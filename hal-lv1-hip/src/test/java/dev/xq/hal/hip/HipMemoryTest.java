package dev.xq.hal.hip;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.Command.Dim3;
import dev.xq.hal.spi.DeviceOp;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwBuffer;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwFunction;
import dev.xq.hal.spi.HwModule;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The adapter's memory path (HipMemory, the data ops of HipQueue) against the HIP double, through
 * the same FFM downcalls as on an AMD GPU: hipMalloc/hipFree, hipHostMalloc staging,
 * hipMemcpyHtoDAsync/DtoHAsync, hipMemsetD8Async, hipModuleLoadData/hipModuleGetFunction/
 * hipModuleUnload and hipModuleLaunchKernel with buffer addresses; the double computes
 * example-host's matmul and saxpy on the CPU.
 */
class HipMemoryTest {

    private HipPlatform platform;
    private HipMemory memory;
    private int devicesBefore;
    private int pinnedBefore;
    private int badFreesBefore;

    @BeforeEach
    void start() {
        HipDouble.reset();
        devicesBefore = HipDouble.liveAllocations(false);
        pinnedBefore = HipDouble.liveAllocations(true);
        badFreesBefore = HipDouble.badFrees();
        platform = HipPlatform.start(HipDouble.settings(), RuntimeLog.NONE);
        memory = new HipMemory(() -> platform);
    }

    @AfterEach
    void stop() {
        platform.close();
        assertEquals(devicesBefore, HipDouble.liveAllocations(false), "device memory left allocated after the driver stopped");
        assertEquals(pinnedBefore, HipDouble.liveAllocations(true), "page-locked staging left allocated after the queues closed");
        assertEquals(badFreesBefore, HipDouble.badFrees(), "memory freed that was not allocated, or freed twice");
    }

    private static HwCommand op(long seq, Command c, DeviceOp op) {
        return new HwCommand(seq, c, op);
    }

    private HwModule matmulModule() throws Exception {
        return memory.load("hip0", "matmul", Files.readAllBytes(HipDouble.matmulModule()));
    }

    /** A listener that looks at a read's target the moment the read is reported completed. */
    private static final class Snapshots implements HwQueueListener {
        final LinkedBlockingQueue<Object> reports = new LinkedBlockingQueue<>();
        volatile MemorySegment watched;

        @Override
        public void completed(HwCommand command, long startNanos, long endNanos) {
            MemorySegment w = watched;
            reports.add(w != null && command.op() instanceof DeviceOp.Read ? w.toArray(JAVA_FLOAT) : command.sequence());
        }

        @Override
        public void failed(HwCommand command, Throwable cause) {
            reports.add(cause);
        }

        @Override
        public void lost(Throwable cause) {
            reports.add(cause);
        }

        Object next() throws InterruptedException {
            Object r = reports.poll(30, TimeUnit.SECONDS);
            if (r == null) {
                throw new AssertionError("no report from the hip queue within 30 s");
            }
            return r;
        }
    }

    @Test
    void matmulOfExampleHostRunsOnBuffersAndTheReadHoldsTheResultWhenReported() throws Exception {
        int m = 19;
        int n = 23;
        int k = 7;
        Random r = new Random(3);
        float[] a = new float[m * k];
        float[] b = new float[k * n];
        for (int i = 0; i < a.length; i++) {
            a[i] = r.nextInt(9) - 4;
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = r.nextInt(9) - 4;
        }
        float[] expect = new float[m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                float s = 0;
                for (int p = 0; p < k; p++) {
                    s += a[i * k + p] * b[p * n + j];
                }
                expect[i * n + j] = s;
            }
        }
        HwModule mod = matmulModule();
        HwFunction mm = mod.function("xq_matmul_tiled");
        assertEquals(Optional.empty(), mm.parameterSizes(), "HIP cannot tell a kernel's parameters");
        HwBuffer da = memory.allocate("hip0", 4L * a.length);
        HwBuffer db = memory.allocate("hip0", 4L * b.length);
        HwBuffer dc = memory.allocate("hip0", 4L * m * n);
        assertEquals(devicesBefore + 3, HipDouble.liveAllocations(false));
        Snapshots l = new Snapshots();
        HwQueue q = platform.open("hip0", new HwQueueOptions("mm", null), l);
        float[] c = new float[m * n];
        MemorySegment target = MemorySegment.ofArray(c); // on the heap: HIP never sees it, the staging does
        l.watched = target;
        List<Arg> args = List.of(new Arg.Ptr(da.address()), new Arg.Ptr(db.address()), new Arg.Ptr(dc.address()), new Arg.I32(m),
                new Arg.I32(n), new Arg.I32(k));
        // the commands only describe the kinds; the driver runs the ops (the runtime makes both)
        Command.Spin kindless = Command.spin(0);
        Dim3 grid = new Dim3((n + 15) / 16, (m + 15) / 16, 1);
        q.launch(op(1, kindless, new DeviceOp.Write(da, 0, MemorySegment.ofArray(a))));
        q.launch(op(2, kindless, new DeviceOp.Write(db, 0, MemorySegment.ofArray(b))));
        q.launch(op(3, kindless, new DeviceOp.Fill(dc, 0, dc.size(), (byte) 0x7f)));
        q.launch(op(4, kindless, new DeviceOp.Launch(mm, grid, new Dim3(16, 16, 1), 0, args)));
        q.launch(op(5, kindless, new DeviceOp.Read(dc, 0, target)));
        for (long s = 1; s <= 4; s++) {
            assertEquals(s, l.next());
        }
        float[] seen = (float[]) l.next();
        assertArrayEquals(expect, seen, "the read's target holds the product when the read is reported completed");
        assertTrue(HipDouble.liveAllocations(true) > pinnedBefore, "copies are staged through hipHostMalloc memory");
        q.close();
        assertEquals(pinnedBefore, HipDouble.liveAllocations(true), "closing the queue frees its staging areas");
        da.free();
        db.free();
        dc.free();
        dc.free(); // once only
        assertEquals(devicesBefore, HipDouble.liveAllocations(false));
        mod.unload();
        mod.unload();
    }

    @Test
    void copiesWithOffsetsFillsAndSaxpyComputeWhatTheyShould() throws Exception {
        HwModule mod = matmulModule();
        HwFunction saxpy = mod.function("xq_saxpy");
        HwBuffer x = memory.allocate("hip0", 64);
        HwBuffer y = memory.allocate("hip0", 64);
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("hip0", new HwQueueOptions("saxpy", null), l);
        Command.Spin kindless = Command.spin(0);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment xs = arena.allocate(64);
            MemorySegment ys = arena.allocate(64);
            for (int i = 0; i < 16; i++) {
                xs.setAtIndex(JAVA_FLOAT, i, i);
                ys.setAtIndex(JAVA_FLOAT, i, 100);
            }
            q.launch(op(1, kindless, new DeviceOp.Write(x, 0, xs)));
            q.launch(op(2, kindless, new DeviceOp.Write(y, 0, ys)));
            // bytes 8..15 of y (floats 2 and 3) := 0
            q.launch(op(3, kindless, new DeviceOp.Fill(y, 8, 8, (byte) 0)));
            q.launch(op(4, kindless, new DeviceOp.Launch(saxpy, new Dim3(1, 1, 1), new Dim3(256, 1, 1), 0,
                    List.of(new Arg.I32(16), new Arg.F32(2), new Arg.Ptr(x.address()), new Arg.Ptr(y.address())))));
            float[] tail = new float[4];
            MemorySegment t = MemorySegment.ofArray(tail);
            q.launch(op(5, kindless, new DeviceOp.Read(y, 12 * 4, t))); // floats 12..15
            float[] head = new float[4];
            MemorySegment h = MemorySegment.ofArray(head);
            q.launch(op(6, kindless, new DeviceOp.Read(y, 0, h)));
            for (int i = 1; i <= 6; i++) {
                RecordingListener.Report rep = l.next();
                assertEquals("completed", rep.what(), String.valueOf(rep.cause()));
            }
            assertArrayEquals(new float[] {124, 126, 128, 130}, tail);
            assertArrayEquals(new float[] {100, 102, 4, 6}, head);
        }
        q.close();
        x.free();
        y.free();
        mod.unload();
    }

    @Test
    void whatTheDriverStillHoldsWhenItStopsIsFreedThere() throws Exception {
        memory.allocate("hip0", 1024);
        matmulModule();
        int handles = HipDouble.liveHandles();
        assertEquals(devicesBefore + 1, HipDouble.liveAllocations(false));
        platform.close();
        assertEquals(devicesBefore, HipDouble.liveAllocations(false));
        assertTrue(HipDouble.liveHandles() < handles, "the module was unloaded");
    }

    @Test
    void refusalsNameTheValueAndWhatIsAllowed() throws Exception {
        String e = assertThrows(IllegalArgumentException.class, () -> memory.allocate("hip7", 16)).getMessage();
        assertEquals("device 'hip7' is unknown to the hip driver; known: [hip0]", e);
        e = assertThrows(IllegalArgumentException.class, () -> memory.allocate("hip0", 0)).getMessage();
        assertEquals("buffer of 0 bytes on hip0: allowed: >= 1", e);
        e = assertThrows(IllegalArgumentException.class, () -> memory.allocate("hip0", 3L << 30)).getMessage();
        assertTrue(e.startsWith("buffer of 3221225472 bytes on hip0: hipMalloc failed: hipErrorOutOfMemory (2)"), e);
        assertTrue(e.endsWith(" of 1073741824 bytes are free (hipMemGetInfo)"), e);
        assertEquals(devicesBefore, HipDouble.liveAllocations(false));

        e = assertThrows(IllegalArgumentException.class,
                () -> memory.load("hip0", "junk", "not a code object".getBytes(StandardCharsets.UTF_8))).getMessage();
        assertTrue(e.startsWith("module 'junk' (17 bytes) does not load on hip0: hipModuleLoadData returned hipErrorInvalidImage (200)"), e);
        // the double's code object names parameter sizes; wrong ones are an invalid image, as bad metadata would be
        e = assertThrows(IllegalArgumentException.class, () -> memory.load("hip0", "bad", "XQ-HIP-DOUBLE 1\nxq_saxpy 4 8 8 8\n"
                .getBytes(StandardCharsets.UTF_8))).getMessage();
        assertTrue(e.contains("hipErrorInvalidImage"), e);

        HwModule mod = matmulModule();
        e = assertThrows(IllegalArgumentException.class, () -> mod.function("nope")).getMessage();
        assertTrue(e.startsWith("module 'matmul' has no kernel 'nope' on hip0 (hipErrorNotFound (500)"), e);
        mod.unload();
        e = assertThrows(IllegalStateException.class, () -> mod.function("xq_saxpy")).getMessage();
        assertEquals("module 'matmul' on hip0 was unloaded", e);

        HwQueue q = platform.open("hip0", new HwQueueOptions("shape", null), new RecordingListener());
        e = assertThrows(IllegalArgumentException.class, () -> q.check(new Command.Launch(fn("xq_saxpy"), new Dim3(1, 1, 1),
                new Dim3(1024, 2, 1), 0, List.of()))).getMessage();
        assertTrue(e.startsWith("launch of xq_saxpy: block (1024, 2, 1) = 2048 threads exceeds hip0's limits"), e);
        e = assertThrows(IllegalArgumentException.class, () -> q.check(new Command.Launch(fn("xq_saxpy"), new Dim3(1, 1, 1),
                new Dim3(1, 1, 1), 65537, List.of()))).getMessage();
        assertEquals("launch of xq_saxpy: 65537 bytes of shared memory exceeds hip0's maximum of 65536 bytes per block", e);
        q.close();
    }

    @Test
    void aCopyHipRefusesIsThrownAtLaunchAndFreesItsStaging() throws Exception {
        HwBuffer b = memory.allocate("hip0", 16);
        HwQueue q = platform.open("hip0", new HwQueueOptions("bad", null), new RecordingListener());
        // a buffer of no device: address 0, which HIP refuses (hipErrorInvalidValue)
        HwBuffer zero = new HwBuffer() {
            @Override
            public String deviceId() {
                return "hip0";
            }

            @Override
            public long address() {
                return 0;
            }

            @Override
            public long size() {
                return 16;
            }

            @Override
            public void free() {
            }
        };
        Command.Spin kindless = Command.spin(0);
        float[] t = new float[4];
        MemorySegment seg = MemorySegment.ofArray(t);
        String e = assertThrows(HalException.class, () -> q.launch(op(1, kindless, new DeviceOp.Read(zero, 0, seg))))
                .getMessage();
        assertTrue(e.startsWith("hipMemcpyDtoHAsync (command #1 (spin) on queue 'bad' of hip0) failed: hipErrorInvalidValue (1)"), e);
        q.close();
        b.free();
    }

    /** A function as the API names it, for the launch-shape checks. */

    private static dev.xq.api.KernelFunction fn(String name) {
        return new dev.xq.api.KernelFunction() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Optional<List<Long>> parameterSizes() {
                return Optional.empty();
            }

            @Override
            public dev.xq.api.CodeModule module() {
                return null;
            }
        };
    }
}
