package dev.xq.runtime.scheduler;

import dev.xq.api.SchedulerControl;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.runtime.jfr.Tracing;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.scheduler.PolicyRegistry.Registered;
import dev.xq.runtime.scheduler.Watchdog.InProgress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The node's scheduler. Events (a queue became ready or idle, a hint changed, a policy or
 * device came or went, a timer) mark the scheduler dirty; a decision then builds one view of
 * every queue, lets the active policy decide, and applies the decision. Many events in a burst
 * cost one decision, and only one decision runs at a time.
 *
 * <p>Where a decision runs: when the deciding policy is registered as bounded
 * ({@link Policy#BOUNDED_PROPERTY}, and the built-in one) and inline decisions are on, the
 * thread that posted the event decides right away, unless another thread is deciding, which
 * then decides once more before it lets go ("single decider", the same pattern as the queues'
 * single pumper). That saves handing the event to another thread: an OS wake-up, whose tail on
 * a busy or virtualised host is milliseconds. In a storm of events (the scheduler idle for less
 * than 50 us between decisions, on average) the posting threads step aside and the loop thread
 * folds the storm into few decisions. Every other policy decides on the scheduler's own loop
 * thread, which also serves the timers policies ask for, renews the device list and looks every
 * 50 ms whether an event is waiting with no one deciding it (a safety net under the hand-off
 * protocol).
 *
 * <p>The watchdog: a decision that throws, or that runs past the deadline, sets its policy
 * aside and the built-in policy takes over, until the loop thread retries the policy after a
 * back-off (1 s, doubled at each trip in a row up to 60 s: {@link RetryBackoff}), or it is
 * selected again or re-registered. A policy stuck in a loop cannot be stopped in Java: the
 * decider it holds is abandoned (the loop thread is interrupted and replaced; a posting thread is
 * left alone, never interrupted, since it belongs to an application or a driver) and the next
 * decisions go on without it; the stuck thread's decision, should it ever return, is thrown away
 * (and the policy is not retried while that thread is still inside it).
 *
 * <p>Why this class is over 400 lines: posting an event, the single-decider drain, the loop
 * thread, one decision and the watchdog's taking a decision away share four pieces of state
 * (the dirty flag, the busy token, the loop generation and the record of the decision under
 * way), and who owns a decision's end is decided by races between them; that is easier to check
 * in one file. What does not share that state lives apart: {@link PolicySelection} (which policy
 * decides), {@link Watchdog} (when a decision has overrun), {@link TrialDecisions},
 * {@link DecisionStats}, {@link GuardKeeper} and {@link ActionRecorder} (applying a decision).
 */
public final class Scheduler {

    /** Default decision deadline. */
    public static final long DEFAULT_DEADLINE_NANOS = 10_000_000L;

    /** Where the loop gets queues and devices from. */
    public interface Source {
        List<? extends ScheduledQueue> schedulerQueues();

        /**
         * The version of the queue list, read before {@link #schedulerQueues()}: every change
         * the list reflects has a version at or below it. -1 (the default): the source keeps no
         * versions, and every decision goes over the whole list.
         */
        default long queuesVersion() {
            return -1;
        }

        /**
         * The queues opened and closed after {@code version}, in order, each once per change
         * (applying one that the list already reflects changes nothing): what lets a decision
         * beside thousands of sleeping queues cost what changed, not what is open. null (the
         * default): not known (too old), read the whole list.
         */
        default QueueChanges queueChangesSince(long version) {
            return null;
        }

        /** The devices, from a kept list: must be cheap, it runs in every decision. */
        List<DeviceView> deviceViews();

        /**
         * Asks the drivers for their devices again, off the decision path (the loop thread, every
         * 50 ms). @return whether the list changed (then the scheduler decides again)
         */
        default boolean renewDeviceViews() {
            return false;
        }

        /**
         * Looks, off the decision path (the loop thread, every {@value Scheduler#STOPPED_SWEEP_NANOS}
         * ns), at the processes behind queues that have work but whose counters stand still: a
         * stopped one's are frozen with it. @return whether one was found stopped or back (then the
         * scheduler decides again)
         */
        default boolean sweepStopped(long now) {
            return false;
        }

        /**
         * @return whether the last {@link #sweepStopped} found a process stopped: the loop then
         *     looks every {@value Scheduler#STOPPED_BACK_SWEEP_NANOS} ns, for its return
         */
        default boolean lookingForReturns() {
            return false;
        }

        /**
         * @return whether any open queue may have a place in space ({@link ScheduledQueue#space()}):
         *     only then are views given their spaces (cheap, called every decision)
         */
        default boolean spaceMatters() {
            return false;
        }

        /**
         * The queues on top of their device changed ({@link TopQueues}): called by the deciding
         * thread after the decision is applied, rarely (a queue opens, closes or yields for the
         * first time). Must not block: apply what it implies elsewhere.
         */
        default void topQueuesChanged(Set<Long> top) {
        }

        /**
         * A decision was applied: {@code views} is what the policy saw, {@code byHandle} the queues.
         * Called by the deciding thread after every decision; must be cheap and must not block.
         *
         * @return when (System.nanoTime) to decide again at the latest, events or not; Long.MAX_VALUE: no such time
         */
        default long decided(List<QueueView> views, Map<Long, ScheduledQueue> byHandle) {
            return Long.MAX_VALUE;
        }

        /**
         * {@code q} fell asleep ({@link DormantQueues}): held, idle, and out of the decisions until
         * it wakes ({@link #queueWoke}). Called by the deciding thread after the decision was
         * applied: must not block, nor launch anything (the deciding thread may hold a queue's
         * lock); apply what it implies elsewhere. What it throws is ignored. Default: nothing.
         */
        default void queueSlept(ScheduledQueue q) {
        }

        /**
         * {@code q} wakes ({@link DormantQueues}): it is in the decision about to be made, which may
         * let it go. Called by the deciding thread before the policy runs and before any action of
         * that decision is applied, so what must hold before the queue can run again (another
         * queue's limits tightened) is done by the time this returns. The same thread may hold a
         * queue's lock: it must not widen anyone's limits here (a widening launches pending
         * commands). What it throws is ignored. Default: nothing.
         */
        default void queueWoke(ScheduledQueue q) {
        }
    }

    /**
     * Opens and closes of queues after a version ({@link Source#queueChangesSince}).
     *
     * @param version the version they bring the list to
     * @param queues the queues changed, in order
     * @param opened for each, whether it was opened (else closed)
     */
    public record QueueChanges(long version, List<? extends ScheduledQueue> queues, List<Boolean> opened) {
    }

    private final Source source;
    private final RuntimeLog log;
    private final PolicySelection selection;
    private final Object monitor = new Object();
    private final AtomicBoolean dirty = new AtomicBoolean();
    private final AtomicLong firstEventNanos = new AtomicLong();

    private volatile String active = SchedulerControl.NATIVE;
    private volatile long deadlineNanos = DEFAULT_DEADLINE_NANOS;
    private volatile boolean running;
    /** Held by the one thread deciding; replaced (not released) when the watchdog abandons a stuck decider. */
    private volatile AtomicBoolean busy = new AtomicBoolean();
    private volatile Thread loop;
    private volatile Thread watchdog;
    // written under monitor; read freely
    private volatile int generation;
    /** The decision under way, for the watchdog; whoever swaps it out (decider or watchdog) owns its end. */
    private final AtomicReference<InProgress> inProgress = new AtomicReference<>();

    private final DecisionStats stats = new DecisionStats();
    /** The node's reaction to arrivals that hold others, traced with -Dxq.trace.wideBeats=true (else not kept). */
    private final ArrivalReactions reactions = new ArrivalReactions(Boolean.getBoolean("xq.trace.wideBeats"));
    private final GuardKeeper guards = new GuardKeeper();
    private final TopQueues tops = new TopQueues(); // the deciding thread's
    /** The sleepers; tells {@link #source} of each falling asleep and waking. */
    private final DormantQueues dormant;
    private volatile Set<Long> top = Set.of();
    /**
     * A posting thread decides only while the scheduler's idle time between decisions averages at
     * least this much (a moving average over about eight decisions). In a storm of events (a
     * thousand queues each going ready and idle back to back: the scale scenario) deciding on
     * every posting thread makes one full decision per event (46 times slower in ScaleTest), while
     * the loop thread folds the storm into few decisions, as before. An average, not the last
     * gap: a queue that goes idle and at once ready again (a tenant between two tasks) posts two
     * events microseconds apart, and the second must not pay a wake-up.
     */
    private static final long STORM_IDLE_GAP_NANOS = 50_000L;
    private volatile long lastDecisionEndNanos;
    /** Moving average of the idle time between decisions; written by the one deciding thread. */
    private volatile long idleGapAvgNanos = 1_000_000_000L;
    /** The earliest time a policy asked to be called again. */
    private volatile long wakeAtNanos = Long.MAX_VALUE;
    /** The end of the linger in force ({@link ArrivalGuards}), Long.MAX_VALUE for none: the loop spins for it when near. */
    private volatile long lingerWakeNanos = Long.MAX_VALUE;
    /**
     * How near a linger's end the loop thread spins rather than parks: a parked thread's timer
     * came milliseconds late on the GPU machine's microVMs, and the held queue would idle that
     * long. Only on hosts with 8 or more hardware threads (as the CUDA completion thread's spin).
     */
    private static final long LINGER_SPIN_NANOS = Runtime.getRuntime().availableProcessors() >= 8 ? 1_000_000L : 0;
    /** Until when the loop thread is parked for a timer; Long.MIN_VALUE while it is not parked. */
    private volatile long loopParkedUntil = Long.MIN_VALUE;

    public Scheduler(Source source, RuntimeLog log) {
        this.source = source;
        this.log = log;
        this.dormant = new DormantQueues(source);
        this.selection = new PolicySelection(source, log, () -> deadlineNanos);
        if (log != null) {
            guards.notes(log::warn);
        }
    }

    // ------------------------------------------------------------------ lifecycle

    public void start() {
        synchronized (monitor) {
            if (running) {
                return;
            }
            running = true;
            // JFR's event classes, then the decision's bookkeeping (guards, queues on top, reactions),
            // before any tenant needs them (a decision that first ran a path of the guards was
            // applied 6 ms late on the H200), the trace's printer and the JVM's virtual threads, first started by a decision that changes the queues on
            // top (the on-top rule's thread): 21-44 ms on the deciding thread at a node's first hold
            // on the build VM (xq.trace.slowDecisions)
            Thread.ofPlatform().daemon().name("xq-warmup").start(() -> {
                warmVirtualThreads();
                TraceLines.warm();
                Tracing.warmUp();
                DecisionRehearsal.once(log);
            });
            startLoop(generation);
            watchdog = new Watchdog(inProgress, () -> deadlineNanos, () -> running, this::takeAway).start();
        }
        signal();
    }

    /** Starts and joins one virtual thread: what the JVM sets up for the first is not a decision's to pay. */
    static void warmVirtualThreads() {
        try {
            Thread.ofVirtual().name("xq-warmup-virtual").start(Thread::onSpinWait).join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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

    /**
     * Posts an event: marks the scheduler dirty and either decides on this thread (a bounded
     * policy, see the class comment) or wakes the loop thread. Safe from any thread, including
     * driver callbacks, as long as the caller holds no lock of the runtime but a queue's own
     * control lock (HAL package comment: callbacks come with no driver lock held).
     */
    public void signal() {
        firstEventNanos.compareAndSet(0, System.nanoTime());
        if (dirty.compareAndSet(false, true)) {
            if (selection.inlineNow() && running && idleGapAvgNanos >= STORM_IDLE_GAP_NANOS) {
                if (drain(-1)) {
                    stats.decidedInline();
                }
                return;
            }
            Thread t = loop;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /**
     * Decides while the scheduler is dirty and no other thread is deciding. A thread that finds
     * another one deciding leaves: that one re-checks {@code dirty} after letting go.
     *
     * @param loopGen the loop thread's generation; -1 on a posting thread (decides for the current one)
     * @return whether this thread made at least one decision
     */
    private boolean drain(int loopGen) {
        boolean decided = false;
        while (dirty.get() && running) {
            AtomicBoolean b = busy;
            if (!b.compareAndSet(false, true)) {
                return decided;
            }
            int gen;
            try {
                gen = loopGen < 0 ? generation : loopGen;
                if (!dirty.getAndSet(false)) {
                    continue;
                }
                decided = true;
                try {
                    if (!decide(gen, loopGen < 0)) {
                        return decided; // handed to the loop thread
                    }
                } catch (RuntimeException | Error e) {
                    // No event may be lost to a failing decision; the policy's own throws are handled in decide.
                    log.error("scheduler decision failed", e);
                }
            } finally {
                b.set(false);
            }
            if (gen != generation) {
                return decided; // the watchdog abandoned this decider; the others go on
            }
        }
        return decided;
    }

    /**
     * Posts an event about one queue (work came, a hint, its owner's suspension): as
     * {@link #signal()}, and a queue asleep ({@link DormantQueues}) is looked at again.
     */
    public void signal(ScheduledQueue queue) {
        dormant.touch(queue);
        signal();
    }

    /** As {@link #signalLoop()}, for an event about one queue (see {@link #signal(ScheduledQueue)}). */
    public void signalLoop(ScheduledQueue queue) {
        dormant.touch(queue);
        signalLoop();
    }

    /** @return how many queues the last decision left out, held and idle (see {@link DormantQueues}) */
    public int dormantQueues() {
        return dormant.sleeping();
    }

    /** Whether a bounded policy decides on the thread that posts an event (default on). */
    public void inlineDecisions(boolean on) {
        selection.inlineEnabled(on);
        signal();
    }

    public boolean inlineDecisions() {
        return selection.inlineEnabled();
    }

    /**
     * Sets the bundles (symbolic names; {@code *}: all) whose policies registered as bounded may
     * decide on a posting thread; the others decide on the scheduler's thread whatever they declare.
     * @throws IllegalArgumentException for a name that is not a bundle symbolic name, naming it
     */
    public void inlinePolicyBundles(java.util.Collection<String> symbolicNames) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (String n : symbolicNames) {
            String t = n == null ? "" : n.trim();
            if (!t.equals("*") && !t.matches("[A-Za-z0-9_\\-]+(\\.[A-Za-z0-9_\\-]+)*")) {
                throw new IllegalArgumentException("inline policy bundle '" + n + "' is not a bundle symbolic name"
                        + " (letters, digits, '_', '-', separated by '.') nor '*' (every bundle)");
            }
            names.add(t);
        }
        selection.inlineBundles(names);
        signal();
    }

    /** @return the bundles whose bounded policies may decide on a posting thread */
    public java.util.Set<String> inlinePolicyBundles() {
        return selection.inlineBundles();
    }

    /** How many decisions ran on a posting thread rather than the loop thread (tests and tools). */
    public long inlineDecisionCount() {
        return stats.inlineCount();
    }

    // ------------------------------------------------------------------ policies (PolicySelection)

    public void register(String name, Policy policy, String bundle, long id) {
        register(name, policy, bundle, id, false);
    }

    /**
     * Registers a policy after a trial decision; another bundle's policy of a taken name is refused.
     * @param bounded whether the policy declared {@link Policy#BOUNDED_PROPERTY}: its decisions may
     *        run on the thread that posts an event
     */
    public void register(String name, Policy policy, String bundle, long id, boolean bounded) {
        if (selection.register(name, policy, bundle, id, bounded)) {
            signal();
        }
    }

    public void unregister(long id) {
        if (selection.unregister(id)) {
            signal();
        }
    }

    /**
     * Selects a policy by name; takes effect at the next decision (which this call triggers).
     * @param strict whether an unregistered name is refused (shell, API) or accepted and waited for (configuration)
     */
    public void select(String name, boolean strict) {
        selection.select(name, strict);
        signalLoop();
    }

    /**
     * Marks the scheduler dirty and leaves the decision to the loop thread, never deciding on this
     * one: {@link #select} is called from the shell's and Config Admin's threads, which must not
     * be taken hostage by a policy that blocks in a real decision after passing its trials (the
     * watchdog sets it aside, but cannot pull a thread out of it; issue 18 #2). Also for an event
     * whose decision need not come before its poster goes on (a queue that nothing on its device
     * contests became ready: {@code XqCore.arrivedUnopposed}). Safe from any thread.
     */
    public void signalLoop() {
        firstEventNanos.compareAndSet(0, System.nanoTime());
        dirty.set(true);
        Thread t = loop;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    public String selected() {
        return selection.selected();
    }

    public String active() {
        return active;
    }

    public List<String> names() {
        return selection.names();
    }

    public List<SchedulerControl.PolicyInfo> policies() {
        return selection.infos(active);
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
        return stats.snapshot();
    }

    public SchedulerControl.DecisionHistogram decisionHistogram() {
        return stats.histogram();
    }

    /** Forgets the decision-time history and the longest gap (a scenario's measuring window). */
    public void resetStats() {
        stats.reset();
    }

    // ------------------------------------------------------------------ the loop

    /** How often the loop thread asks the drivers for their devices again. */
    private static final long DEVICE_RENEWAL_NANOS = 50_000_000L;
    /** How often the loop looks for stopped processes behind queues with work ({@link Source#sweepStopped}). */
    static final long STOPPED_SWEEP_NANOS = 50_000_000L;
    /** How often the loop looks while a process is found stopped ({@link Source#lookingForReturns}). */
    static final long STOPPED_BACK_SWEEP_NANOS = 5_000_000L;
    /** The loop thread's: when it last looked. */
    private long stoppedSweptNanos;
    private volatile long devicesRenewedNanos; // written by the loop thread

    private void run(int gen) {
        while (true) {
            synchronized (monitor) {
                if (!running || gen != generation) {
                    return;
                }
            }
            long wake = wakeAtNanos;
            long now = System.nanoTime();
            if (now - devicesRenewedNanos >= DEVICE_RENEWAL_NANOS) {
                // Off the decision path, on this thread (never the watchdog's: a driver that hangs
                // here must not take the watchdog with it).
                devicesRenewedNanos = now;
                try {
                    if (source.renewDeviceViews() && !dirty.get()) {
                        firstEventNanos.compareAndSet(0, now); // a device came or went: decide again
                        dirty.set(true);
                    }
                } catch (RuntimeException e) {
                    log.error("renewing the device list failed", e);
                }
            }
            boolean returns = source.lookingForReturns();
            if (now - stoppedSweptNanos >= (returns ? STOPPED_BACK_SWEEP_NANOS : STOPPED_SWEEP_NANOS)) {
                stoppedSweptNanos = now;
                try {
                    if (source.sweepStopped(now) && !dirty.get()) {
                        firstEventNanos.compareAndSet(0, now); // a process stopped or back: decide again
                        dirty.set(true);
                    }
                } catch (RuntimeException e) {
                    log.error("looking for stopped processes failed", e);
                }
            }
            if (dormant.sweepDue(now) && dormant.sweep(now)) {
                // a sleeper with work whose event was missed (DormantQueues): the next decision sees it
                firstEventNanos.compareAndSet(0, now);
                dirty.set(true);
            }
            if (selection.retryDue()) {
                // a policy set aside comes back: its first decision again is this thread's
                firstEventNanos.compareAndSet(0, now);
                dirty.set(true);
            }
            if (wake <= now && !dirty.get()) {
                firstEventNanos.compareAndSet(0, wake);
                wakeAtNanos = Long.MAX_VALUE; // the decision sets the next one
                dirty.set(true);
            }
            if (dirty.get() && drain(gen)) {
                continue;
            }
            // Dirty with another thread deciding is that thread's to handle. Publish the park
            // before looking at the timer once more: a decider that sets an earlier timer after
            // this either is seen here or sees the park and unparks.
            loopParkedUntil = wake;
            if (wakeAtNanos < wake || (dirty.get() && !busy.get())) {
                loopParkedUntil = Long.MIN_VALUE;
                continue;
            }
            long sleep = Math.min(DEVICE_RENEWAL_NANOS - (now - devicesRenewedNanos),
                    wake == Long.MAX_VALUE ? 1_000_000_000L : wake - now);
            if (returns) {
                sleep = Math.min(sleep, STOPPED_BACK_SWEEP_NANOS - (now - stoppedSweptNanos));
            }
            sleep = Math.max(1, sleep);
            if (wake != Long.MAX_VALUE && wake == lingerWakeNanos && wake - now <= LINGER_SPIN_NANOS) {
                // a linger ends soon: be running then (until another decision moves or ends it)
                while (System.nanoTime() - wake < 0 && lingerWakeNanos == wake && !dirty.get()) {
                    Thread.onSpinWait();
                }
            } else {
                LockSupport.parkNanos(this, sleep);
            }
            loopParkedUntil = Long.MIN_VALUE;
        }
    }

    /**
     * Makes one decision.
     *
     * @param posting whether this is a posting thread rather than the loop thread
     * @return false where the event was left to the loop thread instead
     */
    private boolean decide(int gen, boolean posting) {
        long enter = System.nanoTime();
        Registered policy = selection.current();
        if (posting && !selection.mayInline(policy)) {
            handOff(); // the selection changed since the event was posted: not a policy for this thread
            return false;
        }
        long eventNanos = firstEventNanos.getAndSet(0);
        String deciding = policy == null ? SchedulerControl.NATIVE : policy.name();
        dormant.begin(deciding);
        List<? extends ScheduledQueue> queues = dormant.awake(source, enter); // not those asleep: held, idle, their next work tells us
        List<QueueView> views = new ArrayList<>(Math.min(queues.size(), 64));
        Map<Long, ScheduledQueue> byHandle = new HashMap<>(Math.min(queues.size(), 64) * 2);
        boolean spaced = source.spaceMatters();
        Map<Long, QueueSpace> spaces = spaced ? new HashMap<>() : Map.of();
        for (ScheduledQueue q : queues) {
            QueueView v = q.view();
            if (v == null) {
                dormant.gone(q); // closed: out of the awake list (its close is news too, this is sooner)
            } else {
                views.add(v);
                byHandle.put(q.handle(), q);
                if (spaced) {
                    QueueSpace s = q.space();
                    if (s != QueueSpace.NONE) {
                        spaces.put(q.handle(), s);
                    }
                }
            }
        }
        long now = System.nanoTime();
        SchedulerView view = new SchedulerView(now, views, source.deviceViews(), spaces);
        String name = deciding;
        String was = active;
        if (!name.equals(was)) {
            stats.swapped();
            active = name;
        }
        ActionRecorder actions = new ActionRecorder(byHandle.keySet(), policy != null && policy.decidesSpace());
        // No lock from here to the end: the watchdog and this thread race for the record, and
        // whichever swaps it out owns the decision's end.
        InProgress mine = new InProgress(policy, now, ThreadClock.current(), Thread.currentThread().threadId(), new AtomicBoolean());
        inProgress.set(mine);
        if (gen != generation) {
            // an old loop thread, replaced: the event is the new deciders' to handle
            inProgress.compareAndSet(mine, null);
            if (eventNanos != 0) {
                firstEventNanos.compareAndSet(0, eventNanos);
            }
            handOff();
            return false;
        }
        long t0 = System.nanoTime();
        boolean recorded = true;
        try {
            if (policy == null) {
                NativePolicy.INSTANCE.schedule(view, actions);
            } else {
                policy.policy().schedule(view, actions);
            }
        } catch (Throwable t) {
            if (!inProgress.compareAndSet(mine, null)) {
                mine.left().set(true); // this thread has left the policy: it may be retried
                return true; // the watchdog took this decision away
            }
            recorded = false;
            if (policy == null) {
                throw t;
            }
            String retry = setAsideNow(policy, "threw " + t);
            log.error("policy '" + policy.name() + "' threw; set aside, '" + SchedulerControl.NATIVE + "' decides; " + retry, t);
            actions = new ActionRecorder(byHandle.keySet());
            NativePolicy.INSTANCE.schedule(view, actions);
            active = SchedulerControl.NATIVE;
            stats.swapped();
        }
        long took = System.nanoTime() - t0;
        if (recorded && !inProgress.compareAndSet(mine, null)) {
            mine.left().set(true); // this thread has left the policy: it may be retried
            return true; // the watchdog took this decision away: it was too late
        }
        if (gen != generation) {
            return true; // the watchdog took this decision away: it was too late
        }
        stats.decided(took);
        if (recorded && policy != null && policy.probation()) {
            selection.decidedCleanly(policy);
        }
        ActionRecorder decidedActions = actions;
        ArrivalGuards.Space placed = spaced && actions.narrows() ? new ArrivalGuards.Space() {
            @Override
            public int narrowed(long handle) {
                return decidedActions.narrowedLeave(handle);
            }

            @Override
            public QueueSpace space(long handle) {
                return spaces.getOrDefault(handle, QueueSpace.NONE);
            }

            @Override
            public int parts(long handle) {
                ScheduledQueue q = byHandle.get(handle);
                return q == null ? 1 : q.partCount();
            }

            @Override
            public double fraction(long handle) {
                ScheduledQueue q = byHandle.get(handle);
                return q == null ? 1 : q.partFraction();
            }

            @Override
            public boolean offTurn(long handle) {
                ScheduledQueue q = byHandle.get(handle);
                return q != null && q.offTurn();
            }

            @Override
            public void gap(long handle, long availNanos, long at) {
                ScheduledQueue q = byHandle.get(handle);
                if (q != null) {
                    q.fitGap(availNanos, at);
                }
            }

            @Override
            public boolean stopped(long handle) {
                ScheduledQueue q = byHandle.get(handle);
                return q != null && q.ownerStopped();
            }

            @Override
            public long[] lags(long handle) {
                ScheduledQueue q = byHandle.get(handle);
                return q == null ? new long[2] : q.lags();
            }

            @Override
            public boolean spaceOnly(long handle) {
                ScheduledQueue q = byHandle.get(handle);
                return q != null && q.spaceOnly();
            }

            @Override
            public void unnarrow(long handle, boolean hold) {
                decidedActions.unnarrow(handle, hold);
            }

            @Override
            public void renarrow(long handle, int leaveSms) {
                decidedActions.renarrow(handle, leaveSms);
            }
        } : spaced ? ArrivalGuards.Space.widths(h -> spaces.getOrDefault(h, QueueSpace.NONE), h -> {
            ScheduledQueue q = byHandle.get(h);
            return q != null && q.spaceOnly();
        }) : ArrivalGuards.Space.NONE;
        long tGuards = System.nanoTime();
        long lingerWake = guards.apply(name, now, views, actions.decided, byHandle, placed);
        long tApply = System.nanoTime();
        lingerWakeNanos = lingerWake;
        actions.wakeAt(lingerWake);
        // past a guard's lapse, decided again for the next one (parked to then, not spun: a lapse
        // is a late arrival, and the spin before a linger's end would come every period)
        actions.wakeAt(guards.lapseWake());
        int resumes = actions.applyResumes(byHandle, now);
        int suspends = actions.applySuspends(byHandle, now);
        long tApplied = System.nanoTime();
        reactions.decided(views, actions.decided, suspends, System.nanoTime(), (h, since) -> {
            ScheduledQueue q = byHandle.get(h);
            return q == null ? 0 : q.toldNanos(since);
        });
        guards.reactionNanos(reactions.tailNanos());
        long tReactions = System.nanoTime();
        guards.lift(); // after the holds: a queue held now must not see neither guard nor gate first
        dormant.end(now, views, byHandle);
        long tDormant = System.nanoTime();
        long sourceWake = source.decided(views, byHandle);
        long tSource = System.nanoTime();
        if (sourceWake != Long.MAX_VALUE) {
            actions.wakeAt(sourceWake);
        }
        wakeAtNanos = actions.wake;
        Set<Long> nowTop = tops.update(name, views, actions.decided);
        long tTops = System.nanoTime();
        if (nowTop != null) {
            top = nowTop;
            source.topQueuesChanged(nowTop);
        }
        Thread l = loop;
        if (actions.wake < loopParkedUntil && l != null && l != Thread.currentThread()) {
            LockSupport.unpark(l); // a timer earlier than the loop is parked for
        }
        long end = System.nanoTime();
        long idle = Math.min(1_000_000_000L, Math.max(0, enter - lastDecisionEndNanos));
        idleGapAvgNanos += (idle - idleGapAvgNanos) / 8;
        lastDecisionEndNanos = end;
        if (eventNanos != 0) {
            stats.gap(end - eventNanos);
        }
        if (!name.equals(was)) {
            // logged after the decision is applied: a log call is not free (1 ms seen at a swap)
            log.info("scheduling policy now deciding: '" + name + "' (was '" + was + "')");
        }
        Tracing.decision(name, views.size(), suspends, resumes, took, end - enter);
        if (TRACE_SLOW && end - enter >= SLOW_DECISION_NANOS && !views.isEmpty() && slowTraced < SLOW_DECISION_LINES) {
            slowTraced++;
            TraceLines.line("xq: slow decision: " + (end - enter) / 1000 + " us (views " + (now - enter) / 1000 + ", policy '" + name + "' " + took / 1000
                    + ", before the guards " + (tGuards - t0 - took) / 1000 + ", guards " + (tApply - tGuards) / 1000 + ", holds and lets-go "
                    + (tApplied - tApply) / 1000 + " (" + suspends + " held, " + resumes + " let go), reactions " + (tReactions - tApplied) / 1000
                    + ", guards lifted and sleepers " + (tDormant - tReactions) / 1000 + ", the source's " + (tSource - tDormant) / 1000 + ", top queues "
                    + (tTops - tSource) / 1000 + ", told " + (end - tTops) / 1000 + "), "
                    + views.size() + " queues, narrowing " + actions.narrows() + ", at " + end + " ns");
        }
        return true;
    }

    /**
     * {@code -Dxq.trace.slowDecisions=true}: a decision that took {@link #SLOW_DECISION_NANOS} or
     * more from its start to its end is printed with where its time went (at most
     * {@link #SLOW_DECISION_LINES} in a node's life): what the first decisions that take a path
     * pay, and anything else that makes one slow.
     */
    private static final boolean TRACE_SLOW = Boolean.getBoolean("xq.trace.slowDecisions");
    static final long SLOW_DECISION_NANOS = 1_000_000L;
    static final int SLOW_DECISION_LINES = 64;
    private int slowTraced; // deciding threads only: a count for the cap, a lost update harms nothing

    /**
     * Turns arrival guards on or off (see {@link ArrivalGuards}); off lifts the guards given at
     * the next decision.
     */
    public void arrivalGuards(boolean on) {
        guards.on(on);
        signal();
    }

    public boolean arrivalGuards() {
        return guards.on();
    }

    /**
     * Turns the wide beats on or off ({@link ArrivalGuards}: a queue the policy narrowed behind
     * queues wider than half the device that arrive on a beat is held while they work and runs on
     * the whole device, guarded, between their requests). Part of arrival guards.
     */
    public void wideBeats(boolean on) {
        guards.wideBeats(on);
        signal();
    }

    public boolean wideBeats() {
        return guards.wideBeats();
    }

    /**
     * Turns on or off (the default) the whole device for a best-effort queue whose long commands
     * fit the gaps between a wide tenant's requests only there, not beside a narrow tenant's
     * reserve: held while the narrow one is within a request, run whole between the wide one's
     * requests while it is not. Off, it is left narrowed and its kernels run through the wide
     * tenant's requests.
     */
    public void wholeBesideReserve(boolean on) {
        guards.wholeBesideReserve(on);
        signal();
    }

    /**
     * Sets the best-effort processes, by name, held in time while a narrow latency-critical tenant
     * above them is within a request and narrowed as decided between its requests (an experiment,
     * empty by default: does holding a memory-bound process through an eager decoder's requests keep
     * the decoder's kernels from waiting on memory bandwidth?).
     *
     * @param spec {@code NAME[,NAME...]}, each name once, no '/', '=' or ',' in a name; empty: none
     * @throws IllegalArgumentException naming the entry that is wrong and what is allowed; nothing changes then
     */
    public void holdBesideNarrow(String spec) {
        guards.holdBesideNarrow(parseNames(spec));
        signal();
    }

    /** @return the names held beside a narrow tenant's requests, sorted, comma-separated ("" for none) */
    public String holdBesideNarrow() {
        return String.join(",", new java.util.TreeSet<>(guards.holdBesideNarrow()));
    }

    static java.util.Set<String> parseNames(String spec) {
        if (spec == null || spec.isBlank()) {
            return java.util.Set.of();
        }
        java.util.Set<String> out = new java.util.LinkedHashSet<>();
        for (String entry : spec.split(",", -1)) {
            String name = entry.trim();
            if (name.isEmpty() || name.contains("/") || name.contains("=")) {
                throw new IllegalArgumentException("name '" + name + "' in '" + spec.trim() + "' is not allowed; allowed: "
                        + "NAME[,NAME...], each a process name (XQ_NAME) without '/', '=' or ','");
            }
            if (!out.add(name)) {
                throw new IllegalArgumentException("name '" + name + "' given twice; allowed: each name once");
            }
        }
        return out;
    }

    public boolean wholeBesideReserve() {
        return guards.wholeBesideReserve();
    }

    /**
     * Turns on or off (the default) a narrow tenant on a beat (an eager decoder) keeping its
     * reserve beside a wide one: a best-effort queue runs on the device less that reserve while
     * only the narrow one works, and is held while the wide one does. Off, it is held while
     * either works.
     */
    public void narrowBeatsKeepReserve(boolean on) {
        guards.narrowBeatsKeepReserve(on);
        signal();
    }

    public boolean narrowBeatsKeepReserve() {
        return guards.narrowBeatsKeepReserve();
    }

    /**
     * Turns on (off by default: an experiment) holding best-effort processes through the requests of
     * a narrow latency-critical tenant whose kernels they slow ({@link ArrivalGuards.Slowed}).
     */
    public void holdBesideSlowed(boolean on) {
        guards.holdBesideSlowed(on);
        signal();
    }

    public boolean holdBesideSlowed() {
        return guards.holdBesideSlowed();
    }

    /**
     * Turns off (on by default) taking a wide queue whose latest returns after a quiet spell found
     * no beat for a service whose requests come at random: on, its returns hold nothing behind it
     * while a beat is learnt (none will be).
     */
    public void randomReturns(boolean on) {
        guards.randomReturns(on);
        signal();
    }

    public boolean randomReturns() {
        return guards.randomReturns();
    }

    /**
     * Turns on or off spells of learning with nothing to learn ({@link ArrivalGuards}): off (the
     * default), a wide queue whose arrivals are off any beat begins no new spell once one ran out
     * without a beat, until it goes quiet, and a queue coming back behind one whose beat is known
     * begins none for it.
     */
    public void fruitlessSpells(boolean on) {
        guards.fruitlessSpells(on);
        signal();
    }

    public boolean fruitlessSpells() {
        return guards.fruitlessSpells();
    }

    /**
     * Turns on or off the guards of a queue the wide beats leave narrowed ({@link ArrivalGuards}):
     * held while a queue wider than half the device whose gaps its command fits at its narrowed
     * width works, and guarded against that queue's next arrival between its requests.
     */
    public void narrowedGuards(boolean on) {
        guards.narrowedGuards(on);
        signal();
    }

    public boolean narrowedGuards() {
        return guards.narrowedGuards();
    }

    /**
     * Sets the longest linger of arrival guards ({@link ArrivalGuards}: queues stay held a while
     * after a periodic queue preferred over them went idle early in its busy period).
     *
     * @param micros 0 (off) to 100000
     * @throws IllegalArgumentException outside that range; nothing changes then
     */
    public void arrivalLingerMicros(long micros) {
        if (micros < 0 || micros > 100_000) {
            throw new IllegalArgumentException("arrival linger " + micros + " us is outside [0, 100000] (0: off)");
        }
        guards.lingerNanos(micros * 1000);
        signal();
    }

    public long arrivalLingerMicros() {
        return guards.lingerNanos() / 1000;
    }

    /**
     * Sets how long after a periodic queue's foreseen arrival the guards it gives still hold
     * ({@link ArrivalGuards}): it must cover the node's own reaction to the arrival.
     *
     * @param micros 0 to 100000
     * @throws IllegalArgumentException outside that range; nothing changes then
     */
    public void arrivalGraceMicros(long micros) {
        if (micros < 0 || micros > 100_000) {
            throw new IllegalArgumentException("arrival grace " + micros + " us is outside [0, 100000]");
        }
        guards.graceNanos(micros * 1000);
        signal();
    }

    public long arrivalGraceMicros() {
        return guards.graceNanos() / 1000;
    }

    /**
     * Sets how far the node's own reaction to arrivals lately may lengthen the grace
     * ({@link ArrivalGuards#reactionNanos}); 0: the configured grace only.
     *
     * @param micros 0 to 100000
     * @throws IllegalArgumentException outside that range; nothing changes then
     */
    public void arrivalReactionGraceMicros(long micros) {
        if (micros < 0 || micros > 100_000) {
            throw new IllegalArgumentException("arrival grace from the reaction " + micros + " us is outside [0, 100000]");
        }
        guards.reactionCapNanos(micros * 1000);
        signal();
    }

    public long arrivalReactionGraceMicros() {
        return guards.reactionCapNanos() / 1000;
    }

    /**
     * The grace the guards use now: the configured one, or the node's own reaction to arrivals
     * lately (their P99, up to {@link #arrivalReactionGraceMicros()}) where that is longer; 0 where
     * the configured one is 0.
     */
    public long arrivalGraceInUseMicros() {
        return guards.graceInUseNanos() / 1000;
    }

    /** @return the queues on top of their device as of the last decision ({@link TopQueues}) */
    public Set<Long> topQueues() {
        return top;
    }

    /** @return the guards in force: handle to {horizon, until} nanos (status and tests) */
    public Map<Long, long[]> guardsGiven() {
        return guards.given();
    }

    /** Leaves the pending event to the loop thread. */
    private void handOff() {
        dirty.set(true);
        Thread l = loop;
        if (l != null) {
            LockSupport.unpark(l);
        }
    }

    /** @return when it is retried, for the log */
    private String setAsideNow(Registered r, String reason) {
        String retry = selection.setAside(r, reason, null);
        stats.tripped();
        Tracing.watchdog(r.name(), reason);
        return retry;
    }

    /**
     * Sets the clock that times the retries of policies set aside ({@link RetryBackoff}; default
     * {@link System#nanoTime()}): tests use a manual one. The loop thread looks at it at least
     * every 50 ms.
     */
    public void retryClock(java.util.function.LongSupplier nanos) {
        selection.retryClock(nanos);
    }

    /**
     * Takes an overrunning decision away (the {@link Watchdog}'s call), unless it ended meanwhile:
     * sets its policy aside, abandons its thread (a loop thread is interrupted and replaced; a
     * posting thread is left alone) and hands the event to a fresh loop thread.
     */
    private void takeAway(InProgress d, String overrun) {
        Thread stuck = null;
        Thread oldLoop = null;
        String poster = null;
        Registered culprit = null;
        String retry = null;
        synchronized (monitor) {
            if (!running) {
                return;
            }
            // whoever swaps the record out owns the decision's end
            if (inProgress.compareAndSet(d, null)) {
                culprit = d.policy();
                oldLoop = loop;
                if (oldLoop != null && oldLoop.threadId() == d.threadId()) {
                    stuck = oldLoop;
                } else {
                    poster = ThreadClock.name(d.threadId());
                }
                generation++;
                busy = new AtomicBoolean();
                retry = selection.setAside(culprit, overrun, d);
                if (poster != null) {
                    selection.revokeInline(culprit);
                }
                startLoop(generation);
            }
        }
        if (culprit == null) {
            return;
        }
        stats.tripped();
        active = SchedulerControl.NATIVE;
        stats.swapped();
        Tracing.watchdog(culprit.name(), "deadline");
        log.error("policy '" + culprit.name() + "' set aside: " + selection.reason(culprit) + "; '"
                + SchedulerControl.NATIVE + "' decides; " + retry
                + (poster == null ? "" : "; the thread that posted the event (" + poster
                        + ") is still inside the policy, which was registered as bounded: it decides only on the"
                        + " scheduler's thread from now on"), null);
        if (stuck != null) {
            stuck.interrupt();
        } else if (oldLoop != null) {
            LockSupport.unpark(oldLoop); // an idle loop of the old generation: let it end
        }
        firstEventNanos.compareAndSet(0, System.nanoTime());
        handOff(); // the fresh loop decides: the watchdog never runs a policy itself
    }
}
