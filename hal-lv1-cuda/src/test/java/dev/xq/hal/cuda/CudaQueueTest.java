package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The adapter's whole launch and completion path, run against {@link CudaDouble} through the
 * same FFM downcalls that reach libcuda on a GPU machine.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
class CudaQueueTest {

    private final CudaDouble cuda = new CudaDouble();
    private CudaPlatform platform;

    private CudaPlatform start(CudaSettings settings) {
        platform = CudaPlatform.start(cuda.api(), settings, RuntimeLog.NONE);
        assertTrue(platform.status().startsWith("1 device: cuda0"), platform.status());
        return platform;
    }

    private CudaPlatform start() {
        return start(CudaSettings.defaults());
    }

    @AfterEach
    void tearDown() {
        if (platform != null) {
            platform.close();
            assertEquals(0, cuda.retainedContexts.get(), "primary context still retained after close");
            assertEquals(0, cuda.liveStreams.get(), "streams left after close");
            assertEquals(0, cuda.liveEvents.get(), "events left after close");
        }
        assertEquals(List.of(), cuda.errors(), "the double saw bad calls");
        cuda.close();
    }

    private static HwCommand cmd(long seq, Command c) {
        return new HwCommand(seq, c);
    }

    @Test
    void descriptorDescribesTheDevice() {
        start();
        List<DeviceDescriptor> ds = platform.devices();
        assertEquals(1, ds.size());
        DeviceDescriptor d = ds.get(0);
        assertEquals("cuda0", d.id());
        assertEquals("XQ CUDA double 0", d.name());
        assertEquals(PreemptionLevel.DEACTIVATE, d.maxLevel());
        assertEquals(4, d.engines());
        assertEquals(80L << 30, d.memoryBytes());
        assertEquals(Set.of("spin", "kernel", "copy", "memset", "write", "read", "fill", "launch"), d.commandKinds());
        assertEquals("9.0", d.properties().get("computeCapability"));
        assertEquals("13.0", d.properties().get("driver"));
        assertEquals("0 (least) .. -5 (greatest)", d.properties().get("streamPriorities"));
        assertEquals("poll", d.properties().get("completion"));
        assertTrue(platform.status().contains("4 SMs"), platform.status());
    }

    @ParameterizedTest
    @EnumSource(CompletionMode.class)
    void spinCommandsCompleteInOrderWithDeviceTimes(CompletionMode mode) {
        start(CudaSettings.defaults().withCompletion(mode).withTiming(true));
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("spin", null), l);
        int n = 20;
        long launchedAt = System.nanoTime();
        for (int i = 0; i < n; i++) {
            q.launch(cmd(i, Command.spin(500)));
        }
        assertTrue(l.await(n), "only " + l.reports.size() + " of " + n + " reported in mode " + mode);
        assertEquals(n, cuda.kernelEnds.size(), "kernels the double ran");
        long prevEnd = 0;
        for (int i = 0; i < n; i++) {
            RecordingListener.Report r = l.reports.get(i);
            assertEquals("completed", r.what(), "report " + i + ": " + r);
            assertEquals(i, r.command().sequence(), "out of order");
            long duration = r.endNanos() - r.startNanos();
            // the double's kernel spins exactly 500 us; generous bounds for a loaded CI machine
            assertTrue(duration >= 450_000 && duration < 500_000_000L, "device time " + duration + " ns");
            assertTrue(r.startNanos() >= launchedAt - 200_000, "start before the launch");
            assertTrue(r.startNanos() >= prevEnd - 200_000, "command " + i + " started before its predecessor ended");
            // against the double's own record of the kernel's end (the same clock, no mapping): the
            // mapped endNanos is fitted through calibration points and may be off on a loaded machine
            assertTrue(r.seenNanos() >= cuda.kernelEnds.get(i), "reported before it ended");
            prevEnd = r.endNanos();
        }
        if (mode == CompletionMode.HOST_FUNC) {
            // the double counts a host function after it returns, which may be after the report
            assertTrue(RecordingListener.awaitThat(() -> cuda.hostFuncsRun.get() >= n),
                    "host functions run: " + cuda.hostFuncsRun.get());
        }
        q.close();
    }

    @Test
    void theNextCommandMayBeLaunchedFromInsideCompleted() {
        start();
        AtomicReference<HwQueue> queue = new AtomicReference<>();
        RecordingListener log = new RecordingListener();
        int n = 50;
        HwQueueListener chain = new HwQueueListener() {
            @Override
            public void completed(HwCommand command, long startNanos, long endNanos) {
                log.completed(command, startNanos, endNanos);
                if (command.sequence() + 1 < n) {
                    queue.get().launch(cmd(command.sequence() + 1, Command.spin(50)));
                }
            }

            @Override
            public void failed(HwCommand command, Throwable cause) {
                log.failed(command, cause);
            }

            @Override
            public void lost(Throwable cause) {
                log.lost(cause);
            }
        };
        queue.set(platform.open("cuda0", new HwQueueOptions("chain", null), chain));
        queue.get().launch(cmd(0, Command.spin(50)));
        assertTrue(log.await(n), "chain stopped after " + log.reports.size());
        assertTrue(log.reports.stream().allMatch(r -> r.what().equals("completed")));
    }

    /**
     * Regression: the poll thread once slept until a long command's predicted end while a short
     * command on another queue had not started yet, so the short queue got one command through
     * per long command. Counted, not timed: with the fault A's count stays near B's.
     */
    @Test
    void aShortQueueIsNotHeldUpByALongOneInPollMode() throws Exception {
        start();
        java.util.concurrent.atomic.AtomicInteger a = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger b = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicReference<HwQueue> qa = new AtomicReference<>();
        AtomicReference<HwQueue> qb = new AtomicReference<>();
        qa.set(platform.open("cuda0", new HwQueueOptions("short", null), chainOf(qa, a, stop, 50)));
        qb.set(platform.open("cuda0", new HwQueueOptions("long", null), chainOf(qb, b, stop, 2000)));
        qb.get().launch(cmd(0, Command.spin(2000)));
        qa.get().launch(cmd(0, Command.spin(50)));
        Thread.sleep(300);
        stop.set(true);
        Thread.sleep(20);
        qa.get().close();
        qb.get().close();
        assertTrue(b.get() > 10, "the long queue ran only " + b.get() + " commands");
        assertTrue(a.get() >= 3 * b.get(), "short queue: " + a.get() + " commands beside " + b.get() + " long ones");
    }

    private static HwQueueListener chainOf(AtomicReference<HwQueue> q, java.util.concurrent.atomic.AtomicInteger done,
                                           java.util.concurrent.atomic.AtomicBoolean stop, long micros) {
        return new HwQueueListener() {
            @Override
            public void completed(HwCommand command, long startNanos, long endNanos) {
                int n = done.incrementAndGet();
                if (!stop.get()) {
                    q.get().launch(cmd(n, Command.spin(micros)));
                }
            }

            @Override
            public void failed(HwCommand command, Throwable cause) {
                throw new AssertionError("failed: " + cause);
            }

            @Override
            public void lost(Throwable cause) {
                throw new AssertionError("lost: " + cause);
            }
        };
    }

    @Test
    void probeKernelReceivesEveryArgumentThroughKernelParams() {
        start();
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("probe", null), l);
        CudaDevice d = platform.device("cuda0");
        d.makeCurrent();
        long out = platform.api().memAlloc(24);
        Command.Kernel probe = new Command.Kernel("spin", "xq_probe", new Command.Dim3(1, 1, 1), new Command.Dim3(1, 1, 1), 0,
                List.of(new Arg.Ptr(out), new Arg.I32(-123456), new Arg.I64(0x1234_5678_9abc_def0L), new Arg.F32(3.25f),
                        new Arg.F64(-1e300)));
        q.check(probe);
        q.launch(cmd(0, probe));
        assertTrue(l.await(1));
        assertEquals("completed", l.reports.get(0).what());
        MemorySegment m = MemorySegment.ofAddress(out).reinterpret(24);
        assertEquals(-123456, m.get(JAVA_INT, 0));
        assertEquals(3.25f, m.get(JAVA_FLOAT, 4));
        assertEquals(0x1234_5678_9abc_def0L, m.get(JAVA_LONG, 8));
        assertEquals(-1e300, m.get(JAVA_DOUBLE, 16));
    }

    @Test
    void memsetThenCopyRoundTrip() {
        start();
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("mem", null), l);
        platform.device("cuda0").makeCurrent();
        long a = platform.api().memAlloc(4096);
        long b = platform.api().memAlloc(4096);
        MemorySegment.ofAddress(b).reinterpret(4096).fill((byte) 0);
        q.launch(cmd(0, new Command.Memset(a, (byte) 0xA5, 4096)));
        q.launch(cmd(1, new Command.Copy(b, a, 4096)));
        assertTrue(l.await(2));
        MemorySegment out = MemorySegment.ofAddress(b).reinterpret(4096);
        for (long i = 0; i < 4096; i++) {
            assertEquals((byte) 0xA5, out.get(JAVA_BYTE, i), "byte " + i);
        }
    }

    @Test
    void checkRefusesWhatTheDeviceCannotRun() {
        start();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("check", null), new RecordingListener());
        Command.Dim3 one = new Command.Dim3(1, 1, 1);
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> q.check(new Command.Kernel("gemm", "k", one, one, 0, List.of())));
        assertTrue(unknown.getMessage().contains("module 'gemm' is not configured for cuda0; known: [spin]"),
                unknown.getMessage());
        IllegalArgumentException fn = assertThrows(IllegalArgumentException.class,
                () -> q.check(new Command.Kernel("spin", "nope", one, one, 0, List.of())));
        assertTrue(fn.getMessage().contains("module 'spin' has no kernel 'nope'"), fn.getMessage());
        IllegalArgumentException args = assertThrows(IllegalArgumentException.class,
                () -> q.check(new Command.Kernel("spin", "xq_spin", one, one, 0, List.of(new Arg.I32(1)))));
        assertTrue(args.getMessage().contains("parameter #0 is 8 bytes"), args.getMessage());
        IllegalArgumentException threads = assertThrows(IllegalArgumentException.class,
                () -> q.check(new Command.Kernel("spin", "xq_spin", one, new Command.Dim3(1024, 2, 1), 0,
                        List.of(new Arg.I64(1)))));
        assertTrue(threads.getMessage().contains("2048 threads; cuda0 allows at most 1024"), threads.getMessage());
        assertThrows(IllegalArgumentException.class, () -> q.check(new Command.Copy(0, 64, 8)));
        assertThrows(IllegalArgumentException.class, () -> q.check(new Command.Memset(0, (byte) 1, 8)));
        assertThrows(IllegalArgumentException.class, () -> q.check(Command.spin(10, 1, 1L << 50)));
        q.check(Command.spin(10));
        q.check(new Command.Kernel("spin", "xq_spin", one, one, 0, List.of(new Arg.I64(1))));
    }

    @Test
    void configuredModulesLoadFromFilesAndBadOnesShowTheJitLog(@TempDir Path dir) throws Exception {
        Path good = Files.writeString(dir.resolve("good.ptx"), """
                .version 7.0
                .target sm_70
                .address_size 64
                .visible .entry twice(.param .u64 out, .param .u32 n) { ret; }
                """);
        Path bad = Files.writeString(dir.resolve("bad.ptx"), "this is not PTX");
        start(CudaSettings.defaults().withModules(Map.of("good", good, "bad", bad, "gone", dir.resolve("gone.ptx"))));
        HwQueue q = platform.open("cuda0", new HwQueueOptions("mods", null), new RecordingListener());
        Command.Dim3 one = new Command.Dim3(1, 1, 1);
        q.check(new Command.Kernel("good", "twice", one, one, 0, List.of(new Arg.Ptr(8), new Arg.I32(3))));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> q.check(new Command.Kernel("bad", "twice", one, one, 0, List.of())));
        assertTrue(e.getMessage().contains("module 'bad' (" + bad + ") does not load on cuda0: CUDA_ERROR_INVALID_PTX (218)"),
                e.getMessage());
        assertTrue(e.getMessage().contains("JIT log: ptxas fatal"), e.getMessage());
        IllegalArgumentException gone = assertThrows(IllegalArgumentException.class,
                () -> q.check(new Command.Kernel("gone", "twice", one, one, 0, List.of())));
        assertTrue(gone.getMessage().contains("module 'gone' cannot be read from"), gone.getMessage());
        assertEquals("bad, gone, good, spin", platform.devices().get(0).properties().get("modules"));
    }

    @Test
    void nativePriorityPicksTheStreamPriority() {
        start();
        int before = cuda.streamPriorities.size();
        CudaQueue high = (CudaQueue) platform.open("cuda0", new HwQueueOptions("high", 1000), new RecordingListener());
        CudaQueue low = (CudaQueue) platform.open("cuda0", new HwQueueOptions("low", -1000), new RecordingListener());
        CudaQueue none = (CudaQueue) platform.open("cuda0", new HwQueueOptions("none", null), new RecordingListener());
        assertEquals(-5, high.cudaPriority());
        assertEquals(0, low.cudaPriority());
        assertEquals(0, none.cudaPriority());
        assertEquals(List.of(-5, 0, 0), cuda.streamPriorities.subList(before, before + 3));
        int streams = cuda.liveStreams.get();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> platform.open("cuda0", new HwQueueOptions("bad", 1001), new RecordingListener()));
        assertTrue(e.getMessage().contains("native priority 1001 is out of range"), e.getMessage());
        assertEquals(streams, cuda.liveStreams.get(), "a refused open must create no stream");
    }

    @Test
    void aLaunchTheDriverRefusesThrowsAndIsNeverReported() throws Exception {
        start();
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("refused", null), l);
        cuda.failNextLaunch = CudaApi.CUDA_ERROR_INVALID_VALUE;
        HalException e = assertThrows(HalException.class, () -> q.launch(cmd(0, Command.spin(10))));
        assertTrue(e.getMessage().contains("cuLaunchKernel") && e.getMessage().contains("CUDA_ERROR_INVALID_VALUE (1)"),
                e.getMessage());
        q.launch(cmd(1, Command.spin(10)));
        assertTrue(l.await(1));
        Thread.sleep(20);
        assertEquals(1, l.reports.size());
        assertEquals(1, l.reports.get(0).command().sequence());
    }

    @Test
    void aFaultingKernelFailsItsCommandAndLosesEveryQueueOfTheDevice() {
        start();
        RecordingListener l1 = new RecordingListener();
        RecordingListener l2 = new RecordingListener();
        HwQueue q1 = platform.open("cuda0", new HwQueueOptions("one", null), l1);
        HwQueue q2 = platform.open("cuda0", new HwQueueOptions("two", null), l2);
        cuda.faultNextKernel = CudaApi.CUDA_ERROR_ILLEGAL_ADDRESS;
        q1.launch(cmd(0, Command.spin(10)));
        assertTrue(l1.await(2), "reports: " + l1.reports);
        assertEquals("failed", l1.reports.get(0).what());
        assertTrue(l1.reports.get(0).cause().getMessage().contains("CUDA_ERROR_ILLEGAL_ADDRESS (700)"));
        assertEquals("lost", l1.reports.get(1).what());
        assertTrue(l2.await(1));
        assertEquals("lost", l2.reports.get(0).what());
        assertTrue(platform.devices().isEmpty(), "a failed device takes no queues");
        assertTrue(platform.status().startsWith("0 devices: cuda0") && platform.status().contains("FAILED"), platform.status());
        HalException again = assertThrows(HalException.class, () -> q2.launch(cmd(0, Command.spin(10))));
        assertTrue(again.getMessage().contains("is lost"), again.getMessage());
    }

    @Test
    void closingReleasesTheStreamAndEventsAndStopsReports() throws Exception {
        start();
        int streams = cuda.liveStreams.get();
        int events = cuda.liveEvents.get();
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("closing", null), l);
        for (int i = 0; i < 5; i++) {
            q.launch(cmd(i, Command.spin(10)));
        }
        assertTrue(l.await(5));
        q.launch(cmd(5, Command.spin(50_000)));
        q.close();
        HalException e = assertThrows(HalException.class, () -> q.launch(cmd(6, Command.spin(10))));
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        assertTrue(RecordingListener.awaitThat(() -> cuda.liveStreams.get() == streams && cuda.liveEvents.get() == events),
                "streams " + cuda.liveStreams.get() + " events " + cuda.liveEvents.get());
        Thread.sleep(80);
        assertEquals(5, l.reports.size(), "a closed queue reports nothing more");
    }

    @Test
    void stoppingThePlatformReportsOpenQueuesLost() {
        start();
        RecordingListener l = new RecordingListener();
        platform.open("cuda0", new HwQueueOptions("open", null), l).launch(cmd(0, Command.spin(20_000)));
        platform.close();
        assertEquals(1, l.reports.size());
        assertEquals("lost", l.reports.get(0).what());
        assertTrue(l.reports.get(0).cause().getMessage().contains("driver stopped"));
        platform = null;
        assertEquals(0, cuda.retainedContexts.get());
        assertEquals(0, cuda.liveStreams.get());
    }

    @Test
    void aThreadThatNeverUsedCudaCanLaunch() throws Exception {
        start();
        RecordingListener l = new RecordingListener();
        HwQueue q = platform.open("cuda0", new HwQueueOptions("fresh", null), l);
        Thread t = Thread.ofPlatform().start(() -> q.launch(cmd(0, Command.spin(10))));
        t.join();
        assertTrue(l.await(1));
        assertEquals("completed", l.reports.get(0).what());
        assertNotNull(l.reports.get(0).command());
    }

    /** Slack for times put on the host clock through the device clock's mapping (points up to 100 us wide). */
    private static final long MAPPING_SLACK_NANOS = 2_000_000L;

    /**
     * Checks the times of {@code n} back-to-back commands of {@code spinMicros} each, all launched
     * at {@code launchedAt}, against the double's record of their kernels. Ends are seen (the
     * default under {@code poll}): between the kernel's end and the report. A start is either a
     * start event's time (stamped after the launch was called and before the kernel began) or,
     * when chained, exactly the predecessor's reported end; so a predecessor seen late shortens the
     * reported length of its follower by as much, and no command's length is checked alone.
     */
    private static void assertChain(List<RecordingListener.Report> reports, CudaDouble d, int n, long spinMicros,
            long launchedAt, boolean chained) {
        for (int i = 0; i < n; i++) {
            RecordingListener.Report r = reports.get(i);
            assertEquals("completed", r.what());
            long realStart = d.kernelStarts.get(i);
            long realEnd = d.kernelEnds.get(i);
            assertTrue(r.endNanos() >= realEnd && r.endNanos() <= r.seenNanos(), "command " + i + " end "
                    + (r.endNanos() - realEnd) / 1000 + " us after the kernel's: it must lie between that and its report");
            if (i > 0 && chained) {
                assertEquals(reports.get(i - 1).endNanos(), r.startNanos(), "command " + i + " starts where " + (i - 1) + " ended");
            } else {
                assertTrue(r.startNanos() >= launchedAt - MAPPING_SLACK_NANOS && r.startNanos() <= realStart + MAPPING_SLACK_NANOS,
                        "command " + i + " reported starting " + (r.startNanos() - launchedAt) / 1000 + " us after the launch and "
                                + (realStart - r.startNanos()) / 1000 + " us before its kernel");
            }
        }
        long span = reports.get(n - 1).endNanos() - reports.get(0).startNanos();
        assertTrue(span >= n * spinMicros * 1000 - MAPPING_SLACK_NANOS, "the chain spans " + span / 1000 + " us");
    }

    @Test
    void commandsQueuedBehindAnotherAreChainedToItsEnd() {
        for (boolean every : new boolean[] {false, true}) {
            try (CudaDouble d = new CudaDouble()) {
                CudaPlatform p = CudaPlatform.start(d.api(), CudaSettings.defaults().withEveryStartEvent(every), RuntimeLog.NONE);
                try {
                    RecordingListener l = new RecordingListener();
                    HwQueue q = p.open("cuda0", new HwQueueOptions("chain", null), l);
                    long launchedAt = System.nanoTime();
                    for (int i = 0; i < 4; i++) {
                        q.launch(new HwCommand(i, Command.spin(20_000)));
                    }
                    assertTrue(l.await(4));
                    assertEquals(every ? 8 : 5, d.eventsRecordedOn(((CudaQueue) q).stream()), "events recorded with startEvents=" + (every ? "every" : "chained"));
                    assertChain(l.reports, d, 4, 20_000, launchedAt, !every);
                    q.close();
                } finally {
                    p.close();
                }
            }
        }
    }

    @Test
    void seenTimingEndsAreUntimedEventsAndEndWhenSeen() {
        try (CudaDouble d = new CudaDouble()) {
            CudaPlatform p = CudaPlatform.start(d.api(), CudaSettings.defaults().withTiming(false), RuntimeLog.NONE);
            try {
                RecordingListener l = new RecordingListener();
                HwQueue q = p.open("cuda0", new HwQueueOptions("seen", null), l);
                long launchedAt = System.nanoTime();
                for (int i = 0; i < 3; i++) {
                    q.launch(new HwCommand(i, Command.spin(20_000)));
                }
                assertTrue(l.await(3));
                assertEquals(3, d.untimedEventsRecorded.get(), "each end should be an event without timing");
                assertChain(l.reports, d, 3, 20_000, launchedAt, true);
                q.close();
            } finally {
                p.close();
            }
        }
    }
}
