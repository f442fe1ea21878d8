package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code chpf} (CPU-priority-following highest priority first): {@link HighestPriorityFirst}
 * where a process queue's priority is its process's CPU scheduling priority, so that
 * {@code nice}, {@code renice} and {@code chrt} order GPU work the way they order CPU work.
 *
 * <ul>
 * <li>A queue whose group has the form {@code <pid>:<name>} (the node's process queues, see
 * docs/processes.md) gets the priority {@link CpuPriority#rank()} of process {@code <pid>},
 * read from {@code /proc/<pid>/stat}: {@code -nice} (nice -20 is 20, the highest; 19 is -19),
 * and for a SCHED_FIFO or SCHED_RR process {@code 1000 + rt_priority}, above every
 * non-real-time process (SCHED_DEADLINE 1100, SCHED_IDLE -20). Its {@code Priority} hint
 * is not used.</li>
 * <li>Other queues, and process queues whose {@code /proc} entry cannot be read (the process
 * is gone or in another pid namespace), have their {@code Priority} hint (0 when absent). A
 * host application's group that happens to look like {@code <pid>:<name>} is taken as a
 * process's.</li>
 * <li>Then as under {@code hpf}: per device the ready queues with the highest priority run
 * together, every other ready queue is suspended; idle queues and queues their application
 * holds are resumed when their priority is at least the device's top ready priority.</li>
 * </ul>
 *
 * <p>A process's value (or the failure to read it) is kept for {@code chpf.refresh} after it
 * was read, on the decisions' clock, so a decision reads {@code /proc} only for processes whose
 * value has expired. When a device has two or more ready queues and one of them is a process's,
 * a timer is set for the moment that process's value expires, so a renice takes effect within
 * {@code chpf.refresh} even when no queue changes. The value of the thread group leader is
 * used (Linux lets threads have nice values of their own; {@code /proc/<pid>/stat} shows the
 * leader's).
 *
 * <p>Registered as bounded: a {@code /proc} read is served from kernel memory in microseconds
 * and waits for no other thread, and each process is read at most once per
 * {@code chpf.refresh}.
 *
 * <p>Keeps state between decisions: the cached values, of the processes in the view only
 * (others are dropped at the next decision). Decisions are serialised on the instance, so a
 * trial decision off the scheduler's thread cannot interleave with a real one; each is
 * O(queues) plus the reads of expired processes.
 */
@Component(configurationPid = CpuHighestPriorityFirst.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + CpuHighestPriorityFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = ChpfConfig.class)
public final class CpuHighestPriorityFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "chpf";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.chpf";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile ChpfSettings settings;

    private final ProcessPriorities priorities;

    /** A process's value as last read. */
    private static final class Entry {
        long readAtNanos;
        /** Whether the read succeeded; if not, the process's queues use their hints. */
        boolean known;
        int rank;
    }

    // Guarded by this.
    private final Map<Integer, Entry> cache = new HashMap<>();

    /** For Declarative Services. */
    public CpuHighestPriorityFirst() {
        this.settings = ChpfSettings.DEFAULTS;
        this.priorities = ProcessPriorities.PROC;
    }

    CpuHighestPriorityFirst(ChpfSettings settings, ProcessPriorities priorities, Logger log) {
        this.settings = settings;
        this.priorities = priorities;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(ChpfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(ChpfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, ChpfConfig.class, raw, log::warn);
            settings = ChpfSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(ChpfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(ChpfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, ChpfConfig.class, raw, log::warn);
            settings = ChpfSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    ChpfSettings settings() {
        return settings;
    }

    /** @return the cached rank of a process, null if none is cached or its read failed (for tests) */
    synchronized Integer cachedRank(int pid) {
        Entry e = cache.get(pid);
        return e == null || !e.known ? null : e.rank;
    }

    @Override
    public String description() {
        return "highest priority first where a process's queues have its CPU priority (-nice; real-time above all), others their priority hint";
    }

    /**
     * @return the pid of a group of the form {@code <pid>:<name>} (decimal digits, a positive
     *         int), or -1
     */
    static int pidOf(String group) {
        if (group == null) {
            return -1;
        }
        int colon = group.indexOf(':');
        if (colon <= 0 || colon > 10) {
            return -1;
        }
        long pid = 0;
        for (int i = 0; i < colon; i++) {
            char c = group.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            pid = pid * 10 + (c - '0');
        }
        return pid > 0 && pid <= Integer.MAX_VALUE ? (int) pid : -1;
    }

    @Override
    public synchronized void schedule(SchedulerView view, SchedulerActions actions) {
        ChpfSettings s = settings;
        long now = view.nowNanos();
        Set<Integer> seen = new HashSet<>();
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            int n = queues.size();
            int[] ranks = new int[n];
            Entry[] entries = new Entry[n];
            int top = Integer.MIN_VALUE;
            int ready = 0;
            for (int i = 0; i < n; i++) {
                QueueView q = queues.get(i);
                int pid = pidOf(q.group());
                Entry e = pid < 0 ? null : entry(pid, now, s, seen);
                entries[i] = e;
                ranks[i] = e != null && e.known ? e.rank : q.priority();
                if (q.runnable()) {
                    top = Math.max(top, ranks[i]);
                    ready++;
                }
            }
            for (int i = 0; i < n; i++) {
                QueueView q = queues.get(i);
                decision.set(q, ranks[i] >= top);
                if (ready > 1 && entries[i] != null && q.runnable()) {
                    // A renice of this process may change who runs here.
                    decision.wakeAt(entries[i].readAtNanos + s.refreshNanos());
                }
            }
        }
        cache.keySet().retainAll(seen);
        decision.applyTo(view, actions);
    }

    private Entry entry(int pid, long now, ChpfSettings s, Set<Integer> seen) {
        seen.add(pid);
        Entry e = cache.get(pid);
        if (e != null && now - e.readAtNanos < s.refreshNanos()) {
            return e;
        }
        boolean news = e == null || e.known;
        if (e == null) {
            e = new Entry();
            cache.put(pid, e);
        }
        e.readAtNanos = now;
        try {
            e.rank = priorities.read(pid).rank();
            e.known = true;
        } catch (IOException | RuntimeException x) {
            if (news) {
                // Once per process and failure, not at every refresh.
                log.debug("policy {}: CPU priority of process {} unreadable, its queues use their priority hints: {}", NAME, pid, x.toString());
            }
            e.known = false;
        }
        return e;
    }
}
