package dev.xq.http;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.ByteOrder;

/**
 * The owner of one TCP socket, asked of the kernel by its four addresses: Linux's socket
 * diagnostics over netlink ({@code NETLINK_SOCK_DIAG}, {@code SOCK_DIAG_BY_FAMILY} without
 * {@code NLM_F_DUMP}), what {@code ss} uses, through the JDK's FFM.
 *
 * <p>Why not {@code /proc/net/tcp} alone ({@link LoopbackPeers}): that file lists every TCP socket
 * of the namespace, so each lookup read and parsed the whole table. Under a flood of 2,000 local
 * connections (issue 41) every change request read thousands of rows, and the node spent both CPUs
 * of the 2-vCPU VM on it (194 % with the attacker at 6 %); the kernel finds one socket by its
 * addresses in a hash table. Where netlink cannot be used (no {@code CONFIG_INET_DIAG}, a sandbox
 * that refuses the socket) the tables stay the way: {@link #owner} says so by returning null.
 *
 * <p>The request names the client's socket from its own side: source = the peer's address and
 * port, destination = the server's. A v4-mapped IPv6 client is found by its IPv4 addresses (the
 * kernel looks both up in one table). The answer's state must not be TIME_WAIT (no owner: uid 0)
 * nor LISTEN (a server socket).
 *
 * <p>Layouts ({@code linux/netlink.h}, {@code linux/inet_diag.h}): {@code nlmsghdr} 16 bytes;
 * {@code inet_diag_req_v2} 56 (family, protocol, ext, pad, states, then {@code inet_diag_sockid}:
 * sport and dport big-endian, src[4] and dst[4] as network-order bytes, if, cookie[2]); the answer's
 * {@code inet_diag_msg} has the state at 1 and the uid at 64 of its 72 bytes.
 */
@SuppressWarnings("restricted") // FFM is this class's job
final class SockDiag {

    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;
    private static final int AF_NETLINK = 16;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int NETLINK_SOCK_DIAG = 4;
    private static final short SOCK_DIAG_BY_FAMILY = 20;
    private static final short NLM_F_REQUEST = 1;
    private static final short NLMSG_ERROR = 2;
    private static final byte IPPROTO_TCP = 6;
    private static final int TCP_TIME_WAIT = 6;
    private static final int TCP_LISTEN = 10;
    private static final int ENOENT = 2;

    private static final int REQUEST_BYTES = 16 + 56;
    private static final int ANSWER_BYTES = 8192;
    private static final ValueLayout.OfShort BE_SHORT = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);
    private static final StructLayout ERRNO = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_VALUE = ERRNO.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle SOCKET;
    private static final MethodHandle SEND;
    private static final MethodHandle RECV;
    private static final MethodHandle CLOSE;
    private static final String UNAVAILABLE;

    static {
        MethodHandle socket = null, send = null, recv = null, close = null;
        String why = null;
        try {
            Linker linker = Linker.nativeLinker();
            var libc = linker.defaultLookup();
            Linker.Option errno = Linker.Option.captureCallState("errno");
            socket = linker.downcallHandle(libc.find("socket").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), errno);
            send = linker.downcallHandle(libc.find("send").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), errno);
            recv = linker.downcallHandle(libc.find("recv").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), errno);
            close = linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        } catch (RuntimeException | LinkageError e) {
            why = "the C library's socket calls could not be linked: " + e;
        }
        SOCKET = socket;
        SEND = send;
        RECV = recv;
        CLOSE = close;
        UNAVAILABLE = why;
    }

    private SockDiag() {
    }

    /** Why netlink cannot be used at all (null when it can be tried). */
    static String unavailable() {
        return UNAVAILABLE;
    }

    /**
     * @return the owner of the client's end of {@code c}; null when the kernel could not be asked
     *         (netlink refused or missing: the caller reads the tables instead), with the reason in
     *         {@code why[0]}
     */
    static LoopbackPeers.Owner owner(LoopbackPeers.Connection c, String[] why) {
        if (UNAVAILABLE != null) {
            why[0] = UNAVAILABLE;
            return null;
        }
        InetAddress peer = c.peer();
        InetAddress local = c.local();
        int family;
        if (peer instanceof Inet4Address && local instanceof Inet4Address) {
            family = AF_INET;
        } else if (peer instanceof Inet6Address && local instanceof Inet6Address) {
            family = AF_INET6;
        } else {
            return LoopbackPeers.Owner.unknown("the connection " + c + " mixes IPv4 and IPv6 addresses");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(ERRNO);
            int fd = (int) SOCKET.invokeExact(state, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
            if (fd < 0) {
                why[0] = "socket(AF_NETLINK, NETLINK_SOCK_DIAG) failed: errno " + errno(state);
                return null;
            }
            try {
                MemorySegment req = arena.allocate(REQUEST_BYTES, 8);
                req.fill((byte) 0);
                req.set(JAVA_INT, 0, REQUEST_BYTES);
                req.set(JAVA_SHORT, 4, SOCK_DIAG_BY_FAMILY);
                req.set(JAVA_SHORT, 6, NLM_F_REQUEST);
                req.set(JAVA_INT, 8, 1);
                req.set(JAVA_BYTE, 16, (byte) family);
                req.set(JAVA_BYTE, 17, IPPROTO_TCP);
                req.set(JAVA_INT, 20, -1); // every state: an exact lookup, the state is checked in the answer
                req.set(BE_SHORT, 24, (short) c.peerPort());
                req.set(BE_SHORT, 26, (short) c.localPort());
                MemorySegment.copy(MemorySegment.ofArray(peer.getAddress()), 0, req, 28, peer.getAddress().length);
                MemorySegment.copy(MemorySegment.ofArray(local.getAddress()), 0, req, 44, local.getAddress().length);
                req.set(JAVA_INT, 64, -1); // INET_DIAG_NOCOOKIE
                req.set(JAVA_INT, 68, -1);
                long sent = (long) SEND.invokeExact(state, fd, req, (long) REQUEST_BYTES, 0);
                if (sent != REQUEST_BYTES) {
                    why[0] = "send on the netlink socket failed: errno " + errno(state);
                    return null;
                }
                MemorySegment ans = arena.allocate(ANSWER_BYTES, 8);
                long got = (long) RECV.invokeExact(state, fd, ans, (long) ANSWER_BYTES, 0);
                if (got < 16) {
                    why[0] = "recv on the netlink socket failed: " + (got < 0 ? "errno " + errno(state) : got + " bytes");
                    return null;
                }
                short type = ans.get(JAVA_SHORT, 4);
                if (type == NLMSG_ERROR) {
                    int err = got >= 20 ? -ans.get(JAVA_INT, 16) : 0;
                    if (err == ENOENT) {
                        return LoopbackPeers.Owner.unknown("no socket " + c + " is known to the kernel");
                    }
                    why[0] = "the kernel's socket diagnostics answered errno " + err;
                    return null;
                }
                if (type != SOCK_DIAG_BY_FAMILY || got < 16 + 72) {
                    why[0] = "the kernel's socket diagnostics answered a message of type " + type + ", " + got + " bytes";
                    return null;
                }
                int tcpState = ans.get(JAVA_BYTE, 17) & 0xff;
                if (tcpState == TCP_TIME_WAIT || tcpState == TCP_LISTEN) {
                    return LoopbackPeers.Owner.unknown("the socket " + c + " is in state " + tcpState + " (no owner)");
                }
                return LoopbackPeers.Owner.of(ans.get(JAVA_INT, 16 + 64));
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        } catch (Throwable t) {
            why[0] = "the kernel's socket diagnostics could not be asked: " + t;
            return null;
        }
    }

    private static int errno(MemorySegment state) {
        return (int) ERRNO_VALUE.get(state, 0L);
    }
}
