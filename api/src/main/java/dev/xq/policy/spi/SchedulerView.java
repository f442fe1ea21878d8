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
 */
public record SchedulerView(long nowNanos, List<QueueView> queues, List<DeviceView> devices) {
    public SchedulerView {
        queues = List.copyOf(queues);
        devices = List.copyOf(devices);
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
