package dev.xq.api;

import java.util.List;
import java.util.Objects;

/**
 * What to create: an XQueue on {@code device}.
 *
 * @param device device id as listed by {@link XQueueService#devices()}, e.g. {@code sim0}
 * @param name a name for people (shell, logs); need not be unique
 * @param group the tenant or process the queue belongs to; group-aware policies use it
 * @param config launching and preemption settings; {@code null} takes the node's defaults
 * @param hints initial hints
 */
public record QueueOptions(String device, String name, String group, QueueConfig config, List<Hint> hints) {
    public QueueOptions {
        Objects.requireNonNull(device, "device");
        name = name == null ? "" : name;
        group = group == null || group.isEmpty() ? "default" : group;
        hints = hints == null ? List.of() : List.copyOf(hints);
    }

    /** @return options for an unnamed queue on {@code device} with the node's defaults */
    public static QueueOptions on(String device) {
        return new QueueOptions(device, "", "default", null, List.of());
    }

    public QueueOptions named(String n) {
        return new QueueOptions(device, n, group, config, hints);
    }

    public QueueOptions inGroup(String g) {
        return new QueueOptions(device, name, g, config, hints);
    }

    public QueueOptions with(QueueConfig c) {
        return new QueueOptions(device, name, group, c, hints);
    }

    public QueueOptions with(Hint... more) {
        var all = new java.util.ArrayList<>(hints);
        all.addAll(List.of(more));
        return new QueueOptions(device, name, group, config, all);
    }
}
