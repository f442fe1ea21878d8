package dev.xq.policy.drf;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code drf}: dominant resource fairness (Ghodsi et al., NSDI'11) over the engines and
 * memory of each device. A queue is one task, its group one tenant; a task occupies its
 * {@code Demand} hint ({@code drf.default.engines} engines and no memory without one).
 *
 * <p>Per device, progressive filling: repeatedly take the tenant with the lowest weighted
 * dominant share (its largest fraction of the device's engines or memory, divided by its
 * {@code drf.weights} weight) that still has a ready task whose demand fits what is left, and
 * allocate that task. Allocated tasks run, the other ready ones wait. Within a tenant, tasks
 * already running come first, then the oldest ready, so allocations do not churn.
 *
 * <p>Across devices: shares are per device, because a queue's demand can only be met by its own
 * device. What is accounted across devices is device time: among tenants with equal weighted
 * shares the one that has used less device time on all devices together (sum of its queues'
 * run time, divided by its weight) goes first, then the tenant name decides.
 *
 * <p>A capacity the device reports as 0 (unknown) does not limit and does not count in shares.
 * When nothing fits on a device that has ready work (every demand exceeds the device), its
 * oldest ready task runs alone rather than none. Idle queues, and queues their application
 * holds, are resumed when their demand fits what is left after allocation, so they start at
 * once; the next decision counts them. Stateless apart from its configuration.
 */
@Component(configurationPid = DominantResourceFairness.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + DominantResourceFairness.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = DrfConfig.class)
public final class DominantResourceFairness implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "drf";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.drf";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile DrfSettings settings;

    /** For Declarative Services. */
    public DominantResourceFairness() {
        this.settings = DrfSettings.DEFAULTS;
    }

    DominantResourceFairness(DrfSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(DrfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(DrfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, DrfConfig.class, raw, log::warn);
            settings = DrfSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(DrfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(DrfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, DrfConfig.class, raw, log::warn);
            settings = DrfSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    DrfSettings settings() {
        return settings;
    }

    @Override
    public String description() {
        return "dominant resource fairness: per device, tenants get tasks by progressive filling of engines and memory, lowest weighted dominant share first";
    }

    /** One tenant during one device's filling. */
    private static final class Tenant {
        final String name;
        final double weight;
        final double weightedTime;
        final List<QueueView> tasks = new ArrayList<>();
        int next;
        long engines;
        long memory;
        double weightedShare;

        Tenant(String name, double weight, double weightedTime) {
            this.name = name;
            this.weight = weight;
            this.weightedTime = weightedTime;
        }
    }

    private static final Comparator<Tenant> FILL_ORDER = Comparator.<Tenant>comparingDouble(t -> t.weightedShare)
            .thenComparingDouble(t -> t.weightedTime)
            .thenComparing(t -> t.name);

    private static final Comparator<QueueView> TASK_ORDER = Comparator.comparing(QueueView::suspended)
            .thenComparingLong(QueueView::readySinceNanos)
            .thenComparingLong(QueueView::handle);

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        DrfSettings s = settings;
        Map<String, DeviceView> devices = new HashMap<>();
        for (DeviceView d : view.devices()) {
            devices.put(d.id(), d);
        }
        Map<String, Long> runNanos = new HashMap<>();
        for (QueueView q : view.queues()) {
            runNanos.merge(tenantOf(q), q.runNanos(), Long::sum);
        }
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            DeviceView d = devices.get(queues.getFirst().device());
            fill(queues, d == null ? 0 : d.engines(), d == null ? 0 : d.memoryBytes(), s, runNanos, decision);
        }
        decision.applyTo(view, actions);
    }

    private static void fill(List<QueueView> queues, long engineCapacity, long memoryCapacity, DrfSettings s,
                             Map<String, Long> runNanos, Decision decision) {
        Map<String, Tenant> tenants = new LinkedHashMap<>();
        for (QueueView q : queues) {
            if (q.runnable()) {
                String name = tenantOf(q);
                tenants.computeIfAbsent(name, n -> new Tenant(n, s.weight(n), runNanos.getOrDefault(n, 0L) / s.weight(n))).tasks.add(q);
            }
        }
        long freeEngines = engineCapacity;
        long freeMemory = memoryCapacity;
        PriorityQueue<Tenant> order = new PriorityQueue<>(Math.max(1, tenants.size()), FILL_ORDER);
        for (Tenant t : tenants.values()) {
            t.tasks.sort(TASK_ORDER);
            order.add(t);
        }
        Map<Long, Boolean> allocated = new HashMap<>();
        while (!order.isEmpty()) {
            Tenant t = order.poll();
            while (t.next < t.tasks.size()) {
                QueueView task = t.tasks.get(t.next++);
                long e = engines(task, s);
                long m = memory(task);
                // Capacity only shrinks while filling, so a task that does not fit now never will.
                if ((engineCapacity == 0 || e <= freeEngines) && (memoryCapacity == 0 || m <= freeMemory)) {
                    freeEngines -= engineCapacity == 0 ? 0 : e;
                    freeMemory -= memoryCapacity == 0 ? 0 : m;
                    t.engines += e;
                    t.memory += m;
                    t.weightedShare = Math.max(share(t.engines, engineCapacity), share(t.memory, memoryCapacity)) / t.weight;
                    allocated.put(task.handle(), Boolean.TRUE);
                    order.add(t);
                    break;
                }
            }
        }
        if (allocated.isEmpty() && !tenants.isEmpty()) {
            QueueView oldest = null;
            for (Tenant t : tenants.values()) {
                QueueView first = t.tasks.getFirst();
                if (oldest == null || TASK_ORDER.compare(first, oldest) < 0) {
                    oldest = first;
                }
            }
            allocated.put(oldest.handle(), Boolean.TRUE);
            // The oversized task runs alone: nothing idle may start beside it.
            freeEngines = engineCapacity == 0 ? 0 : -1;
            freeMemory = memoryCapacity == 0 ? 0 : -1;
        }
        for (QueueView q : queues) {
            if (q.runnable()) {
                decision.set(q, allocated.containsKey(q.handle()));
            } else {
                decision.set(q, (engineCapacity == 0 || engines(q, s) <= freeEngines) && (memoryCapacity == 0 || memory(q) <= freeMemory));
            }
        }
    }

    private static double share(long used, long capacity) {
        return capacity == 0 ? 0 : (double) used / capacity;
    }

    private static long engines(QueueView q, DrfSettings s) {
        return q.hint(Hint.Demand.class).map(d -> (long) d.engines()).orElse((long) s.defaultEngines());
    }

    private static long memory(QueueView q) {
        return q.hint(Hint.Demand.class).map(Hint.Demand::memoryBytes).orElse(0L);
    }

    static String tenantOf(QueueView q) {
        return Objects.requireNonNullElse(q.group(), "");
    }
}
