package dev.xq.api;

/**
 * A device an XQueue can be created on.
 *
 * @param id unique on this node, e.g. {@code sim0}, {@code cuda0}
 * @param platform the driver's platform name, e.g. {@code sim}, {@code cuda}, {@code hip}
 * @param maxLevel the highest preemption level its queues offer now, providers included
 * @param engines execution engines (compute units, SMs, simulated engines)
 * @param memoryBytes device memory
 * @param queues XQueues open on it
 */
public record DeviceInfo(String id, String platform, String name, PreemptionLevel maxLevel,
                         int engines, long memoryBytes, int queues) {
}
