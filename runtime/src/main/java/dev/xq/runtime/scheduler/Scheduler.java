package dev.xq.runtime.scheduler;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.SchedulerControl;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.runtime.engine.RuntimeLog;
import dev.xq.runtime.engine.XQueueImpl;
import dev.xq.runtime.jfr.Tracing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The node's one scheduling event loop. Events (a queue became ready or idle, a hint changed,
 * a policy or device came or went, a timer) only mark the loop dirty and wake it; the loop then
 * builds one view of every queue, lets the active policy decide, and applies the decision. Many
 * events in a burst cost one decision.
 *
 * <p>The watchdog: a decision that throws, or that runs past the deadline, sets its policy
 * aside (until it is selected again or re-registered) and the built-in policy takes over. A
 * policy stuck in a loop cannot be stopped in Java, so the loop thread it holds is abandoned
 * (and interrupted) and a fresh loop thread carries on; the stuck thread's decision, should it
 * ever return, is thrown away.
 */
public final class Scheduler {

    /** Default decision deadline. */
    public static final long DEFAULT_DEADLINE_NANOS = 10_000_000L;

    /** Where the loop gets queues and devices from. */
    public interface Source {
        List<XQueueImpl> schedulerQueues();

        List<DeviceView> deviceViews();
    }

    /** A registered policy. {@code id} tells re-registrations apart. */
    record Registered(String name, Policy policy, String bundle, long id) {
    }

    private final Source source;
    private final RuntimeLog log;
    private final Map<String, List<Registered>> registry = new LinkedHashMap<>();
    private final Map<Long, String> setAside = new HashMap<>();
    private final Object monitor = new Object();
    private final AtomicBoolean dirty = new AtomicBoolean();
    private final AtomicLong firstEventNanos = new AtomicLong();
    private final List<Runnable> afterDecision = new CopyOnWriteArrayList<>();

    private volatile String selected = SchedulerControl.NATIVE;
    private volatile String active = SchedulerControl.NATIVE;
    private volatile long deadlineNanos = DEFAULT_DEADLINE_NANOS;
    private volatile boolean running;
    private volatile Thread loop;
    private volatile Thread watchdog;
    // guarded by monitor
    private int generation;
    private long decisionStartNanos;
    private long decisionStartCpuNanos;
    private long decidingThreadId;
    private Registered deciding;

    // statistics
    private final AtomicLong decisions = new AtomicLong();
    private final AtomicLong swaps = new AtomicLong();
    private final AtomicLong trips = new AtomicLong();
    private final long[] recent = new long[1024];
    private int recentCount;
    private int recentNext;
    private volatile long maxGapNanos;
    private long wakeAtNanos = Long.MAX_VALUE;

    public Scheduler(Source source, RuntimeLog log) {
        this.source = source;
        this.log = log;
    }

    // ------------------------------------------------------------------ lifecycle

    public void start() {
        synchronized (monitor) {
            if (running) {
                return;
            }
            running = true;
            startLoop(generation);
            Thread w = new Thread(this::watch, "xq-watchdog");
            w.setDaemon(true);
            watchdog = w;
            w.start();
        }
        signal();
    }

    public void stop() {
        Thread l;
        Thread w;
        synchronized (monitor) {
            running = false;
            generation++;
            l = loop;
            w = watchdog;
        }
        for (Thread t : new Thread[] {l, w}) {
            if (t != null) {
                LockSupport.unpark(t);
                t.interrupt();
            }
        }
        for (Thread t : new Thread[] {l, w}) {
            if (t != null && t != Thread.currentThread()) {
                try {
                    t.join(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void startLoop(int gen) {
        Thread t = new Thread(() -> run(gen), "xq-scheduler-" + gen);
        t.setDaemon(true);
        t.setPriority(Thread.MAX_PRIORITY);
        loop = t;
        t.start();
    }

    // ------------------------------------------------------------------ events

    /** Marks the loop dirty and wakes it. Cheap; safe from any thread, including driver callbacks. */
    public void signal() {
        firstEventNanos.compareAndSet(0, System.nanoTime());
        if (dirty.compareAndSet(false, true)) {
            Thread t = loop;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Runs {@code r} on the loop thread after each decision (tests and tools). */
    public void afterEachDecision(Runnable r) {
        afterDecision.add(r);
    }

    // ------------------------------------------------------------------ policies

    public void register(String name, Policy policy, String bundle, long id) {
        if (name == null || name.isBlank() || SchedulerControl.NATIVE.equals(name)) {
            log.warn("policy service " + policy.getClass().getName() + " from " + bundle + " has xq.policy='" + name
                    + "'; a policy needs a name other than '" + SchedulerControl.NATIVE + "': ignored");
            return;
        }
        warmUp(name, policy);
        synchronized (monitor) {
            registry.computeIfAbsent(name, k -> new ArrayList<>()).add(new Registered(name, policy, bundle, id));
        }
        log.info("policy '" + name + "' registered by " + bundle);
        signal();
    }

    /**
     * Runs throwaway decisions on the calling thread's behalf (registration or selection), before
     * the loop decides with the policy: a freshly installed or updated bundle loads and
     * initialises its classes there instead of in the first real decision (which took 6 ms in
     * the hot-swap scenario, against a decision p50 of a few us). The view is the live one plus
     * a few made-up ready queues on every device, with the usual hints, so that the policy's
     * paths for ready queues run even on an idle node. The actions are discarded; a policy that
     * fails here is left to the watchdog's normal path.
     */
    private void warmUp(String name, Policy policy) {
        List<QueueView> views = new ArrayList<>();
        for (XQueueImpl q : source.schedulerQueues()) {
            QueueView v = q.view();
            if (v != null) {
                views.add(v);
            }
        }
        List<DeviceView> devices = source.deviceViews();
        long now = System.nanoTime();
        long handle = -1;
        for (DeviceView d : devices) {
            for (int i = 0; i < 3; i++) {
                List<Hint> hints = List.of(new Hint.Priority(i), new Hint.Deadline(10_000L * (i + 1)), new Hint.Utilization(25 * (i + 1)));
                views.add(new QueueView(handle--, "warm-up", d.id(), "warm-up-" + i, true, i == 0, false, now - 1_000_000L * i,
                        100_000L * i, i == 1 ? 0 : now - 500_000L, 4, 1, 10, 100_000L, hints, PreemptionLevel.BLOCK));
            }
        }
        SchedulerView view = new SchedulerView(now, views, devices);
        // On a thread of its own, bounded: a policy that never returns must not hang registration.
        Thread t = new Thread(() -> {
            try {
                for (int i = 0; i < 3 && !Thread.currentThread().isInterrupted(); i++) {
                    policy.schedule(view, new Recorder(java.util.Set.of()));
                }
            } catch (RuntimeException | LinkageError e) {
                log.warn("policy '" + name + "' failed a trial decision: " + e);
            }
        }, "xq-policy-warmup");
        t.setDaemon(true);
        t.start();
        try {
            t.join(Math.max(1, 10 * deadlineNanos / 1_000_000L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            t.interrupt();
            log.warn("policy '" + name + "' did not finish a trial decision within ten deadlines");
        }
    }

    public void unregister(long id) {
        String gone = null;
        synchronized (monitor) {
            for (var it = registry.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (e.getValue().removeIf(r -> r.id() == id)) {
                    gone = e.getKey();
                    if (e.getValue().isEmpty()) {
                        it.remove();
                    }
                }
            }
            setAside.remove(id);
        }
        if (gone != null) {
            if (gone.equals(selected) && lookup(gone) == null) {
                log.warn("policy '" + gone + "' was selected and is gone; the built-in '" + SchedulerControl.NATIVE
                        + "' policy decides until it is back");
            }
            signal();
        }
    }

    /** The registration that decides for {@code name}: the first registered that is not set aside. */
    private Registered lookup(String name) {
        synchronized (monitor) {
            List<Registered> l = registry.get(name);
            if (l == null) {
                return null;
            }
            for (Registered r : l) {
                if (!setAside.containsKey(r.id())) {
                    return r;
                }
            }
            return null;
        }
    }

    /**
     * Selects a policy by name; takes effect at the next decision (which this call triggers).
     * @param strict whether an unregistered name is refused (shell, API) or accepted and waited for (configuration)
     */
    public void select(String name, boolean strict) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("policy name is empty; allowed: " + names());
        }
        String n = name.trim();
        List<Registered> candidates;
        synchronized (monitor) {
            List<Registered> l = registry.get(n);
            candidates = n.equals(selected) || l == null ? List.of() : List.copyOf(l);
        }
        for (Registered r : candidates) {
            warmUp(n, r.policy());
        }
        synchronized (monitor) {
            if (strict && !SchedulerControl.NATIVE.equals(n) && !registry.containsKey(n)) {
                throw new IllegalArgumentException("policy '" + n + "' is not registered; allowed: " + names());
            }
            // selecting again is how an operator gives a set-aside policy another chance
            List<Registered> l = registry.get(n);
            if (l != null) {
                for (Registered r : l) {
                    setAside.remove(r.id());
                }
            }
            selected = n;
        }
        signal();
    }

    public String selected() {
        return selected;
    }

    public String active() {
        return active;
    }

    public List<String> names() {
        synchronized (monitor) {
            List<String> n = new ArrayList<>();
            n.add(SchedulerControl.NATIVE);
            n.addAll(registry.keySet());
            return n;
        }
    }

    public List<SchedulerControl.PolicyInfo> policies() {
        List<SchedulerControl.PolicyInfo> out = new ArrayList<>();
        String act = active;
        out.add(new SchedulerControl.PolicyInfo(SchedulerControl.NATIVE, NativePolicy.DESCRIPTION, "dev.xq.runtime",
                act.equals(SchedulerControl.NATIVE), ""));
        synchronized (monitor) {
            for (var e : registry.entrySet()) {
                Registered r = e.getValue().getFirst();
                String description;
                try {
                    description = r.policy().description();
                } catch (RuntimeException ex) {
                    description = "(description failed: " + ex + ")";
                }
                out.add(new SchedulerControl.PolicyInfo(e.getKey(), description, r.bundle(), act.equals(e.getKey()),
                        setAside.getOrDefault(r.id(), "")));
            }
        }
        return out;
    }

    public void deadline(long nanos) {
        if (nanos < 100_000L || nanos > 10_000_000_000L) {
            throw new IllegalArgumentException("decision deadline " + nanos / 1000 + " us is out of range [100, 10000000] us");
        }
        deadlineNanos = nanos;
    }

    public long deadlineNanos() {
        return deadlineNanos;
    }

    public SchedulerControl.SchedulerStats stats() {
        long[] copy;
        synchronized (recent) {
            copy = Arrays.copyOf(recent, recentCount);
        }
        Arrays.sort(copy);
        return new SchedulerControl.SchedulerStats(decisions.get(), swaps.get(), trips.get(),
                percentile(copy, 0.50) / 1000.0, percentile(copy, 0.99) / 1000.0, maxGapNanos / 1000.0);
    }

    /** Forgets the decision-time history and the longest gap (a scenario's measuring window). */
    public void resetStats() {
        synchronized (recent) {
            recentCount = 0;
            recentNext = 0;
        }
        maxGapNanos = 0;
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    // ------------------------------------------------------------------ the loop

    private void run(int gen) {
        while (true) {
            synchronized (monitor) {
                if (!running || gen != generation) {
                    return;
                }
            }
            if (!dirty.get()) {
                long now = System.nanoTime();
                if (wakeAtNanos <= now) {
                    firstEventNanos.compareAndSet(0, wakeAtNanos);
                } else {
                    long sleep = wakeAtNanos == Long.MAX_VALUE ? 1_000_000_000L : wakeAtNanos - now;
                    LockSupport.parkNanos(this, sleep);
                    continue;
                }
            }
            dirty.set(false);
            try {
                decide(gen);
            } catch (RuntimeException | Error e) {
                // The loop must outlive anything a decision throws; the policy's own throws are handled in decide.
                log.error("scheduler decision failed", e);
            }
            for (Runnable r : afterDecision) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    log.error("after-decision hook failed", e);
                }
            }
        }
    }

    private void decide(int gen) {
        long eventNanos = firstEventNanos.getAndSet(0);
        List<XQueueImpl> queues = source.schedulerQueues();
        List<QueueView> views = new ArrayList<>(queues.size());
        Map<Long, XQueueImpl> byHandle = new HashMap<>(queues.size() * 2);
        for (XQueueImpl q : queues) {
            QueueView v = q.view();
            if (v != null) {
                views.add(v);
                byHandle.put(q.handle(), q);
            }
        }
        long now = System.nanoTime();
        SchedulerView view = new SchedulerView(now, views, source.deviceViews());
        Registered policy = SchedulerControl.NATIVE.equals(selected) ? null : lookup(selected);
        String name = policy == null ? SchedulerControl.NATIVE : policy.name();
        if (!name.equals(active)) {
            swaps.incrementAndGet();
            log.info("scheduling policy now deciding: '" + name + "' (was '" + active + "')");
            active = name;
        }
        Recorder actions = new Recorder(byHandle.keySet());
        synchronized (monitor) {
            if (gen != generation) {
                return;
            }
            decisionStartNanos = now;
            decidingThreadId = Thread.currentThread().threadId();
            decisionStartCpuNanos = cpuTime(decidingThreadId);
            deciding = policy;
        }
        long t0 = System.nanoTime();
        try {
            if (policy == null) {
                NativePolicy.INSTANCE.schedule(view, actions);
            } else {
                policy.policy().schedule(view, actions);
            }
        } catch (Throwable t) {
            synchronized (monitor) {
                decisionStartNanos = 0;
                if (gen != generation) {
                    return;
                }
            }
            if (policy == null) {
                throw t;
            }
            setAsideNow(policy, "threw " + t);
            log.error("policy '" + policy.name() + "' threw; set aside, '" + SchedulerControl.NATIVE + "' decides", t);
            actions = new Recorder(byHandle.keySet());
            NativePolicy.INSTANCE.schedule(view, actions);
            active = SchedulerControl.NATIVE;
            swaps.incrementAndGet();
        }
        long took = System.nanoTime() - t0;
        synchronized (monitor) {
            decisionStartNanos = 0;
            deciding = null;
            if (gen != generation) {
                return; // the watchdog took this decision away: it was too late
            }
        }
        decisions.incrementAndGet();
        synchronized (recent) {
            recent[recentNext] = took;
            recentNext = (recentNext + 1) % recent.length;
            recentCount = Math.min(recentCount + 1, recent.length);
        }
        int suspends = 0;
        int resumes = 0;
        // Resumes first: a queue handed the device gets its work back on the hardware (restore,
        // reactivate, launch) while the other one is still being interrupted, so the device
        // switches with no gap but the save itself.
        for (var e : actions.decided.entrySet()) {
            if (!e.getValue()) {
                XQueueImpl q = byHandle.get(e.getKey());
                if (q.isSuspendedByScheduler()) {
                    q.schedule(false, now);
                    resumes++;
                }
            }
        }
        for (var e : actions.decided.entrySet()) {
            if (e.getValue()) {
                XQueueImpl q = byHandle.get(e.getKey());
                if (!q.isSuspendedByScheduler()) {
                    q.schedule(true, now);
                    suspends++;
                }
            }
        }
        wakeAtNanos = actions.wake;
        if (eventNanos != 0) {
            long gap = System.nanoTime() - eventNanos;
            if (gap > maxGapNanos) {
                maxGapNanos = gap;
            }
        }
        Tracing.decision(name, views.size(), suspends, resumes, took);
    }

    private String setAsideReason(Registered r) {
        synchronized (monitor) {
            return setAside.getOrDefault(r.id(), "");
        }
    }

    private void setAsideNow(Registered r, String reason) {
        synchronized (monitor) {
            setAside.put(r.id(), reason);
        }
        trips.incrementAndGet();
        Tracing.watchdog(r.name(), reason);
    }

    /**
     * Whether the decision under way ran past its deadline: the deadline counts the CPU time
     * the deciding thread used, so that a thread the OS did not run (a loaded host) or a JVM
     * pause is not blamed on the policy; a decision that waits without using CPU (a lock, a
     * sleep) is caught by a wall-clock limit of ten deadlines. Caller holds the monitor.
     */
    private String overrun(long deadline) {
        long wall = System.nanoTime() - decisionStartNanos;
        long cpu = cpuTime(decidingThreadId);
        if (cpu >= 0 && decisionStartCpuNanos >= 0) {
            if (cpu - decisionStartCpuNanos > deadline) {
                return "decision used more than its deadline of " + deadline / 1000 + " us of CPU";
            }
            if (wall > 10 * deadline) {
                return "decision did not return within " + 10 * deadline / 1000 + " us (ten deadlines)";
            }
            return null;
        }
        return wall > deadline ? "decision ran past its deadline of " + deadline / 1000 + " us" : null;
    }

    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    /** @return CPU time of a thread in nanoseconds, or -1 where the JVM cannot tell */
    private static long cpuTime(long threadId) {
        try {
            return THREADS.isThreadCpuTimeSupported() ? THREADS.getThreadCpuTime(threadId) : -1;
        } catch (UnsupportedOperationException e) {
            return -1;
        }
    }

    private void watch() {
        while (running) {
            long deadline = deadlineNanos;
            LockSupport.parkNanos(this, Math.max(500_000L, deadline / 4));
            Thread stuck = null;
            Registered culprit = null;
            synchronized (monitor) {
                if (!running) {
                    return;
                }
                String overrun = decisionStartNanos == 0 || deciding == null ? null : overrun(deadline);
                if (overrun != null) {
                    culprit = deciding;
                    stuck = loop;
                    decisionStartNanos = 0;
                    deciding = null;
                    generation++;
                    setAside.put(culprit.id(), overrun);
                    startLoop(generation);
                }
            }
            if (culprit != null) {
                trips.incrementAndGet();
                active = SchedulerControl.NATIVE;
                swaps.incrementAndGet();
                Tracing.watchdog(culprit.name(), "deadline");
                log.error("policy '" + culprit.name() + "' set aside: " + setAsideReason(culprit) + "; '"
                        + SchedulerControl.NATIVE + "' decides", null);
                if (stuck != null) {
                    stuck.interrupt();
                }
                signal();
            }
        }
    }

    /** Collects one decision's actions; the last word on a queue wins. */
    private static final class Recorder implements SchedulerActions {
        final Map<Long, Boolean> decided = new LinkedHashMap<>();
        final java.util.Set<Long> known;
        long wake = Long.MAX_VALUE;

        Recorder(java.util.Set<Long> known) {
            this.known = known;
        }

        @Override
        public void suspend(long handle) {
            if (known.contains(handle)) {
                decided.put(handle, Boolean.TRUE);
            }
        }

        @Override
        public void resume(long handle) {
            if (known.contains(handle)) {
                decided.put(handle, Boolean.FALSE);
            }
        }

        @Override
        public void wakeAt(long nanos) {
            wake = Math.min(wake, nanos);
        }
    }
}
