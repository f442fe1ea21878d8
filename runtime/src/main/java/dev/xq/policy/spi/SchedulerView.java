package dev.xq.policy.spi;

import java.util.List;

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
}
