package dev.xq.http;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The HTTP API's threads run at a lower CPU priority than the rest of the node (issue 41: a local
 * user's connection flood, 15,000 connections a second accepted and closed, kept the node's HTTP
 * threads on both CPUs of a small host, and a tenant beside it ran at 2-3 x its P99). Linux keeps
 * a nice value per thread; the HTTP server's pool threads (Jetty's, named after the pool) are set
 * to {@code threadNice} (PID {@code dev.xq.http}), so that what any client makes the API do takes
 * only CPU time the node's scheduling and the tenants leave. Operator commands then wait for the
 * CPU only while every CPU is busy with work of a better priority.
 *
 * <p>How: the threads of the process are listed in {@code /proc/self/task}, each one's name
 * ({@code comm}, the first 15 characters of the Java thread's name) compared with the pool's, and
 * {@code setpriority(PRIO_PROCESS, tid, nice)} called through FFM for those not at the value yet.
 * A listing is made when the server starts and then, at most once a second, as connections are
 * accepted (a pool grows only under load, which brings accepts), and every
 * {@value #TIMER_MS} ms by a thread of its own. A thread that another thread starts inherits its
 * nice value, so a thread started from an HTTP thread would keep it: the JDK's own pools (the
 * carriers of virtual threads, which run the node's work too) start their threads from whichever
 * thread first needs one. A listing puts such threads, not of the pool and at the lowered value,
 * back at the node's own value, which needs root or {@code CAP_SYS_NICE}; so the values are
 * lowered only where they can be raised again ({@link #canUndo}); elsewhere the node says in its
 * log that the setting is not applied.
 */
final class ThreadNice {

    private static final int PRIO_PROCESS = 0;
    private static final int EPERM = 1;
    private static final int EACCES = 13;
    /** Listings are at most this far apart while connections are accepted. */
    static final long EVERY_NANOS = 1_000_000_000L;
    /** Listings by the timer, this far apart. */
    static final long TIMER_MS = 2_000;

    private static final StructLayout ERRNO = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_VALUE = ERRNO.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SETPRIORITY;

    static {
        MethodHandle set = null;
        try {
            Linker linker = Linker.nativeLinker();
            set = linker.defaultLookup().find("setpriority").map(a -> linker.downcallHandle(a,
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.captureCallState("errno"))).orElse(null);
        } catch (RuntimeException | LinkageError notHere) {
            set = null;
        }
        SETPRIORITY = set;
    }

    private final int nice;
    private final Path tasks;
    private final RuntimeLog log;
    private final LongSupplier nanoTime;
    private final int base;
    private volatile String prefix;
    private long last = Long.MIN_VALUE;
    private boolean saidUnable;
    private boolean saidInherited;
    private final Set<Integer> failed = new HashSet<>();
    private java.util.concurrent.ScheduledExecutorService timer;

    /**
     * @param nice the value for the pool's threads, 0-19; 0 leaves every thread as it is
     * @param tasks the process's thread folder ({@code /proc/self/task})
     */
    ThreadNice(int nice, Path tasks, RuntimeLog log, LongSupplier nanoTime) {
        if (nice < 0 || nice > 19) {
            throw new IllegalArgumentException("threadNice " + nice + " is out of range [0, 19]");
        }
        this.nice = nice;
        this.tasks = tasks;
        this.log = log;
        this.nanoTime = nanoTime;
        this.base = niceOf(tasks.resolveSibling("stat"));
    }

    ThreadNice(int nice, RuntimeLog log) {
        this(nice, Path.of("/proc/self/task"), log, System::nanoTime);
    }

    /** @return whether this host can lower a thread's priority at all (Linux, setpriority found) */
    static boolean available() {
        return SETPRIORITY != null && Files.isDirectory(Path.of("/proc/self/task"));
    }

    /**
     * @return whether a thread of this process can be given {@code nice} and then its value back (root,
     *         {@code CAP_SYS_NICE}, or a nice limit that allows it): tried on a thread started for it
     */
    static boolean canUndo(int nice) {
        if (!available()) {
            return false;
        }
        int base = niceOf(Path.of("/proc/self/stat"));
        boolean[] ok = {false};
        Thread t = Thread.ofPlatform().name("xq-http-nice-probe").start(() -> {
            int tid = ownTid();
            ok[0] = tid > 0 && base != Integer.MIN_VALUE && rawSet(tid, nice) == 0 && rawSet(tid, base) == 0;
        });
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return ok[0];
    }

    /** @return the calling thread's id in the kernel, -1 if unknown */
    static int ownTid() {
        try {
            Path p = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            return Integer.parseInt(p.getFileName().toString());
        } catch (IOException | RuntimeException unknown) {
            return -1;
        }
    }

    private static int rawSet(int tid, int value) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) SETPRIORITY.invokeExact(arena.allocate(ERRNO), PRIO_PROCESS, tid, value);
        } catch (Throwable t) {
            return -1;
        }
    }

    /** Lists the threads every {@value #TIMER_MS} ms from now on, until {@link #close}. */
    synchronized void start() {
        if (timer != null || nice == 0) {
            return;
        }
        timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                r -> Thread.ofPlatform().daemon().name("xq-http-nice").unstarted(r));
        timer.scheduleWithFixedDelay(() -> {
            String p = prefix;
            if (p != null) {
                synchronized (this) {
                    last = nanoTime.getAsLong();
                    apply(p);
                }
            }
        }, TIMER_MS, TIMER_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Stops the timer. */
    synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }

    /** The server's pool is known (its threads' names start with {@code poolName}); lists the threads now. */
    void pool(String poolName) {
        if (nice == 0 || poolName == null || poolName.isEmpty()) {
            return;
        }
        // the kernel keeps 15 characters of a name
        prefix = poolName.length() > 15 ? poolName.substring(0, 15) : poolName;
        synchronized (this) {
            last = Long.MIN_VALUE;
        }
        maybeApply();
    }

    /** A connection is accepted: lists the threads if the last listing is a second old. */
    void maybeApply() {
        String p = prefix;
        if (p == null || SETPRIORITY == null) {
            return;
        }
        synchronized (this) {
            long now = nanoTime.getAsLong();
            if (last != Long.MIN_VALUE && now - last < EVERY_NANOS) {
                return;
            }
            last = now;
            apply(p);
        }
    }

    /** @return how many threads were given a new value */
    int apply(String p) {
        int changed = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(tasks)) {
            for (Path t : ds) {
                int tid;
                try {
                    tid = Integer.parseInt(t.getFileName().toString());
                } catch (NumberFormatException notATask) {
                    continue;
                }
                String comm;
                int now;
                try {
                    comm = Files.readString(t.resolve("comm")).strip();
                    now = niceOf(t.resolve("stat"));
                } catch (IOException gone) {
                    continue; // ended meanwhile
                }
                if (now == Integer.MIN_VALUE) {
                    continue;
                }
                if (comm.startsWith(p)) {
                    if (now < nice && set(tid, nice)) {
                        changed++;
                    }
                } else if (now == nice && nice != base && !failed.contains(tid)) {
                    // started from one of the pool's threads: back to the node's own value
                    if (set(tid, base)) {
                        changed++;
                    } else {
                        failed.add(tid);
                        if (!saidInherited) {
                            saidInherited = true;
                            log.warn("HTTP API: thread " + tid + " (" + comm + ") was started from one of the API's threads and keeps "
                                    + "their nice value " + nice + "; lowering it again needs root or CAP_SYS_NICE (PID "
                                    + HttpConfig.PID + ", threadNice 0 keeps every thread at the node's value)", null);
                        }
                    }
                }
            }
        } catch (IOException noProc) {
            if (!saidUnable) {
                saidUnable = true;
                log.warn("HTTP API: the node's threads cannot be listed (" + noProc.getMessage() + "); threadNice is not applied", null);
            }
        }
        return changed;
    }

    private boolean set(int tid, int value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(ERRNO);
            int rc = (int) SETPRIORITY.invokeExact(state, PRIO_PROCESS, tid, value);
            if (rc == 0) {
                return true;
            }
            int errno = (int) ERRNO_VALUE.get(state, 0L);
            if (errno != EPERM && errno != EACCES && !saidUnable) {
                saidUnable = true;
                log.warn("HTTP API: setpriority of thread " + tid + " to " + value + " failed: errno " + errno, null);
            }
            return false;
        } catch (Throwable t) {
            if (!saidUnable) {
                saidUnable = true;
                log.warn("HTTP API: setpriority failed (" + t + "); threadNice is not applied", null);
            }
            return false;
        }
    }

    /** @return the nice value in a {@code stat} file (field 19), {@link Integer#MIN_VALUE} if it cannot be read */
    static int niceOf(Path stat) {
        try {
            String s = Files.readString(stat);
            // the name, field 2, is in parentheses and may hold spaces: fields are counted after its last ')'
            int close = s.lastIndexOf(')');
            String[] f = s.substring(close + 2).trim().split(" ");
            // f[0] is field 3 (state): field 19 is f[16]
            return Integer.parseInt(f[16]);
        } catch (IOException | RuntimeException unreadable) {
            return Integer.MIN_VALUE;
        }
    }
}
