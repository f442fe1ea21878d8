package dev.xq.policy.drf;

import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Splits a view into per-device queue lists; every decision in this bundle is per device. */
final class Devices {

    private Devices() {
    }

    /** @return the queues of each device, devices and queues in view order */
    static Collection<List<QueueView>> queuesByDevice(SchedulerView view) {
        Map<String, List<QueueView>> byDevice = new LinkedHashMap<>();
        for (QueueView q : view.queues()) {
            byDevice.computeIfAbsent(String.valueOf(q.device()), d -> new ArrayList<>()).add(q);
        }
        return byDevice.values();
    }

    /** A queue the scheduler can actually let run: it has work and its application does not hold it. */
    static boolean runnable(QueueView q) {
        return q.ready() && !q.suspendedByApp();
    }
}
