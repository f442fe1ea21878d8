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
 * per watched stream. A process can write any stamp in its own memory: the most it gets is one
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
    /** The shortest period allowed, and the longest (microseconds; 0 is off). */
    static final long MIN_MICROS = 10;
    static final long MAX_MICROS = 10_000;
    /** With {@code -Dxq.trace.wideBeats=true} (the node's trace), its counts go to stderr every 2 s while they move. */
    private static final boolean TRACE = Boolean.getBoolean("xq.trace.wideBeats");
    private static final long PRINT_NANOS = 2_000_000_000L;

    private final Collection<Session> sessions;
    private final long periodNanos;
    private final AtomicLong toldFirst = new AtomicLong();
    private final AtomicLong toldByLine = new AtomicLong();
    private final AtomicLong looks = new AtomicLong();
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
        check(micros);
        if (micros == 0) {
            throw new IllegalArgumentException("arrivalWatchMicros 0 is off: no watch to make");
        }
        this.sessions = sessions;
        this.periodNanos = micros * 1000;
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

    /** The session's {@code WAKE} for a stream at the latency class: the stamp it tells is told. */
    void told(Session s, int slot) {
        long stamp = s.readyStamp(slot);
        if (stamp == 0) {
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
            boolean busy = false;
            try {
                busy = look();
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
            LockSupport.parkNanos(busy ? periodNanos : IDLE_NANOS);
        }
    }

    /**
     * One look at every session: tells each queue at the latency class whose stamp is new.
     *
     * @return whether there is something to watch (a stream at the latency class beside one of another)
     */
    boolean look() {
        looks.incrementAndGet();
        int watched = 0;
        int all = 0;
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
                    continue;
                }
                long stamp = s.readyStamp(i);
                if (stamp == 0) {
                    continue;
                }
                long was = t.get(i);
                if (was != stamp && t.compareAndSet(i, was, stamp)) {
                    toldFirst.incrementAndGet();
                    st.queue().changed();
                }
            }
        }
        return watched > 0 && all > watched;
    }

    /** @return one line for the host's status */
    String describe() {
        long cpu = cpuNanos();
        long up = startedNanos == 0 ? 0 : System.nanoTime() - startedNanos;
        return "arrival watch every " + periodNanos / 1000 + " us" + (slackSet ? "" : " (timer slack not set)") + ": "
                + toldFirst.get() + " arrivals told by the watch first, " + toldByLine.get() + " by the processes' lines, "
                + looks.get() + " looks"
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
}
