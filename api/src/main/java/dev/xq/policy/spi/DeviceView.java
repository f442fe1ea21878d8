package dev.xq.policy.spi;

/**
 * A device as policies see it.
 *
 * @param engines execution engines (capacity for engine demands)
 * @param memoryBytes memory (capacity for memory demands)
 */
public record DeviceView(String id, String platform, int engines, long memoryBytes) {
}
