package dev.xq.runtime.engine;

import dev.xq.api.CodeModule;
import dev.xq.api.CommandFailedException;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueControl;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.external.spi.ExternalQueues;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.PreemptionProvider;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SpaceRule;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.scheduler.ScheduledQueue;
import dev.xq.runtime.scheduler.Scheduler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's XQ core, free of OSGi so it can be driven from unit tests: its job is to hold the
 * drivers, providers, queues and the scheduler together. The DS component feeds it services and
 * publishes it. Apart: whether each queue's limits matter now, the alone and on-top rules
 * ({@link ContentionRule}); the device objects ({@link DeviceObjects}); where best-effort processes
 * run beside each other ({@link BestEffortSpace}).
 */
public final class XqCore implements XQueueService, SchedulerControl, ExternalQueues, Scheduler.Source, QueueEvents {

    private final RuntimeLog log;
    private final Scheduler scheduler;
    private final CopyOnWriteArrayList<XpuDriver> drivers = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<PreemptionProvider> providers = new CopyOnWriteArrayList<>();
    private final ConcurrentSkipListMap<Long, NodeQueue> queues = new ConcurrentSkipListMap<>();
    private final AtomicLong queuesVersion = new AtomicLong();
    /**
     * The last {@value #CHANGES_KEPT} opens and closes of queues, by version (guarded by itself):
     * the scheduler's awake list follows them instead of going over the whole list at each change
     * ({@link #queueChangesSince}).
     */
    private final java.util.ArrayDeque<QueueChange> changes = new java.util.ArrayDeque<>();
    static final int CHANGES_KEPT = 16_384;
    private volatile QueueList queueList;
    /** The alone and on-top rules: whether each queue's limits matter now. */
    private final ContentionRule contention = new ContentionRule(queues);
    private final Map<XQueueImpl, XpuDriver> owners = new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong();
    private volatile QueueConfig defaults = QueueConfig.defaults();
    private volatile PolicySelectionSink selectionSink = name -> { };
    private final DeviceObjects objects;
    private final DataCommands data;
    /** What is allocated through the core itself (tests, code in the runtime's bundle). */
    private final DeviceObjects.Owner own;

    /** Lets the OSGi layer persist a selection in Config Admin. */
    public interface PolicySelectionSink {
        void selected(String name);
    }

    /** The on-top rule's work, bound once: a method reference's first use is bootstrapped (about a millisecond), here not in a decision. */
    private final Runnable recompute = this::recomputeContention;

    public XqCore(RuntimeLog log) {
        this.log = log;
        this.scheduler = new Scheduler(this, log);
        this.space = new BestEffortSpace(log, scheduler, this::widePreferredOpen);
        this.objects = new DeviceObjects(this::memoryOf, log);
        this.data = new DataCommands(objects);
        this.own = objects.owner("the node");
    }

    public void start() {
        scheduler.start();
    }

    /** Stops the scheduler and closes every queue (their pending commands are cancelled). */
    public void stop() {
        for (NodeQueue q : List.copyOf(queues.values())) {
            q.close(java.time.Duration.ofMillis(500));
        }
        scheduler.stop();
        objects.closeAll();
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public void selectionSink(PolicySelectionSink sink) {
        this.selectionSink = sink;
    }

    // ------------------------------------------------------------------ drivers

    public void addDriver(XpuDriver driver) {
        drivers.add(driver);
        deviceViews = null;
        log.info("driver " + driver.platform() + " added: " + safeStatus(driver));
        scheduler.signal();
    }

    /** The driver is going away: queues on it fail their outstanding commands with a clear cause. */
    public void removeDriver(XpuDriver driver) {
        drivers.remove(driver);
        try {
            driver.memory().ifPresent(objects::forget);
        } catch (RuntimeException e) {
            log.error("driver " + driver.platform() + " failed to say whether it has memory", e);
        }
        deviceViews = null;
        for (var e : List.copyOf(owners.entrySet())) {
            if (e.getValue() == driver) {
                XQueueImpl q = e.getKey();
                q.breakQueue(new CommandFailedException("driver " + driver.platform() + " for device " + q.device()
                        + " was removed", new IllegalStateException("driver removed")));
                try {
                    q.hwQueue().close();
                } catch (RuntimeException ex) {
                    log.error("closing a queue of a removed driver failed", ex);
                }
            }
        }
        log.info("driver " + driver.platform() + " removed");
        scheduler.signal();
    }

    public void addProvider(PreemptionProvider provider) {
        providers.add(provider);
        for (XQueueImpl q : queueImpls()) {
            q.offer(provider);
        }
        log.info("preemption provider " + provider.name() + " added: " + provider.status());
    }

    public void removeProvider(PreemptionProvider provider) {
        providers.remove(provider);
        for (XQueueImpl q : queueImpls()) {
            q.withdraw(provider);
        }
        log.info("preemption provider " + provider.name() + " removed");
    }

    private static String safeStatus(XpuDriver d) {
        try {
            return d.status();
        } catch (RuntimeException e) {
            return "status failed: " + e;
        }
    }

    private record Found(XpuDriver driver, DeviceDescriptor device) {
    }

    private Map<String, Found> deviceMap() {
        Map<String, Found> m = new LinkedHashMap<>();
        for (XpuDriver d : drivers) {
            List<DeviceDescriptor> devs;
            try {
                devs = d.devices();
            } catch (RuntimeException e) {
                log.error("driver " + d.platform() + " failed to list its devices", e);
                continue;
            }
            for (DeviceDescriptor dd : devs) {
                if (m.putIfAbsent(dd.id(), new Found(d, dd)) != null) {
                    log.warn("device id " + dd.id() + " is offered by two drivers; the first one keeps it");
                }
            }
        }
        return m;
    }

    // ------------------------------------------------------------------ XQueueService

    @Override
    public XQueue create(QueueOptions options) {
        Objects.requireNonNull(options, "options");
        Found f = deviceMap().get(options.device());
        if (f == null) {
            throw new IllegalArgumentException("device '" + options.device() + "' is unknown; known devices: "
                    + String.join(", ", deviceMap().keySet()));
        }
        QueueConfig cfg = options.config() == null ? defaults : options.config();
        long handle = handles.incrementAndGet();
        XQueueImpl q = new XQueueImpl(handle, options.name(), options.device(), options.group(), cfg, options.hints(), this, log);
        HwQueue hw = f.driver().open(options.device(), new HwQueueOptions(q.name(), options.nativePriority()), q.hardwareListener());
        q.attach(hw);
        q.dataCommands(data);
        owners.put(q, f.driver());
        put(q);
        for (PreemptionProvider p : providers) {
            q.offer(p);
        }
        recomputeContention(q);
        scheduler.signal();
        return q;
    }

    // ------------------------------------------------------------------ device memory and code

    /** The memory of a device, for {@link DeviceObjects}. */
    private DeviceObjects.Target memoryOf(String device) {
        Map<String, Found> all = deviceMap();
        Found f = all.get(device);
        if (f == null) {
            throw new IllegalArgumentException("device '" + device + "' is unknown; known devices: " + String.join(", ", all.keySet()));
        }
        var memory = f.driver().memory();
        if (memory.isEmpty()) {
            List<String> with = new ArrayList<>();
            for (Found o : all.values()) {
                if (o.driver().memory().isPresent()) {
                    with.add(o.device().id());
                }
            }
            throw new IllegalArgumentException("device '" + device + "' (" + f.driver().platform() + ") offers no device memory or code"
                    + " loading; devices that do: " + (with.isEmpty() ? "none" : String.join(", ", with)));
        }
        return new DeviceObjects.Target(memory.get(), f.device().memoryBytes());
    }

    /** @return a view of the node whose buffers and modules belong to {@code name}, freed when it is closed */
    public ClientService client(String name) {
        return new ClientService(this, objects.owner(name));
    }

    /** @return the table of buffers and modules, for tests */
    public DeviceObjects objects() {
        return objects;
    }

    @Override
    public DeviceBuffer allocate(String device, long bytes) {
        return own.allocate(device, bytes);
    }

    @Override
    public List<DeviceBuffer> buffers() {
        return own.buffers();
    }

    @Override
    public CodeModule load(String device, String name, byte[] image) {
        return own.load(device, name, image);
    }

    @Override
    public void changed(NodeQueue queue) {
        scheduler.signal(queue); // wakes it if asleep (DormantQueues)
    }

    /**
     * A view (any decision's: the space rule's, the parts', reads every queue of a device) found a
     * queue's process back from a stop before the loop's look did: that look then finds nothing
     * changed, and a queue held for the stop and asleep in the scheduler (its process, waiting for
     * launches it had announced, sends no event) stayed held until the sleepers' sweep, once a
     * second: an fp32 trainer beside two decoders launched nothing for 0.62-0.69 s after two
     * continues in four (H200, session 58). The loop thread decides, never the viewing one.
     */
    @Override
    public void backFromStop(NodeQueue queue) {
        scheduler.signalLoop(queue);
    }

    /** Its first work: company from now on (see {@link #open(ExternalQueueSpec, ExternalQueueControl)}). */
    @Override
    public void firstWork(NodeQueue queue) {
        contention.woke(queue);
    }

    /**
     * A queue became ready that nothing on its device contests (alone there, or on top of it with
     * its company held on arrival): the loop thread decides, not the submitting one. A decision
     * there could suspend no queue that is not suspended already, and the queue is launching
     * anyway; on the submitting thread, woken cold from its sleep between tasks, it cost a lone
     * tenant 44-121 us (median, H100 host) and a tenant on top ~55 us before submit returned,
     * which each paid on every task and which a slow host multiplies into its tail: the
     * application's next command reached the device that much later.
     */
    @Override
    public void arrivedUnopposed(NodeQueue queue) {
        scheduler.signalLoop(queue);
    }

    @Override
    public void closed(NodeQueue queue) {
        NodeQueue gone;
        synchronized (changes) {
            gone = queues.remove(queue.handle());
            long v = queuesVersion.incrementAndGet(); // after the remove (schedulerQueues)
            if (gone != null) {
                logChange(v, gone, false);
            }
        }
        if (gone != null && queue instanceof ExternalQueueImpl e && e.openedNarrowable()) {
            narrowable.decrementAndGet();
        }
        if (queue instanceof XQueueImpl q) {
            owners.remove(q);
        }
        recomputeContention(queue);
        if (queue instanceof ExternalQueueImpl) {
            scheduler.signalLoop(); // see open(ExternalQueueSpec, ...)
        } else {
            scheduler.signal();
        }
    }

    @Override
    public void hinted(NodeQueue queue) {
        recomputeContention(queue);
    }

    /** Default of {@link #awaitSpinMicros(long)}: automatic. */
    public static final long AUTO_AWAIT_SPIN = -1;
    /** What automatic means where the host has {@link #SPIN_MIN_CPUS} hardware threads or more. */
    public static final long AUTO_AWAIT_SPIN_MICROS = 100;
    /** Fewer hardware threads than this: automatic means no spinning (a spinning waiter would take a core the node needs). */
    public static final int SPIN_MIN_CPUS = 8;

    private volatile long awaitSpinMicros = AUTO_AWAIT_SPIN;
    private volatile long awaitSpinNanos = resolveAwaitSpin(AUTO_AWAIT_SPIN) * 1000;

    /**
     * How long {@code Submission.await} spins before and after a command's expected end instead of
     * parking (a parked thread is woken tens of microseconds after the completion); -1: automatic,
     * {@value #AUTO_AWAIT_SPIN_MICROS} us where the host has at least {@value #SPIN_MIN_CPUS} hardware
     * threads, else 0 (as CUDA spins only where cores are spare); 0: await parks at once.
     * @throws IllegalArgumentException outside [-1, 100000] us
     */
    public void awaitSpinMicros(long micros) {
        if (micros < -1 || micros > 100_000) {
            throw new IllegalArgumentException("await spin " + micros + " us is out of range [-1, 100000] us (-1: automatic, 0: off)");
        }
        awaitSpinMicros = micros;
        awaitSpinNanos = resolveAwaitSpin(micros) * 1000;
    }

    /** @return the setting (-1: automatic) */
    public long awaitSpinMicros() {
        return awaitSpinMicros;
    }

    static long resolveAwaitSpin(long micros) {
        if (micros >= 0) {
            return micros;
        }
        return Runtime.getRuntime().availableProcessors() >= SPIN_MIN_CPUS ? AUTO_AWAIT_SPIN_MICROS : 0;
    }

    @Override
    public long awaitSpinNanos() {
        return awaitSpinNanos;
    }

    /** Default of {@link #guardedWindowMicros(long)}: 2 ms. */
    public static final long DEFAULT_GUARDED_WINDOW_MICROS = 2_000;

    private volatile long guardedWindowMicros = DEFAULT_GUARDED_WINDOW_MICROS;

    /**
     * The window of a process queue while an arrival guard is in force on it (docs/processes.md,
     * "Arrival guards"): the guard already keeps its work clear of the guarding queue's foreseen
     * arrival, so its own window (300 us by default, which refused a training process's launches
     * hundreds of thousands of times in 6 s and left its stream dry for 2-5 % of the time beside a
     * graph on a beat, H200) bounds only what an arrival nobody foresaw would wait for. Widened to
     * this, and the threshold lifted, while the guard is in force; back at its lift, before it.
     * 2 ms by default since 29 Nov (beside a graph on a beat, training at 0.96 of native against
     * 0.83 with its own window, H200); it also widens what a preferred queue without a beat, open
     * beside the guarding one, may find in flight. 0: the queue's own window.
     *
     * @throws IllegalArgumentException outside [0, 100000] us
     */
    public void guardedWindowMicros(long micros) {
        if (micros < 0 || micros > 100_000) {
            throw new IllegalArgumentException("guarded window " + micros + " us is out of range [0, 100000] us (0: off)");
        }
        guardedWindowMicros = micros;
    }

    @Override
    public long guardedWindowMicros() {
        return guardedWindowMicros;
    }

    /** Default of {@link #narrowedWindowMicros(long)}: 500 us. */
    public static final long DEFAULT_NARROWED_WINDOW_MICROS = 500;

    private volatile long narrowedWindowMicros = DEFAULT_NARROWED_WINDOW_MICROS;

    /**
     * The window of a process queue while it is narrowed (docs/processes.md, "Space and time") and
     * a queue wider than half the device, preferred over it, is open there. What it launches runs
     * beside the queue it was narrowed for, not before it, but such a third queue (a CUDA graph
     * beside an eager decoder and training) holds it when it arrives and waits for the work it
     * left in flight on its part of the device. Unbounded (until 29 Nov), a narrowed trainer had
     * P50 3.3-5.8 ms and P99 20-26 ms of work in flight at those arrivals; with 2 ms the graph
     * tenant was at 1.97-2.05 x its standalone P99, with 500 us at 1.52-1.57 (H200,
     * decode+graph+train32, two runs each). With no such queue open, a narrowed queue has the
     * alone window ({@link #aloneWindowMicros(long)}): nobody waits for its work. The threshold is
     * lifted; the window is this or its own, whichever is wider (a queue configured without a
     * window stays without one); 0: unbounded.
     *
     * @throws IllegalArgumentException outside [0, 100000] us
     */
    public void narrowedWindowMicros(long micros) {
        if (micros < 0 || micros > 100_000) {
            throw new IllegalArgumentException("narrowed window " + micros + " us is out of range [0, 100000] us (0: unbounded)");
        }
        narrowedWindowMicros = micros;
    }

    @Override
    public long narrowedWindowMicros() {
        return narrowedWindowMicros;
    }

    /** Default of {@link #aloneWindowMicros(long)}: 2 ms, four commands of 500 us, twenty of 100 us. */
    public static final long DEFAULT_ALONE_WINDOW_MICROS = 2_000;

    /**
     * How much estimated work an application queue alone on its device may keep in flight
     * ({@link XQueueImpl#alone}); 0 switches the rule off (limits always apply).
     * @throws IllegalArgumentException outside [0, 1000000] us
     */
    public void aloneWindowMicros(long micros) {
        if (micros < 0 || micros > 1_000_000) {
            throw new IllegalArgumentException("alone window " + micros + " us is out of range [0, 1000000] us (0: off)");
        }
        contention.aloneWindowMicros(micros);
        recomputeContention();
    }

    /** @return the alone window in us (0: the rule is off) */
    @Override
    public long aloneWindowMicros() {
        return contention.aloneWindowMicros();
    }

    /** Switches the on-top rule (docs/runtime.md) on or off; the queues' limits follow at once. */
    public void onTop(boolean on) {
        contention.onTop(on);
        recomputeContention();
    }

    /** @return whether the on-top rule is on (default) */
    public boolean onTop() {
        return contention.onTop();
    }

    /**
     * The on-top rule (docs/runtime.md): a queue on top of its device has its limits widened as
     * if alone. Applied on a thread of its own: the deciding thread may hold a queue's lock.
     */
    @Override
    public void topQueuesChanged(Set<Long> nowTop) {
        contention.top(nowTop);
        Thread.ofVirtual().name("xq-on-top").start(recompute);
    }

    /**
     * A queue fell asleep in the scheduler (held, idle, out of the decisions): it is no company for
     * the alone and on-top rules until it wakes ({@link ContentionRule#slept}, which applies that
     * on a thread of its own). The deciding thread's, after the decision was applied.
     */
    @Override
    public void queueSlept(ScheduledQueue q) {
        if (ExternalQueueImpl.TRACE_STOPS && q instanceof ExternalQueueImpl e) {
            e.traceStop("asleep");
        }
        if (q instanceof NodeQueue n) {
            contention.slept(n);
        }
    }

    /**
     * A queue asleep in the scheduler wakes: it is company again, and the others' limits are
     * applied before this returns ({@link ContentionRule#woke}), on the deciding thread, before
     * the policy runs.
     */
    @Override
    public void queueWoke(ScheduledQueue q) {
        if (ExternalQueueImpl.TRACE_STOPS && q instanceof ExternalQueueImpl e) {
            e.traceStop("woke");
        }
        if (q instanceof NodeQueue n) {
            contention.woke(n);
        }
    }

    /** Tells each queue whether its limits matter now ({@link ContentionRule}). */
    private void recomputeContention() {
        contention.recompute(null);
    }

    /** {@link #recomputeContention()} after {@code changed} opened, closed or changed its hints ({@link ContentionRule}). */
    private void recomputeContention(NodeQueue changed) {
        contention.recompute(changed);
    }

    @Override
    public boolean preferredFillsTheDevice(NodeQueue queue, long minCommandNanos) {
        QueueView me = queue.view();
        if (me == null) {
            return true;
        }
        int mine = priority(me.hints());
        for (NodeQueue q : queues.values()) {
            if (q == queue) {
                continue;
            }
            QueueView v = q.view();
            if (v == null || !v.ready() || !v.device().equals(me.device()) || priority(v.hints()) <= mine) {
                continue;
            }
            if (!(q instanceof ExternalQueueImpl) || v.estimatedCommandNanos() == 0 || v.estimatedCommandNanos() >= minCommandNanos) {
                return true;
            }
        }
        return false;
    }

    /**
     * Space among best-effort processes, after each decision: on each device the processes whose
     * queues can be narrowed and have work split what they may use in equal parts, one each, in
     * the order of their pids (two of them on the whole device under MPS: one's long kernels
     * starved the other's training to 0.12 of native sharing on the H200). A process without work
     * keeps the part it had until it has work again (its arrival brings a decision).
     */
    @Override
    public long decided(List<QueueView> views, Map<Long, ScheduledQueue> byHandle) {
        if (narrowable.get() == 0) {
            space.noneNarrowable();
            return Long.MAX_VALUE; // the usual node: no process to narrow, nothing to look at
        }
        return space.decided(views, byHandle);
    }

    /**
     * Off the decision path (the scheduler's loop thread): whether a process with work whose
     * counters have stood still was found stopped, or back, since the last look
     * ({@link ExternalQueueImpl#sweepStopped}); then the scheduler decides again. Without it the
     * decision made before a stop would stand for as long as nothing else happens.
     */
    @Override
    public boolean sweepStopped(long now) {
        boolean changed = false;
        boolean found = false;
        for (NodeQueue q : queues.values()) {
            if (!(q instanceof ExternalQueueImpl e)) {
                continue;
            }
            boolean moved = e.sweepStopped(now);
            found |= e.stoppedLately(now);
            if (moved) {
                // asleep (DormantQueues: held and seen idle for a second while stopped), it wakes
                // now: back from a stop in a wait for launches it had announced before it, its
                // process sends no event, and the sleepers' own sweep (once a second) let a GEMM
                // process continued every 3 s wait 0.75-0.82 s each time (0.49 of native sharing
                // beside a graph, against 0.91 without stops; H200, session 57)
                scheduler.signalLoop(e);
                changed = true;
            }
        }
        stoppedFound = found;
        return changed;
    }

    /** Whether the latest sweep found a queue's process stopped, lately ({@link #lookingForReturns}). */
    private volatile boolean stoppedFound;

    @Override
    public boolean lookingForReturns() {
        return stoppedFound;
    }

    /**
     * Where best-effort processes run beside each other ({@link BestEffortSpace}). Its settings,
     * passed on below, are documented there; {@code RuntimeComponent} sets them from
     * {@code dev.xq.scheduler}.
     */
    private final BestEffortSpace space;

    public void bestEffortOneFrame(boolean on) {
        space.bestEffortOneFrame(on);
    }

    public boolean bestEffortOneFrame() {
        return space.bestEffortOneFrame();
    }

    public void bestEffortDeviceFrame(boolean on) {
        space.bestEffortDeviceFrame(on);
    }

    public boolean bestEffortDeviceFrame() {
        return space.bestEffortDeviceFrame();
    }

    public void offTurnAlwaysHeld(boolean on) {
        space.offTurnAlwaysHeld(on);
    }

    public boolean offTurnAlwaysHeld() {
        return space.offTurnAlwaysHeld();
    }

    public void bestEffortBalance(boolean on) {
        space.bestEffortBalance(on);
    }

    public boolean bestEffortBalance() {
        return space.bestEffortBalance();
    }

    public void bestEffortBalanceMemory(boolean on) {
        space.bestEffortBalanceMemory(on);
    }

    public boolean bestEffortBalanceMemory() {
        return space.bestEffortBalanceMemory();
    }

    public void bestEffortBalanceQuick(boolean on) {
        space.bestEffortBalanceQuick(on);
    }

    public boolean bestEffortBalanceQuick() {
        return space.bestEffortBalanceQuick();
    }

    public void bestEffortBalanceEarly(boolean on) {
        space.bestEffortBalanceEarly(on);
    }

    public boolean bestEffortBalanceEarly() {
        return space.bestEffortBalanceEarly();
    }

    public void bestEffortBalanceCarry(boolean on) {
        space.bestEffortBalanceCarry(on);
    }

    public boolean bestEffortBalanceCarry() {
        return space.bestEffortBalanceCarry();
    }

    public void bestEffortBalanceSliceMicros(long micros) {
        space.bestEffortBalanceSliceMicros(micros);
    }

    public long bestEffortBalanceSliceMicros() {
        return space.bestEffortBalanceSliceMicros();
    }

    public void bestEffortBalanceRegion(boolean on) {
        space.bestEffortBalanceRegion(on);
    }

    public boolean bestEffortBalanceRegion() {
        return space.bestEffortBalanceRegion();
    }

    public void bestEffortBalanceRegionShort(boolean on) {
        space.bestEffortBalanceRegionShort(on);
    }

    public boolean bestEffortBalanceRegionShort() {
        return space.bestEffortBalanceRegionShort();
    }

    public void bestEffortBalanceLongCommands(boolean on) {
        space.bestEffortBalanceLongCommands(on);
    }

    public boolean bestEffortBalanceLongCommands() {
        return space.bestEffortBalanceLongCommands();
    }

    public void bestEffortWeights(boolean on) {
        space.bestEffortWeights(on);
    }

    public boolean bestEffortWeights() {
        return space.bestEffortWeights();
    }

    public void bestEffortWidths(boolean on) {
        space.bestEffortWidths(on);
    }

    public boolean bestEffortWidths() {
        return space.bestEffortWidths();
    }

    public void bestEffortShares(String spec) {
        space.bestEffortShares(spec);
    }

    public String bestEffortShares() {
        return space.bestEffortShares();
    }

    public void bestEffortTurnsWithoutGap(boolean on) {
        space.bestEffortTurnsWithoutGap(on);
    }

    public boolean bestEffortTurnsWithoutGap() {
        return space.bestEffortTurnsWithoutGap();
    }

    public void bestEffortParts(boolean on) {
        space.bestEffortParts(on);
    }

    public boolean bestEffortParts() {
        return space.bestEffortParts();
    }

    /** The measured cut's spells and periods (tests: shorter ones for a busy machine). */
    void balanceTimes(BestEffortBalance.Times times) {
        space.balanceTimes = times;
    }

    /** @return the measured cut of {@code device}, null when none was ever weighed there (tests) */
    BestEffortBalance balance(String device) {
        return space.balance(device);
    }

    /**
     * Off its turn, a queue is held whatever the policy decides during a spell on its device, with
     * best-effort company only, and, with {@code offTurnAlwaysHeld}, beside a preferred tenant too
     * ({@link BestEffortSpace#offTurnHeldOn}).
     */
    @Override
    public boolean offTurnHolds(NodeQueue queue, long decisionNanos) {
        return space.offTurnHeldOn(queue.device()) || !preferredOpen(queue, decisionNanos);
    }
    /** Open external queues whose process could be narrowed when they opened. */
    private final java.util.concurrent.atomic.AtomicInteger narrowable = new java.util.concurrent.atomic.AtomicInteger();


    @Override
    public int spaceFor(NodeQueue queue, boolean held) {
        QueueView me = queue.view();
        if (me == null) {
            return held ? SpaceRule.HOLD : 0;
        }
        int mine = priority(me.hints());
        int total = queue instanceof ExternalQueueImpl e ? e.deviceSms() : 0;
        int widest = -1;
        int widestBusy = -1;
        int widestShared = -1; // of the preferred queues not in a device context of their own
        boolean unknown = false;
        boolean unknownBusy = false;
        for (NodeQueue q : queues.values()) {
            if (q == queue || !q.device().equals(me.device())) {
                continue;
            }
            QueueView v = q.view();
            if (v == null || priority(v.hints()) <= mine) {
                continue;
            }
            boolean busy = v.runnable() || v.inFlight() > 0;
            if (q instanceof ExternalQueueImpl e) {
                int w = e.widthSms();
                int stretch = e.stretchWidthSms();
                widest = Math.max(widest, w);
                // held behind the width of its current stretch of work, reserved for its widest
                widestBusy = busy ? Math.max(widestBusy, stretch > 0 ? Math.min(w, stretch) : w) : widestBusy;
                widestShared = e.ownContext() ? widestShared : Math.max(widestShared, w);
                total = Math.max(total, e.deviceSms());
            } else {
                widest = Math.max(widest, 0);
                unknown = true;
                unknownBusy |= busy;
            }
        }
        int half = total > 0 ? total / 2 : 64;
        if (unknown) {
            widest = Math.max(widest, half); // the node's own queue: its width is not known
            widestShared = Math.max(widestShared, half);
        }
        if (unknownBusy) {
            widestBusy = Math.max(widestBusy, half);
        }
        return SpaceRule.leave(total, widest, widestBusy, widestShared, me.estimatedCommandNanos(), held,
                SpaceRule.DEFAULT_HOLD_BEHIND_WIDE);
    }

    @Override
    public int rankedLeave(NodeQueue queue) {
        QueueView me = queue.view();
        if (me == null || !(queue instanceof ExternalQueueImpl mine)) {
            return 0;
        }
        int p = priority(me.hints());
        int total = mine.deviceSms();
        for (NodeQueue q : queues.values()) {
            if (q != queue && q.device().equals(me.device()) && q instanceof ExternalQueueImpl e && !e.ownContext()) {
                total = Math.max(total, e.deviceSms());
            }
        }
        int half = (total > 0 ? total : 128) / 2;
        if (mine.widthSms() <= half) {
            return 0;
        }
        for (NodeQueue q : queues.values()) {
            if (q == queue || !q.device().equals(me.device()) || !(q instanceof ExternalQueueImpl e) || e.ownContext()) {
                continue;
            }
            QueueView v = q.view();
            if (v != null && priority(v.hints()) > p && (v.runnable() || v.inFlight() > 0) && e.widthSms() > half) {
                return SpaceRule.cap(total);
            }
        }
        return 0;
    }


    private final Object wideLock = new Object();
    /** guarded by wideLock: the decision {@link #wideTop} was found for */
    private long wideAt;
    private boolean wideKnown;
    /** guarded by wideLock: per device, the highest priority of an open queue wider than half of it */
    private Map<String, Integer> wideTop = Map.of();
    /** guarded by wideLock: per device, the highest priority of any open queue */
    private Map<String, Integer> anyTop = Map.of();

    /**
     * One pass over the open queues per decision (a decision places every narrowed queue, and a
     * flood of queues must not make that quadratic), then a look-up per queue.
     */
    @Override
    public boolean widePreferredOpen(NodeQueue queue, long decisionNanos) {
        QueueView me = queue.view();
        if (me == null) {
            return true;
        }
        Integer top;
        synchronized (wideLock) {
            tops(decisionNanos);
            top = wideTop.get(me.device());
        }
        return top != null && top > priority(me.hints());
    }

    /** Caller holds wideLock: {@link #wideTop} and {@link #anyTop} for this decision. */
    private void tops(long decisionNanos) {
        if (wideKnown && wideAt == decisionNanos) {
            return;
        }
        Map<String, Integer> m = new HashMap<>();
        Map<String, Integer> all = new HashMap<>();
        for (NodeQueue q : queues.values()) {
            QueueView v = q.view();
            if (v == null) {
                continue;
            }
            boolean wide = true; // the node's own queue: its width is not known
            if (q instanceof ExternalQueueImpl e) {
                int total = e.deviceSms() > 0 ? e.deviceSms() : 128;
                wide = e.widthSms() > total / 2;
            }
            int p = priority(v.hints());
            if (wide) {
                m.merge(q.device(), p, Math::max);
            }
            all.merge(q.device(), p, Math::max);
        }
        wideTop = m;
        anyTop = all;
        wideAt = decisionNanos;
        wideKnown = true;
    }

    @Override
    public boolean preferredOpen(NodeQueue queue, long decisionNanos) {
        QueueView me = queue.view();
        if (me == null) {
            return true;
        }
        Integer top;
        synchronized (wideLock) {
            tops(decisionNanos);
            top = anyTop.get(me.device());
        }
        return top != null && top > priority(me.hints());
    }

    /**
     * Whether a best-effort process with a part of the device and no queue preferred over it open
     * there (busy or not: best-effort company only) launches without limits (docs/processes.md,
     * "Best-effort company only"). Its company runs on other multiprocessors, or is held for its
     * turn; nobody waits for what it has in flight, and a latency-critical process that starts
     * later takes seconds to make its context, long before its first request, and its queue's
     * opening brings the limits back at that decision.
     */
    private volatile boolean bestEffortUnbounded = true;

    /** Switches {@link #bestEffortUnbounded} on or off; the queues' limits follow at their next decision. */
    public void bestEffortUnbounded(boolean on) {
        bestEffortUnbounded = on;
    }

    @Override
    public boolean bestEffortUnbounded() {
        return bestEffortUnbounded;
    }

    @Override
    public boolean spaceMatters() {
        return narrowable.get() > 0;
    }

    static int priority(List<Hint> hints) {
        for (Hint h : hints) {
            if (h instanceof Hint.Priority p) {
                return p.value();
            }
        }
        return 0;
    }

    // ------------------------------------------------------------------ ExternalQueues

    @Override
    public ExternalQueue open(ExternalQueueSpec spec, ExternalQueueControl control) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(control, "control");
        QueueConfig cfg = spec.config() == null ? defaults : spec.config();
        long handle = handles.incrementAndGet();
        ExternalQueueImpl q = new ExternalQueueImpl(handle, spec, cfg, control, this, log);
        if (q.openedNarrowable()) {
            narrowable.incrementAndGet();
        }
        if (q.bornUncounted()) {
            // a stream just registered, never launched on: no one's company until its first work
            // (its owner's first event, its WAKE: firstWork()); counted at once, a user opening and closing 64 unused streams
            // ten times a second gave every other tenant of the device its configured limits for
            // a moment each time, and a victim's tail doubled (issue 41)
            contention.bornAsleep(q);
        }
        q.start();
        put(q);
        recomputeContention(q);
        // decided by the loop thread, which takes a burst of opens (a process registers its
        // streams in one go) or closes (its session ends) in one decision: decided inline, one by
        // one, each went over every open queue (issue 41: a user opening and closing 64 unused
        // streams ten times a second kept the node at 0.7 of a CPU beside 4,096 of its streams)
        scheduler.signalLoop();
        return q.ownerHandle();
    }

    @Override
    public List<XQueue> queues() {
        return List.copyOf(queues.values());
    }

    /** @return the node's own queues (commands submitted through the API), for tests and providers */
    public List<XQueueImpl> queueImpls() {
        List<XQueueImpl> l = new ArrayList<>();
        for (NodeQueue q : queues.values()) {
            if (q instanceof XQueueImpl x) {
                l.add(x);
            }
        }
        return l;
    }

    /** @return the queues that processes launch into */
    public List<ExternalQueueImpl> externalQueues() {
        List<ExternalQueueImpl> l = new ArrayList<>();
        for (NodeQueue q : queues.values()) {
            if (q instanceof ExternalQueueImpl x) {
                l.add(x);
            }
        }
        return l;
    }

    @Override
    public Optional<XQueue> find(long handle) {
        return Optional.ofNullable(queues.get(handle));
    }

    @Override
    public List<DeviceInfo> devices() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (NodeQueue q : queues.values()) {
            counts.merge(q.device(), 1, Integer::sum);
        }
        List<DeviceInfo> out = new ArrayList<>();
        for (Found f : deviceMap().values()) {
            PreemptionLevel level = f.device().maxLevel();
            for (NodeQueue q : queues.values()) {
                if (q.device().equals(f.device().id())) {
                    level = level.max(q.status().availableLevel());
                }
            }
            out.add(new DeviceInfo(f.device().id(), f.driver().platform(), f.device().name(), level, f.device().engines(),
                    f.device().memoryBytes(), counts.getOrDefault(f.device().id(), 0)));
        }
        return out;
    }

    @Override
    public List<DriverInfo> drivers() {
        List<DriverInfo> out = new ArrayList<>();
        for (XpuDriver d : drivers) {
            List<String> ids = new ArrayList<>();
            try {
                for (DeviceDescriptor dd : d.devices()) {
                    ids.add(dd.id());
                }
            } catch (RuntimeException e) {
                ids.clear();
            }
            out.add(new DriverInfo(d.platform(), "driver", safeStatus(d), ids));
        }
        for (PreemptionProvider p : providers) {
            String status;
            try {
                status = p.status();
            } catch (RuntimeException e) {
                status = "status failed: " + e;
            }
            out.add(new DriverInfo(p.name(), "provider", status, List.of()));
        }
        return out;
    }

    @Override
    public QueueConfig defaults() {
        return defaults;
    }

    public void defaults(QueueConfig config) {
        this.defaults = Objects.requireNonNull(config, "config");
    }

    // ------------------------------------------------------------------ SchedulerControl

    @Override
    public String selectedPolicy() {
        return scheduler.selected();
    }

    @Override
    public String activePolicy() {
        return scheduler.active();
    }

    @Override
    public void selectPolicy(String name) {
        scheduler.select(name, true);
        selectionSink.selected(name.trim());
    }

    @Override
    public List<PolicyInfo> policies() {
        return scheduler.policies();
    }

    @Override
    public SchedulerStats stats() {
        return scheduler.stats();
    }

    @Override
    public DecisionHistogram decisionHistogram() {
        return scheduler.decisionHistogram();
    }

    @Override
    public void resetStats() {
        scheduler.resetStats();
    }

    // ------------------------------------------------------------------ Scheduler.Source

    @Override
    public List<NodeQueue> schedulerQueues() {
        long v = queuesVersion.get(); // read before the copy: a queue put after it makes the next call copy again
        QueueList l = queueList;
        if (l != null && l.version() == v) {
            return l.queues();
        }
        List<NodeQueue> copy = List.copyOf(queues.values());
        queueList = new QueueList(v, copy);
        return copy;
    }

    @Override
    public long queuesVersion() {
        return queuesVersion.get();
    }

    @Override
    public Scheduler.QueueChanges queueChangesSince(long version) {
        synchronized (changes) {
            long now = queuesVersion.get();
            if (version == now) {
                return new Scheduler.QueueChanges(now, List.of(), List.of());
            }
            // the log holds every change after (first version - 1); a version before that, or one
            // not given by this node, is not covered: the whole list then
            if (version > now || changes.isEmpty() || changes.peekFirst().version() > version + 1) {
                return null;
            }
            // from the newest back to the first after version: the cost is what changed since
            int n = (int) Math.min(changes.size(), now - version);
            NodeQueue[] qs = new NodeQueue[n];
            Boolean[] opened = new Boolean[n];
            int i = n;
            for (java.util.Iterator<QueueChange> it = changes.descendingIterator(); it.hasNext() && i > 0;) {
                QueueChange c = it.next();
                if (c.version() <= version) {
                    break;
                }
                i--;
                qs[i] = c.queue();
                opened[i] = c.opened();
            }
            List<NodeQueue> ql = java.util.Arrays.asList(qs).subList(i, n);
            return new Scheduler.QueueChanges(now, ql, java.util.Arrays.asList(opened).subList(i, n));
        }
    }

    /** Puts a queue opened into the list, with its change logged (under {@link #changes}). */
    private void put(NodeQueue q) {
        synchronized (changes) {
            queues.put(q.handle(), q);
            logChange(queuesVersion.incrementAndGet(), q, true); // after the put (schedulerQueues)
        }
    }

    private void logChange(long version, NodeQueue q, boolean opened) {
        changes.addLast(new QueueChange(version, q, opened));
        while (changes.size() > CHANGES_KEPT) {
            changes.removeFirst();
        }
    }

    /** An open or a close of a queue, at the list version it made. */
    private record QueueChange(long version, NodeQueue queue, boolean opened) {
    }

    /** The scheduler's list of the queues, kept between opens and closes (copying thousands every decision showed in its profile). */
    private record QueueList(long version, List<NodeQueue> queues) {
    }

    /**
     * The devices as policies see them. Asking every driver for its descriptors is not free
     * (25 us per decision here; 0.35 to 1.2 ms on the GPU host, where it ran in the hot-swap
     * scenario's longest decisions), so decisions use a kept list: built on first use after a
     * driver came or went, and otherwise renewed off the decision path by
     * {@link #renewDeviceViews()}, which the scheduler's loop thread calls every 50 ms.
     */
    @Override
    public List<DeviceView> deviceViews() {
        List<DeviceView> cached = deviceViews;
        return cached != null ? cached : refreshDeviceViews();
    }

    /** Asks the drivers again and keeps the answer. */
    public List<DeviceView> refreshDeviceViews() {
        List<DeviceView> out = new ArrayList<>();
        for (Found f : deviceMap().values()) {
            out.add(new DeviceView(f.device().id(), f.driver().platform(), f.device().engines(), f.device().memoryBytes()));
        }
        List<DeviceView> fresh = List.copyOf(out);
        deviceViews = fresh;
        return fresh;
    }

    @Override
    public boolean renewDeviceViews() {
        List<DeviceView> before = deviceViews;
        return !refreshDeviceViews().equals(before);
    }

    private volatile List<DeviceView> deviceViews;
}
