package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's arrival watch ({@code arrivalWatchMicros}): with it, a stream at the latency class
 * that goes ready in its shared memory is decided for without a {@code WAKE} line; without it, or
 * below that class, only the line does it. Real sessions over the socket, the real core and
 * scheduler; the policy holds every ready queue, so a held gate shows a decision saw the arrival.
 */
class ArrivalWatchTest {

    @TempDir
    Path tmp;

    XqCore core;
    HostServer server;
    Path sock;
    final List<TestClient> clients = new ArrayList<>();

    @BeforeEach
    void setUp() {
        core = new XqCore(RuntimeLog.NONE);
        core.start();
        core.scheduler().register("test-hold", new HostServerTest.HoldPolicy(), "test", 4711, false);
        core.selectPolicy("test-hold");
        sock = tmp.resolve("x").resolve("node.sock");
    }

    @AfterEach
    void tearDown() throws IOException {
        for (TestClient c : clients) {
            c.close();
        }
        if (server != null) {
            server.stop();
            assertEquals(0, server.liveSessions(), "sessions left after stop");
        }
        core.stop();
    }

    private void start(long watchMicros) {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, new Await.Log());
        server.useArrivalWatch(watchMicros);
        assertTrue(server.start(), () -> "server did not start: " + server.status());
    }

    private TestClient client(String name, String priority) throws Exception {
        TestClient c = TestClient.connect(sock);
        clients.add(c);
        c.hello(name, priority);
        c.map();
        c.stream(0, 0, 0, 0, 0, "default");
        return c;
    }

    /**
     * Work in the slot as the interposer writes it at an arrival; no WAKE line. First the decisions
     * the streams' registration asked for are let end (one of those would see the work too).
     */
    private static void arrive(TestClient c) throws InterruptedException {
        Thread.sleep(300);
        c.writeSlotInt(0, SharedMemory.S_PENDING, 1);
        c.writeSlotLong(0, SharedMemory.S_READY_SINCE_NS, System.nanoTime());
    }

    private static boolean held(TestClient c) {
        return c.slotInt(0, SharedMemory.S_GATE) == 1;
    }

    @Test
    void theWatchDecidesOnAnArrivalAtTheLatencyClassWithoutItsLine() throws Exception {
        start(50);
        TestClient lc = client("server", "3"); // at the latency class (2) and above
        client("trainer", "1");
        arrive(lc);
        Await.until(() -> held(lc), () -> "the watch did not tell the node of the arrival: " + server.arrivalWatch().describe());
        ArrivalWatch w = server.arrivalWatch();
        assertTrue(w.toldFirst() >= 1, w.describe());
        assertTrue(ProcessesCommand.all(server).contains("arrival watch every 50 us"), ProcessesCommand.all(server));
        // the same arrival's line, once it comes, is not told again
        lc.send("WAKE 0");
        long told = w.toldFirst();
        Thread.sleep(100);
        assertEquals(told, w.toldFirst(), w.describe());
        assertEquals(0, w.toldByLine(), "the line told an arrival the watch had told: " + w.describe());
        // what it costs is shown: its thread's CPU time, some of it spent by now (it looked every 50 us)
        assertTrue(w.cpuNanos() > 0, w.describe());
        assertTrue(w.describe().matches(".*; its CPU \\d+ ms in \\d+ s \\(\\d+\\.\\d % of a core\\)"), w.describe());
    }

    /**
     * A watched stream busy with an arrival the node was told of cannot arrive again until it goes
     * idle: the watch looks only every {@link ArrivalWatch#DEFAULT_QUIET_MICROS} us meanwhile (at 50 us it
     * would look thousands of times in 300 ms), and the line that tells the node the stream went
     * idle wakes it, so that the next arrival is again the watch's to tell.
     */
    @Test
    void aBusyToldStreamQuietsTheWatchAndItsIdleLineWakesIt() throws Exception {
        start(50);
        TestClient lc = client("server", "3");
        client("trainer", "1");
        arrive(lc);
        Await.until(() -> held(lc), () -> "the watch did not tell the node of the arrival: " + server.arrivalWatch().describe());
        ArrivalWatch w = server.arrivalWatch();
        Thread.sleep(50);
        long looks0 = w.looks();
        long quiet0 = w.quietLooks();
        Thread.sleep(300);
        long looks = w.looks() - looks0;
        long quiet = w.quietLooks() - quiet0;
        assertTrue(quiet > 0 && quiet == looks, "busy and told: every look quiet (" + quiet + " of " + looks + "): " + w.describe());
        assertTrue(looks <= 400, "a quiet watch looked " + looks + " times in 300 ms (every 1 ms: at most ~300): " + w.describe());
        assertTrue(w.describe().contains(" with every watched stream busy)"), w.describe());
        // idle, told by its line: the watch looks every period again and tells the next arrival itself
        lc.writeSlotInt(0, SharedMemory.S_PENDING, 0);
        lc.writeSlotLong(0, SharedMemory.S_READY_SINCE_NS, 0);
        lc.send("WAKE 0");
        Thread.sleep(100);
        long fast0 = w.looks();
        long quietBefore = w.quietLooks();
        Thread.sleep(100);
        assertEquals(quietBefore, w.quietLooks(), "idle, yet the watch stayed quiet: " + w.describe());
        assertTrue(w.looks() - fast0 > 0, w.describe());
        long told = w.toldFirst();
        arrive(lc);
        Await.until(() -> w.toldFirst() > told, () -> "the next arrival was not told by the watch: " + w.describe());
        assertEquals(0, w.toldByLine(), w.describe());
    }

    /** arrivalWatchQuietMicros=0: the watch looks every period whatever the streams do (what it did before session 85). */
    @Test
    void neverQuietLooksEveryPeriod() throws Exception {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, new Await.Log());
        server.useArrivalWatch(50, 0);
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        TestClient lc = client("server", "3");
        client("trainer", "1");
        arrive(lc);
        Await.until(() -> held(lc), () -> "the watch did not tell the node of the arrival: " + server.arrivalWatch().describe());
        ArrivalWatch w = server.arrivalWatch();
        long looks0 = w.looks();
        Thread.sleep(300);
        assertEquals(0, w.quietLooks(), w.describe());
        assertTrue(w.looks() - looks0 > 400, "never quiet, yet " + (w.looks() - looks0) + " looks in 300 ms: " + w.describe());
        assertTrue(w.describe().startsWith("arrival watch every 50 us, never quiet: "), w.describe());
    }

    @Test
    void withoutTheWatchOnlyTheLineTellsTheNode() throws Exception {
        start(0);
        assertNull(server.arrivalWatch());
        TestClient lc = client("server", "3");
        client("trainer", "1");
        arrive(lc);
        Thread.sleep(300);
        assertEquals(0, lc.slotInt(0, SharedMemory.S_GATE), "decided on an arrival no one told the node of");
        lc.send("WAKE 0");
        Await.until(() -> held(lc), () -> "the WAKE line was not decided on");
    }

    @Test
    void aStreamBelowTheLatencyClassIsNotWatched() throws Exception {
        start(50);
        client("server", "3");
        TestClient be = client("trainer", "1");
        arrive(be);
        Thread.sleep(300);
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE), "a best-effort stream's arrival was watched: " + server.arrivalWatch().describe());
        assertEquals(0, server.arrivalWatch().toldFirst());
        be.send("WAKE 0");
        Await.until(() -> held(be), () -> "the WAKE line was not decided on");
    }

    @Test
    void aPeriodOutOfRangeIsRefusedNamingItAndChangesNothing() {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, new Await.Log());
        server.useArrivalWatch(100);
        for (long bad : new long[] {-1, 5, 10_001}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> server.useArrivalWatch(bad));
            assertTrue(e.getMessage().contains("arrivalWatchMicros " + bad + " is out of range")
                    && e.getMessage().contains("0 (off) or [10, 10000]"), e.getMessage());
        }
        for (long bad : new long[] {-1, 100_001}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> server.useArrivalWatch(50, bad));
            assertTrue(e.getMessage().contains("arrivalWatchQuietMicros " + bad + " is out of range")
                    && e.getMessage().contains("0 (never quiet) to 100000"), e.getMessage());
        }
        assertTrue(server.start(), server.status());
        // the refused quiet periods changed nothing: the default's (1000 us); whether the thread has set its
        // timer slack yet (or may, on this kernel) is not what this test is about
        assertTrue(server.arrivalWatch().describe().startsWith("arrival watch every 100 us, 1000 us while every watched stream is busy"),
                server.arrivalWatch().describe());
    }
}
