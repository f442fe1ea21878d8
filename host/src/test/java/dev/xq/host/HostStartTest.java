package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where and whether the server serves: directory rules, leftovers, another node, settings. */
class HostStartTest {

    @TempDir
    Path tmp;

    XqCore core;
    HostServer server;
    Await.Log log;
    Path dir;
    Path sock;

    @BeforeEach
    void setUp() {
        core = new XqCore(RuntimeLog.NONE);
        core.start();
        log = new Await.Log();
        dir = tmp.resolve("d");
        sock = dir.resolve("node.sock");
    }

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.stop();
        }
        core.stop();
    }

    HostServer server(HostSettings s) {
        server = new HostServer(s, core, core::defaults, log);
        return server;
    }

    static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    static boolean isSocket(Path p) throws IOException {
        return ((Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 0170000) == 0140000;
    }

    @Test
    void createsAMissingDirectoryClosedToOthers() throws Exception {
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        assertEquals("rwx------", mode(dir));
        assertTrue(isSocket(sock));
        assertEquals("rw-------", mode(sock));
        assertEquals("rwx------", mode(server.shmDir()));
        assertTrue(server.status().contains(sock.toString()), server.status());
        try (TestClient c = TestClient.connect(sock)) {
            c.hello("ok", "-");
        }
    }

    @Test
    void tightensAnExistingDirectoryOfItsOwn() throws Exception {
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        assertEquals("rwx------", mode(dir));
    }

    @Test
    void refusesADirectoryOthersMayWrite() throws Exception {
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertFalse(server(HostSettings.of(sock)).start());
        String st = server.status();
        assertTrue(st.startsWith("not serving"), st);
        assertTrue(st.contains(dir.toString()), st);
        assertTrue(st.contains("0777"), st);
        assertTrue(st.contains("uid " + Libc.geteuid()), st);
        assertTrue(log.has("ERROR", dir.toString(), "0777"), () -> "logged: " + log.lines);
        assertFalse(Files.exists(sock, LinkOption.NOFOLLOW_LINKS), "no socket in a refused directory");
        assertEquals("rwxrwxrwx", mode(dir), "a refused directory is left as it was");
    }

    @Test
    void refusesAGroupWritableDirectory() throws Exception {
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwx---"));
        assertFalse(server(HostSettings.of(sock)).start());
        assertTrue(server.status().contains("0770"), server.status());
    }

    @Test
    void refusesADirectorySomeoneElseOwns() throws Exception {
        assumeTrue(Libc.geteuid() == 0, "needs root to give a directory away");
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        Files.setAttribute(dir, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        assertFalse(server(HostSettings.of(sock)).start());
        String st = server.status();
        assertTrue(st.contains("owned by uid 65534"), st);
        assertTrue(st.contains(dir.toString()), st);
        assertTrue(st.contains("0700"), st);
    }

    @Test
    void refusesASymbolicLink() throws Exception {
        Path real = tmp.resolve("real");
        Files.createDirectory(real);
        Files.createSymbolicLink(dir, real);
        assertFalse(server(HostSettings.of(sock)).start());
        assertTrue(server.status().contains("symbolic link"), server.status());
    }

    @Test
    void refusesWhenTheParentIsMissing() {
        Path deep = tmp.resolve("no").resolve("such").resolve("node.sock");
        assertFalse(server(HostSettings.of(deep)).start());
        assertTrue(server.status().contains("does not exist"), server.status());
    }

    @Test
    void replacesAStaleSocket() throws Exception {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try (ServerSocketChannel old = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            old.bind(UnixDomainSocketAddress.of(sock));
        }
        assertTrue(isSocket(sock), "the dead node's socket file stays");
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        try (TestClient c = TestClient.connect(sock)) {
            c.hello("after", "-");
        }
    }

    @Test
    void refusesASocketAnotherNodeServes() throws Exception {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            other.bind(UnixDomainSocketAddress.of(sock));
            assertFalse(server(HostSettings.of(sock)).start());
            assertTrue(server.status().contains("another node serves on " + sock), server.status());
            assertTrue(isSocket(sock), "the other node's socket is left alone");
        }
    }

    @Test
    void twoServersOnOneSocket() {
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        HostServer second = new HostServer(HostSettings.of(sock), core, core::defaults, log);
        try {
            assertFalse(second.start());
            assertTrue(second.status().contains("another node serves"), second.status());
            assertTrue(log.has("ERROR", "another node serves"), () -> "a node's start: an error: " + log.lines);
        } finally {
            second.stop();
        }
        // a one-command run beside it (./xq demo, ./xq bench): said at info
        log.lines.clear();
        HostServer third = new HostServer(HostSettings.of(sock), core, core::defaults, log);
        third.quietIfTaken(true);
        try {
            assertFalse(third.start());
            assertTrue(log.has("INFO", "another node serves", "leaves processes to that node"), () -> "logged: " + log.lines);
            assertFalse(log.lines.stream().anyMatch(l -> l.startsWith("ERROR")), () -> "no error: " + log.lines);
        } finally {
            third.stop();
        }
        assertTrue(Files.exists(sock, LinkOption.NOFOLLOW_LINKS), "the second one must not remove the first one's socket");
    }

    @Test
    void refusesAFileThatIsNotASocket() throws Exception {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.writeString(sock, "precious");
        assertFalse(server(HostSettings.of(sock)).start());
        assertTrue(server.status().contains("not a socket"), server.status());
        assertEquals("precious", Files.readString(sock));
    }

    @Test
    void removesFilesADeadNodeLeft() throws Exception {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path shm = dir.resolve("node.sock.shm");
        Files.createDirectory(shm, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path left = shm.resolve("123-4");
        Path other = shm.resolve("keep.txt");
        Files.writeString(left, "x");
        Files.writeString(other, "y");
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        assertFalse(Files.exists(left));
        assertTrue(Files.exists(other), "only files named like sessions' are removed");
        Files.delete(other);
    }

    @Test
    void groupOpensDirectorySocketAndFilesToTheGroup() throws Exception {
        Files.createDirectories(tmp);
        String group = Files.readAttributes(tmp, PosixFileAttributes.class).group().getName();
        assertTrue(server(HostSettings.of(sock).withGroup(group)).start(), () -> server.status());
        assertEquals("rwxr-x---", mode(dir));
        assertEquals("rw-rw----", mode(sock));
        assertEquals(group, Files.readAttributes(sock, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS).group().getName());
        try (TestClient c = TestClient.connect(sock)) {
            c.hello("grp", "-");
            assertEquals("rw-rw----", mode(c.shmPath()));
            assertEquals(group, Files.readAttributes(c.shmPath(), PosixFileAttributes.class).group().getName());
        }
    }

    @Test
    void unknownGroupIsRefused() {
        assertFalse(server(HostSettings.of(sock).withGroup("no-such-group-xq")).start());
        assertTrue(server.status().contains("no-such-group-xq"), server.status());
    }

    @Test
    void disabledDoesNotServe() {
        HostSettings s = new HostSettings(sock, null, 64, 256, false, HostSettings.DEFAULT_UNLINK_AFTER,
                HostSettings.DEFAULT_HELLO_WITHIN, false);
        assertFalse(server(s).start());
        assertTrue(server.status().contains("enabled=false"), server.status());
        assertFalse(Files.exists(dir));
    }

    @Test
    void restartAfterStopServesAgain() throws Exception {
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        server.stop();
        assertFalse(Files.exists(sock, LinkOption.NOFOLLOW_LINKS));
        assertTrue(server(HostSettings.of(sock)).start(), () -> server.status());
        try (TestClient c = TestClient.connect(sock)) {
            c.hello("again", "-");
        }
    }

    @Test
    void stopWithoutStartIsHarmless() {
        server(HostSettings.of(sock)).stop();
        assertThrows(IOException.class, () -> TestClient.connect(sock));
    }

    /**
     * A configuration whose boolean is spelt otherwise than true or false (Declarative Services
     * would read {@code mpsHoldBestEffort=yes} as false) or whose number does not parse is refused:
     * the host does not serve, and xq:processes says which key and value, and what is allowed.
     */
    @Test
    void aConfigurationDsWouldMisreadIsRefusedNamingTheKey() {
        HostComponent c = new HostComponent();
        HostConfig config = (HostConfig) java.lang.reflect.Proxy.newProxyInstance(HostConfig.class.getClassLoader(),
                new Class<?>[] {HostConfig.class}, (proxy, m, args) -> {
                    throw new AssertionError("read before the configuration was checked: " + m.getName());
                });
        c.activate(config, null, java.util.Map.of("mpsHoldBestEffort", "yes", "slots", "many"));
        String said = c.processes();
        assertTrue(said.contains("not serving: bad configuration (dev.xq.host): mpsHoldBestEffort 'yes' is not true or false; "
                + "slots 'many' is not a whole number"), said);
    }
}
