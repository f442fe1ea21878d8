package dev.xq.hal.spi;

import dev.xq.api.PreemptionLevel;
import java.util.Map;
import java.util.Set;

/**
 * A device as a driver describes it.
 *
 * @param id unique on the node, conventionally platform + index ({@code sim0}, {@code cuda0})
 * @param name the hardware's name
 * @param maxLevel the highest level the driver's own queues offer (providers may raise it)
 * @param engines execution engines: SMs, compute units or simulated engines
 * @param memoryBytes device memory
 * @param commandKinds the {@link dev.xq.api.Command#kind()} values the device accepts
 * @param properties anything else worth showing (clock, driver version, PCI id)
 */
public record DeviceDescriptor(String id, String name, PreemptionLevel maxLevel, int engines, long memoryBytes,
                               Set<String> commandKinds, Map<String, String> properties) {
    public DeviceDescriptor {
        commandKinds = Set.copyOf(commandKinds);
        properties = Map.copyOf(properties);
    }
}
