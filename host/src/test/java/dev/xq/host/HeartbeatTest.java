package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's heartbeat in each session's header (docs/processes.md, "Faults"): the interposer
 * takes a node whose heartbeat stopped moving for a second for frozen, so it must move every
 * ~100 ms while the session lives, at offset 24 as xq_shm.h says.
 */
class HeartbeatTest {

    @TempDir
    Path tmp;

    XqCore core;
    HostServer server;
    final List<TestClient> clients = new ArrayList<>();

    @BeforeEach
    void setUp() {
        core = new XqCore(RuntimeLog.NONE);
        core.start();
        server = new HostServer(HostSettings.of(tmp.resolve("x").resolve("node.sock")), core, core::defaults, new Await.Log());
        assertTrue(server.start(), () -> "server did not start: " + server.status());
    }

    @AfterEach
    void tearDown() throws Exception {
        for (TestClient c : clients) {
            c.close();
        }
        server.stop();
        assertEquals(0, server.liveMappings(), "mappings left after stop");
        core.stop();
    }

    TestClient attached() throws Exception {
        TestClient c = TestClient.connect(server.settings().socketPath());
        clients.add(c);
        c.hello("beat", "-");
        c.map();
        c.send("MAPPED");
        return c;
    }

    @Test
    void theHeaderLayoutIsTheInterposers() {
        // xq_shm.h: _Static_assert(offsetof(xq_shm_header, heartbeat_ns) == 24, ...)
        assertEquals(24, SharedMemory.H_HEARTBEAT_NS);
        assertTrue(SharedMemory.H_HEARTBEAT_NS >= SharedMemory.H_START_NANOS + 8
                && SharedMemory.H_HEARTBEAT_NS + 8 <= SharedMemory.HEADER_SIZE);
    }

    @Test
    void theHeartbeatMovesEveryHundredMillisecondsWhileTheSessionLives() throws Exception {
        TestClient c = attached();
        long first = c.readLong(SharedMemory.H_HEARTBEAT_NS);
        assertTrue(first != 0, "no heartbeat when the session began");
        assertTrue(first <= System.nanoTime(), "a heartbeat in the future: " + first);
        // a process gives up after a second without a move: it must move several times in one
        long t0 = System.nanoTime();
        long last = first;
        int moves = 0;
        long longestGap = 0;
        long lastMoveAt = t0;
        while (System.nanoTime() - t0 < 1_000_000_000L) {
            long v = c.readLong(SharedMemory.H_HEARTBEAT_NS);
            if (v != last) {
                assertTrue(v > last, "the heartbeat went back: " + last + " -> " + v);
                long now = System.nanoTime();
                assertTrue(v <= now, "a heartbeat in the future");
                longestGap = Math.max(longestGap, now - lastMoveAt);
                lastMoveAt = now;
                last = v;
                moves++;
            }
            Thread.sleep(5);
        }
        assertTrue(moves >= 5, "the heartbeat moved " + moves + " times in 1 s (want ~10)");
        assertTrue(longestGap < 500_000_000L, "the heartbeat stood still " + longestGap / 1_000_000 + " ms");
        assertEquals(1, server.heartbeat().watched());
    }

    @Test
    void everySessionHasItsOwnAndAnEndedOneIsForgotten() throws Exception {
        TestClient a = attached();
        TestClient b = attached();
        Await.until(() -> server.heartbeat().watched() == 2, () -> "watched " + server.heartbeat().watched());
        long a0 = a.readLong(SharedMemory.H_HEARTBEAT_NS);
        long b0 = b.readLong(SharedMemory.H_HEARTBEAT_NS);
        Await.until(() -> a.readLong(SharedMemory.H_HEARTBEAT_NS) != a0 && b.readLong(SharedMemory.H_HEARTBEAT_NS) != b0,
                () -> "both heartbeats move");
        clients.remove(b);
        b.close(); // the process ends: its session ends, its memory is unmapped and no longer beaten into
        Await.until(() -> server.liveSessions() == 1 && server.heartbeat().watched() == 1,
                () -> "sessions " + server.liveSessions() + ", watched " + server.heartbeat().watched());
        long a1 = a.readLong(SharedMemory.H_HEARTBEAT_NS);
        Await.until(() -> a.readLong(SharedMemory.H_HEARTBEAT_NS) != a1, () -> "the other session's heartbeat moves on");
    }

    @Test
    void anUnmappedMemoryTakesNoBeat() throws Exception {
        AtomicInteger live = new AtomicInteger();
        SharedMemory m = SharedMemory.create(tmp.resolve("lone"), 4, core.defaults(), 1, null, live);
        Heartbeat h = new Heartbeat();
        h.add(m);
        assertTrue(m.heartbeat() > 0, "no first beat when added");
        assertTrue(m.beat(42));
        assertEquals(42, m.heartbeat());
        h.run();
        assertTrue(m.heartbeat() > 42, "the timer's beat");
        m.close();
        assertFalse(m.beat(43), "a beat after close");
        assertEquals(-1, m.heartbeat());
        h.run();
        assertEquals(0, h.watched(), "an unmapped memory is forgotten");
        assertEquals(0, live.get());
    }
}
