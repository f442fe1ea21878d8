package dev.xq.hal.hip;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.Command.Dim3;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The adapter's whole launch / completion path against the CPU-backed HIP double: the same FFM
 * code that runs on a GPU, with only the library path changed.
 */
@SuppressWarnings("restricted") // looks the double's symbols up directly
class HipDoubleTest {

    private final List<HipPlatform> platforms = new ArrayList<>();
    private int handlesBefore;

    @BeforeEach
    void before() {
        HipDouble.reset();
        handlesBefore = HipDouble.liveHandles();
    }

    @AfterEach
    void after() {
        for (HipPlatform p : platforms) {
            p.close();
        }
        HipDouble.reset();
    }

    private HipPlatform start(HipSettings settings) {
        HipPlatform p = HipPlatform.start(settings, RuntimeLog.NONE);
        platforms.add(p);
        return p;
    }

    private HipPlatform start() {
        return start(HipDouble.settings());
    }

    private static HwCommand cmd(long seq, Command c) {
        return new HwCommand(seq, c);
    }

    private static Command.Kernel kernel(String function, List<Arg> args) {
        return new Command.Kernel("test", function, new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0, args);
    }

    @Test
    void everyBoundSymbolIsExportedByTheDouble() {
        try (Arena a = Arena.ofConfined()) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(Path.of(HipDouble.library()), a);
            List<String> missing = HipApi.SIGNATURES.keySet().stream().filter(s -> lookup.find(s).isEmpty()).toList();
            assertEquals(List.of(), missing);
        }
    }

    @Test
    void describesTheDevice() {
        HipPlatform p = start();
        assertTrue(p.status().startsWith("1 device (library " + HipDouble.library()), p.status());
        List<DeviceDescriptor> ds = p.devices();
        assertEquals(1, ds.size());
        DeviceDescriptor d = ds.getFirst();
        assertEquals("hip0", d.id());
        assertEquals("XQ HIP test double (CPU) #0", d.name());
        assertEquals(PreemptionLevel.BLOCK, d.maxLevel());
        assertEquals(4, d.engines());
        assertEquals(1L << 30, d.memoryBytes());
        assertEquals(java.util.Set.of("spin", "kernel", "copy", "memset", "write", "read", "fill", "launch"), d.commandKinds());
        assertEquals("least 1, greatest -1", d.properties().get("hip.streamPriorities"));
        assertEquals("1024", d.properties().get("hip.maxThreadsPerBlock"));
        assertEquals("available", d.properties().get("hip.spin"));
    }

    @Test
    void spinCommandsCompleteInOrderWithDeviceTimestamps() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        long[] micros = {2000, 100, 3000, 0, 500, 1500};
        long before = System.nanoTime();
        try (var q = p.open("hip0", new HwQueueOptions("spins", null), l)) {
            for (int i = 0; i < micros.length; i++) {
                q.launch(cmd(i + 1, Command.spin(micros[i])));
            }
            long previousEnd = before;
            for (int i = 0; i < micros.length; i++) {
                RecordingListener.Report r = l.next();
                assertEquals("completed", r.what(), () -> String.valueOf(r.cause()));
                assertEquals(i + 1, r.command().sequence(), "reports come in launch order");
                assertTrue(r.startNanos() >= before, "start after the launch");
                assertTrue(r.startNanos() <= r.endNanos(), "start before end");
                assertTrue(r.endNanos() <= r.seenNanos(), "end not after the report");
                assertTrue(r.endNanos() >= previousEnd, "ends in order");
                long duration = r.endNanos() - r.startNanos();
                // the double sleeps at least the given time; allow for the float milliseconds of hipEventElapsedTime
                assertTrue(duration >= micros[i] * 1000 - 5_000, "command " + (i + 1) + " took " + duration + " ns, spun " + micros[i] + " us");
                assertTrue(duration < micros[i] * 1000 + 5_000_000_000L, "sanity bound");
                previousEnd = r.endNanos();
            }
        }
    }

    @Test
    void commandsRunInLaunchOrder() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        int n = 200;
        try (Arena a = Arena.ofShared(); var q = p.open("hip0", new HwQueueOptions("order", 0), l)) {
            MemorySegment log = a.allocate(JAVA_LONG, n + 1);
            for (int i = 0; i < n; i++) {
                Command c = i % 3 == 0 ? Command.spin(i % 2 == 0 ? 50 : 0)
                        : kernel("append", List.of(new Arg.Ptr(log.address()), new Arg.I64(i)));
                q.launch(cmd(i, c));
            }
            List<Long> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RecordingListener.Report r = l.next();
                assertEquals("completed", r.what(), () -> String.valueOf(r.cause()));
                assertEquals(i, r.command().sequence());
                if (i % 3 != 0) {
                    expected.add((long) i);
                }
            }
            long count = log.getAtIndex(JAVA_LONG, 0);
            List<Long> logged = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                logged.add(log.getAtIndex(JAVA_LONG, i + 1));
            }
            assertEquals(expected, logged, "the device ran the appends in launch order");
        }
    }

    @Test
    void kernelArgumentsReachTheKernel() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        try (Arena a = Arena.ofShared(); var q = p.open("hip0", new HwQueueOptions("args", null), l)) {
            MemorySegment out = a.allocate(64, 8);
            q.launch(cmd(1, new Command.Kernel("test", "probe", new Dim3(3, 2, 1), new Dim3(64, 2, 1), 128,
                    List.of(new Arg.Ptr(out.address()), new Arg.I32(-7), new Arg.I64(1L << 40), new Arg.F32(1.5f),
                            new Arg.F64(-2.25)))));
            assertEquals("completed", l.next().what());
            assertEquals(-7, out.get(JAVA_INT, 0));
            assertEquals(1L << 40, out.get(JAVA_LONG, 8));
            assertEquals(1.5f, out.get(JAVA_FLOAT, 16));
            assertEquals(-2.25, out.get(JAVA_DOUBLE, 24));
            int[] shape = new int[7];
            for (int i = 0; i < 7; i++) {
                shape[i] = out.get(JAVA_INT, 32 + 4L * i);
            }
            assertEquals(List.of(3, 2, 1, 64, 2, 1, 128), java.util.Arrays.stream(shape).boxed().toList(),
                    "grid, block and shared memory as launched");
        }
    }

    @Test
    void copyAndMemsetRunInStreamOrder() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        try (Arena a = Arena.ofShared(); var q = p.open("hip0", new HwQueueOptions("mem", null), l)) {
            MemorySegment src = a.allocate(4096);
            MemorySegment dst = a.allocate(4096);
            for (int i = 0; i < 4096; i++) {
                src.set(JAVA_BYTE, i, (byte) i);
            }
            q.launch(cmd(1, new Command.Memset(dst.address(), (byte) 0x5a, 4096)));
            q.launch(cmd(2, new Command.Copy(dst.address() + 100, src.address(), 1000)));
            q.launch(cmd(3, new Command.Memset(dst.address() + 200, (byte) 0xff, 10)));
            for (int i = 1; i <= 3; i++) {
                RecordingListener.Report r = l.next();
                assertEquals("completed", r.what(), () -> String.valueOf(r.cause()));
                assertEquals(i, r.command().sequence());
            }
            for (int i = 0; i < 4096; i++) {
                byte expected;
                if (i >= 200 && i < 210) {
                    expected = (byte) 0xff;
                } else if (i >= 100 && i < 1100) {
                    expected = (byte) (i - 100);
                } else {
                    expected = 0x5a;
                }
                assertEquals(expected, dst.get(JAVA_BYTE, i), "byte " + i);
            }
        }
    }

    @Test
    void nativePrioritiesMapOntoTheDeviceRange() {
        int[][] ranges = {{1, -1}, {0, -1}, {0, -4}, {0, 0}};
        for (int[] range : ranges) {
            HipDouble.configure(1, 4, range[0], range[1]);
            HipPlatform p = start();
            HipDevice d = p.device("hip0");
            assertEquals(range[0], d.leastPriority());
            assertEquals(range[1], d.greatestPriority());
            Integer[] asked = {-1000, -1, 0, 1, 500, 1000, null};
            for (Integer prio : asked) {
                HipQueue q = (HipQueue) p.open("hip0", new HwQueueOptions("p", prio), new RecordingListener());
                try {
                    int expected = prio == null ? 0 : dev.xq.hal.spi.StreamPriorities.toDevice(prio, range[0], range[1]);
                    assertEquals(expected, q.hipPriority(), "priority " + prio + " in " + range[0] + ".." + range[1]);
                    // and the stream really got it, as the library tells
                    assertEquals(expected, apiOf(p).streamPriority(q.stream()));
                } finally {
                    q.close();
                }
            }
            HipQueue top = (HipQueue) p.open("hip0", new HwQueueOptions("top", 1000), new RecordingListener());
            HipQueue bottom = (HipQueue) p.open("hip0", new HwQueueOptions("bottom", -1000), new RecordingListener());
            assertEquals(range[1], top.hipPriority(), "1000 is the most urgent stream");
            assertEquals(range[0], bottom.hipPriority(), "-1000 is the least urgent stream");
            top.close();
            bottom.close();
        }
    }

    @Test
    void mappedPrioritiesDecideWhoseWorkTheDeviceRunsFirst() throws Exception {
        // The double's device has one engine with strict stream priorities, and its "append"
        // kernel logs the order in which the device ran things: so the mapped priority must
        // have reached the stream for these orders to come out.
        assertEquals(List.of(1L, 100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L, 108L, 109L), runOrder(-1000, 1000),
                "an urgent command goes ahead of queued less urgent work (once the running one ends)");
        List<Long> reversed = runOrder(1000, -1000);
        assertEquals(1L, reversed.getLast(), "a less urgent command waits for all queued urgent work: " + reversed);
    }

    /**
     * Queues 10 x (spin, append 100+i) at {@code busyPriority}, the first spin long enough for
     * every launch to be queued while it runs, then append 1 at {@code otherPriority}.
     */
    private List<Long> runOrder(int busyPriority, int otherPriority) throws InterruptedException {
        HipPlatform p = start();
        RecordingListener busy = new RecordingListener();
        RecordingListener other = new RecordingListener();
        try (Arena a = Arena.ofShared();
             var bq = p.open("hip0", new HwQueueOptions("busy", busyPriority), busy);
             var oq = p.open("hip0", new HwQueueOptions("other", otherPriority), other)) {
            MemorySegment log = a.allocate(JAVA_LONG, 32);
            int n = 10;
            for (int i = 0; i < n; i++) {
                bq.launch(cmd(2L * i, Command.spin(i == 0 ? 100_000 : 1000)));
                bq.launch(cmd(2L * i + 1, kernel("append", List.of(new Arg.Ptr(log.address()), new Arg.I64(100 + i)))));
            }
            oq.launch(cmd(0, kernel("append", List.of(new Arg.Ptr(log.address()), new Arg.I64(1)))));
            assertEquals("completed", other.next().what());
            for (int i = 0; i < 2 * n; i++) {
                assertEquals("completed", busy.next().what());
            }
            List<Long> order = new ArrayList<>();
            for (int i = 0; i < log.getAtIndex(JAVA_LONG, 0); i++) {
                order.add(log.getAtIndex(JAVA_LONG, i + 1));
            }
            return order;
        }
    }

    @Test
    void priorityOutOfRangeIsRefused() {
        HipPlatform p = start();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> p.open("hip0", new HwQueueOptions("x", 1001), new RecordingListener()));
        assertTrue(e.getMessage().contains("1001") && e.getMessage().contains("[-1000, 1000]"), e.getMessage());
    }

    @Test
    void badHandlesBecomeHalExceptionsNamingTheCallAndTheError() {
        HipPlatform p = start();
        HipApi api = apiOf(p);
        HalException e = assertThrows(HalException.class, () -> api.streamPriority(MemorySegment.ofAddress(0x1234)));
        assertTrue(e.getMessage().contains("hipStreamGetPriority") && e.getMessage().contains("hipErrorInvalidHandle (400)"),
                e.getMessage());

        // A launch on a stream that HIP no longer knows: refused at once, naming call, command and error.
        HipQueue q = (HipQueue) p.open("hip0", new HwQueueOptions("doomed", null), new RecordingListener());
        assertEquals(HipApi.SUCCESS, api.streamDestroy(q.stream()));
        HalException launch = assertThrows(HalException.class, () -> q.launch(cmd(7, Command.spin(10))));
        assertTrue(launch.getMessage().contains("hipEventRecord") && launch.getMessage().contains("command #7")
                && launch.getMessage().contains("hipErrorInvalidHandle (400)"), launch.getMessage());
        q.close(); // must not throw, though its stream is already gone
    }

    @Test
    void aDeviceFaultFailsThatCommandOnly() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        try (var q = p.open("hip0", new HwQueueOptions("fault", null), l)) {
            q.launch(cmd(1, Command.spin(100)));
            q.launch(cmd(2, kernel("trap", List.of())));
            q.launch(cmd(3, Command.spin(100)));
            RecordingListener.Report r1 = l.next();
            RecordingListener.Report r2 = l.next();
            RecordingListener.Report r3 = l.next();
            assertEquals("completed", r1.what());
            assertEquals("failed", r2.what());
            assertEquals(2, r2.command().sequence());
            assertTrue(r2.cause() instanceof HalException);
            assertTrue(r2.cause().getMessage().contains("hipEventQuery") && r2.cause().getMessage().contains("command #2")
                    && r2.cause().getMessage().contains("hipErrorLaunchFailure (719)"), r2.cause().getMessage());
            assertEquals("completed", r3.what());
            assertEquals(3, r3.command().sequence());
        }
    }

    @Test
    void spinWithoutASpinModuleIsRefusedClearly() {
        HipPlatform p = start(HipDouble.settings().withSpinModule(null));
        DeviceDescriptor d = p.devices().getFirst();
        assertFalse(d.commandKinds().contains("spin"));
        try (var q = p.open("hip0", new HwQueueOptions("nospin", null), new RecordingListener())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> q.check(Command.spin(5)));
            assertTrue(e.getMessage().contains("hip0 cannot run spin commands") && e.getMessage().contains("spinModule")
                    && e.getMessage().contains(HipSettings.ENV_SPIN_MODULE), e.getMessage());
            assertThrows(HalException.class, () -> q.launch(cmd(1, Command.spin(5))));
            q.check(kernel("spin", List.of(new Arg.I64(5)))); // kernels still fine
        }
    }

    @Test
    void aBrokenSpinModuleIsReportedNotFatal(@TempDir Path tmp) throws IOException {
        Path bad = Files.writeString(tmp.resolve("bad.hsaco"), "not a code object");
        HipPlatform p = start(HipDouble.settings().withSpinModule(bad));
        assertEquals(1, p.devices().size());
        String why = p.devices().getFirst().properties().get("hip.spin");
        assertTrue(why.contains("hipModuleLoadData") && why.contains("hipErrorInvalidImage (200)") && why.contains(bad.toString()), why);
    }

    @Test
    void kernelsOfUnknownModulesOrFunctionsOrShapesAreRefused(@TempDir Path tmp) throws IOException {
        Path garbage = Files.writeString(tmp.resolve("garbage.hsaco"), "garbage");
        HipPlatform p = start(HipDouble.settings().withModules(Map.of("test", HipDouble.module(), "garbage", garbage,
                "gone", tmp.resolve("missing.hsaco"))));
        try (var q = p.open("hip0", new HwQueueOptions("k", null), new RecordingListener())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> q.check(new Command.Kernel("nope", "spin", new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0, List.of())));
            assertTrue(e.getMessage().contains("'nope'") && e.getMessage().contains("test"), e.getMessage());

            e = assertThrows(IllegalArgumentException.class, () -> q.check(kernel("missing", List.of())));
            assertTrue(e.getMessage().contains("hipModuleGetFunction") && e.getMessage().contains("hipErrorNotFound (500)")
                    && e.getMessage().contains("'missing'"), e.getMessage());

            e = assertThrows(IllegalArgumentException.class,
                    () -> q.check(new Command.Kernel("garbage", "f", new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0, List.of())));
            assertTrue(e.getMessage().contains("hipModuleLoadData") && e.getMessage().contains("hipErrorInvalidImage (200)"),
                    e.getMessage());

            e = assertThrows(IllegalArgumentException.class,
                    () -> q.check(new Command.Kernel("gone", "f", new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0, List.of())));
            assertTrue(e.getMessage().contains("cannot read") && e.getMessage().contains("missing.hsaco"), e.getMessage());

            e = assertThrows(IllegalArgumentException.class,
                    () -> q.check(new Command.Kernel("test", "probe", new Dim3(1, 1, 1), new Dim3(2048, 1, 1), 0, List.of())));
            assertTrue(e.getMessage().contains("2048 threads") && e.getMessage().contains("1024"), e.getMessage());

            e = assertThrows(IllegalArgumentException.class,
                    () -> q.check(new Command.Kernel("test", "probe", new Dim3(1, 1, 1), new Dim3(1, 1, 1), 1 << 20, List.of())));
            assertTrue(e.getMessage().contains("1048576 bytes of shared memory") && e.getMessage().contains("65536"), e.getMessage());

            e = assertThrows(IllegalArgumentException.class, () -> q.check(new Command.Copy(0, 8, 16)));
            assertTrue(e.getMessage().contains("copy of 16 bytes"), e.getMessage());
        }
    }

    @Test
    void noDeviceIsReportedCleanly() {
        HipDouble.configure(0, 4, 1, -1);
        HipPlatform p = start();
        assertTrue(p.status().startsWith("no device: hipGetDeviceCount returned hipErrorNoDevice (100)"), p.status());
        assertEquals(List.of(), p.devices());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> p.open("hip0", new HwQueueOptions("x", null), new RecordingListener()));
        assertTrue(e.getMessage().contains("unknown hip device 'hip0'") && e.getMessage().contains("none (no device"), e.getMessage());
    }

    @Test
    void twoDevicesEachRunTheirOwnQueues() throws Exception {
        HipDouble.configure(2, 6, 1, -1);
        HipPlatform p = start();
        assertEquals(List.of("hip0", "hip1"), p.devices().stream().map(DeviceDescriptor::id).toList());
        assertTrue(p.status().startsWith("2 devices"), p.status());
        RecordingListener l0 = new RecordingListener();
        RecordingListener l1 = new RecordingListener();
        // The double refuses a function of a module loaded on another device than the stream's,
        // so this also shows that modules and streams land on the device they belong to.
        try (var q0 = p.open("hip0", new HwQueueOptions("a", null), l0); var q1 = p.open("hip1", new HwQueueOptions("b", null), l1)) {
            q1.launch(cmd(1, Command.spin(100)));
            q1.launch(cmd(2, kernel("append", List.of(new Arg.Ptr(0), new Arg.I64(1)))));
            q0.launch(cmd(1, kernel("append", List.of(new Arg.Ptr(0), new Arg.I64(1)))));
            for (int i = 1; i <= 2; i++) {
                RecordingListener.Report r = l1.next();
                assertEquals("completed", r.what(), () -> String.valueOf(r.cause()));
            }
            assertEquals("completed", l0.next().what());
        }
    }

    @Test
    void oneCompletionThreadPerDeviceServesManyQueues() throws Exception {
        HipPlatform p = start();
        List<RecordingListener> listeners = new ArrayList<>();
        List<dev.xq.hal.spi.HwQueue> queues = new ArrayList<>();
        try {
            for (int i = 0; i < 16; i++) {
                RecordingListener l = new RecordingListener();
                listeners.add(l);
                queues.add(p.open("hip0", new HwQueueOptions("q" + i, i * 100 - 800), l));
            }
            for (int c = 0; c < 5; c++) {
                for (var q : queues) {
                    q.launch(cmd(c, Command.spin(200)));
                }
            }
            for (RecordingListener l : listeners) {
                for (int c = 0; c < 5; c++) {
                    RecordingListener.Report r = l.next();
                    assertEquals("completed", r.what());
                    assertEquals(c, r.command().sequence());
                }
            }
            long pollers = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("xq-hip-poller-hip0")).count();
            assertEquals(1, pollers);
        } finally {
            queues.forEach(dev.xq.hal.spi.HwQueue::close);
        }
    }

    @Test
    void closingQueuesAndTheDriverReleasesEveryHandle() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        var q = p.open("hip0", new HwQueueOptions("leak", null), l);
        for (int i = 0; i < 20; i++) {
            q.launch(cmd(i, Command.spin(10)));
        }
        for (int i = 0; i < 20; i++) {
            assertEquals("completed", l.next().what());
        }
        assertTrue(HipDouble.liveHandles() > handlesBefore, "the queue holds a stream, events and a module");
        q.close();
        p.close();
        assertEquals(handlesBefore, HipDouble.liveHandles(), "streams, events and modules after close");
    }

    @Test
    void stoppingTheDriverReportsInFlightCommandsLost() throws Exception {
        HipPlatform p = start();
        RecordingListener l = new RecordingListener();
        var q = p.open("hip0", new HwQueueOptions("long", null), l);
        q.launch(cmd(1, Command.spin(300_000)));
        p.close();
        RecordingListener.Report r = l.next();
        assertEquals("lost", r.what());
        assertTrue(r.cause().getMessage().contains("hip driver stopped"), r.cause().getMessage());
        assertTrue(p.status().contains("driver stopped"), p.status());
        HalException e = assertThrows(HalException.class, () -> q.launch(cmd(2, Command.spin(1))));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertEquals(null, l.poll(200), "nothing is reported after lost");
    }

    @Test
    void nativeHandleIsTheStreamAddress() {
        HipPlatform p = start();
        try (var q = (HipQueue) p.open("hip0", new HwQueueOptions("h", null), new RecordingListener())) {
            assertNotEquals(0L, q.stream().address());
            assertEquals(java.util.Optional.of(new dev.xq.hal.spi.StreamHandle.Hip(q.stream().address())),
                    q.nativeHandle(dev.xq.hal.spi.StreamHandle.Hip.class));
            assertTrue(q.nativeHandle(dev.xq.hal.spi.StreamHandle.Cuda.class).isEmpty(), "a HIP stream is no CUDA stream");
            assertEquals("hip", q.platform());
            assertEquals("hip0", q.deviceId());
            assertTrue(q.preemption().isEmpty(), "the HIP adapter offers level 1 only by itself");
        }
    }

    static HipApi apiOf(HipPlatform p) {
        return p.api();
    }
}
