package dev.xq.http;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import java.nio.channels.SelectableChannel;
import java.util.ArrayDeque;
import java.util.function.LongSupplier;

/**
 * Holds, unread, the connections that {@link ConnectionCap} refuses a local user over
 * {@code maxConnectionsPerUser}, for {@link #HOLD_NANOS} each, instead of closing them at once.
 *
 * <p>Why (issue 41, the connection flood): a client that reopens every connection the node closes
 * turns each close into another connect, accept, kernel query and close, as fast as two CPUs
 * allow (11,000 a second on loopback on the 2-vCPU VM), and the tenants beside it lost 2-3 x their
 * P99 to that churn, not to the node's run queue. A connection held here costs the node one file
 * descriptor and nothing else: the node never reads it (its receive buffer is shrunk, so the peer's
 * writes stop once a few KiB wait) and closes it with a reset when its time is up or its client
 * has gone (looked for every second, with one {@code poll} for hang-ups over all of them); when the
 * pen is full ({@code penConnections}, at most a quarter of the node's descriptor limit), refused
 * connections are closed at once, as before.
 *
 * <p>How: the accepted channel's descriptor is duplicated (FFM {@code dup}) and the channel closed
 * as before, so Jetty forgets it while the connection stays open on the duplicate. The descriptor
 * number of a channel is the JDK's own ({@code sun.nio.ch.SelChImpl#getFDVal}), reachable where the
 * JVM exports that package to unnamed modules: the node's jar says so ({@code Add-Exports});
 * elsewhere the pen says once that it is off, and refused connections are closed at once.
 */
final class Pen implements AutoCloseable {

    /** How long a refused connection is held. */
    static final long HOLD_NANOS = 30_000_000_000L;
    /** The receive buffer asked for a held connection (the kernel doubles it and keeps a minimum). */
    static final int RCVBUF = 1024;
    /** How often held connections past their time, or whose clients are gone, are closed, at the least. */
    static final long SWEEP_MS = 1_000;

    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVBUF = 8;
    private static final int SO_LINGER = 13;
    private static final int RLIMIT_NOFILE = 7;

    private static final MethodHandle DUP;
    private static final MethodHandle CLOSE;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle GETRLIMIT;
    private static final MethodHandle POLL;
    private static final short POLLERR = 0x8;
    private static final short POLLHUP = 0x10;
    private static final short POLLNVAL = 0x20;
    private static final short POLLRDHUP = 0x2000;
    /** A full pen looks for connections its clients closed at most this often. */
    static final long FULL_REAP_NANOS = 100_000_000L;
    private static final Class<?> SEL_CH;
    private static final Method FD_VAL;

    static {
        MethodHandle dup = null;
        MethodHandle close = null;
        MethodHandle set = null;
        MethodHandle rlimit = null;
        MethodHandle poll = null;
        try {
            Linker linker = Linker.nativeLinker();
            var lookup = linker.defaultLookup();
            dup = lookup.find("dup").map(a -> linker.downcallHandle(a, FunctionDescriptor.of(JAVA_INT, JAVA_INT))).orElse(null);
            close = lookup.find("close").map(a -> linker.downcallHandle(a, FunctionDescriptor.of(JAVA_INT, JAVA_INT))).orElse(null);
            set = lookup.find("setsockopt").map(a -> linker.downcallHandle(a,
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, java.lang.foreign.ValueLayout.ADDRESS, JAVA_INT)))
                    .orElse(null);
            rlimit = lookup.find("getrlimit").map(a -> linker.downcallHandle(a,
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, java.lang.foreign.ValueLayout.ADDRESS))).orElse(null);
            poll = lookup.find("poll").map(a -> linker.downcallHandle(a,
                    FunctionDescriptor.of(JAVA_INT, java.lang.foreign.ValueLayout.ADDRESS, JAVA_LONG, JAVA_INT))).orElse(null);
        } catch (RuntimeException | LinkageError notHere) {
            dup = null;
        }
        POLL = poll;
        DUP = dup;
        CLOSE = close;
        SETSOCKOPT = set;
        GETRLIMIT = rlimit;
        Class<?> c = null;
        Method m = null;
        try {
            c = Class.forName("sun.nio.ch.SelChImpl", false, null);
            m = c.getMethod("getFDVal");
        } catch (ReflectiveOperationException | RuntimeException | LinkageError notHere) {
            c = null;
            m = null;
        }
        SEL_CH = c;
        FD_VAL = m;
    }

    private final int capacity;
    private final long holdNanos;
    private final LongSupplier nanoTime;
    private final RuntimeLog log;
    /** Held descriptors and their deadlines, oldest first; guarded by itself. */
    private final ArrayDeque<long[]> held = new ArrayDeque<>();
    private volatile String off;
    private boolean saidOff;
    private long fullSince;
    private long fullSaid = Long.MIN_VALUE;
    private long lastReap = Long.MIN_VALUE;
    /** Set by {@link #close()}; guarded by {@link #held}. */
    private boolean closed;
    private java.util.concurrent.ScheduledExecutorService sweeper;

    /**
     * @param wanted the most connections held at once ({@code penConnections}); 0 turns the pen off
     */
    Pen(int wanted, RuntimeLog log) {
        this(wanted, HOLD_NANOS, System::nanoTime, log, descriptorLimit());
    }

    Pen(int wanted, long holdNanos, LongSupplier nanoTime, RuntimeLog log, long descriptorLimit) {
        this.holdNanos = holdNanos;
        this.nanoTime = nanoTime;
        this.log = log;
        String why = DUP == null || CLOSE == null || SETSOCKOPT == null ? "dup, close or setsockopt was not found in the C library"
                : FD_VAL == null ? "this JDK has no sun.nio.ch.SelChImpl.getFDVal" : null;
        long cap = wanted;
        if (descriptorLimit > 0) {
            cap = Math.min(cap, descriptorLimit / 4);
        }
        this.capacity = (int) Math.max(0, cap);
        this.off = wanted == 0 ? "penConnections is 0" : why;
    }

    /** @return the most connections held at once (0: off) */
    int capacity() {
        return off == null ? capacity : 0;
    }

    /** @return why the pen is off, or null while it is on */
    String off() {
        return off;
    }

    /** Starts closing held connections past their time every {@value #SWEEP_MS} ms. */
    synchronized void start() {
        if (sweeper == null && off == null) {
            sweeper = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "xq-http-pen");
                t.setDaemon(true);
                return t;
            });
            sweeper.scheduleWithFixedDelay(this::tick, SWEEP_MS, SWEEP_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Holds the connection of {@code channel} (the caller closes the channel all the same).
     *
     * @return whether it is held; false: off, full, or its descriptor could not be had
     */
    boolean hold(SelectableChannel channel) {
        if (off != null) {
            sayOff();
            return false;
        }
        long now = nanoTime.getAsLong();
        sweep(now);
        boolean full;
        synchronized (held) {
            full = held.size() >= capacity;
        }
        if (full && (lastReap == Long.MIN_VALUE || now - lastReap >= FULL_REAP_NANOS)) {
            lastReap = now;
            reap(); // clients that went away leave room
        }
        synchronized (held) {
            if (held.size() >= capacity) {
                fullSince++;
                if (fullSaid == Long.MIN_VALUE || now - fullSaid >= ConnectionCap.LOG_EVERY_NANOS) {
                    fullSaid = now;
                    log.warn("HTTP API: " + capacity + " refused connections are held already (PID " + HttpConfig.PID
                            + ", penConnections): more are closed at once (" + fullSince + " since this was last said)", null);
                    fullSince = 0;
                }
                return false;
            }
        }
        int fd = fdOf(channel);
        if (fd < 0) {
            return false;
        }
        int copy;
        try {
            copy = (int) DUP.invokeExact(fd);
        } catch (Throwable t) {
            return false;
        }
        if (copy < 0) {
            return false; // out of descriptors: closed at once, as before
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment linger = a.allocate(8);
            linger.set(JAVA_INT, 0, 1); // on, 0 s: the close resets the connection, nothing lingers
            linger.set(JAVA_INT, 4, 0);
            int unused = (int) SETSOCKOPT.invokeExact(copy, SOL_SOCKET, SO_LINGER, linger, 8);
            MemorySegment buf = a.allocate(4);
            buf.set(JAVA_INT, 0, RCVBUF);
            unused = (int) SETSOCKOPT.invokeExact(copy, SOL_SOCKET, SO_RCVBUF, buf, 4);
        } catch (Throwable t) {
            // held all the same; only its buffer and its close are the kernel's defaults
        }
        synchronized (held) {
            if (!closed) {
                held.addLast(new long[] {copy, now + holdNanos});
                return true;
            }
        }
        closeFd(copy); // the pen closed meanwhile: nothing may stay held past it
        return false;
    }

    /** @return connections held now */
    int size() {
        synchronized (held) {
            return held.size();
        }
    }

    /** Closes the held connections whose time is up, and those their clients closed ({@link #reap()}). */
    private void tick() {
        long now = nanoTime.getAsLong();
        sweep(now);
        reap();
    }

    /**
     * Closes the held connections whose clients are gone (closed, reset: a client that exits and
     * starts again must not fill the pen with what it left behind). One {@code poll} over all of
     * them, asking for hang-ups only: the bytes a client sends are never read.
     *
     * @return how many were closed
     */
    int reap() {
        if (POLL == null) {
            return 0;
        }
        long[] fds;
        synchronized (held) {
            fds = new long[held.size()];
            int i = 0;
            for (long[] h : held) {
                fds[i++] = h[0];
            }
        }
        if (fds.length == 0) {
            return 0;
        }
        java.util.Set<Long> gone = new java.util.HashSet<>();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(8L * fds.length, 8);
            for (int i = 0; i < fds.length; i++) {
                p.set(JAVA_INT, 8L * i, (int) fds[i]);
                p.set(java.lang.foreign.ValueLayout.JAVA_SHORT, 8L * i + 4, POLLRDHUP);
                p.set(java.lang.foreign.ValueLayout.JAVA_SHORT, 8L * i + 6, (short) 0);
            }
            int n = (int) POLL.invokeExact(p, (long) fds.length, 0);
            for (int i = 0; n > 0 && i < fds.length; i++) {
                short r = p.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 8L * i + 6);
                if ((r & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
                    gone.add(fds[i]);
                }
            }
        } catch (Throwable t) {
            return 0;
        }
        if (gone.isEmpty()) {
            return 0;
        }
        java.util.List<Long> close = new java.util.ArrayList<>();
        synchronized (held) {
            held.removeIf(h -> {
                if (gone.contains(h[0])) {
                    close.add(h[0]);
                    return true;
                }
                return false;
            });
        }
        for (long fd : close) {
            closeFd((int) fd);
        }
        return close.size();
    }

    /** Closes the held connections whose time is up at {@code now}. */
    void sweep(long now) {
        while (true) {
            long fd;
            synchronized (held) {
                long[] first = held.peekFirst();
                if (first == null || now - first[1] < 0) {
                    return;
                }
                held.pollFirst();
                fd = first[0];
            }
            closeFd((int) fd);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (sweeper != null) {
                sweeper.shutdownNow();
                sweeper = null;
            }
        }
        synchronized (held) {
            closed = true;
        }
        while (true) {
            long[] first;
            synchronized (held) {
                first = held.pollFirst();
            }
            if (first == null) {
                return;
            }
            closeFd((int) first[0]);
        }
    }

    private static void closeFd(int fd) {
        try {
            int unused = (int) CLOSE.invokeExact(fd);
        } catch (Throwable ignored) {
            // nothing more to do with it
        }
    }

    private int fdOf(SelectableChannel channel) {
        if (!SEL_CH.isInstance(channel)) {
            return -1;
        }
        try {
            return (int) FD_VAL.invoke(channel);
        } catch (IllegalAccessException e) {
            off = "the JVM does not export sun.nio.ch to the node (--add-exports java.base/sun.nio.ch=ALL-UNNAMED; the node's jar "
                    + "asks for it when started with java -jar)";
            sayOff();
            return -1;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }

    private synchronized void sayOff() {
        if (!saidOff && off != null && !off.startsWith("penConnections")) {
            saidOff = true;
            log.warn("HTTP API: connections refused over maxConnectionsPerUser are closed at once, not held (PID " + HttpConfig.PID
                    + ", penConnections): " + off, null);
        }
    }

    /** @return the node's soft limit of open descriptors, or -1 when it cannot be read */
    static long descriptorLimit() {
        if (GETRLIMIT == null) {
            return -1;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment r = a.allocate(16);
            int rc = (int) GETRLIMIT.invokeExact(RLIMIT_NOFILE, r);
            return rc == 0 ? r.get(JAVA_LONG, 0) : -1;
        } catch (Throwable t) {
            return -1;
        }
    }
}
