package dev.xq.host;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The node's own look at arrivals ({@code dev.xq.host} {@code arrivalWatchMicros}, off unless
 * set): a thread that reads, every period, the ready stamps of the streams at the latency-critical
 * class ({@link Session.Stream#latency()}) in their processes' shared memory, and tells the queue
 * of each one that went ready since it last looked, as the process's {@code WAKE} line does.
 *
 * <p>Why: on the H200 the node heard of a graph tenant's arrival 215 us after it at the median
 * (session 62): about 100 us until the interposer's tracker sent the line, the rest until the
 * session's thread, blocked in {@code recv}, woke and read it; every request of a tenant without a
 * beat (Poisson arrivals) ran beside the best-effort work that long before the node held it. A
 * thread that looks every few tens of microseconds on a core it keeps awake sees the stamp the
 * process wrote before its first launch, without either wake-up.
 *
 * <p>What it costs: one thread, awake every period while a stream at the latency class and a
 * stream of another class are registered (else every {@value #IDLE_NANOS} ns), reading two words
 * per watched stream. While every watched stream is busy with an arrival already told, none can
 * arrive until it goes idle, so the watch looks only every {@code arrivalWatchQuietMicros}
 * ({@value #DEFAULT_QUIET_MICROS} us by default, or the period if longer; 0: never quiet), and the
 * line that tells the node a watched stream went idle wakes it at once: on the H200 the watch took
 * 4-10 % of a core beside an eager decoder that is busy most of the time (session 85), and every
 * look reads the line of shared memory that the decoder's launches write. A process can write any stamp in its own memory: the most it gets is one
 * more decision per period per stream of its own, what its WAKE lines could ask for already
 * (those are limited to 200,000 a second).
 *
 * <p>The watch leaves alone an arrival the line told already: the session marks the stamp its
 * {@code WAKE} told ({@link #told}). The line itself is always decided on (it tells of idles and
 * other changes too), so an arrival the watch told first costs one more decision when its line
 * comes: a decision, not a mistake.
 */
final class ArrivalWatch {

    /** How long it sleeps while there is nothing to watch (no stream at the latency class, or no other to hold). */
    static final long IDLE_NANOS = 5_000_000L;
    /** How long it sleeps by default while every watched stream is busy with an arrival told already (an idle line wakes it sooner), us. */
    static final long DEFAULT_QUIET_MICROS = 1000;
    /** The longest quiet period allowed (microseconds; 0 is never quiet). */
    static final long MAX_QUIET_MICROS = 100_000;
    /** The shortest period allowed, and the longest (microseconds; 0 is off). */
    static final long MIN_MICROS = 10;
    static final long MAX_MICROS = 10_000;
    /** With {@code -Dxq.trace.wideBeats=true} (the node's trace), its counts go to stderr every 2 s while they move. */
    private static final boolean TRACE = Boolean.getBoolean("xq.trace.wideBeats");
    private static final long PRINT_NANOS = 2_000_000_000L;

    private final Collection<Session> sessions;
    private final long periodNanos;
    /** The quiet period, ns: 0 never quiet */
    private final long quietNanos;
    private final AtomicLong toldFirst = new AtomicLong();
    private final AtomicLong toldByLine = new AtomicLong();
    private final AtomicLong looks = new AtomicLong();
    /** Looks that found every watched stream busy with an arrival told already (the watch slept its quiet period after). */
    private final AtomicLong quietLooks = new AtomicLong();
    /** Whether it sleeps the quiet period now (an idle line unparks it then). */
    private volatile boolean quiet;
    /** Whether the last look found every watched stream busy (the watch's own thread, or a test calling look). */
    private boolean lookQuiet;
    private volatile boolean stopping;
    private volatile boolean slackSet;
    private volatile long threadId = -1;
    private volatile long startedNanos;
    private Thread thread;

    /**
     * @param micros the period, in [{@value #MIN_MICROS}, {@value #MAX_MICROS}]
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    ArrivalWatch(Collection<Session> sessions, long micros) {
        this(sessions, micros, DEFAULT_QUIET_MICROS);
    }

    /**
     * @param micros the period, in [{@value #MIN_MICROS}, {@value #MAX_MICROS}]
     * @param quietMicros the quiet period (0: never quiet), at most {@value #MAX_QUIET_MICROS}; the period where that is longer
     */
    ArrivalWatch(Collection<Session> sessions, long micros, long quietMicros) {
        check(micros);
        checkQuiet(quietMicros);
        if (micros == 0) {
            throw new IllegalArgumentException("arrivalWatchMicros 0 is off: no watch to make");
        }
        this.sessions = sessions;
        this.periodNanos = micros * 1000;
        this.quietNanos = quietMicros == 0 ? 0 : Math.max(quietMicros * 1000, periodNanos);
    }

    /** @throws IllegalArgumentException for a quiet period out of range, naming it and what is allowed */
    static void checkQuiet(long quietMicros) {
        if (quietMicros < 0 || quietMicros > MAX_QUIET_MICROS) {
            throw new IllegalArgumentException("arrivalWatchQuietMicros " + quietMicros + " is out of range; allowed: 0 (never quiet) to "
                    + MAX_QUIET_MICROS + " microseconds");
        }
    }

    /** @throws IllegalArgumentException for a period out of range, naming it and what is allowed */
    static void check(long micros) {
        if (micros != 0 && (micros < MIN_MICROS || micros > MAX_MICROS)) {
            throw new IllegalArgumentException("arrivalWatchMicros " + micros + " is out of range; allowed: 0 (off) or ["
                    + MIN_MICROS + ", " + MAX_MICROS + "] microseconds");
        }
    }

    synchronized void start() {
        if (thread == null) {
            thread = Thread.ofPlatform().daemon().name("xq-host-arrivals").start(this::run);
        }
    }

    /** Stops the thread and waits for it (at most a second). */
    void stop() {
        stopping = true;
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The session's {@code WAKE} for a stream at the latency class: the stamp it tells is told; a
     * stream gone idle can arrive again, so a quiet watch wakes to look every period.
     */
    void told(Session s, int slot) {
        long stamp = s.readyStamp(slot);
        if (stamp == 0) {
            if (quiet) {
                Thread t;
                synchronized (this) {
                    t = thread;
                }
                if (t != null) {
                    LockSupport.unpark(t);
                }
            }
            return;
        }
        AtomicLongArray t = s.toldStamps();
        if (slot < t.length()) {
            long was = t.getAndSet(slot, stamp);
            if (was != stamp) {
                toldByLine.incrementAndGet();
            }
        }
    }

    private void run() {
        slackSet = Libc.timerSlack(Math.max(1000, periodNanos / 10));
        startedNanos = System.nanoTime();
        threadId = Thread.currentThread().threadId();
        long printed = System.nanoTime();
        long printedTold = 0;
        while (!stopping) {
            long sleep = IDLE_NANOS;
            boolean q = false;
            try {
                sleep = look();
                q = lookQuiet;
            } catch (RuntimeException e) {
                // a session closing under the look: the next look sees it gone
            }
            if (TRACE) {
                long now = System.nanoTime();
                long told = toldFirst.get() + toldByLine.get();
                if (now - printed >= PRINT_NANOS && told != printedTold) {
                    printed = now;
                    printedTold = told;
                    System.err.println("xq: " + describe());
                }
            }
            quiet = q;
            LockSupport.parkNanos(sleep);
            quiet = false;
        }
    }

    /**
     * One look at every session: tells each queue at the latency class whose stamp is new.
     *
     * @return how long to sleep: the period where a watched stream can arrive (idle, or its arrival
     *     told now) beside a stream of another class; the quiet period where every watched one is
     *     busy with an arrival told already (unless never quiet); {@link #IDLE_NANOS} with nothing
     *     to watch
     */
    long look() {
        looks.incrementAndGet();
        lookQuiet = false;
        int watched = 0;
        int all = 0;
        boolean canArrive = false;
        for (Session s : sessions) {
            AtomicReferenceArray<Session.Stream> ss = s.streamSlots();
            int n = s.streamCount();
            all += n;
            if (n == 0) {
                continue;
            }
            AtomicLongArray t = null;
            for (int i = 0; i < ss.length(); i++) {
                Session.Stream st = ss.get(i);
                if (st == null || !st.latency()) {
                    continue;
                }
                watched++;
                if (t == null) {
                    t = s.toldStamps();
                }
                if (i >= t.length()) {
                    canArrive = true; // not followed: looked at every period, as before
                    continue;
                }
                long stamp = s.readyStamp(i);
                if (stamp == 0) {
                    canArrive = true; // idle: its next arrival is what the watch is for
                    continue;
                }
                long was = t.get(i);
                if (was != stamp && t.compareAndSet(i, was, stamp)) {
                    toldFirst.incrementAndGet();
                    st.queue().changed();
                    canArrive = true; // just arrived: the next look may find it idle again
                }
            }
        }
        if (watched == 0 || all == watched) {
            return IDLE_NANOS;
        }
        if (!canArrive && quietNanos > 0) {
            quietLooks.incrementAndGet();
            lookQuiet = true;
            return quietNanos;
        }
        return periodNanos;
    }

    /** @return one line for the host's status */
    String describe() {
        long cpu = cpuNanos();
        long up = startedNanos == 0 ? 0 : System.nanoTime() - startedNanos;
        return "arrival watch every " + periodNanos / 1000 + " us" + (quietNanos == 0 ? ", never quiet" : ", " + quietNanos / 1000
                + " us while every watched stream is busy") + (slackSet || startedNanos == 0 ? "" : " (timer slack not set)") + ": "
                + toldFirst.get() + " arrivals told by the watch first, " + toldByLine.get() + " by the processes' lines, "
                + looks.get() + " looks (" + quietLooks.get() + " with every watched stream busy)"
                + (cpu < 0 || up <= 0 ? "" : "; its CPU " + cpu / 1_000_000 + " ms in " + up / 1_000_000_000 + " s ("
                        + String.format(java.util.Locale.ROOT, "%.1f", 100.0 * cpu / up) + " % of a core)");
    }

    /** @return the watch thread's CPU time so far, ns; -1 where the JVM does not tell it or the thread has not started */
    long cpuNanos() {
        long id = threadId;
        if (id < 0) {
            return -1;
        }
        try {
            ThreadMXBean bean = ManagementFactory.getThreadMXBean();
            return bean.isThreadCpuTimeSupported() ? bean.getThreadCpuTime(id) : -1;
        } catch (UnsupportedOperationException | SecurityException e) {
            return -1;
        }
    }

    long toldFirst() {
        return toldFirst.get();
    }

    long toldByLine() {
        return toldByLine.get();
    }

    long looks() {
        return looks.get();
    }

    long quietLooks() {
        return quietLooks.get();
    }
}
