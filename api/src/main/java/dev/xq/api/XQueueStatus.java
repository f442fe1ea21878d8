package dev.xq.api;

import java.util.List;

/**
 * A snapshot of one XQueue.
 *
 * @param pid the process whose commands the queue holds: a process served by the node ({@code ./xq run}),
 *            or 0 for a queue of an application inside the node
 * @param level the level in use now: the lower of the wish in {@code config} and what the hardware queue offers
 * @param availableLevel the highest level the hardware queue offers now
 * @param suspendedByScheduler whether the policy holds the queue back
 * @param suspendedByApp whether the application suspended it
 * @param estimatedCommandMicros the measured device time per command that the time budget uses (0 before the first completion)
 * @param runMicros device time used so far
 * @param limits which launch limits are in force now: the configured ones, or wider ones because
 *               the queue is alone on its device or the policy keeps it on top there (since 1.6)
 * @param smSharePercent the share of the device's multiprocessors (SMs) the queue's commands may use, in
 *                       percent (1-100): below 100 for a process that shares its device in space (MPS);
 *                       100 for the whole device, for a queue that does not share in space and for
 *                       the queues of applications inside the node (since 1.7)
 * @param deviceLags how many busy periods the queue's process has timed its device lag over: the
 *                   longest that a batch of its commands ended after the last of them was launched
 *                   (a process under {@code ./xq run} on CUDA tells it; 0 for the others) (since 1.10)
 * @param slowDeviceLags how many of {@code deviceLags} were 1 ms or longer: the device did not keep up
 *                       with the queue's launches (another process's memory traffic, or more work
 *                       than its share of the device runs in time) (since 1.10)
 * @param widthSms the multiprocessors the queue's recent commands could fill at once, as its process
 *                 tells (its widest launch of its last seconds of launching; a CUDA graph, the whole
 *                 device): what the node reserves for it when it narrows others; 0 when not told (since 1.11)
 * @param stretchWidthSms the same for its current stretch of work (its last milliseconds of launching):
 *                        the node holds short best-effort work in time behind a busy queue while this
 *                        is wider than half the device; 0 when not told (since 1.11)
 * @param deviceSms the multiprocessors of the queue's device, as its process tells; 0 when not told (since 1.11)
 */
public record XQueueStatus(long handle, String name, String device, String group, long pid, QueueState state,
                           QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                           boolean suspendedByScheduler, boolean suspendedByApp,
                           int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                           long estimatedCommandMicros, long runMicros, List<Hint> hints, String error, Limits limits,
                           int smSharePercent, long deviceLags, long slowDeviceLags, int widthSms, int stretchWidthSms,
                           int deviceSms) {

    /**
     * Which launch limits the node applies to a queue now (docs/runtime.md, the tenant-alone and
     * on-top rules).
     *
     * @since 1.6
     */
    public enum Limits {
        /** The queue's configured threshold and window apply. */
        CONFIGURED,
        /**
         * No open queue of another group or priority shares its device: an application queue's
         * time window is widened to the node's alone window and its threshold lifted; a process
         * queue is unthrottled.
         */
        ALONE,
        /**
         * Other queues share its device, but the policy keeps this one above all of them: its
         * window is widened to the node's alone window and its threshold lifted.
         */
        ON_TOP,
        /**
         * A process queue under an arrival guard, with the node's guarded window set: its window
         * is widened to that window and its threshold lifted while the guard is in force.
         *
         * @since 1.8
         */
        GUARDED,
        /**
         * A process queue narrowed to a part of its device beside a preferred queue: its threshold
         * is lifted and its window is the node's narrowed window (or its own, if wider; none if it
         * has none).
         *
         * @since 1.9
         */
        NARROWED
    }

    /**
     * @param limits {@code null} reads as {@link Limits#CONFIGURED}
     * @param smSharePercent outside 1-100 reads as 100
     * @param deviceLags below 0 reads as 0
     * @param slowDeviceLags below 0 reads as 0, above {@code deviceLags} as {@code deviceLags}
     * @param widthSms below 0 reads as 0
     * @param stretchWidthSms below 0 reads as 0, above {@code widthSms} as {@code widthSms}
     * @param deviceSms below 0 reads as 0
     */
    public XQueueStatus {
        if (limits == null) {
            limits = Limits.CONFIGURED;
        }
        if (smSharePercent < 1 || smSharePercent > 100) {
            smSharePercent = 100;
        }
        deviceLags = Math.max(0, deviceLags);
        slowDeviceLags = Math.clamp(slowDeviceLags, 0, deviceLags);
        widthSms = Math.max(0, widthSms);
        stretchWidthSms = Math.clamp(stretchWidthSms, 0, widthSms);
        deviceSms = Math.max(0, deviceSms);
    }

    /**
     * The snapshot as API 1.10 made it, without widths (0: not told); kept so that code built
     * against 1.10 still links.
     */
    public XQueueStatus(long handle, String name, String device, String group, long pid, QueueState state,
                        QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                        boolean suspendedByScheduler, boolean suspendedByApp,
                        int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                        long estimatedCommandMicros, long runMicros, List<Hint> hints, String error, Limits limits,
                        int smSharePercent, long deviceLags, long slowDeviceLags) {
        this(handle, name, device, group, pid, state, config, level, availableLevel, suspendedByScheduler, suspendedByApp,
                pending, inFlight, submitted, completed, failed, cancelled, estimatedCommandMicros, runMicros, hints, error,
                limits, smSharePercent, deviceLags, slowDeviceLags, 0, 0, 0);
    }

    /**
     * The snapshot as API 1.7-1.9 made it, without device lags (0); kept so that code built against
     * those versions still links.
     */
    public XQueueStatus(long handle, String name, String device, String group, long pid, QueueState state,
                        QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                        boolean suspendedByScheduler, boolean suspendedByApp,
                        int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                        long estimatedCommandMicros, long runMicros, List<Hint> hints, String error, Limits limits,
                        int smSharePercent) {
        this(handle, name, device, group, pid, state, config, level, availableLevel, suspendedByScheduler, suspendedByApp,
                pending, inFlight, submitted, completed, failed, cancelled, estimatedCommandMicros, runMicros, hints, error,
                limits, smSharePercent, 0, 0, 0, 0, 0);
    }

    /**
     * The snapshot as API 1.6 made it, without {@code smSharePercent} (100: the whole device); kept
     * so that code built against 1.6 still links.
     */
    public XQueueStatus(long handle, String name, String device, String group, long pid, QueueState state,
                        QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                        boolean suspendedByScheduler, boolean suspendedByApp,
                        int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                        long estimatedCommandMicros, long runMicros, List<Hint> hints, String error, Limits limits) {
        this(handle, name, device, group, pid, state, config, level, availableLevel, suspendedByScheduler, suspendedByApp,
                pending, inFlight, submitted, completed, failed, cancelled, estimatedCommandMicros, runMicros, hints, error,
                limits, 100, 0, 0, 0, 0, 0);
    }

    /**
     * The snapshot as API 1.1-1.5 made it, without {@code limits} ({@link Limits#CONFIGURED});
     * kept so that code built against those versions still links.
     */
    public XQueueStatus(long handle, String name, String device, String group, long pid, QueueState state,
                        QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                        boolean suspendedByScheduler, boolean suspendedByApp,
                        int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                        long estimatedCommandMicros, long runMicros, List<Hint> hints, String error) {
        this(handle, name, device, group, pid, state, config, level, availableLevel, suspendedByScheduler, suspendedByApp,
                pending, inFlight, submitted, completed, failed, cancelled, estimatedCommandMicros, runMicros, hints, error,
                Limits.CONFIGURED, 100, 0, 0, 0, 0, 0);
    }

    /**
     * The snapshot as API 1.0 made it, without {@code pid} (0: a queue of an application inside
     * the node); kept so that code built against 1.0 still links (the package moved to 1.1, a
     * minor version, so this constructor must stay).
     */
    public XQueueStatus(long handle, String name, String device, String group, QueueState state,
                        QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                        boolean suspendedByScheduler, boolean suspendedByApp,
                        int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                        long estimatedCommandMicros, long runMicros, List<Hint> hints, String error) {
        this(handle, name, device, group, 0, state, config, level, availableLevel, suspendedByScheduler, suspendedByApp,
                pending, inFlight, submitted, completed, failed, cancelled, estimatedCommandMicros, runMicros, hints, error,
                Limits.CONFIGURED, 100, 0, 0, 0, 0, 0);
    }
}
