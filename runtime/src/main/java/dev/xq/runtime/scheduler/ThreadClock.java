package dev.xq.runtime.scheduler;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/** CPU time and names of threads, for the watchdog. */
final class ThreadClock {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private ThreadClock() {
    }

    /** @return the calling thread's CPU time in nanoseconds, or -1 where the JVM cannot tell */
    static long current() {
        try {
            return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : -1;
        } catch (UnsupportedOperationException e) {
            return -1;
        }
    }

    /** @return CPU time of a thread in nanoseconds, or -1 where the JVM cannot tell */
    static long of(long threadId) {
        try {
            return THREADS.isThreadCpuTimeSupported() ? THREADS.getThreadCpuTime(threadId) : -1;
        } catch (UnsupportedOperationException e) {
            return -1;
        }
    }

    static String name(long id) {
        try {
            ThreadInfo i = THREADS.getThreadInfo(id);
            return i == null ? "thread " + id : "'" + i.getThreadName() + "'";
        } catch (RuntimeException e) {
            return "thread " + id;
        }
    }
}
