package dev.xq.api;

import java.util.List;

/**
 * A snapshot of one XQueue.
 *
 * @param level the level in use now: the lower of the wish in {@code config} and what the hardware queue offers
 * @param availableLevel the highest level the hardware queue offers now
 * @param suspendedByScheduler whether the policy holds the queue back
 * @param suspendedByApp whether the application suspended it
 * @param estimatedCommandMicros the measured device time per command that the time budget uses (0 before the first completion)
 * @param runMicros device time used so far
 */
public record XQueueStatus(long handle, String name, String device, String group, QueueState state,
                           QueueConfig config, PreemptionLevel level, PreemptionLevel availableLevel,
                           boolean suspendedByScheduler, boolean suspendedByApp,
                           int pending, int inFlight, long submitted, long completed, long failed, long cancelled,
                           long estimatedCommandMicros, long runMicros, List<Hint> hints, String error) {
}
