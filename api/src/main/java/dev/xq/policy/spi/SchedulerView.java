package dev.xq.policy.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a policy decides from: the open queues and the devices, at {@code nowNanos}.
 *
 * @param nowNanos the decision's time on the {@link System#nanoTime()} clock
 * @param queues the open queues, in creation order
 * @param devices the devices
 * @param spaces the place in space of the queues that have one ({@link QueueSpace}), by handle;
 *     a queue not in it is {@link QueueSpace#NONE} (since 1.3)
 */
public record SchedulerView(long nowNanos, List<QueueView> queues, List<DeviceView> devices, Map<Long, QueueSpace> spaces) {
    public SchedulerView {
        queues = List.copyOf(queues);
        devices = List.copyOf(devices);
        spaces = Map.copyOf(spaces);
    }

    /** A view of queues decided in time only. */
    public SchedulerView(long nowNanos, List<QueueView> queues, List<DeviceView> devices) {
        this(nowNanos, queues, devices, Map.of());
    }

    /**
     * @return the queue's place in space; {@link QueueSpace#NONE} for a queue decided in time only
     * @since 1.3
     */
    public QueueSpace space(long handle) {
        return spaces.getOrDefault(handle, QueueSpace.NONE);
    }

    /** @return the queues on one device */
    public List<QueueView> queuesOn(String device) {
        return queues.stream().filter(q -> q.device().equals(device)).toList();
    }

    /**
     * @return the queues of each device, devices in order of first appearance and queues in view
     *         order: most policies decide per device
     * @since 1.2
     */
    public Collection<List<QueueView>> queuesByDevice() {
        Map<String, List<QueueView>> byDevice = new LinkedHashMap<>();
        for (QueueView q : queues) {
            byDevice.computeIfAbsent(String.valueOf(q.device()), d -> new ArrayList<>()).add(q);
        }
        return byDevice.values();
    }
}
