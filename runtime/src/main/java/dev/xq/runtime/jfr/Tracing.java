package dev.xq.runtime.jfr;

/**
 * Flight-recorder events of the runtime. The jdk.jfr package is optional for the bundle: where
 * the framework does not export it, every method here is a no-op. Where it is exported, an
 * event is only built when a recording has enabled it, so disabled events cost a field read.
 */
public final class Tracing {

    private static final boolean AVAILABLE = probe();

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

    /** @return whether JFR events can be emitted in this framework */
    public static boolean available() {
        return AVAILABLE;
    }

    public static void suspended(long handle, String queue, int level) {
        if (AVAILABLE) {
            Events.suspended(handle, queue, level);
        }
    }

    public static void resumed(long handle, String queue) {
        if (AVAILABLE) {
            Events.resumed(handle, queue);
        }
    }

    /** @param decisionNanos how long the policy took */
    public static void decision(String policy, int queues, int suspends, int resumes, long decisionNanos) {
        if (AVAILABLE) {
            Events.decision(policy, queues, suspends, resumes, decisionNanos);
        }
    }

    public static void watchdog(String policy, String reason) {
        if (AVAILABLE) {
            Events.watchdog(policy, reason);
        }
    }
}
