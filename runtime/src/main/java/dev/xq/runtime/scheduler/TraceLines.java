package dev.xq.runtime.scheduler;

import java.io.PrintStream;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's trace lines ({@code -Dxq.trace.*}), printed by a thread of their own: a line written
 * to stderr by the deciding thread costs that decision the write (a pipe or a file, a console that
 * may block), and the traces are on in every GPU benchmark run. A decision's trace line is built
 * there (string concatenation compiled inline, {@code -XDstringConcat=inline}: no bootstrap at a
 * site's first call) and handed over here. At most {@value #CAPACITY} lines wait; past that a line
 * is dropped and counted (the next line printed says how many). Lines left at exit are printed by
 * a shutdown hook.
 */
public final class TraceLines {

    /** Lines that may wait to be printed. */
    static final int CAPACITY = 8192;

    private static final LinkedBlockingQueue<String> WAITING = new LinkedBlockingQueue<>(CAPACITY);
    private static final AtomicLong DROPPED = new AtomicLong();
    private static volatile Thread printer;

    private TraceLines() {
    }

    /** Queues {@code line} for stderr; never blocks the caller. */
    public static void line(String line) {
        if (printer == null) {
            start();
        }
        if (!WAITING.offer(line)) {
            DROPPED.incrementAndGet();
        }
    }

    /** Starts the printing thread now, so that the first line of a decision does not (the scheduler's start). */
    static void warm() {
        if (printer == null) {
            start();
        }
    }

    private static synchronized void start() {
        if (printer != null) {
            return;
        }
        Thread t = new Thread(TraceLines::printLoop, "xq-trace-lines");
        t.setDaemon(true);
        Runtime.getRuntime().addShutdownHook(new Thread(TraceLines::drain, "xq-trace-lines-exit"));
        printer = t;
        t.start();
    }

    private static void printLoop() {
        try {
            while (true) {
                print(WAITING.take());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void print(String line) {
        PrintStream err = System.err;
        long d = DROPPED.getAndSet(0);
        if (d > 0) {
            err.println("xq: trace: " + d + " lines dropped (more than " + CAPACITY + " waited to be printed)");
        }
        err.println(line);
    }

    private static void drain() {
        for (String l; (l = WAITING.poll()) != null; ) {
            print(l);
        }
        System.err.flush();
    }
}
