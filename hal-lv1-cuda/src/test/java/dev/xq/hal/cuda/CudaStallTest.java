package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.Preemption;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Level 2 on CUDA (stall in place): a deactivate keeps launched commands from starting and a
 * reactivate lets them go, through the same FFM downcalls (cuStreamWaitValue32,
 * cuStreamWriteValue32) that reach libcuda on the GPU; {@link CudaDouble}'s streams wait on the
 * flag word as the device's front end does. Counted, not timed.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
class CudaStallTest {

    private final CudaDouble cuda = new CudaDouble();
    private CudaPlatform platform;

    @AfterEach
    void tearDown() {
        if (platform != null) {
            platform.close();
            assertEquals(0, cuda.liveStreams.get(), "streams left after close");
        }
        assertEquals(List.of(), cuda.errors(), "the double saw bad calls");
        cuda.close();
    }

    private HwQueue open(CudaSettings settings, RecordingListener l) {
        platform = CudaPlatform.start(cuda.api(), settings, RuntimeLog.NONE);
        return platform.open("cuda0", new HwQueueOptions("q", null), l);
    }

    private static int flag(CudaQueue q) {
        return MemorySegment.ofAddress(wordOf(q)).reinterpret(4).get(JAVA_INT, 0);
    }

    private static long wordOf(CudaQueue q) {
        try {
            var f = StreamStall.class.getDeclaredField("word");
            f.setAccessible(true);
            return (long) f.get(q.stall());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** Deactivates and waits until the side stream has raised the flag, so that what follows is not a race with it. */
    private static void deactivate(CudaQueue q) {
        assertEquals(List.of(), q.stall().deactivate(), "a stall hands nothing back");
        assertTrue(RecordingListener.awaitThat(() -> flag(q) == 1), "the flag never rose");
    }

    @Test
    void aDeactivatedQueueHoldsWhatItLaunchedUntilReactivated() throws Exception {
        RecordingListener l = new RecordingListener();
        CudaQueue q = (CudaQueue) open(CudaSettings.defaults(), l);
        Preemption p = q.preemption().orElseThrow();
        assertEquals(PreemptionLevel.DEACTIVATE, p.level());
        deactivate(q);
        for (int i = 0; i < 3; i++) {
            q.launch(new HwCommand(i, Command.spin(200)));
        }
        Thread.sleep(100);
        assertEquals(List.of(), l.reports, "commands ran while the queue was deactivated");
        p.reactivate();
        assertTrue(l.await(3), "only " + l.reports.size() + " of 3 ran after reactivate");
        for (int i = 0; i < 3; i++) {
            assertEquals("completed", l.reports.get(i).what());
            assertEquals(i, l.reports.get(i).command().sequence());
        }
        assertEquals(0, flag(q));
        q.close();
    }

    @Test
    void adaptiveGuardsOnlyAQueueTheSchedulerHoldsAndStopsAfterTheHold() throws Exception {
        RecordingListener l = new RecordingListener();
        CudaQueue q = (CudaQueue) open(CudaSettings.defaults().withStall(StallMode.ADAPTIVE, 30), l);
        q.launch(new HwCommand(0, Command.spin(10)));
        assertTrue(l.await(1));
        assertEquals(0, cuda.waitsQueued.get(), "a queue never held pays for a guard");
        deactivate(q);
        q.stall().reactivate();
        q.launch(new HwCommand(1, Command.spin(10)));
        assertTrue(l.await(2));
        assertEquals(1, cuda.waitsQueued.get(), "a queue held a moment ago launched unguarded");
        Thread.sleep(60);
        q.launch(new HwCommand(2, Command.spin(10)));
        assertTrue(l.await(3));
        assertEquals(1, cuda.waitsQueued.get(), "still guarded after the hold of 30 ms ran out");
        q.close();
    }

    @Test
    void aChainedStartBehindAHoldIsWhereTheHoldEnded() throws Exception {
        RecordingListener l = new RecordingListener();
        CudaQueue q = (CudaQueue) open(CudaSettings.defaults().withStall(StallMode.ALWAYS, 1000), l);
        q.launch(new HwCommand(0, Command.spin(60_000)));
        q.launch(new HwCommand(1, Command.spin(1_000)));
        assertTrue(RecordingListener.awaitThat(() -> cuda.kernelStarts.size() == 1), "the first command never started");
        deactivate(q); // while command 0 runs: command 1 waits at its guard
        Thread.sleep(150);
        assertEquals(1, cuda.kernelStarts.size(), "the held command started");
        long released = System.nanoTime();
        q.stall().reactivate();
        assertTrue(l.await(2));
        RecordingListener.Report first = l.reports.get(0);
        RecordingListener.Report second = l.reports.get(1);
        assertTrue(first.endNanos() < released - 50_000_000L, "command 0 ended during the hold");
        assertTrue(second.startNanos() >= released, "command 1's start " + (second.startNanos() - released) / 1000
                + " us from the release: a chained start must not put it at command 0's end");
        assertTrue(second.startNanos() <= cuda.kernelStarts.get(1) + 2_000_000L, "command 1 reported starting after it did");
        assertTrue(second.endNanos() >= second.startNanos());
        assertEquals(3, cuda.eventsRecordedOn(q.stream()), "command 1 should need no start event of its own");
        q.close();
    }

    @Test
    void aLaunchTheRuntimeSaysMayGoUnheldGoesWithoutItsGuardAndOnlyThatOne() throws Exception {
        RecordingListener l = new RecordingListener();
        CudaQueue q = (CudaQueue) open(CudaSettings.defaults().withStall(StallMode.ADAPTIVE, 10_000), l);
        Preemption p = q.preemption().orElseThrow();
        deactivate(q);
        p.reactivate(); // held a moment ago: launches are guarded
        p.nextLaunchUnheld(true);
        q.launch(new HwCommand(0, Command.spin(10)));
        assertTrue(l.await(1));
        assertEquals(0, cuda.waitsQueued.get(), "the launch said unheld had a guard");
        q.launch(new HwCommand(1, Command.spin(10)));
        assertTrue(l.await(2));
        assertEquals(1, cuda.waitsQueued.get(), "the next launch, not said unheld, had none");
        p.nextLaunchUnheld(false);
        q.launch(new HwCommand(2, Command.spin(10)));
        assertTrue(l.await(3));
        assertEquals(2, cuda.waitsQueued.get());
        q.close();
    }

    @Test
    void alwaysGuardsEveryLaunch() {
        RecordingListener l = new RecordingListener();
        CudaQueue q = (CudaQueue) open(CudaSettings.defaults().withStall(StallMode.ALWAYS, 1000), l);
        for (int i = 0; i < 4; i++) {
            q.stall().nextLaunchUnheld(i % 2 == 0);
            q.launch(new HwCommand(i, Command.spin(10)));
        }
        assertTrue(l.await(4));
        assertEquals(4, cuda.waitsQueued.get(), "always: even launches said unheld are guarded");
        q.close();
    }

    @Test
    void closingAHeldQueueLetsItsCommandsRunOut() throws Exception {
        RecordingListener l = new RecordingListener();
        CudaQueue q = (CudaQueue) open(CudaSettings.defaults(), l);
        deactivate(q);
        q.launch(new HwCommand(0, Command.spin(10)));
        q.close();
        assertTrue(RecordingListener.awaitThat(() -> flag(q) == 0), "a closed queue's flag stays raised: its stream never drains");
    }

    @Test
    void levelTwoIsOffWhereItCannotWork() {
        record Case(CudaSettings settings, String without, String reason) { }
        for (Case c : List.of(new Case(CudaSettings.defaults().withStall(StallMode.OFF, 1000), null, "setting stall=off"),
                new Case(CudaSettings.defaults().withCompletion(CompletionMode.SYNC_SPIN), null, "completion sync-spin"),
                new Case(CudaSettings.defaults(), "cuStreamWaitValue32_v2", "lacks cuStreamWaitValue32_v2"))) {
            try (CudaDouble d = new CudaDouble()) {
                if (c.without() != null) {
                    d.without(c.without());
                }
                CudaPlatform p = CudaPlatform.start(d.api(), c.settings(), RuntimeLog.NONE);
                try {
                    DeviceDescriptor desc = p.devices().get(0);
                    assertEquals(PreemptionLevel.BLOCK, desc.maxLevel(), c.reason());
                    assertTrue(desc.properties().get("level2").contains(c.reason()), desc.properties().get("level2"));
                    HwQueue q = p.open("cuda0", new HwQueueOptions("q", null), new RecordingListener());
                    assertTrue(q.preemption().isEmpty(), c.reason());
                    q.close();
                } finally {
                    p.close();
                }
            }
        }
    }

    @Test
    void aDeviceWhoseSideStreamCannotBeMadeServesAtLevelOne() {
        try (CudaDouble d = new CudaDouble()) {
            d.failStreamCreate = 2; // the calibration stream is the first, the side stream the second
            CudaPlatform p = CudaPlatform.start(d.api(), CudaSettings.defaults(), RuntimeLog.NONE);
            try {
                DeviceDescriptor desc = p.devices().get(0);
                assertEquals(PreemptionLevel.BLOCK, desc.maxLevel());
                assertTrue(desc.properties().get("level2").startsWith("off (cuStreamCreateWithPriority"),
                        desc.properties().get("level2"));
                RecordingListener l = new RecordingListener();
                HwQueue q = p.open("cuda0", new HwQueueOptions("q", null), l);
                assertTrue(q.preemption().isEmpty());
                q.launch(new HwCommand(0, Command.spin(10)));
                assertTrue(l.await(1), "the device does not serve");
                q.close();
            } finally {
                p.close();
            }
        }
    }
    @Test
    void hostFlagsAreWrittenByAStoreAndDeviceFlagsOnTheSideStream() throws Exception {
        for (boolean host : new boolean[] {true, false}) {
            RecordingListener l = new RecordingListener();
            int writes = cuda.writesQueued.get();
            int hostAllocs = cuda.hostAllocs.get();
            CudaQueue q = (CudaQueue) open(CudaSettings.defaults().withStallFlags(host), l);
            Preemption p = q.preemption().orElseThrow();
            p.deactivate();
            if (host) {
                assertEquals(1, flag(q), "host memory: the flag is up when deactivate returns");
                assertEquals(writes, cuda.writesQueued.get(), "host memory: no cuStreamWriteValue32");
                assertEquals(hostAllocs + 1, cuda.hostAllocs.get(), "the flags' chunk came from cuMemAllocHost");
                long word = wordOf(q);
                assertTrue(cuda.hostAllocations.keySet().stream().anyMatch(a -> word >= a && word < a + 4096),
                        "the word lies in a page-locked host allocation");
            } else {
                assertTrue(RecordingListener.awaitThat(() -> flag(q) == 1), "the flag never rose");
                assertEquals(writes + 1, cuda.writesQueued.get(), "device memory: written on the side stream");
                assertEquals(hostAllocs, cuda.hostAllocs.get());
            }
            q.launch(new HwCommand(0, Command.spin(100)));
            Thread.sleep(50);
            assertEquals(List.of(), l.reports, "held while deactivated (" + (host ? "host" : "device") + " flags)");
            p.reactivate();
            assertTrue(l.await(1), "ran after reactivate (" + (host ? "host" : "device") + " flags)");
            q.close();
            platform.close();
            platform = null;
        }
        assertEquals(0, cuda.hostAllocations.size(), "host flag chunks freed at close");
    }
}
