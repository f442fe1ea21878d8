package dev.xq.external.spi;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import java.util.List;
import java.util.Objects;

/**
 * What an external queue is.
 *
 * @param name shown to operators (e.g. {@code serve/default})
 * @param device the device id policies group it by (e.g. {@code cuda0})
 * @param group the tenant: for a process, {@code <pid>:<name>}
 * @param pid the owning process, or 0
 * @param hints starting hints
 * @param config starting limits, or null for the node's queue defaults
 */
public record ExternalQueueSpec(String name, String device, String group, long pid, List<Hint> hints, QueueConfig config) {
    public ExternalQueueSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(group, "group");
        if (name.isBlank()) {
            throw new IllegalArgumentException("external queue name is blank; give it a name");
        }
        if (device.isBlank()) {
            throw new IllegalArgumentException("external queue '" + name + "' has a blank device id");
        }
        if (pid < 0) {
            throw new IllegalArgumentException("external queue '" + name + "': pid " + pid + " is negative; allowed: 0 or a process id");
        }
        hints = List.copyOf(hints);
    }
}
