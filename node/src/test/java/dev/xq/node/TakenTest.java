package dev.xq.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A second node on the same machine says in one line what is taken and exits 1 (issue 41, item 11). */
class TakenTest {

    @TempDir
    Path tmp;

    private static Map<String, String> props(String... kv) {
        java.util.HashMap<String, String> m = new java.util.HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void aListeningSocketAndABoundPortAreNamedInOneLine() throws Exception {
        Path hd = Files.createDirectory(tmp.resolve("hd"));
        Path sock = tmp.resolve("node.sock");
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                ServerSocket otherHttp = new ServerSocket()) {
            other.bind(UnixDomainSocketAddress.of(sock));
            otherHttp.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = otherHttp.getLocalPort();
            Map<String, String> p = props("xq.host.socket", sock.toString(), "xq.http.port", Integer.toString(port));
            String line = Taken.check(hd, p::get, Map.of(), 1000);
            assertEquals("not started: another node (or another program) already serves here: the process socket " + sock
                    + " accepts connections, and the HTTP API's address 127.0.0.1:" + port + " is in use; stop it, or give this "
                    + "node another socketPath (dev.xq.host.cfg) and port (dev.xq.http.cfg) in " + hd, line);
            assertTrue(!line.contains("\n"));
            // the hot-deploy folder's files win over the properties: another port there is free
            Files.writeString(hd.resolve("dev.xq.http.cfg"), "port=" + free() + "\n");
            assertEquals("not started: another node (or another program) already serves here: the process socket " + sock
                    + " accepts connections; stop it, or give this node another socketPath (dev.xq.host.cfg) in " + hd,
                    Taken.check(hd, p::get, Map.of(), 1000));
            Files.writeString(hd.resolve("dev.xq.host.cfg"), "socketPath=" + tmp.resolve("mine.sock") + "\n");
            assertNull(Taken.check(hd, p::get, Map.of(), 1000));
        }
    }

    @Test
    void aLeftoverSocketFileAndAFreePortAreNotTaken() throws Exception {
        Path sock = tmp.resolve("node.sock");
        try (ServerSocketChannel died = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            died.bind(UnixDomainSocketAddress.of(sock));
        }
        assertTrue(Files.exists(sock), "the file of a node that died stays");
        Map<String, String> p = props("xq.host.socket", sock.toString(), "xq.http.port", Integer.toString(free()));
        assertNull(Taken.check(tmp, p::get, Map.of(), 1000));
    }

    @Test
    void whatIsOffOrAnyFreePortIsNotChecked() throws Exception {
        try (ServerSocket otherHttp = new ServerSocket()) {
            otherHttp.bind(new InetSocketAddress("127.0.0.1", 0));
            String port = Integer.toString(otherHttp.getLocalPort());
            Properties off = new Properties();
            off.setProperty("enabled", "false");
            assertNull(Taken.http(off, props("xq.http.port", port)::get));
            assertNull(Taken.http(new Properties(), props("xq.http.port", port, "xq.http.enabled", "false")::get));
            Properties on = new Properties();
            on.setProperty("enabled", "true");
            assertEquals(otherHttp.getLocalPort(), Taken.http(on, props("xq.http.port", port, "xq.http.enabled", "false")::get).getPort());
            assertNull(Taken.http(new Properties(), props("xq.http.port", "0")::get));
            assertNull(Taken.http(new Properties(), props("xq.http.port", "fifty")::get), "a value the bundle refuses is left to it");
            assertNull(Taken.socket(off, Map.<String, String>of()::get, Map.of(), 1000));
        }
    }

    @Test
    void theDefaultAddressesAreTheBundles() {
        Map<String, String> none = Map.of();
        assertEquals(new InetSocketAddress("127.0.0.1", 50000), Taken.http(new Properties(), none::get));
        assertEquals(Path.of("/run/user/1000/xq/node.sock"), Taken.socket(new Properties(), none::get, Map.of("XDG_RUNTIME_DIR",
                "/run/user/1000"), 1000));
        assertEquals(Path.of("/run/xq/node.sock"), Taken.socket(new Properties(), none::get, Map.of(), 0));
        assertEquals(Path.of("/tmp/xq-1000/node.sock"), Taken.socket(new Properties(), none::get, Map.of(), 1000));
    }

    /** The launcher itself, as ./xq serve runs it: one line on stderr, exit status 1, nothing started. */
    @Test
    void theLauncherSaysItInOneLineAndExits1() throws Exception {
        Path hd = Files.createDirectory(tmp.resolve("hd"));
        Files.setPosixFilePermissions(hd, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        Path sock = tmp.resolve("node.sock");
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                ServerSocket otherHttp = new ServerSocket()) {
            other.bind(UnixDomainSocketAddress.of(sock));
            otherHttp.bind(new InetSocketAddress("127.0.0.1", 0));
            Path bundles = Files.createDirectory(tmp.resolve("bundles")); // empty: nothing is started before the check
            for (String mode : new String[] {"serve"}) {
                List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp", System.getProperty("java.class.path"), "-Dxq.bundles=" + bundles,
                        "-Dxq.host.socket=" + sock, "-Dxq.http.port=" + otherHttp.getLocalPort(), Main.class.getName(),
                        "--bundles", hd.toString(), mode));
                Path log = tmp.resolve(mode + ".log");
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                p.getOutputStream().close();
                boolean exited = p.waitFor(30, TimeUnit.SECONDS);
                if (!exited) {
                    p.destroyForcibly().waitFor();
                }
                String said = Files.readString(log, StandardCharsets.UTF_8);
                assertTrue(exited, mode + ": the launcher still ran after 30 s (it started a node): " + said);
                assertEquals(1, p.exitValue(), mode + ": " + said);
                List<String> lines = said.lines().toList();
                assertEquals(1, lines.size(), mode + ": one line: " + said);
                assertTrue(lines.getFirst().startsWith("xq-node: not started: another node (or another program) already serves here: "
                        + "the process socket " + sock + " accepts connections, and the HTTP API's address 127.0.0.1:"
                        + otherHttp.getLocalPort() + " is in use"), said);
            }
        }
    }

    private static int free() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }
}
