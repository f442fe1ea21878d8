package dev.xq.host;

import java.nio.file.Path;

/**
 * How the node shares a device in space between the processes it serves (docs/processes.md,
 * "Space and time"): with its MPS daemon running, a process whose priority is at least
 * {@code latencyPriority} gets the whole device, any other one {@code bestEffortShare} percent
 * of its multiprocessors. The share is fixed when the process creates its context, so it can
 * only follow from what is known then: the process's own priority, not the company it will meet.
 * That is why the classes are absolute (a training job started first must not get the whole
 * device only because the server it should yield to starts later).
 *
 * <p>Time then works on top of space: a process with the whole device is never held nor
 * throttled; one on a capped share is held while a queue the policy prefers has work when
 * {@code holdBestEffort} says so.
 *
 * @param daemon the node's MPS daemon (off: every process shares the device in time only)
 * @param latencyPriority the lowest priority whose processes get the whole device
 * @param bestEffortShare the share, in percent, of processes below it, in [1, 100]
 * @param holdBestEffort whether processes on a capped share are still held in time
 * @param holdBehindMicros held only behind a preferred queue whose commands average at least this
 *     long (0: behind any), see {@code ExternalQueueShare#holdBehindMicros}
 * @param narrow a best-effort process that can be narrowed (it asks so) runs on the whole device
 *     and is narrowed, launch by launch, to the part the preferred queues leave, instead of being
 *     held on a capped share ({@code ExternalQueueShare#narrows})
 * @param latencyOwnContext a latency-critical process keeps a context of its own instead of joining
 *     the server ({@code SPACE none own-context}): the GPU time-slices it against the server's
 *     context, it is never held, and the server's clients are held behind it when it is wide and
 *     busy, else let run ({@code ExternalQueueShare#ownContext})
 * @param narrowLatency a latency-critical process that can be narrowed (it asks so) runs on the
 *     whole device, is never held nor throttled, and is narrowed to half the device while a
 *     process of a higher priority wider than half of it has work ({@code SPACE ... 100 narrow},
 *     its queues {@code ExternalQueueShare#narrows} and not {@code heldInTime}): two wide
 *     latency-critical processes in one MPS server otherwise share every multiprocessor, and the
 *     higher one's requests take as long as the lower one's kernels let them
 * @param lowBestEffort a best-effort process joins the server at MPS's lower client priority
 *     ({@code SPACE ... low}: the interposer sets {@code CUDA_MPS_CLIENT_PRIORITY=1} unless the
 *     process set it itself), so that where its queued blocks and a latency-critical client's wait
 *     for the same multiprocessors the device starts the latency-critical ones first; running
 *     blocks are never cut
 */
record SpacePlan(MpsDaemon daemon, int latencyPriority, int bestEffortShare, boolean holdBestEffort, long holdBehindMicros,
                 boolean narrow, boolean latencyOwnContext, boolean narrowLatency, boolean lowBestEffort) {

    static final int DEFAULT_LATENCY_PRIORITY = 2;
    static final int DEFAULT_BEST_EFFORT_SHARE = 50;
    static final long DEFAULT_HOLD_BEHIND_MICROS = 0;
    static final boolean DEFAULT_NARROW = true;
    static final boolean DEFAULT_LATENCY_OWN_CONTEXT = false;
    static final boolean DEFAULT_NARROW_LATENCY = true;
    static final boolean DEFAULT_LOW_BEST_EFFORT = true;

    /** No spatial sharing: what a node without MPS (and every test that does not ask for it) has. */
    static final SpacePlan OFF = new SpacePlan(MpsDaemon.off("not started"), DEFAULT_LATENCY_PRIORITY, DEFAULT_BEST_EFFORT_SHARE, true,
            DEFAULT_HOLD_BEHIND_MICROS, DEFAULT_NARROW, DEFAULT_LATENCY_OWN_CONTEXT, DEFAULT_NARROW_LATENCY, DEFAULT_LOW_BEST_EFFORT);

    SpacePlan(MpsDaemon daemon, int latencyPriority, int bestEffortShare, boolean holdBestEffort, long holdBehindMicros) {
        this(daemon, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, DEFAULT_NARROW, DEFAULT_LATENCY_OWN_CONTEXT);
    }

    SpacePlan(MpsDaemon daemon, int latencyPriority, int bestEffortShare, boolean holdBestEffort, long holdBehindMicros,
              boolean narrow, boolean latencyOwnContext) {
        this(daemon, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, narrow, latencyOwnContext,
                DEFAULT_NARROW_LATENCY);
    }

    SpacePlan(MpsDaemon daemon, int latencyPriority, int bestEffortShare, boolean holdBestEffort, long holdBehindMicros,
              boolean narrow, boolean latencyOwnContext, boolean narrowLatency) {
        this(daemon, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, narrow, latencyOwnContext, narrowLatency,
                DEFAULT_LOW_BEST_EFFORT);
    }

    SpacePlan {
        if (bestEffortShare < 1 || bestEffortShare > 100) {
            throw new IllegalArgumentException("mpsBestEffortShare " + bestEffortShare + " is out of range [1, 100] (percent of the device)");
        }
        if (holdBehindMicros < 0 || holdBehindMicros > 1_000_000) {
            throw new IllegalArgumentException("mpsHoldBehindMicros " + holdBehindMicros + " is out of range [0, 1000000]");
        }
    }

    boolean on() {
        return daemon.running();
    }

    /** @return the share, in percent, of a process at this priority (null: none given, the lowest class) */
    int share(Integer priority) {
        return priority != null && priority >= latencyPriority ? 100 : bestEffortShare;
    }

    /** @return whether a process at this priority keeps a context of its own while the server runs (never held) */
    boolean ownContext(Integer priority) {
        return on() && latencyOwnContext && share(priority) == 100;
    }

    boolean heldInTime(int share) {
        return share < 100 && holdBestEffort;
    }

    /** @return whether a process at this priority that can be narrowed is: the whole device, narrowed at times */
    boolean narrowed(Integer priority, boolean canNarrow) {
        return canNarrow && narrow && (share(priority) < 100 || narrowLatency && !ownContext(priority));
    }

    /** @return whether a process at this priority, narrowed ({@link #narrowed}), is still never held nor throttled (a latency-critical one) */
    boolean untimedWhenNarrowed(Integer priority) {
        return share(priority) == 100;
    }

    /** The answer to {@code SPACE}: where the process's driver finds the MPS server and on how much of the device it runs. */
    String answer(Integer priority) {
        return answer(priority, false);
    }

    /**
     * @param canNarrow the process asked saying it can be narrowed ({@code SPACE ... narrow})
     */
    String answer(Integer priority, boolean canNarrow) {
        Path pipe = daemon.pipeDir();
        if (pipe == null) {
            return "SPACE none " + (daemon.state().startsWith("off: disabled") ? "off" : "unavailable");
        }
        if (ownContext(priority)) {
            return "SPACE none own-context";
        }
        String low = lowBestEffort && share(priority) < 100 ? " low" : "";
        return (narrowed(priority, canNarrow) ? "SPACE mps " + pipe + " 100 narrow" : "SPACE mps " + pipe + " " + share(priority)) + low;
    }

    String state() {
        return daemon.state() + (on() ? "; priority " + latencyPriority + " and above: " + (latencyOwnContext
                ? "a context of their own, time-sliced against the server's, never held" : "the whole device") + ", below: "
                + (narrow ? "the whole device, narrowed to what the preferred queues leave while they run (" + bestEffortShare
                        + " % where a process cannot be narrowed" : bestEffortShare + " %") + (narrow ? ")" : "") + (holdBestEffort ? ", held while a preferred queue of commands of " + holdBehindMicros + " us or more has work"
                : ", never held") + (narrow && narrowLatency && !latencyOwnContext
                ? "; a latency-critical process narrowed to half while a wider one of a higher priority has work" : "")
                + (lowBestEffort ? "; best-effort processes at MPS's lower client priority" : "") : "");
    }
}
