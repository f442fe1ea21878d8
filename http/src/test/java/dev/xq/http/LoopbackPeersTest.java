package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.http.LoopbackPeers.Connection;
import dev.xq.http.LoopbackPeers.Owner;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which local user owns the other end of a loopback connection: /proc/net/tcp and tcp6, as fixtures and for real. */
class LoopbackPeersTest {

    static final InetAddress V4 = InetAddress.ofLiteral("127.0.0.1");
    static final InetAddress V6 = InetAddress.ofLiteral("::1");

    /**
     * A node on 127.0.0.1:50000 (C350). 41234 (A112): a client of uid 1001, and the node's own end of that
     * connection (uid 1000, local and remote the other way round). 41235 (A113): only a TIME_WAIT row (uid 0).
     * 41236 (A114): a client of uid 1000. 41237 (A115): root's client of another server (8080, 1F90).
     */
    static final String TCP = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:C350 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11111 1 0000000000000000 100 0 0 10 0
               1: 0100007F:A112 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1001        0 22222 1 0000000000000000 20 4 30 10 -1
               2: 0100007F:C350 0100007F:A112 01 00000000:00000000 00:00000000 00000000  1000        0 33333 1 0000000000000000 20 4 29 10 -1
               3: 0100007F:A113 0100007F:C350 06 00000000:00000000 03:00001234 00000000     0        0 0 3 0000000000000000
               4: 0100007F:A114 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 44444 1 0000000000000000 20 4 30 10 -1
               5: 0100007F:A115 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 55555 1 0000000000000000 20 4 30 10 -1
            """;

    /**
     * A node on [::1]:50000: 41234 (A112) a client of uid 1002 over ::1; 41238 (A116) a client of uid 1003 that
     * reached 127.0.0.1:50000 with an IPv6 socket (v4-mapped, as Java's own sockets do).
     */
    static final String TCP6 = """
              sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 00000000000000000000000001000000:C350 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 66666 1 0000000000000000 100 0 0 10 0
               1: 00000000000000000000000001000000:A112 00000000000000000000000001000000:C350 01 00000000:00000000 00:00000000 00000000  1002        0 77777 1 0000000000000000 20 4 30 10 -1
               2: 0000000000000000FFFF00000100007F:A116 0000000000000000FFFF00000100007F:C350 01 00000000:00000000 00:00000000 00000000  1003        0 88888 1 0000000000000000 20 4 30 10 -1
            """;

    static Connection to50000(InetAddress a, int peerPort) {
        return new Connection(a, peerPort, a, 50000);
    }

    @Test
    void addressesAreHexWordsInTheHostsByteOrder() throws Exception {
        assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "the fixtures are a little-endian kernel's");
        assertEquals(V4, LoopbackPeers.address("0100007F:C350"));
        assertEquals(InetAddress.ofLiteral("192.168.0.1"), LoopbackPeers.address("0100A8C0:0016"));
        assertEquals(V6, LoopbackPeers.address("00000000000000000000000001000000:C350"));
        assertEquals(V4, LoopbackPeers.address("0000000000000000FFFF00000100007F:C350"), "v4-mapped is reported as IPv4");
        assertEquals(InetAddress.ofLiteral("fe80::1"), LoopbackPeers.address("000080FE000000000000000001000000:0000"));
        assertEquals(50000, LoopbackPeers.port("0100007F:C350"));
    }

    @Test
    void ipv4RowsGiveTheClientsUid() {
        assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "the fixtures are a little-endian kernel's");
        // the client's row (local = the peer), not the node's own end of the connection (local = the node)
        assertEquals(Owner.of(1001), LoopbackPeers.find(to50000(V4, 41234), TCP), "another user's client");
        assertEquals(Owner.of(1000), LoopbackPeers.find(to50000(V4, 41236), TCP), "the node's user's client");
    }

    @Test
    void ipv6AndV4MappedRowsGiveTheClientsUid() {
        assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "the fixtures are a little-endian kernel's");
        assertEquals(Owner.of(1002), LoopbackPeers.find(to50000(V6, 41234), TCP6), "::1");
        assertEquals(Owner.of(1003), LoopbackPeers.find(to50000(V4, 41238), TCP6), "::ffff:127.0.0.1 seen as 127.0.0.1");
        assertTrue(LoopbackPeers.find(to50000(V4, 41234), TCP6).uid().isEmpty(), "port 41234 over ::1 is not 127.0.0.1's");
    }

    @Test
    void noMatchingRowIsUnknown() {
        Owner none = LoopbackPeers.find(to50000(V4, 41299), TCP);
        assertTrue(none.uid().isEmpty());
        assertEquals("no socket 127.0.0.1:41299 -> 127.0.0.1:50000 is in the table", none.problem());
        assertTrue(LoopbackPeers.find(to50000(V4, 41235), TCP).uid().isEmpty(), "TIME_WAIT says uid 0 but is no one's");
        assertTrue(LoopbackPeers.find(to50000(V4, 41237), TCP).uid().isEmpty(), "41237 talks to 8080, not to the node");
        assertTrue(LoopbackPeers.find(new Connection(V4, 41234, InetAddress.ofLiteral("127.0.0.2"), 50000), TCP).uid().isEmpty(),
                "the server's address must match too");
        assertTrue(LoopbackPeers.find(to50000(V4, 41234), "garbage\n  9: 0100007F:A112 zz\n").uid().isEmpty());
    }

    @Test
    void rowsOfTwoUidsAreUnknown() {
        String both = TCP + "   6: 0100007F:A112 0100007F:C350 08 00000000:00000000 00:00000000 00000000     0        0 9 1 0\n";
        Owner o = LoopbackPeers.find(to50000(V4, 41234), both);
        assertTrue(o.uid().isEmpty());
        assertEquals("the connection 127.0.0.1:41234 -> 127.0.0.1:50000 has rows of several uids [0, 1001]", o.problem());
    }

    @Test
    void bothTablesAreReadAndUnreadableOnesAreSaid(@TempDir Path dir) throws IOException {
        assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "the fixtures are a little-endian kernel's");
        Path tcp = Files.writeString(dir.resolve("tcp"), TCP);
        Path tcp6 = Files.writeString(dir.resolve("tcp6"), TCP6);
        assertEquals(Owner.of(1001), LoopbackPeers.find(to50000(V4, 41234), List.of(tcp, tcp6)));
        assertEquals(Owner.of(1003), LoopbackPeers.find(to50000(V4, 41238), List.of(tcp, tcp6)));
        Path missing = dir.resolve("nope");
        Owner unreadable = LoopbackPeers.find(to50000(V4, 41234), List.of(missing));
        assertTrue(unreadable.uid().isEmpty());
        assertTrue(unreadable.problem().startsWith("the kernel's socket tables could not be read: " + missing), unreadable.problem());
    }

    @Test
    void theNodesUidIsTheProcesssEffectiveUid() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "Linux /proc");
        int uid = LoopbackPeers.processUid();
        assertEquals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"), uid);
    }

    /** A real connection from this JVM to itself, looked up in the real tables: this process's uid. */
    @Test
    void aRealLoopbackConnectionIsThisProcesssOwn() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")), "Linux /proc/net/tcp");
        // an IPv4 socket (row in tcp), an IPv6 socket to 127.0.0.1 (v4-mapped row in tcp6), an IPv6 one to ::1
        lookUpOwnConnection(StandardProtocolFamily.INET, V4);
        lookUpOwnConnection(StandardProtocolFamily.INET6, V4);
        boolean v6;
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.INET6)) {
            s.bind(new InetSocketAddress(V6, 0));
            v6 = true;
        } catch (IOException | UnsupportedOperationException noIpv6) {
            v6 = false;
        }
        if (v6) {
            lookUpOwnConnection(StandardProtocolFamily.INET6, V6);
        }
    }

    private static void lookUpOwnConnection(ProtocolFamily family, InetAddress address) throws IOException {
        ProtocolFamily serverFamily = address instanceof java.net.Inet6Address ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
        try (ServerSocketChannel server = ServerSocketChannel.open(serverFamily)) {
            server.bind(new InetSocketAddress(address, 0));
            try (SocketChannel client = SocketChannel.open(family)) {
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept()) {
                    InetSocketAddress peer = (InetSocketAddress) accepted.getRemoteAddress();
                    InetSocketAddress local = (InetSocketAddress) accepted.getLocalAddress();
                    Connection c = new Connection(peer.getAddress(), peer.getPort(), local.getAddress(), local.getPort());
                    LoopbackPeers system = LoopbackPeers.system();
                    String what = family + " client to " + address + ": " + c;
                    assertEquals(Owner.of(LoopbackPeers.processUid()), system.owner(c), what);
                    // the kernel asked directly (netlink socket diagnostics) says the same as the tables
                    assertEquals(Owner.of(LoopbackPeers.processUid()), LoopbackPeers.find(c, LoopbackPeers.TABLES), what + " (tables)");
                    String[] why = new String[1];
                    Owner asked = SockDiag.owner(c, why);
                    assumeTrue(asked != null, "netlink socket diagnostics usable here: " + why[0]);
                    assertEquals(Owner.of(LoopbackPeers.processUid()), asked, what + " (netlink)");
                    assertTrue(system.mayChange(system.owner(c).uid().getAsInt()), what);
                    // a port no one connected from is no one's
                    Connection nobody = new Connection(peer.getAddress(), peer.getPort() == 65535 ? 1 : peer.getPort() + 1,
                            local.getAddress(), local.getPort());
                    assertTrue(system.owner(nobody).uid().isEmpty(), nobody.toString());
                    Owner none = SockDiag.owner(nobody, why);
                    assertTrue(none != null && none.uid().isEmpty() && none.problem().contains("no socket"), nobody + ": " + none + " " + why[0]);
                }
            }
        }
    }

    @Test
    void onlyTheNodesUidAndRootMayChange() {
        LoopbackPeers p = new LoopbackPeers(1000, c -> Owner.of(1000));
        assertTrue(p.mayChange(1000));
        assertTrue(p.mayChange(0));
        assertTrue(!p.mayChange(1001));
        LoopbackPeers unknownNode = new LoopbackPeers(-1, c -> Owner.of(1000));
        assertTrue(!unknownNode.mayChange(-1) && !unknownNode.mayChange(1000) && unknownNode.mayChange(0));
        assertEquals("the server did not give the connection's addresses", LoopbackPeers.system().owner(null).problem());
    }
}
