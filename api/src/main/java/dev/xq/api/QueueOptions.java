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
 * @param nativePriority a priority for the hardware queue itself (CUDA/HIP stream priority,
 *        higher = more urgent, in [-1000, 1000]), or {@code null} for the driver's default; this
 *        is the hardware's own arbitration, independent of XQ's scheduler
 */
public record QueueOptions(String device, String name, String group, QueueConfig config, List<Hint> hints,
                           Integer nativePriority) {
    public QueueOptions {
        Objects.requireNonNull(device, "device");
        name = name == null ? "" : name;
        group = group == null || group.isEmpty() ? "default" : group;
        hints = hints == null ? List.of() : List.copyOf(hints);
        if (nativePriority != null && (nativePriority < Hint.MIN_PRIORITY || nativePriority > Hint.MAX_PRIORITY)) {
            throw new IllegalArgumentException("native priority " + nativePriority + " is out of range ["
                    + Hint.MIN_PRIORITY + ", " + Hint.MAX_PRIORITY + "]");
        }
    }

    public QueueOptions(String device, String name, String group, QueueConfig config, List<Hint> hints) {
        this(device, name, group, config, hints, null);
    }

    /** @return options for an unnamed queue on {@code device} with the node's defaults */
    public static QueueOptions on(String device) {
        return new QueueOptions(device, "", "default", null, List.of(), null);
    }

    public QueueOptions named(String n) {
        return new QueueOptions(device, n, group, config, hints, nativePriority);
    }

    public QueueOptions inGroup(String g) {
        return new QueueOptions(device, name, g, config, hints, nativePriority);
    }

    public QueueOptions with(QueueConfig c) {
        return new QueueOptions(device, name, group, c, hints, nativePriority);
    }

    public QueueOptions with(Hint... more) {
        java.util.Objects.requireNonNull(more, "hints is null; give one or more Hint, such as new Hint.Priority(2)");
        var all = new java.util.ArrayList<>(hints);
        for (int i = 0; i < more.length; i++) {
            if (more[i] == null) {
                throw new NullPointerException("hint " + i + " is null; give a Hint, such as new Hint.Priority(2)");
            }
            all.add(more[i]);
        }
        return new QueueOptions(device, name, group, config, all, nativePriority);
    }

    public QueueOptions withNativePriority(int p) {
        return new QueueOptions(device, name, group, config, hints, p);
    }
}
