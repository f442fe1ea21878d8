package dev.xq.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * The few libc socket calls the host needs, bound with FFM (Linux, x86-64 and aarch64 values).
 * The JDK's own Unix-domain channels cannot tell the peer's pid, which the protocol checks, so
 * the server side lives here; errors carry errno.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
final class Libc {

    static final int AF_UNIX = 1;
    static final int SOCK_STREAM = 1;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int SOL_SOCKET = 1;
    static final int SO_PEERCRED = 17;
    /** Linux 6.5: a pidfd for the process that connected, taken at connect time (no pid reuse race). */
    static final int SO_PEERPIDFD = 77;
    /** pidfd_open's number: the same on x86-64 and aarch64 (the unified syscall table, Linux 5.3). */
    static final long SYS_PIDFD_OPEN = 434;
    static final short POLLIN = 0x1;
    static final short POLLHUP = 0x10;
    static final int MSG_DONTWAIT = 0x40;
    static final int MSG_NOSIGNAL = 0x4000;
    static final int SHUT_RDWR = 2;

    static final int ESRCH = 3;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ENFILE = 23;
    static final int EMFILE = 24;
    static final int EINVAL = 22;
    static final int ENOSYS = 38;
    static final int ENOPROTOOPT = 92;
    static final int ECONNABORTED = 103;

    /** sun_path's size in struct sockaddr_un; the path and its NUL must fit. */
    static final int SUN_PATH_MAX = 108;

    /** A failed call: the function's name and errno. */
    static final class ErrnoException extends IOException {
        private static final long serialVersionUID = 1L;
        final int errno;

        ErrnoException(String call, int errno) {
            super(call + " failed: " + describe(errno));
            this.errno = errno;
        }
    }

    /** What SO_PEERCRED says about the process that connected. */
    record Cred(int pid, int uid, int gid) {
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE = STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    /** One capture buffer per thread: the calls are made from a handful of long-lived threads. */
    private static final ThreadLocal<MemorySegment> STATE_BUFFER = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(STATE));

    private static final MethodHandle SOCKET = bind("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle BIND = bind("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle LISTEN = bind("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle ACCEPT4 = bind("accept4", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle GETSOCKOPT = bind("getsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle RECV = bind("recv", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SEND = bind("send", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SHUTDOWN = bind("shutdown", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = bind("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle POLL = bind("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    /** glibc 2.36's wrapper where there is one, else syscall(2) (variadic: the arguments as longs). */
    private static final MethodHandle PIDFD_OPEN = LIBC.find("pidfd_open")
            .map(sym -> LINKER.downcallHandle(sym, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), ERRNO)).orElse(null);
    private static final MethodHandle SYSCALL2 = LINKER.downcallHandle(LIBC.find("syscall").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), ERRNO, Linker.Option.firstVariadicArg(1));
    private static final MethodHandle GETEUID = LINKER.downcallHandle(LIBC.find("geteuid").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(LIBC.find("strerror").orElseThrow(),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private static final MethodHandle PRCTL = LIBC.find("prctl").map(sym -> LINKER.downcallHandle(sym,
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), Linker.Option.firstVariadicArg(1))).orElse(null);
    private static final int PR_SET_TIMERSLACK = 29;

    private Libc() {
    }

    /**
     * Sets the calling thread's timer slack (how late the kernel may end its timed sleeps, 50 us
     * unless set): a thread that sleeps tens of microseconds needs it near that.
     *
     * @return whether it was set
     */
    static boolean timerSlack(long nanos) {
        if (PRCTL == null) {
            return false;
        }
        try {
            return (int) PRCTL.invokeExact(PR_SET_TIMERSLACK, nanos) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    private static MethodHandle bind(String name, FunctionDescriptor fd) {
        MemorySegment sym = LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(sym, fd, ERRNO);
    }

    private static int errno(MemorySegment state) {
        return (int) ERRNO_HANDLE.get(state, 0L);
    }

    private static RuntimeException unexpected(String call, Throwable t) {
        return new IllegalStateException("FFM call " + call + " failed", t);
    }

    /** @return a new listening-capable AF_UNIX stream socket, close-on-exec */
    static int socket() throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        int fd;
        try {
            fd = (int) SOCKET.invokeExact(st, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        } catch (Throwable t) {
            throw unexpected("socket", t);
        }
        if (fd < 0) {
            throw new ErrnoException("socket(AF_UNIX, SOCK_STREAM)", errno(st));
        }
        return fd;
    }

    /** Binds {@code fd} to a filesystem path (which must not exist). */
    static void bind(int fd, String path) throws ErrnoException {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        if (p.length >= SUN_PATH_MAX) {
            throw new IllegalArgumentException("socket path " + path + " is " + p.length + " bytes; a Unix socket path must be under "
                    + SUN_PATH_MAX + " bytes");
        }
        MemorySegment st = STATE_BUFFER.get();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment addr = a.allocate(2 + SUN_PATH_MAX, 2); // zeroed: the path ends in NUL
            addr.set(JAVA_SHORT, 0, (short) AF_UNIX);
            MemorySegment.copy(p, 0, addr, JAVA_BYTE, 2, p.length);
            int rc;
            try {
                rc = (int) BIND.invokeExact(st, fd, addr, (int) addr.byteSize());
            } catch (Throwable t) {
                throw unexpected("bind", t);
            }
            if (rc != 0) {
                throw new ErrnoException("bind(" + path + ")", errno(st));
            }
        }
    }

    static void listen(int fd, int backlog) throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        int rc;
        try {
            rc = (int) LISTEN.invokeExact(st, fd, backlog);
        } catch (Throwable t) {
            throw unexpected("listen", t);
        }
        if (rc != 0) {
            throw new ErrnoException("listen", errno(st));
        }
    }

    /** Blocks until a client connects; the new fd is close-on-exec. */
    static int accept(int fd) throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        int c;
        try {
            c = (int) ACCEPT4.invokeExact(st, fd, MemorySegment.NULL, MemorySegment.NULL, SOCK_CLOEXEC);
        } catch (Throwable t) {
            throw unexpected("accept4", t);
        }
        if (c < 0) {
            throw new ErrnoException("accept4", errno(st));
        }
        return c;
    }

    /** The connecting process as the kernel saw it at connect time. */
    static Cred peerCred(int fd) throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cred = a.allocate(12, 4);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, 12);
            int rc;
            try {
                rc = (int) GETSOCKOPT.invokeExact(st, fd, SOL_SOCKET, SO_PEERCRED, cred, len);
            } catch (Throwable t) {
                throw unexpected("getsockopt", t);
            }
            if (rc != 0) {
                throw new ErrnoException("getsockopt(SO_PEERCRED)", errno(st));
            }
            return new Cred(cred.get(JAVA_INT, 0), cred.get(JAVA_INT, 4), cred.get(JAVA_INT, 8));
        }
    }

    /**
     * A pidfd (close-on-exec) for the process that connected to {@code fd}, taken by the kernel at
     * connect time: it names that process even if the pid was handed out again since.
     *
     * @throws ErrnoException ENOPROTOOPT before Linux 6.5; ESRCH (EINVAL on some kernels) when the
     *     process is gone
     */
    static int peerPidfd(int fd) throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, 4);
            int rc;
            try {
                rc = (int) GETSOCKOPT.invokeExact(st, fd, SOL_SOCKET, SO_PEERPIDFD, out, len);
            } catch (Throwable t) {
                throw unexpected("getsockopt", t);
            }
            if (rc != 0) {
                throw new ErrnoException("getsockopt(SO_PEERPIDFD)", errno(st));
            }
            return out.get(JAVA_INT, 0);
        }
    }

    /**
     * {@code pidfd_open(pid, 0)}: a descriptor (close-on-exec) that stays with this process, whatever
     * becomes of its pid; it polls readable once the process has exited.
     *
     * @throws ErrnoException ESRCH when there is no such process, ENOSYS before Linux 5.3
     */
    static int pidfdOpen(int pid) throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        long rc;
        try {
            rc = PIDFD_OPEN != null ? (int) PIDFD_OPEN.invokeExact(st, pid, 0)
                    : (long) SYSCALL2.invokeExact(st, SYS_PIDFD_OPEN, (long) pid, 0L);
        } catch (Throwable t) {
            throw unexpected("pidfd_open", t);
        }
        if (rc < 0) {
            throw new ErrnoException("pidfd_open(" + pid + ")", errno(st));
        }
        return (int) rc;
    }

    /**
     * Polls {@code fd} without waiting.
     *
     * @return the events that happened of {@code events} (POLLHUP always counts), 0 when none or
     *     when the poll was interrupted (the caller asks again later)
     */
    static int pollNow(int fd, short events) {
        MemorySegment st = STATE_BUFFER.get();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(8, 4); // struct pollfd { int fd; short events; short revents; }
            pfd.set(JAVA_INT, 0, fd);
            pfd.set(JAVA_SHORT, 4, events);
            int rc;
            try {
                rc = (int) POLL.invokeExact(st, pfd, 1L, 0);
            } catch (Throwable t) {
                throw unexpected("poll", t);
            }
            return rc > 0 ? pfd.get(JAVA_SHORT, 6) & (events | POLLHUP) : 0;
        }
    }

    /**
     * Blocking receive.
     * @return bytes read, 0 at end of stream
     */
    static long recv(int fd, MemorySegment buf) throws ErrnoException {
        MemorySegment st = STATE_BUFFER.get();
        while (true) {
            long n;
            try {
                n = (long) RECV.invokeExact(st, fd, buf, buf.byteSize(), 0);
            } catch (Throwable t) {
                throw unexpected("recv", t);
            }
            if (n >= 0) {
                return n;
            }
            int e = errno(st);
            if (e != EINTR) {
                throw new ErrnoException("recv", e);
            }
        }
    }

    /**
     * Sends without ever waiting and without SIGPIPE.
     * @return bytes sent, or {@code -errno} (EAGAIN when the peer's buffer is full)
     */
    static long sendNow(int fd, MemorySegment buf, long len) {
        MemorySegment st = STATE_BUFFER.get();
        while (true) {
            long n;
            try {
                n = (long) SEND.invokeExact(st, fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
            } catch (Throwable t) {
                throw unexpected("send", t);
            }
            if (n >= 0) {
                return n;
            }
            int e = errno(st);
            if (e != EINTR) {
                return -e;
            }
        }
    }

    /** Ends both directions: wakes a thread blocked in recv or accept on {@code fd}. Errors are of no interest. */
    static void shutdown(int fd) {
        try {
            int ignored = (int) SHUTDOWN.invokeExact(STATE_BUFFER.get(), fd, SHUT_RDWR);
        } catch (Throwable t) {
            throw unexpected("shutdown", t);
        }
    }

    static void close(int fd) {
        try {
            // no retry on EINTR: on Linux the fd is gone either way
            int ignored = (int) CLOSE.invokeExact(STATE_BUFFER.get(), fd);
        } catch (Throwable t) {
            throw unexpected("close", t);
        }
    }

    static int geteuid() {
        try {
            return (int) GETEUID.invokeExact();
        } catch (Throwable t) {
            throw unexpected("geteuid", t);
        }
    }

    static String describe(int errno) {
        String text;
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            text = s.equals(MemorySegment.NULL) ? "?" : s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            text = "?";
        }
        return text + " (errno " + errno + ")";
    }
}
