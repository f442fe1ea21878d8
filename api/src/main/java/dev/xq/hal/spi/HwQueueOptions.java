package dev.xq.hal.spi;

/**
 * Options for {@link XpuDriver#open}.
 *
 * @param name the XQueue's name, for driver logs and tools
 * @param nativePriority the hardware's own queue priority (higher = more urgent, in
 *        [-1000, 1000]; the driver maps it onto its range), or {@code null} for its default
 */
public record HwQueueOptions(String name, Integer nativePriority) {
    public HwQueueOptions {
        name = name == null ? "" : name;
    }
}
