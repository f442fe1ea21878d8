package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.CodeModule;
import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.Command.Dim3;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.KernelFunction;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.hal.spi.XpuMemory;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The host API end to end on the CUDA adapter, as a host bundle reaches it on a GPU: the engine
 * (XqCore) resolves buffers and functions and the adapter runs them on {@link CudaDouble}
 * through the FFM calls it makes on libcuda; example-host's PTX, example-host's matmul.
 */
class HostApiOnCudaDoubleTest {

    private final CudaDouble cuda = new CudaDouble();
    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private CudaPlatform platform;

    /** What CudaDriver is to the node, without DS. */
    private final class Driver implements XpuDriver {
        final CudaMemory memory = new CudaMemory(() -> platform);

        @Override
        public String platform() {
            return CudaPlatform.PLATFORM;
        }

        @Override
        public String status() {
            return platform.status();
        }

        @Override
        public List<DeviceDescriptor> devices() {
            return platform.devices();
        }

        @Override
        public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
            return platform.open(deviceId, options, listener);
        }

        @Override
        public Optional<XpuMemory> memory() {
            return Optional.of(memory);
        }
    }

    @BeforeEach
    void start() {
        platform = CudaPlatform.start(cuda.api(), CudaSettings.defaults(), RuntimeLog.NONE);
        core.addDriver(new Driver());
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
        platform.close();
        assertEquals(List.of(), cuda.errors(), "the double saw bad calls");
        assertEquals(0, cuda.badFrees.get(), "memory freed that was not allocated, or twice");
        cuda.close();
    }

    @Test
    void matmulThroughTheEngineWithBuffersByHandle() throws Exception {
        int n = 40;
        float[] a = new float[n * n];
        float[] b = new float[n * n];
        for (int i = 0; i < n * n; i++) {
            a[i] = (i * 7 % 9) - 4;
            b[i] = (i * 5 % 9) - 4;
        }
        float[] expect = new float[n * n];
        for (int i = 0; i < n; i++) {
            for (int p = 0; p < n; p++) {
                for (int j = 0; j < n; j++) {
                    expect[i * n + j] += a[i * n + p] * b[p * n + j];
                }
            }
        }
        int before = cuda.allocations.size();
        CodeModule mod = core.load("cuda0", "matmul.ptx", Files.readAllBytes(CudaMemoryTest.MATMUL_PTX));
        KernelFunction mm = mod.function("xq_matmul_tiled");
        assertEquals(List.of(8L, 8L, 8L, 4L, 4L, 4L), mm.parameterSizes().orElseThrow());
        float[] c = new float[n * n];
        try (XQueue q = core.create(QueueOptions.on("cuda0").named("mm"));
             DeviceBuffer da = core.allocate("cuda0", 4L * n * n);
             DeviceBuffer db = core.allocate("cuda0", 4L * n * n);
             DeviceBuffer dc = core.allocate("cuda0", 4L * n * n)) {
            assertEquals(before + 3, cuda.allocations.size());
            q.submit(Command.write(da, MemorySegment.ofArray(a)));
            q.submit(Command.write(db, MemorySegment.ofArray(b)));
            q.submit(Command.fill(dc, (byte) 0xff));
            q.submit(new Command.Launch(mm, new Dim3((n + 15) / 16, (n + 15) / 16, 1), new Dim3(16, 16, 1), 0,
                    List.of(new Arg.Buf(da), new Arg.Buf(db), new Arg.Buf(dc), new Arg.I32(n), new Arg.I32(n), new Arg.I32(n))));
            q.submit(Command.read(dc, MemorySegment.ofArray(c))).await(Duration.ofSeconds(30));
            assertArrayEquals(expect, c);
            // the engine's check against cuFuncGetParamInfo: refused at submit, nothing reaches the stream
            int launched = cuda.kernelsLaunched.get();
            String e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Launch(mm, new Dim3(1, 1, 1),
                    new Dim3(16, 16, 1), 0, List.of(new Arg.Buf(da), new Arg.Buf(db), new Arg.Buf(dc), new Arg.F64(1), new Arg.I32(n),
                            new Arg.I32(n))))).getMessage();
            assertTrue(e.contains("parameter #3 is 4 bytes"), e);
            assertEquals(launched, cuda.kernelsLaunched.get());
        }
        assertEquals(before, cuda.allocations.size(), "the three buffers freed with cuMemFree_v2");
        mod.close();
    }
}
