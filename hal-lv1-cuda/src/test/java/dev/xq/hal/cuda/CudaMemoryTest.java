package dev.xq.hal.cuda;

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
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The adapter's memory path (CudaMemory, the data ops of CudaQueue) against {@link CudaDouble},
 * through the same FFM downcalls as on a GPU: cuMemAlloc/cuMemFree, cuMemcpyHtoDAsync/DtoHAsync,
 * cuMemsetD8Async, cuModuleLoadDataEx/cuModuleGetFunction/cuFuncGetParamInfo, cuLaunchKernel with
 * buffer addresses, and example-host's own PTX.
 */
class CudaMemoryTest {

    /** The example host bundle's PTX, as the node loads it. */
    static final Path MATMUL_PTX = Path.of("../example-host/src/main/resources/ptx/matmul.ptx");

    private final CudaDouble cuda = new CudaDouble();
    private CudaPlatform platform;
    private CudaMemory memory;

    @BeforeEach
    void start() {
        platform = CudaPlatform.start(cuda.api(), CudaSettings.defaults(), RuntimeLog.NONE);
        memory = new CudaMemory(() -> platform);
    }

    @AfterEach
    void stop() {
        platform.close();
        assertEquals(0, cuda.hostAllocations.size(), "page-locked staging left allocated after the queues were released");
        assertEquals(List.of(), cuda.errors(), "the double saw bad calls");
        assertEquals(0, cuda.badFrees.get(), "memory freed that was not allocated, or freed twice");
        cuda.close();
    }

    private static HwCommand op(long seq, Command c, DeviceOp op) {
        return new HwCommand(seq, c, op);
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
                for (int p = 0; p < k; p++) {
                    expect[i * n + j] += a[i * k + p] * b[p * n + j];
                }
            }
        }
        int modulesBefore = cuda.liveModules(); // the built-in spin module
        HwModule mod = memory.load("cuda0", "matmul.ptx", Files.readAllBytes(MATMUL_PTX));
        assertEquals(modulesBefore + 1, cuda.liveModules());
        HwFunction mm = mod.function("xq_matmul_tiled");
        assertEquals(List.of(8L, 8L, 8L, 4L, 4L, 4L), mm.parameterSizes().orElseThrow(), "from cuFuncGetParamInfo");
        HwBuffer da = memory.allocate("cuda0", 4L * m * k);
        HwBuffer db = memory.allocate("cuda0", 4L * k * n);
        HwBuffer dc = memory.allocate("cuda0", 4L * m * n);
        assertEquals(3, cuda.allocations.size());
        assertEquals(4L * m * k, cuda.allocations.get(da.address()), "cuMemAlloc_v2 got the size");
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("mm", null), l);
        float[] c = new float[m * n];
        // the commands only describe the kinds; the driver runs the ops (the runtime makes both)
        Command.Spin kindless = Command.spin(0);
        q.launch(op(1, kindless, new DeviceOp.Write(da, 0, MemorySegment.ofArray(a))));
        q.launch(op(2, kindless, new DeviceOp.Write(db, 0, MemorySegment.ofArray(b))));
        q.launch(op(3, kindless, new DeviceOp.Fill(dc, 0, dc.size(), (byte) 0x55)));
        q.launch(op(4, kindless, new DeviceOp.Launch(mm, new Dim3((n + 15) / 16, (m + 15) / 16, 1), new Dim3(16, 16, 1), 0,
                List.of(new Arg.Ptr(da.address()), new Arg.Ptr(db.address()), new Arg.Ptr(dc.address()), new Arg.I32(m), new Arg.I32(n),
                        new Arg.I32(k)))));
        q.launch(op(5, kindless, new DeviceOp.Read(dc, 0, MemorySegment.ofArray(c))));
        assertTrue(l.await(5), "reported: " + l.reports);
        for (int i = 0; i < 5; i++) {
            assertEquals("completed", l.reports.get(i).what(), "report " + i + ": " + l.reports.get(i));
            assertEquals(i + 1, l.reports.get(i).command().sequence());
        }
        assertArrayEquals(expect, c, "the read's target holds the product when the completion is reported");
        assertTrue(cuda.hostAllocs.get() >= 1 && cuda.hostAllocs.get() <= 3, "staging is page-locked: "
                + cuda.hostAllocs.get() + " cuMemAllocHost_v2 calls for 3 copies");
        int staged = cuda.hostAllocs.get();
        float[] again = new float[m * n];
        q.launch(op(6, kindless, new DeviceOp.Read(dc, 0, MemorySegment.ofArray(again))));
        assertTrue(l.await(6));
        assertArrayEquals(expect, again);
        assertEquals(staged, cuda.hostAllocs.get(), "a later copy reuses a staging area that an ended command gave back");
        q.close();
        da.free();
        db.free();
        dc.free();
        dc.free(); // idempotent: cuMemFree_v2 is not called twice
        assertEquals(0, cuda.allocations.size(), "every buffer freed");
        mod.unload();
        assertEquals(modulesBefore, cuda.liveModules(), "module unloaded");
    }

    @Test
    void fillAndPartialCopiesUseOffsets() throws Exception {
        HwBuffer buf = memory.allocate("cuda0", 64);
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("offsets", null), l);
        Command.Spin kindless = Command.spin(0);
        q.launch(op(1, kindless, new DeviceOp.Fill(buf, 0, 64, (byte) 1)));
        q.launch(op(2, kindless, new DeviceOp.Fill(buf, 8, 8, (byte) 7)));
        q.launch(op(3, kindless, new DeviceOp.Write(buf, 32, MemorySegment.ofArray(new byte[] {9, 9}))));
        byte[] out = new byte[40];
        q.launch(op(4, kindless, new DeviceOp.Read(buf, 0, MemorySegment.ofArray(out))));
        assertTrue(l.await(4));
        assertEquals(1, out[7]);
        assertEquals(7, out[8]);
        assertEquals(7, out[15]);
        assertEquals(1, out[16]);
        assertEquals(9, out[32]);
        assertEquals(9, out[33]);
        assertEquals(1, out[34]);
        q.close();
        buf.free();
    }

    @Test
    void refusalsNameTheValue() throws Exception {
        String e = assertThrows(IllegalArgumentException.class, () -> memory.allocate("cuda7", 16)).getMessage();
        assertTrue(e.contains("device 'cuda7' is unknown to the cuda driver; known: [cuda0]"), e);
        cuda.failNextAlloc = 2;
        e = assertThrows(HalException.class, () -> memory.allocate("cuda0", 1L << 40)).getMessage();
        assertTrue(e.contains("cuMemAlloc_v2") && e.contains(Long.toString(1L << 40)), e);
        e = assertThrows(IllegalArgumentException.class, () -> memory.load("cuda0", "junk.ptx",
                "not ptx".getBytes(StandardCharsets.UTF_8))).getMessage();
        assertTrue(e.contains("module 'junk.ptx'") && e.contains("does not load on cuda0") && e.contains("JIT log: ptxas fatal"), e);
        HwModule mod = memory.load("cuda0", "matmul.ptx", Files.readAllBytes(MATMUL_PTX));
        e = assertThrows(IllegalArgumentException.class, () -> mod.function("gemm")).getMessage();
        assertTrue(e.contains("module 'matmul.ptx' has no kernel 'gemm'"), e);
        HwFunction saxpy = mod.function("xq_saxpy");
        HwBuffer x = memory.allocate("cuda0", 16);
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("bad", null), l);
        // the adapter checks a launch against cuFuncGetParamInfo too: alpha as F64 (8 bytes) is refused at launch
        e = assertThrows(HalException.class, () -> q.launch(op(1, Command.spin(0), new DeviceOp.Launch(saxpy, new Dim3(1, 1, 1),
                new Dim3(32, 1, 1), 0, List.of(new Arg.I32(4), new Arg.F64(2), new Arg.Ptr(x.address()), new Arg.Ptr(x.address())))))).getMessage();
        assertTrue(e.contains("kernel xq_saxpy parameter #1 is 4 bytes"), e);
        assertEquals(0, cuda.kernelsLaunched.get(), "nothing reached cuLaunchKernel");
        q.close();
        x.free();
        mod.unload();
    }

    @Test
    void saxpyComputes() throws Exception {
        HwModule mod = memory.load("cuda0", "matmul.ptx", Files.readAllBytes(MATMUL_PTX));
        HwFunction saxpy = mod.function("xq_saxpy");
        HwBuffer x = memory.allocate("cuda0", 16);
        HwBuffer y = memory.allocate("cuda0", 16);
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("saxpy", null), l);
        Command.Spin kindless = Command.spin(0);
        q.launch(op(1, kindless, new DeviceOp.Write(x, 0, MemorySegment.ofArray(new float[] {1, 2, 3, 4}))));
        q.launch(op(2, kindless, new DeviceOp.Write(y, 0, MemorySegment.ofArray(new float[] {10, 10, 10, 10}))));
        q.launch(op(3, kindless, new DeviceOp.Launch(saxpy, new Dim3(1, 1, 1), new Dim3(256, 1, 1), 0,
                List.of(new Arg.I32(4), new Arg.F32(3), new Arg.Ptr(x.address()), new Arg.Ptr(y.address())))));
        MemorySegment out = MemorySegment.ofArray(new float[4]);
        q.launch(op(4, kindless, new DeviceOp.Read(y, 0, out)));
        assertTrue(l.await(4));
        assertEquals(3f * 4 + 10, out.getAtIndex(JAVA_FLOAT, 3));
        assertEquals(3f * 1 + 10, out.getAtIndex(JAVA_FLOAT, 0));
        q.close();
        x.free();
        y.free();
        mod.unload();
    }
}
