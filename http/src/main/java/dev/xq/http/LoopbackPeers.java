package dev.xq.http;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Which local user is at the other end of a loopback connection, and whether that user may change the node.
 *
 * <p>Why: every local user can reach 127.0.0.1, so "the peer is on loopback" says nothing about who it
 * is. The process socket answers that with {@code SO_PEERCRED} and lets only the node's user (and a
 * configured group) in; the HTTP API had no such check, so any local user could suspend another's
 * queue or swap the node's policy with one curl command. TCP has no peer credentials, but the kernel
 * lists every TCP socket of this network namespace in {@code /proc/net/tcp} and {@code /proc/net/tcp6}
 * with the uid that created it. The client's socket is the row whose local address:port is the
 * peer's address:port and whose remote address:port is the server's own end of the connection; its
 * {@code uid} column is the client's user. The API lets a request without a token change something
 * only when that uid is the node's own ({@link #processUid()}, its effective uid) or root's; every
 * other uid, and a connection whose owner cannot be found, needs the node's token.
 *
 * <p>The tables: addresses are hex of the address as the kernel stores it, printed as 32-bit words
 * in the host's byte order (little-endian on x86 and arm64: 127.0.0.1 is {@code 0100007F}); tcp6
 * prints four such words ({@code ::1} is {@code 00000000000000000000000001000000}, a v4-mapped
 * {@code ::ffff:127.0.0.1} is {@code 0000000000000000FFFF00000100007F}); ports are hex in plain
 * order. A client that connects to 127.0.0.1 with an IPv6 socket (Java does, by default) is in
 * tcp6 under its v4-mapped address, which Java reports as the plain IPv4 one; decoding both
 * tables to {@link InetAddress} matches either. Rows in TIME_WAIT are passed over: the kernel
 * writes uid 0 for them, as they belong to no one any more. Rows of two different uids for one
 * connection (never seen; it would need a port reused while the lookup runs) count as "not
 * found". No JNI: two world-readable text files, and before them the kernel's socket
 * diagnostics over netlink through FFM ({@link SockDiag}), which find the one socket without
 * reading every other (the tables are the way where netlink cannot be used).
 */
final class LoopbackPeers {

    /** The kernel's TIME_WAIT state ({@code st} column): no owner, uid shown as 0. */
    private static final int TIME_WAIT = 0x06;
    /** The kernel's LISTEN state: a server socket, never a client's end. */
    private static final int LISTEN = 0x0A;

    static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

    /**
     * One TCP connection as the server sees it.
     *
     * @param peer the client's address
     * @param peerPort the client's port
     * @param local the server's address on this connection
     * @param localPort the server's port
     */
    record Connection(InetAddress peer, int peerPort, InetAddress local, int localPort) {
        @Override
        public String toString() {
            return address(peer) + ":" + peerPort + " -> " + address(local) + ":" + localPort;
        }

        private static String address(InetAddress a) {
            String s = a.getHostAddress();
            return s.indexOf(':') >= 0 ? "[" + s + "]" : s;
        }
    }

    /**
     * What the lookup found.
     *
     * @param uid the uid that owns the client's socket, if found
     * @param problem why it was not found (empty when it was)
     */
    record Owner(OptionalInt uid, String problem) {
        static Owner of(int uid) {
            return new Owner(OptionalInt.of(uid), "");
        }

        static Owner unknown(String problem) {
            return new Owner(OptionalInt.empty(), problem);
        }
    }

    private final int nodeUid;
    private final Function<Connection, Owner> lookup;

    /**
     * @param nodeUid the node's uid, -1 when unknown (then only root may change the node without a token)
     * @param lookup finds a connection's owner (null: one whose addresses are not known); {@link #system()}'s reads /proc
     */
    LoopbackPeers(int nodeUid, Function<Connection, Owner> lookup) {
        this.nodeUid = nodeUid;
        this.lookup = lookup;
    }

    /** This process's uid; each connection asked of the kernel ({@link SockDiag}), else found in its tables. */
    static LoopbackPeers system() {
        return new LoopbackPeers(processUid(), c -> c == null ? Owner.unknown("the server did not give the connection's addresses")
                : lookup(c));
    }

    /**
     * @return the owner of the client's end of {@code c}: asked of the kernel by the connection's addresses;
     *         where that cannot be done, or the kernel knows no such socket (also what a kernel without
     *         its TCP diagnostics answers), looked up in the tables
     */
    static Owner lookup(Connection c) {
        String[] why = new String[1];
        Owner o = SockDiag.owner(c, why);
        if (o != null && o.uid().isPresent()) {
            return o;
        }
        Owner t = find(c, TABLES);
        return t.uid().isPresent() || o == null ? t : o;
    }

    /** @return the node's uid, or -1 when it could not be read */
    int nodeUid() {
        return nodeUid;
    }

    /** @return whether a connection of this uid may change the node without a token: the node's own, or root */
    boolean mayChange(int uid) {
        return uid == 0 || (nodeUid >= 0 && uid == nodeUid);
    }

    /** @return who owns the client's end of the connection (null: its addresses are not known) */
    Owner owner(Connection c) {
        return lookup.apply(c);
    }

    // ------------------------------------------------------------------ /proc

    /** @return the owner of the client's socket of {@code c}, looked up in these tables (tcp, tcp6) */
    static Owner find(Connection c, List<Path> tables) {
        TreeSet<Integer> uids = new TreeSet<>();
        List<String> unreadable = new ArrayList<>();
        for (Path t : tables) {
            try (BufferedReader in = Files.newBufferedReader(t, StandardCharsets.US_ASCII)) {
                uids.addAll(uids(c, in.lines()));
            } catch (IOException | java.io.UncheckedIOException | SecurityException e) {
                unreadable.add(t + " (" + e.getMessage() + ")");
            }
        }
        return owner(c, uids, tables, unreadable);
    }

    /** @return the owner of the client's socket of {@code c} in the text of one table (for tests: fixtures) */
    static Owner find(Connection c, String table) {
        return owner(c, uids(c, table.lines()), List.of(Path.of("the table")), List.of());
    }

    private static Owner owner(Connection c, TreeSet<Integer> uids, List<Path> tables, List<String> unreadable) {
        if (uids.size() == 1) {
            return Owner.of(uids.first());
        }
        if (uids.size() > 1) {
            return Owner.unknown("the connection " + c + " has rows of several uids " + uids);
        }
        if (!unreadable.isEmpty() && unreadable.size() == tables.size()) {
            return Owner.unknown("the kernel's socket tables could not be read: " + String.join(", ", unreadable));
        }
        return Owner.unknown("no socket " + c + " is in " + String.join(", ", tables.stream().map(Path::toString).toList())
                + (unreadable.isEmpty() ? "" : " (unreadable: " + String.join(", ", unreadable) + ")"));
    }

    /** @return the uids of the rows that are the client's end of {@code c}: local = peer, remote = the server's end */
    static TreeSet<Integer> uids(Connection c, Stream<String> rows) {
        TreeSet<Integer> found = new TreeSet<>();
        rows.forEach(line -> {
            String[] f = fields(line, 8);
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
            if (f.length < 8 || !f[0].endsWith(":")) {
                return;   // the header, or nothing the kernel writes
            }
            try {
                int state = Integer.parseInt(f[3], 16);
                if (state == TIME_WAIT || state == LISTEN) {
                    return;
                }
                if (port(f[1]) != c.peerPort() || port(f[2]) != c.localPort()
                        || !address(f[1]).equals(c.peer()) || !address(f[2]).equals(c.local())) {
                    return;
                }
                found.add(Integer.parseInt(f[7]));
            } catch (IllegalArgumentException | UnknownHostException malformed) {
                // a row we cannot read is no row of ours (NumberFormatException is an IllegalArgumentException)
            }
        });
        return found;
    }

    /** @return the first {@code n} fields of a row, split at spaces (fewer when it has fewer): no regular expression, rows are many */
    static String[] fields(String line, int n) {
        String[] f = new String[n];
        int k = 0;
        int i = 0;
        int len = line.length();
        while (k < n) {
            while (i < len && line.charAt(i) <= ' ') {
                i++;
            }
            if (i >= len) {
                break;
            }
            int start = i;
            while (i < len && line.charAt(i) > ' ') {
                i++;
            }
            f[k++] = line.substring(start, i);
        }
        return k == n ? f : java.util.Arrays.copyOf(f, k);
    }

    /** {@code 0100007F:C350} → 50000 */
    static int port(String field) {
        int colon = field.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("no port in " + field);
        }
        return Integer.parseInt(field.substring(colon + 1), 16);
    }

    /**
     * {@code 0100007F:C350} → 127.0.0.1; 32 hex digits (tcp6) → an IPv6 address, or the IPv4 one when it is
     * v4-mapped (as Java reports the peer of such a connection).
     */
    static InetAddress address(String field) throws UnknownHostException {
        int colon = field.indexOf(':');
        String hex = colon < 0 ? field : field.substring(0, colon);
        if (hex.length() != 8 && hex.length() != 32) {
            throw new IllegalArgumentException("an address of " + hex.length() + " hex digits: " + field);
        }
        byte[] bytes = new byte[hex.length() / 2];
        boolean little = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = word * 8 + i * 2;
                int b = Integer.parseInt(hex.substring(at, at + 2), 16);
                bytes[word * 4 + (little ? 3 - i : i)] = (byte) b;
            }
        }
        return InetAddress.getByAddress(bytes);   // 16 bytes of ::ffff:a.b.c.d give an Inet4Address
    }

    /**
     * @return this process's effective uid, from the {@code Uid:} line of /proc/self/status (real, effective,
     *         saved, filesystem), else the owner of /proc/self; -1 when neither can be read
     */
    static int processUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Uid:")) {
                    return Integer.parseInt(line.substring(4).trim().split("\\s+")[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // below
        }
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
