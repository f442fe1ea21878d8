package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions tied to a live process (docs/processes.md, "Faults"): real processes, spawned with
 * python3, connect and hand their socket on to a child that outlives them.
 */
class ProcessLivenessTest {

    /** Generous: the node looks every 200 ms; this is a bound on "promptly", not a speed test. */
    static final Duration PROMPTLY = Duration.ofSeconds(3);

    /**
     * Connects, says HELLO with its own pid, opens a stream, then forks: the child keeps the socket
     * (reading until the node ends the session, at most 30 s) while this process waits to be killed.
     */
    static final String HOLDER = """
            import os, socket, sys, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            def line():
                b = b""
                while not b.endswith(b"\\n"):
                    d = s.recv(1)
                    if not d:
                        break
                    b += d
                return b
            s.sendall(b"HELLO 1 %d holder -\\n" % os.getpid())
            ok = line()
            s.sendall(b"STREAM 0 7f00deadbeef 0 0 0 0 s0\\n")
            q = line()
            if not ok.startswith(b"OK ") or not q.startswith(b"Q 0 "):
                print("refused %r %r" % (ok, q), flush=True)
                sys.exit(1)
            child = os.fork()
            if child == 0:
                null = os.open("/dev/null", os.O_RDWR)
                os.dup2(null, 1)
                os.dup2(null, 2)
                s.settimeout(30)
                try:
                    while s.recv(512):
                        pass
                except Exception:
                    pass
                os._exit(0)
            print("holding %d" % child, flush=True)
            time.sleep(60)
            """;

    /**
     * Connects and forks; this process exits at once, and its child, once it sees its parent gone,
     * says HELLO with the parent's pid (SO_PEERCRED's pid: the parent connected) and prints what the
     * node answers.
     */
    static final String ORPHAN = """
            import os, socket, sys, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            parent = os.getpid()
            if os.fork() != 0:
                os._exit(0)
            deadline = time.time() + 10
            def gone():
                try:
                    with open("/proc/%d/stat" % parent) as f:
                        return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
                except OSError:
                    return True
            while (os.getppid() == parent or not gone()) and time.time() < deadline:
                time.sleep(0.01)
            try:
                s.sendall(b"HELLO 1 %d orphan -\\n" % parent)
            except OSError:
                pass
            s.settimeout(10)
            out = b""
            try:
                while True:
                    d = s.recv(512)
                    if not d:
                        break
                    out += d
            except Exception as e:
                out += b"(" + str(e).encode() + b")"
            print(out.decode(errors="replace").strip(), flush=True)
            """;

    @TempDir
    Path tmp;

    XqCore core;
    HostServer server;
    Await.Log log;
    Path sock;
    final List<Long> strays = new ArrayList<>();

    @BeforeEach
    void setUp() {
        assumeTrue(python() != null, "python3 is not on the PATH");
        core = new XqCore(RuntimeLog.NONE);
        core.start();
        log = new Await.Log();
        sock = tmp.resolve("x").resolve("node.sock");
        server = new HostServer(HostSettings.of(sock), core, core::defaults, log);
        assertTrue(server.start(), () -> "server did not start: " + server.status());
    }

    @AfterEach
    void tearDown() {
        for (long pid : strays) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        if (server != null) {
            server.stop();
            assertEquals(0, server.liveSessions(), "sessions left after stop");
            assertEquals(0, server.liveMappings(), "mappings left after stop");
        }
        if (core != null) {
            core.stop();
        }
    }

    static String python() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, "python3");
            if (p.toFile().canExecute()) {
                return p.toString();
            }
        }
        return null;
    }

    Process spawn(String script) throws IOException {
        Process p = new ProcessBuilder(python(), "-c", script, sock.toString()).redirectErrorStream(true).start();
        strays.add(p.pid());
        return p;
    }

    @Test
    void aSessionEndsWhenItsProcessDiesThoughAChildHoldsTheSocket() throws Exception {
        Process p = spawn(HOLDER);
        BufferedReader out = p.inputReader();
        String first = out.readLine();
        assertNotNull(first, "the holder said nothing");
        assertTrue(first.startsWith("holding "), () -> "the holder did not register: " + first);
        long child = Long.parseLong(first.substring("holding ".length()));
        strays.add(child);
        assertEquals(1, server.liveSessions());
        assertEquals(p.pid(), server.sessions().get(0).pid());
        assertEquals(1, core.externalQueues().size());

        p.destroyForcibly(); // SIGKILL: no goodbye; the child keeps the socket open
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertTrue(ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false), "the child holding the socket is alive");

        long t0 = System.nanoTime();
        Await.until(PROMPTLY, () -> server.liveSessions() == 0, () -> "the session of dead process " + p.pid()
                + " lives on while its child holds the socket: " + server.sessions());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(core.externalQueues().isEmpty(), () -> "its queues outlive it: " + core.externalQueues());
        assertTrue(log.has("WARN", "pid " + p.pid() + " exited"), () -> "no line says why (" + ms + " ms): " + log.lines);
        // the holder was told and let go: it reads until the node ends the session
        ProcessHandle h = ProcessHandle.of(child).orElse(null);
        if (h != null) {
            assertTrue(h.onExit().get(10, TimeUnit.SECONDS) != null);
        }
    }

    /**
     * Connects from a pid namespace of its own (a container without the host's pids) and says
     * HELLO with its pid there, then with a pid that is neither; prints the first answer of each.
     */
    static final String NAMESPACED = """
            import os, socket, sys
            for pid in (os.getpid(), os.getpid() + 7):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                s.sendall(b"HELLO 1 %d contained -\\n" % pid)
                b = b""
                while not b.endswith(b"\\n"):
                    d = s.recv(1)
                    if not d:
                        break
                    b += d
                print("%d %s" % (pid, b.decode(errors="replace").strip()), flush=True)
                s.close()
            """;

    /**
     * A process in a container of its own pid namespace knows itself as, say, pid 1; the node sees
     * its pid in the node's namespace. Its HELLO with its own namespace's pid is taken, and the
     * session is the node's pid; any other pid is still refused by name. Needs root (unshare).
     */
    @Test
    void aProcessInItsOwnPidNamespaceSaysHelloWithThePidItKnows() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")) && new java.io.File("/usr/bin/unshare").canExecute(),
                "needs root and unshare to make a pid namespace");
        Process p = new ProcessBuilder("/usr/bin/unshare", "--pid", "--fork", python(), "-c", NAMESPACED, sock.toString())
                .redirectErrorStream(true).start();
        strays.add(p.pid());
        List<String> out = p.inputReader().lines().toList();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals(2, out.size(), () -> "answers: " + out);
        assertTrue(out.get(0).startsWith("1 OK "), () -> "its namespace's pid 1 refused: " + out);
        assertTrue(out.get(1).startsWith("8 ERR pid 8 is not yours (peer pid "), () -> "another pid taken: " + out);
        assertTrue(log.has("INFO", "registered"), () -> String.valueOf(log.lines));
        assertFalse(log.lines.stream().anyMatch(l -> l.contains("process 1 ")), () -> "the session named the namespace's pid: " + log.lines);
    }

    @Test
    void aChildCannotSayHelloForItsParentThatExited() throws Exception {
        Process p = spawn(ORPHAN);
        long parent = p.pid();
        String answer = new String(p.getInputStream().readAllBytes()).strip(); // the child holds the pipe until it is done
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertTrue(answer.startsWith("ERR pid " + parent + " is not alive (it exited before its HELLO"),
                () -> "expected a refusal naming pid " + parent + ", got: " + answer);
        Await.until(() -> server.liveSessions() == 0, () -> "session left: " + server.sessions());
        assertFalse(log.has("INFO", "registered"), () -> "a session registered: " + log.lines);
        assertTrue(log.has("WARN", "process " + parent, "refused", "not alive"), () -> String.valueOf(log.lines));
    }

    @Test
    void aLiveProcessIsWatchedByItsPidfd() {
        PeerProcess self = PeerProcess.of(-1, (int) ProcessHandle.current().pid()); // not a socket: pidfd_open
        try {
            assertEquals(PeerProcess.Life.ALIVE, self.life());
            assertEquals("pidfd", self.how(), "this kernel has pidfd_open (Linux 5.3)");
            assertTrue(PeerProcess.startTime(self.pid()) > 0);
        } finally {
            self.close();
        }
        assertEquals(PeerProcess.Life.EXITED, self.life(), "a closed watch counts as gone");
    }

    @Test
    void withoutPidfdThePidsStartTimeTells() throws Exception {
        int me = (int) ProcessHandle.current().pid();
        long start = PeerProcess.startTime(me);
        assertEquals(PeerProcess.Life.ALIVE, PeerProcess.byStartTime(me, start).life());
        assertEquals(PeerProcess.Life.REPLACED, PeerProcess.byStartTime(me, start - 1).life(), "another process on the same pid");
        Process p = new ProcessBuilder("/bin/sh", "-c", "exit 0").start();
        int pid = (int) p.pid();
        assertEquals(0, p.waitFor());
        Await.until(() -> ProcessHandle.of(pid).isEmpty(), () -> "process " + pid + " not reaped");
        assertEquals(PeerProcess.Life.EXITED, PeerProcess.byStartTime(pid, 1).life());
    }

    @Test
    void aProcessThatExitedIsNotAlive() throws Exception {
        Process p = new ProcessBuilder("/bin/sh", "-c", "exit 0").start();
        assertEquals(0, p.waitFor());
        Await.until(() -> ProcessHandle.of(p.pid()).isEmpty(), () -> "process " + p.pid() + " not reaped");
        PeerProcess gone = PeerProcess.of(-1, (int) p.pid());
        assertEquals(PeerProcess.Life.EXITED, gone.life());
        assertEquals("gone at accept", gone.how());
        assertEquals(-1, PeerProcess.startTime((int) p.pid()));
    }
}
