package dev.xq.hal.sim;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.CodeModule;
import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.Command.Dim3;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.KernelFunction;
import dev.xq.api.QueueOptions;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.runtime.engine.ClientService;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The host API (buffers, data commands, modules loaded at run time) on the simulated device, through the engine. */
class HostApiOnSimTest {

    static final String PROGRAM = """
            xq-sim-program 1
            # the CUDA kernels' names, so one host program drives both
            kernel xq_matmul_tiled matmul_f32
            kernel xq_saxpy saxpy_f32
            """;
    private static final Duration LONG = Duration.ofSeconds(30);

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private SimDevice a;
    private SimDevice b;
    private final Map<String, SimDriver> drivers = new java.util.HashMap<>();

    @BeforeEach
    void start() {
        a = new SimDevice(SimSettings.from(Map.of("memoryBytes", 1L << 20), "sima"));
        b = new SimDevice(SimSettings.from(Map.of(), "simb"));
        drivers.put("sima", new SimDriver(a));
        drivers.put("simb", new SimDriver(b));
        core.addDriver(drivers.get("sima"));
        core.addDriver(drivers.get("simb"));
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
        a.shutdown("test over");
        b.shutdown("test over");
    }

    private static float[] random(Random r, int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = r.nextInt(17) - 8; // small integers: every sum is exact in float
        }
        return f;
    }

    @Test
    void matmulComputesOnTheDeviceAndTheReadSeesItWhenItCompletes() throws Exception {
        int m = 33;
        int n = 20;
        int k = 17;
        Random r = new Random(7);
        float[] ah = random(r, m * k);
        float[] bh = random(r, k * n);
        float[] expect = new float[m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                float s = 0;
                for (int p = 0; p < k; p++) {
                    s += ah[i * k + p] * bh[p * n + j];
                }
                expect[i * n + j] = s;
            }
        }
        CodeModule mod = core.load("sima", "prog", PROGRAM.getBytes(StandardCharsets.UTF_8));
        KernelFunction mm = mod.function("xq_matmul_tiled");
        assertEquals(List.of(8L, 8L, 8L, 4L, 4L, 4L), mm.parameterSizes().orElseThrow());
        try (XQueue q = core.create(QueueOptions.on("sima").named("mm"));
             DeviceBuffer da = core.allocate("sima", 4L * m * k);
             DeviceBuffer db = core.allocate("sima", 4L * k * n);
             DeviceBuffer dc = core.allocate("sima", 4L * m * n)) {
            q.submit(Command.write(da, MemorySegment.ofArray(ah)));
            q.submit(Command.write(db, MemorySegment.ofArray(bh)));
            q.submit(Command.fill(dc, (byte) 0x7f));
            Submission launch = q.submit(new Command.Launch(mm, new Dim3((n + 15) / 16, (m + 15) / 16, 1), new Dim3(16, 16, 1), 0,
                    List.of(new Arg.Buf(da), new Arg.Buf(db), new Arg.Buf(dc), new Arg.I32(m), new Arg.I32(n), new Arg.I32(k))));
            float[] c = new float[m * n];
            Submission read = q.submit(Command.read(dc, MemorySegment.ofArray(c)));
            read.await(LONG);
            assertArrayEquals(expect, c);
            long flops = 2L * m * n * k;
            assertTrue(launch.await(LONG).deviceNanos() >= flops / SimMemory.FLOPS_PER_MICRO * 1000,
                    "the launch took its modelled device time: " + launch.await(LONG));
        }
    }

    @Test
    void saxpyAndOffsetsAndNativeSegments() throws Exception {
        KernelFunction saxpy = core.load("sima", "prog", PROGRAM.getBytes(StandardCharsets.UTF_8)).function("xq_saxpy");
        try (XQueue q = core.create(QueueOptions.on("sima").named("sx"));
             DeviceBuffer x = core.allocate("sima", 4 * 8);
             DeviceBuffer y = core.allocate("sima", 4 * 8);
             Arena arena = Arena.ofShared()) {
            MemorySegment host = arena.allocate(4 * 8);
            for (int i = 0; i < 8; i++) {
                host.setAtIndex(JAVA_FLOAT, i, i);
            }
            q.submit(Command.write(x, host));
            q.submit(Command.fill(y, (byte) 0));
            q.submit(new Command.Write(y, 4 * 4, MemorySegment.ofArray(new float[] {1, 1, 1, 1})));
            Submission launch = q.submit(new Command.Launch(saxpy, new Dim3(1, 1, 1), new Dim3(256, 1, 1), 0,
                    List.of(new Arg.I32(8), new Arg.F32(2f), new Arg.Buf(x), new Arg.Buf(y))));
            float[] out = new float[4];
            q.submit(new Command.Read(y, 4 * 4, MemorySegment.ofArray(out))).await(LONG);
            launch.await(LONG);
            assertArrayEquals(new float[] {9, 11, 13, 15}, out);
        }
    }

    @Test
    void badCommandsAreRefusedAtSubmitNamingTheValueAndChangeNothing() throws Exception {
        KernelFunction mm = core.load("sima", "prog", PROGRAM.getBytes(StandardCharsets.UTF_8)).function("xq_matmul_tiled");
        try (XQueue q = core.create(QueueOptions.on("sima").named("bad"))) {
            DeviceBuffer small = core.allocate("sima", 16);
            DeviceBuffer other = core.allocate("simb", 16);
            String e = assertThrows(IllegalArgumentException.class, () -> q.submit(Command.write(other, MemorySegment.ofArray(new byte[4]))))
                    .getMessage();
            assertTrue(e.contains("is on simb") && e.contains("use a buffer of sima"), e);
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Write(small, 8, MemorySegment.ofArray(new byte[9]))))
                    .getMessage();
            assertTrue(e.contains("write of 9 bytes at offset 8 is out of range") && e.contains("offset + bytes <= 16"), e);
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Read(small, 0, MemorySegment.ofArray(new byte[17]))))
                    .getMessage();
            assertTrue(e.contains("read of 17 bytes"), e);
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Launch(mm, new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0,
                    List.of(new Arg.Buf(small), new Arg.I32(1))))).getMessage();
            assertTrue(e.contains("takes 6 parameters") && e.contains("2 arguments were given"), e);
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Launch(mm, new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0,
                    List.of(new Arg.Buf(small), new Arg.Buf(small), new Arg.Buf(small), new Arg.I32(1), new Arg.I64(1), new Arg.I32(1)))))
                    .getMessage();
            assertTrue(e.contains("parameter #4 is 4 bytes") && e.contains("is 8 bytes"), e);
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(new Command.Launch(mm, new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0,
                    List.of(new Arg.Buf(small), new Arg.Buf(other), new Arg.Buf(small), new Arg.I32(1), new Arg.I32(1), new Arg.I32(1)))))
                    .getMessage();
            assertTrue(e.contains("argument #1") && e.contains("is on simb"), e);
            small.close();
            assertFalse(small.isOpen());
            e = assertThrows(IllegalArgumentException.class, () -> q.submit(Command.fill(small, (byte) 1))).getMessage();
            assertTrue(e.contains("buffer #" + small.id()) && e.contains("was freed"), e);
            try (Arena confined = Arena.ofConfined()) {
                e = assertThrows(IllegalArgumentException.class, () -> Command.write(small, confined.allocate(4))).getMessage();
                assertTrue(e.contains("confined to one thread"), e);
            }
            assertEquals(0, q.status().submitted(), "nothing was submitted");
            // the refused launch with another device's buffer gave back the uses it took: other frees at once
            other.close();
            assertEquals(0, b.memory().bufferCount(), "simb's buffer freed");
            assertEquals(0, a.memory().bufferCount(), "sima's buffer freed");
        }
    }

    @Test
    void badAllocationsAndProgramsAreRefused() {
        String e = assertThrows(IllegalArgumentException.class, () -> core.allocate("nope", 16)).getMessage();
        assertTrue(e.contains("device 'nope' is unknown") && e.contains("sima"), e);
        e = assertThrows(IllegalArgumentException.class, () -> core.allocate("sima", 0)).getMessage();
        assertTrue(e.contains("buffer of 0 bytes is out of range [1, 1048576]"), e);
        e = assertThrows(IllegalArgumentException.class, () -> core.allocate("sima", (1L << 20) + 1)).getMessage();
        assertTrue(e.contains("out of range"), e);
        DeviceBuffer most = core.allocate("sima", 1L << 19);
        e = assertThrows(IllegalArgumentException.class, () -> core.allocate("sima", (1L << 19) + 1)).getMessage();
        assertTrue(e.contains("524288 of 1048576 bytes are free"), e);
        most.close();
        core.allocate("sima", (1L << 19) + 1).close(); // freed memory is free again
        e = assertThrows(IllegalArgumentException.class, () -> core.load("sima", "p", "hello".getBytes(StandardCharsets.UTF_8))).getMessage();
        assertTrue(e.contains("not a sim program") && e.contains("xq-sim-program 1"), e);
        e = assertThrows(IllegalArgumentException.class, () -> core.load("sima", "p",
                "xq-sim-program 1\nkernel k conv2d\n".getBytes(StandardCharsets.UTF_8))).getMessage();
        assertTrue(e.contains("line 2: operation 'conv2d' is unknown; known: matmul_f32, saxpy_f32"), e);
        CodeModule m = core.load("sima", "p", PROGRAM.getBytes(StandardCharsets.UTF_8));
        e = assertThrows(IllegalArgumentException.class, () -> m.function("gemm")).getMessage();
        assertTrue(e.contains("no kernel 'gemm'") && e.contains("xq_matmul_tiled, xq_saxpy"), e);
        assertEquals(1, a.memory().moduleCount());
        m.close();
        assertEquals(0, a.memory().moduleCount());
        assertThrows(IllegalStateException.class, () -> m.function("xq_saxpy"));
    }

    @Test
    void aBufferClosedWhileCommandsUseItIsFreedAfterTheLast() throws Exception {
        try (XQueue q = core.create(QueueOptions.on("sima").named("late"))) {
            DeviceBuffer buf = core.allocate("sima", 1024);
            q.suspend(); // hold everything back
            byte[] out = new byte[1024];
            q.submit(Command.fill(buf, (byte) 5));
            Submission read = q.submit(Command.read(buf, MemorySegment.ofArray(out)));
            buf.close();
            assertEquals(1, a.memory().bufferCount(), "still in use by two queued commands: not freed");
            q.resume();
            read.await(LONG);
            q.waitAll(LONG);
            assertEquals(5, out[1023]);
            assertEquals(0, a.memory().bufferCount(), "freed after the last command that used it");
        }
    }

    @Test
    void aDeviceThatGoesAwayTakesItsBuffersWithIt() {
        ClientService one = core.client("bundle one");
        DeviceBuffer buf = one.allocate("simb", 4096);
        assertEquals(4096, b.memory().allocated());
        core.removeDriver(driverOf("simb"));
        assertFalse(buf.isOpen(), "a buffer of a removed driver reads as closed");
        String e = assertThrows(IllegalArgumentException.class, () -> core.allocate("simb", 16)).getMessage();
        assertTrue(e.contains("device 'simb' is unknown"), e);
        b.shutdown("test: device gone");
        assertEquals(0, b.memory().allocated(), "its host memory is given back");
        one.close(); // nothing left to free, and no second free
        assertEquals(0, b.memory().bufferCount());
    }

    private SimDriver driverOf(String id) {
        return drivers.get(id);
    }

    @Test
    void closingAClientFreesWhatItOwnsAndNothingElse() throws Exception {
        ClientService one = core.client("bundle one");
        ClientService two = core.client("bundle two");
        DeviceBuffer b1 = one.allocate("sima", 100);
        one.allocate("sima", 200);
        one.load("sima", "p", PROGRAM.getBytes(StandardCharsets.UTF_8));
        DeviceBuffer b2 = two.allocate("sima", 300);
        assertEquals(2, one.buffers().size());
        assertEquals(List.of(b2), two.buffers());
        assertEquals(600, a.memory().allocated());
        one.close();
        assertFalse(b1.isOpen());
        assertTrue(b2.isOpen());
        assertEquals(300, a.memory().allocated(), "only bundle one's buffers were freed");
        assertEquals(0, a.memory().moduleCount(), "and its module unloaded");
        assertThrows(IllegalStateException.class, () -> one.allocate("sima", 1));
        assertEquals(300, a.memory().allocated(), "an allocation after close is freed at once");
        two.close();
        assertEquals(0, a.memory().allocated());
    }

    @Test
    void closingAClientClosesItsQueuesAndCancelsWhatTheyHeldButNotOthersQueues() throws Exception {
        ClientService one = core.client("bundle one");
        ClientService two = core.client("bundle two");
        XQueue held = one.create(QueueOptions.on("sima").named("held"));
        XQueue closedByApp = one.create(QueueOptions.on("sima").named("closed by the app"));
        XQueue other = two.create(QueueOptions.on("sima").named("other"));
        closedByApp.close();
        assertEquals(List.of(held), one.ownQueues(), "a queue the application closed is not its any more");
        held.suspend(); // the application holds it: what it submits stays pending
        Submission pending = held.submit(Command.spin(100));
        one.close();
        assertEquals(dev.xq.api.QueueState.CLOSED, held.status().state(), "the stopped bundle's queue is still open");
        java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> pending.stage().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof dev.xq.api.CommandCancelledException, "cancelled, not lost: " + e.getCause());
        assertEquals(dev.xq.api.QueueState.IDLE, other.status().state(), "another bundle's queue was touched");
        assertThrows(IllegalStateException.class, () -> one.create(QueueOptions.on("sima")));
        other.submit(Command.spin(10)).await(LONG);
        two.close();
        assertEquals(dev.xq.api.QueueState.CLOSED, other.status().state());
    }
}
