package dev.xq.runtime.jfr;

/**
 * Flight-recorder events of the runtime. The jdk.jfr package is optional for the bundle: where
 * the framework does not export it, every method here is a no-op. Where it is exported, an
 * event is only built when a recording has enabled it, so disabled events cost a field read.
 *
 * <p>Emitting an event never throws into the caller (the scheduler and the queues call these in
 * the middle of a decision): if the JDK cannot link an event, for instance because the framework
 * does not boot-delegate {@code jdk.jfr.internal.event} to the instrumented event classes, tracing
 * switches itself off and says so once through the platform logger.
 */
public final class Tracing {

    private static final boolean AVAILABLE = probe();
    private static volatile boolean off;
    /** Set once {@link #warmUp()} has initialised the event classes; events before that are dropped. */
    private static volatile boolean ready;

    private Tracing() {
    }

    private static boolean probe() {
        try {
            Class.forName("jdk.jfr.Event", false, Tracing.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** @return whether JFR events can be emitted in this framework (and have not failed) */
    public static boolean available() {
        return AVAILABLE && ready && !off;
    }

    public static void suspended(long handle, String queue, int level) {
        if (AVAILABLE && ready && !off) {
            try {
                Events.suspended(handle, queue, level);
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
    }

    public static void resumed(long handle, String queue) {
        if (AVAILABLE && ready && !off) {
            try {
                Events.resumed(handle, queue);
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
    }

    /**
     * Initialises the event classes. The first event of a JVM makes the JDK build the flight
     * recorder's metadata, which took hundreds of milliseconds in a unit test's fresh JVM, inside
     * the first decision, while every other event waited for it; the scheduler calls this on a
     * thread of its own when it starts, and events are dropped until it is done (the first
     * milliseconds of a node's life).
     */
    public static void warmUp() {
        if (AVAILABLE && !off) {
            try {
                Events.warmUp();
                ready = true;
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
    }

    /**
     * @param decisionNanos how long the policy took
     * @param totalNanos how long the whole decision took: views, the policy, applying its actions
     */
    public static void decision(String policy, int queues, int suspends, int resumes, long decisionNanos, long totalNanos) {
        if (AVAILABLE && ready && !off) {
            try {
                Events.decision(policy, queues, suspends, resumes, decisionNanos, totalNanos);
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
    }

    /**
     * A command that completed, with its host times ({@link System#nanoTime()}) in {@code times}:
     * submit() entered, submitted (the command's submit time), launch call begin and end, the
     * submitter's pump returned, submit() returned, device start and end (0 where not known), then
     * 1 if the launch went unheld (arrival guards) else 0; and the threads that submitted and
     * launched it. For finding where a slow task's time went
     * (docs/performance.md).
     */
    /** @return whether a recording wants {@link #command} events (callers skip gathering the times otherwise) */
    public static boolean commandEnabled() {
        if (AVAILABLE && ready && !off) {
            try {
                return Events.commandEnabled();
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
        return false;
    }

    public static void command(long handle, String queue, long sequence, long[] times, long submitThread, long launchThread) {
        if (AVAILABLE && ready && !off) {
            try {
                Events.command(handle, queue, sequence, times, submitThread, launchThread);
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
    }

    public static void watchdog(String policy, String reason) {
        if (AVAILABLE && ready && !off) {
            try {
                Events.watchdog(policy, reason);
            } catch (LinkageError | RuntimeException e) {
                switchOff(e);
            }
        }
    }

    private static synchronized void switchOff(Throwable e) {
        if (off) {
            return;
        }
        off = true;
        System.getLogger(Tracing.class.getName()).log(System.Logger.Level.WARNING,
                "XQ flight-recorder events switched off: emitting one failed with " + e
                        + " (an OSGi framework must boot-delegate jdk.jfr.internal.event for them)");
    }
}
