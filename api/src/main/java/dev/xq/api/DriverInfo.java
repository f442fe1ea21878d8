package dev.xq.api;

import java.util.List;

/**
 * A hardware adapter known to the node, with the devices it offers or why it offers none.
 *
 * @param kind {@code driver} (opens queues) or {@code provider} (raises the level of other drivers' queues)
 * @param status a line for operators, such as {@code 1 device} or {@code no device: libcuda.so.1 not found}
 */
public record DriverInfo(String platform, String kind, String status, List<String> devices) {
    public DriverInfo {
        devices = List.copyOf(devices);
    }
}
