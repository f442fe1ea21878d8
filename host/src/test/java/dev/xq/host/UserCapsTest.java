package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One user cannot take every session of the node, nor flood it with streams (security issue
 * "trust", item 7): maxSessionsPerUser and maxStreamsPerUser, counted per uid across its
 * processes. Every connection here is the test's own uid.
 */
class UserCapsTest {

    @TempDir
    Path tmp;

    XqCore core;
    HostServer server;
    Await.Log log;
    Path sock;
    final List<TestClient> clients = new ArrayList<>();
    final int uid = Libc.geteuid();
    final String user = "user " + Integer.toUnsignedString(uid);

    @BeforeEach
    void setUp() {
        core = new XqCore(RuntimeLog.NONE);
        core.start();
        log = new Await.Log();
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
            assertArrayEquals(new int[] {0, 0}, server.userLoad(uid), "the user's sessions and streams are all given back");
        }
        core.stop();
    }

    void start(HostSettings settings) {
        server = new HostServer(settings, core, core::defaults, log);
        assertTrue(server.start(), () -> "server did not start: " + server.status());
    }

    TestClient client() throws IOException {
        TestClient c = TestClient.connect(sock);
        clients.add(c);
        return c;
    }

    @Test
    void aUserBeyondItsSessionsIsRefusedByName() throws Exception {
        start(HostSettings.of(sock).withMaxSessionsPerUser(2));
        TestClient silent = client(); // never says HELLO: holds a session all the same
        TestClient a = client();
        a.hello("a", "-");
        Await.until(() -> server.userLoad(uid)[0] == 2, () -> "two sessions counted: " + server.userLoad(uid)[0]);
        TestClient b = client();
        HostServerTest.refusedWith(b, user + " has 2 sessions already (maxSessionsPerUser 2)");
        Await.until(() -> log.has("WARN", "maxSessionsPerUser 2"), () -> "logged: " + log.lines); // logged after the ERR went out
        assertEquals(2, server.liveSessions(), "the refused connection holds no session");

        silent.close();
        Await.until(() -> server.userLoad(uid)[0] == 1, () -> "the closed session is given back: " + server.userLoad(uid)[0]);
        TestClient c = client();
        c.hello("c", "-");
        assertEquals(2, server.liveSessions());
    }

    @Test
    void aUserBeyondItsStreamsAcrossItsProcessesIsRefusedByName() throws Exception {
        start(HostSettings.of(sock).withMaxStreamsPerUser(3));
        TestClient a = client();
        a.hello("a", "-");
        a.stream(0, 0, 0, 0, -5, "s0");
        a.stream(1, 0, 0, 0, -5, "s1");
        TestClient b = client();
        b.hello("b", "-");
        b.stream(0, 0, 0, 0, -5, "s0");
        assertEquals(3, server.userLoad(uid)[1]);
        b.send("STREAM 1 7f00deadbeef 0 0 0 -5 s1");
        HostServerTest.refusedWith(b, user + " has 3 streams already (maxStreamsPerUser 3)");
        Await.until(() -> server.userLoad(uid)[1] == 2, () -> "b's stream is given back with its session: " + server.userLoad(uid)[1]);
        Await.until(() -> core.externalQueues().size() == 2, () -> "queues: " + core.externalQueues().size());

        a.send("CLOSE 0");
        Await.until(() -> server.userLoad(uid)[1] == 1, () -> "a closed stream is given back: " + server.userLoad(uid)[1]);
        TestClient c = client();
        c.hello("c", "-");
        c.stream(0, 0, 0, 0, -5, "s0");
        c.stream(1, 0, 0, 0, -5, "s1");
        assertEquals(3, server.userLoad(uid)[1]);
        c.send("STREAM 2 7f00deadbeef 0 0 0 -5 s2");
        HostServerTest.refusedWith(c, "(maxStreamsPerUser 3)");
    }

    @Test
    void theCapsAreConfiguredAndCheckedByName() {
        HostSettings s = HostSettings.from(HostSettingsTest.config("/srv/a.sock", "", 64, 256, true, false, 5, 77), k -> null, Map.of(), 7);
        assertEquals(5, s.maxSessionsPerUser());
        assertEquals(77, s.maxStreamsPerUser());
        HostSettings d = HostSettings.of(Path.of("/srv/a.sock"));
        assertEquals(HostSettings.DEFAULT_MAX_SESSIONS_PER_USER, d.maxSessionsPerUser());
        assertEquals(HostSettings.DEFAULT_MAX_STREAMS_PER_USER, d.maxStreamsPerUser());
        var e = assertThrows(IllegalArgumentException.class,
                () -> HostSettings.from(HostSettingsTest.config("/srv/a.sock", "", 64, 256, true, false, 0, 77), k -> null, Map.of(), 7));
        assertTrue(e.getMessage().contains("maxSessionsPerUser 0 is out of range [1, 65536]"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> d.withMaxStreamsPerUser(0));
        assertTrue(e.getMessage().contains("maxStreamsPerUser 0 is out of range [1, " + HostSettings.MAX_MAX_STREAMS_PER_USER + "]"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> d.withMaxSessionsPerUser(65537));
        assertTrue(e.getMessage().contains("65537"), e.getMessage());
    }
}
