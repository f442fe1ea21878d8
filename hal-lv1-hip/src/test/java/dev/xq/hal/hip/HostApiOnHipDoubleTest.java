package dev.xq.hal.hip;

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
 * The host API end to end on the HIP adapter, as a host bundle reaches it on an AMD GPU: the
 * engine (XqCore) resolves buffers and functions and the adapter runs them on the HIP double
 * through the FFM calls it makes on libamdhip64; example-host's matmul, computed by the double.
 */
class HostApiOnHipDoubleTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private HipPlatform platform;
    private int devicesBefore;
    private int pinnedBefore;
    private int badFreesBefore;

    /** What HipDriver is to the node, without DS. */
    private final class Driver implements XpuDriver {
        final HipMemory memory = new HipMemory(() -> platform);

        @Override
        public String platform() {
            return HipPlatform.PLATFORM;
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
        HipDouble.reset();
        devicesBefore = HipDouble.liveAllocations(false);
        pinnedBefore = HipDouble.liveAllocations(true);
        badFreesBefore = HipDouble.badFrees();
        platform = HipPlatform.start(HipDouble.settings(), RuntimeLog.NONE);
        core.addDriver(new Driver());
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
        platform.close();
        assertEquals(devicesBefore, HipDouble.liveAllocations(false), "device memory left allocated");
        assertEquals(pinnedBefore, HipDouble.liveAllocations(true), "page-locked staging left allocated");
        assertEquals(badFreesBefore, HipDouble.badFrees(), "memory freed that was not allocated, or twice");
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
        CodeModule mod = core.load("hip0", "matmul", Files.readAllBytes(HipDouble.matmulModule()));
        KernelFunction mm = mod.function("xq_matmul_tiled");
        assertEquals(Optional.empty(), mm.parameterSizes(), "HIP does not tell a kernel's parameters");
        float[] c = new float[n * n];
        try (XQueue q = core.create(QueueOptions.on("hip0").named("mm"));
             DeviceBuffer da = core.allocate("hip0", 4L * n * n);
             DeviceBuffer db = core.allocate("hip0", 4L * n * n);
             DeviceBuffer dc = core.allocate("hip0", 4L * n * n)) {
            assertEquals(devicesBefore + 3, HipDouble.liveAllocations(false));
            q.submit(Command.write(da, MemorySegment.ofArray(a)));
            q.submit(Command.write(db, MemorySegment.ofArray(b)));
            q.submit(Command.fill(dc, (byte) 0xff));
            q.submit(new Command.Launch(mm, new Dim3((n + 15) / 16, (n + 15) / 16, 1), new Dim3(16, 16, 1), 0,
                    List.of(new Arg.Buf(da), new Arg.Buf(db), new Arg.Buf(dc), new Arg.I32(n), new Arg.I32(n), new Arg.I32(n))));
            q.submit(Command.read(dc, MemorySegment.ofArray(c))).await(Duration.ofSeconds(30));
            assertArrayEquals(expect, c);
            // the device's own limits are checked at submit: nothing reaches the stream
            String e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Launch(mm, new Dim3(1, 1, 1),
                    new Dim3(2048, 1, 1), 0, List.of(new Arg.Buf(da))))).getMessage();
            assertTrue(e.contains("block (2048, 1, 1) = 2048 threads exceeds hip0's limits"), e);
            // and the runtime's: a copy out of range
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Write(da, 4L * n * n - 4,
                    MemorySegment.ofArray(new float[2])))).getMessage();
            assertTrue(e.startsWith("write of 8 bytes at offset " + (4L * n * n - 4) + " is out of range of buffer"), e);
        }
        assertEquals(devicesBefore, HipDouble.liveAllocations(false), "the three buffers freed with hipFree");
        mod.close();
    }

    @Test
    void aBufferOfAnotherDeviceIsRefusedAtSubmit() throws Exception {
        core.stop();
        platform.close();
        HipDouble.configure(2, 4, 1, -1);
        platform = HipPlatform.start(HipDouble.settings(), RuntimeLog.NONE);
        XqCore two = new XqCore(RuntimeLog.NONE);
        two.addDriver(new Driver());
        two.start();
        try (XQueue q = two.create(QueueOptions.on("hip0").named("zero"));
             DeviceBuffer other = two.allocate("hip1", 16)) {
            String e = assertThrows(IllegalArgumentException.class, () -> q.submit(Command.fill(other, (byte) 1))).getMessage();
            assertTrue(e.contains("is on hip1, but queue 'zero' is on hip0; use a buffer of hip0"), e);
        } finally {
            two.stop();
        }
    }
}
