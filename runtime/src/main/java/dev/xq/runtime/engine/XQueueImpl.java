package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.CommandCancelledException;
import dev.xq.api.CommandFailedException;
import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.Submission;
import dev.xq.api.XQueueStatus;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.PreemptionProvider;
import dev.xq.policy.spi.QueueView;
import dev.xq.runtime.jfr.Tracing;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The XQueue engine: holds commands back from one hardware queue and lets them go as the
 * scheduler, the application and the launch limits allow.
 *
 * <p>Two locks. {@code state} guards the queues of commands and the flags and is held only for
 * bookkeeping, never across a HAL call. {@code control} serialises every HAL call that changes
 * what the hardware queue runs (launch, deactivate, interrupt, their reverses, close); it is
 * only ever tried, never awaited, from completion callbacks, so a driver thread that reports a
 * completion can never block on a thread that is waiting for that driver. Whoever holds
 * {@code control} launches ("single pumper"), so launches reach the hardware in order.
 *
 * <p>Apart: when the next command may go ({@link LaunchGate}), how a suspend reaches the
 * hardware at levels 2 and 3 ({@link PreemptionControl}), the state listeners. Why the rest is
 * over 400 lines: it is one command life cycle (submitted, pending, in flight, ended exactly
 * once: completed, failed, or cancelled by close) driven by five kinds of caller (application,
 * scheduler, driver callbacks, providers, close) under the two locks above; each path that moves
 * a command holds the same invariants, which are easier to check side by side than across
 * classes.
 */
public final class XQueueImpl implements NodeQueue {

    /** How long {@link #close()} lets commands already on the device finish. */
    static final Duration DEFAULT_CLOSE_GRACE = Duration.ofSeconds(2);

    private final long handle;
    private final String name;
    private final String device;
    private final String group;
    private final QueueEvents events;
    private final RuntimeLog log;
    private volatile HwQueue hw;

    private final ReentrantLock state = new ReentrantLock();
    private final ReentrantLock control = new ReentrantLock();
    private volatile boolean pumpWanted;
    private final StateListeners stateListeners = new StateListeners();

    // --- guarded by state ---
    private final ArrayDeque<SubmissionImpl> pending = new ArrayDeque<>();
    private final ArrayDeque<SubmissionImpl> inFlight = new ArrayDeque<>();
    private final Map<Class<? extends Hint>, Hint> hints = new LinkedHashMap<>();
    private QueueConfig config;
    /** What the gate applies: {@code config}, or its limits widened while the queue is alone (see {@link #alone}). */
    private QueueConfig launchLimits;
    /** Whether another open queue shares the device (another group or priority); the core tells (at open, close, hint). */
    private boolean contended = true;
    /** Whether the policy keeps it on top of that company (the on-top rule; the core tells). */
    private boolean onTop;
    /** The work in flight a queue alone on its device may have, us; 0: the rule is off (the core sets it). */
    private long aloneWindowMicros;
    private boolean suspendedByScheduler;
    private boolean suspendedByApp;
    private boolean closed;
    private Throwable error;
    private long nextSequence = 1;
    private long submitted;
    private long completed;
    private long failed;
    private long cancelled;
    private long runNanos;
    private final LaunchGate gate = new LaunchGate();
    private long readySinceNanos;
    private long lastResumedNanos;

    // --- guarded by control ---
    /** When the command launched last is expected to end (for await's spin). */
    private long lastExpectedEndNanos = Long.MIN_VALUE;

    // --- guarded by control (set once by attach) ---
    private volatile PreemptionControl preemption;

    public XQueueImpl(long handle, String name, String device, String group, QueueConfig config, List<Hint> initialHints,
                      QueueEvents events, RuntimeLog log) {
        this.handle = handle;
        this.name = name == null || name.isEmpty() ? "q" + handle : name;
        this.device = device;
        this.group = group;
        this.config = Objects.requireNonNull(config, "config");
        this.launchLimits = config;
        this.events = events;
        this.log = log;
        for (Hint h : initialHints) {
            hints.put(h.getClass(), h);
        }
    }

    /** Connects the hardware queue; called once, right after the driver opened it with this listener. */
    public void attach(HwQueue hwQueue) {
        this.hw = Objects.requireNonNull(hwQueue, "hwQueue");
        this.preemption = new PreemptionControl(hwQueue, new PreemptionControl.Owner() {
            @Override
            public void requeue(List<HwCommand> flushed) {
                requeueFlushed(flushed);
            }

            @Override
            public void broken(String what, RuntimeException cause) {
                breakQueue(new CommandFailedException(what + " on " + device + " failed: " + cause.getMessage(), cause));
            }
        }, log, this.name);
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String device() {
        return device;
    }

    @Override
    public String group() {
        return group;
    }

    public HwQueue hwQueue() {
        return hw;
    }

    private volatile DataCommands data;

    /** Lets this queue take data and launch commands (the core's device objects). */
    void dataCommands(DataCommands data) {
        this.data = data;
    }

    // ------------------------------------------------------------------ submit / wait

    @Override
    public Submission submit(Command command) {
        boolean traced = Tracing.commandEnabled();
        long enter = traced ? System.nanoTime() : 0;
        Objects.requireNonNull(command, "command");
        hw.check(command);
        DataCommands.Resolved resolved = null;
        if (DataCommands.isData(command)) {
            DataCommands d = data;
            if (d == null) {
                throw new IllegalArgumentException("command kind '" + command.kind() + "' needs the node's device objects;"
                        + " queue " + name + " was not created by an XQueueService");
            }
            resolved = d.resolve(command, device, name);
        }
        SubmissionImpl s;
        boolean becameReady;
        boolean held;
        boolean alone;
        state.lock();
        try {
            if (closed || error != null) {
                if (resolved != null) {
                    resolved.release();
                }
                if (closed) {
                    throw new IllegalStateException("queue " + name + " (" + handle + ") is closed; create a new queue");
                }
                throw new IllegalStateException("queue " + name + " (" + handle + ") is broken: " + error.getMessage());
            }
            long now = System.nanoTime();
            s = new SubmissionImpl(nextSequence++, command, resolved == null ? null : resolved.op(), now, traced);
            if (resolved != null) {
                s.onEnd = resolved::release;
            }
            s.enterNanos = enter;
            s.spinNanos = events.awaitSpinNanos();
            s.looker = s.spinNanos > 0 ? hw : null;
            becameReady = pending.isEmpty() && inFlight.isEmpty();
            if (becameReady) {
                readySinceNanos = now;
            }
            held = suspendedByApp || suspendedByScheduler;
            alone = !contended;
            pending.addLast(s);
            submitted++;
        } finally {
            state.unlock();
        }
        // a queue held itself would not take the device from them
        boolean onTop = becameReady && !held && holdOthersOnArrival();
        pump();
        if (traced) {
            s.pumpEndNanos = System.nanoTime();
        }
        if (becameReady && !held && (alone || onTop)) {
            // nothing on the device contests it (alone, or its company held above): the loop
            // decides (XqCore.arrivedUnopposed), and the application's next command comes sooner
            events.arrivedUnopposed(this);
            fireStateChange();
        } else if (becameReady) {
            announce();
        }
        if (traced) {
            s.returnNanos = System.nanoTime();
        }
        return s;
    }

    @Override
    public void waitAll() throws InterruptedException {
        // each await spins near its command's end where awaitSpinMicros says so, as Submission.await does
        for (SubmissionImpl s : outstandingSubmissions()) {
            try {
                s.await();
            } catch (RuntimeException ignored) {
                // failures and cancellations are the submitter's to see through its Submission
            }
        }
    }

    @Override
    public void waitAll(Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(timeout, "timeout is null; give a Duration such as Duration.ofSeconds(5), or call waitAll()");
        long deadline = System.nanoTime() + timeout.toNanos();
        for (SubmissionImpl s : outstandingSubmissions()) {
            try {
                s.await(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (RuntimeException ignored) {
                // ended; how is the submitter's business
            } catch (TimeoutException e) {
                int left = pendingCount() + inFlightCount();
                throw new TimeoutException("queue " + name + ": " + left + " commands still outstanding after " + timeout);
            }
        }
    }

    /** @return the commands not yet ended, in order (those in flight, then those pending) */
    private List<SubmissionImpl> outstandingSubmissions() {
        state.lock();
        try {
            List<SubmissionImpl> all = new ArrayList<>(inFlight.size() + pending.size());
            all.addAll(inFlight);
            all.addAll(pending);
            return all;
        } finally {
            state.unlock();
        }
    }

    private List<CompletableFuture<CommandResult>> outstanding() {
        state.lock();
        try {
            List<CompletableFuture<CommandResult>> all = new ArrayList<>(inFlight.size() + pending.size());
            for (SubmissionImpl s : inFlight) {
                all.add(s.future);
            }
            for (SubmissionImpl s : pending) {
                all.add(s.future);
            }
            return all;
        } finally {
            state.unlock();
        }
    }

    // ------------------------------------------------------------------ launching

    /**
     * Launches what the limits allow. Any thread may call it; if another thread holds the
     * control lock, that thread will launch instead (it re-checks {@code pumpWanted} after
     * letting go), so no call ever waits here.
     */
    void pump() {
        pumpWanted = true;
        while (pumpWanted && control.tryLock()) {
            try {
                pumpWanted = false;
                drainLocked();
            } finally {
                control.unlock();
            }
        }
    }

    private void drainLocked() {
        while (true) {
            SubmissionImpl s;
            long estimate;
            state.lock();
            try {
                if (!mayLaunch()) {
                    return;
                }
                s = pending.pollFirst();
                inFlight.addLast(s);
                estimate = gate.estimateNanos();
            } finally {
                state.unlock();
            }
            try {
                if (s.traced) {
                    s.launchThread = Thread.currentThread().threadId();
                    s.launchBeginNanos = System.nanoTime();
                }
                // it ends one estimate after the later of now and its predecessor's expected end
                long expectedEnd = estimate > 0 ? Math.max(System.nanoTime(), lastExpectedEndNanos) + estimate : 0;
                PreemptionControl p = preemption;
                if (p != null) {
                    boolean unheld = estimate > 0 && endsBeforeGuard(expectedEnd);
                    p.nextLaunchUnheld(unheld);
                    if (s.traced) {
                        s.unheld = unheld;
                    }
                }
                hw.launch(s.hw);
                if (s.traced) {
                    s.launchEndNanos = System.nanoTime();
                }
                if (estimate > 0) {
                    lastExpectedEndNanos = expectedEnd;
                }
                if (s.spinNanos > 0) {
                    // for a waiter's spin
                    s.launched(estimate > 0 ? expectedEnd : SubmissionImpl.NO_ESTIMATE);
                }
            } catch (RuntimeException e) {
                // No pump: this thread is the pumper and goes on with the next one itself.
                end(s, true, false, 0, null, new CommandFailedException(
                        "queue " + name + ": launch of " + s + " on " + device + " failed: " + e.getMessage(), e), false);
            }
        }
    }

    /** The queues this one is on top of ({@link #holdsOnArrival}); empty unless it is on top of its device. */
    private volatile List<NodeQueue> holdOnArrival = List.of();

    /**
     * The hold on arrival (docs/runtime.md): the core names the queues this one is on top of (the
     * policy held each of them whenever this one had work; empty when it is not on top). When
     * this queue becomes ready, they are suspended at once, on the submitting thread, before its
     * first command is launched and before the policy decides: the decision that follows (the
     * announce) confirms that or resumes them. At level 2 this keeps their next command from
     * starting while this queue's launch and the decision run (tens of microseconds each on a
     * busy host, against the ~0.1 ms a command of theirs then holds the device).
     */
    public void holdsOnArrival(List<NodeQueue> others) {
        holdOnArrival = List.copyOf(others);
    }

    /** @return the queues held when this one becomes ready ({@link #holdsOnArrival}) */
    List<NodeQueue> holdOnArrival() {
        return holdOnArrival;
    }

    /** @return whether this queue is on top of its device: its whole company is held now */
    private boolean holdOthersOnArrival() {
        List<NodeQueue> others = holdOnArrival;
        if (others.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        for (NodeQueue o : others) {
            if (!o.isSuspendedByScheduler()) {
                o.schedule(true, now);
            }
        }
        return true;
    }

    /** The arrival guard in force ({@link #guard}): {horizon, until} nanos, both 0 when none. */
    private volatile long[] arrivalGuard = {0, 0};

    /**
     * Arrival guards (docs/runtime.md): the scheduler foresees the arrival of a queue preferred
     * over this one, so what this queue launches until {@code untilNanos} should be done by
     * {@code horizonNanos}. An application queue does not stop launching for it (its level-2
     * suspend holds what is launched, or its limits bound it); it uses it to spare the device
     * what holding costs: a command expected to end before the horizon is launched unheld
     * ({@link PreemptionControl#nextLaunchUnheld}), since no suspend is foreseen while it runs.
     */
    @Override
    public void guard(long horizonNanos, long untilNanos) {
        arrivalGuard = new long[] {horizonNanos, untilNanos};
    }

    /** @return the arrival guard in force: {horizon, until} nanos, both 0 when none */
    public long[] arrivalGuard() {
        return arrivalGuard.clone();
    }

    /** Whether a command expected to end at {@code expectedEnd} ends before the horizon of a guard in force. */
    private boolean endsBeforeGuard(long expectedEnd) {
        long[] g = arrivalGuard;
        return g[0] != 0 && System.nanoTime() - g[1] < 0 && expectedEnd - g[0] < 0;
    }

    /** Whether the next pending command may go to the hardware now. Caller holds {@code state}. */
    private boolean mayLaunch() {
        if (pending.isEmpty() || closed || error != null || suspendedByScheduler || suspendedByApp) {
            return false;
        }
        return gate.mayLaunch(inFlight.size(), launchLimits);
    }

    /**
     * The tenant-alone rule (issue 13): while no other open queue of another group or priority
     * shares the device, the limits bound nothing but this queue's own speed, so a queue limited
     * by a time window has it widened to {@code aloneWindowMicros} of estimated work and its
     * threshold lifted (a queue limited by a threshold alone keeps it): a host stall
     * shorter than that no longer idles the device. What it costs: a queue that opens on the device
     * then finds up to that much of this queue's work already launched (its first commands wait
     * for it, once); from that moment the usual limits apply again. Process queues follow the same
     * rule without a bound (ExternalQueueImpl). Tells whether the queue is contended and the bound.
     */
    public void alone(boolean isContended, long windowMicros) {
        limits(isContended, false, windowMicros);
    }

    /**
     * {@link #alone} and the on-top rule (docs/runtime.md): {@code isOnTop} while the queue has
     * company but the policy keeps it above all of it; it then gets the same widened limits.
     */
    public void limits(boolean isContended, boolean isOnTop, long windowMicros) {
        boolean wider;
        state.lock();
        try {
            if (closed || (contended == isContended && onTop == isOnTop && aloneWindowMicros == windowMicros)) {
                return;
            }
            contended = isContended;
            onTop = isOnTop;
            aloneWindowMicros = windowMicros;
            QueueConfig before = launchLimits;
            launchLimits = limitsLocked();
            wider = !launchLimits.equals(before);
            gate.reconfigured();
        } finally {
            state.unlock();
        }
        if (wider) {
            pump();
        }
    }

    /** @return whether the queue's limits apply in full now (another queue shares its device, none keeps it on top); see {@link #alone} */
    public boolean contended() {
        state.lock();
        try {
            return (contended && !onTop) || aloneWindowMicros == 0;
        } finally {
            state.unlock();
        }
    }

    /** Caller holds {@code state}. */
    private QueueConfig limitsLocked() {
        if ((contended && !onTop) || aloneWindowMicros == 0 || config.windowMicros() == 0 || config.windowMicros() >= aloneWindowMicros) {
            return config; // company, the rule off, no time window to widen (threshold alone), or wide enough already
        }
        return config.withThreshold(QueueConfig.MAX_THRESHOLD).withWindowMicros(Math.max(config.windowMicros(), aloneWindowMicros));
    }

    /** Caller holds {@code state}. */
    private XQueueStatus.Limits limitsModeLocked() {
        return launchLimits.equals(config) ? XQueueStatus.Limits.CONFIGURED : contended ? XQueueStatus.Limits.ON_TOP : XQueueStatus.Limits.ALONE;
    }

    // ------------------------------------------------------------------ HAL callbacks

    /** What the driver tells; a private object so that host applications never see these calls. */
    private final HwQueueListener hardware = new HwQueueListener() {
        @Override
        public void completed(HwCommand command, long startNanos, long endNanos) {
            SubmissionImpl s = takeInFlightLocking(command);
            if (s != null) {
                if (s.traced && Tracing.commandEnabled()) {
                    Tracing.command(handle, name, s.sequence(), new long[] {s.enterNanos, s.submitNanos, s.launchBeginNanos,
                        s.launchEndNanos, s.pumpEndNanos, s.returnNanos, startNanos, endNanos, s.unheld ? 1 : 0}, s.submitThread,
                        s.launchThread);
                }
                long d = Math.max(0, endNanos - startNanos);
                delivering(() -> end(s, false, true, d, new CommandResult(s.sequence(), s.submitNanos, startNanos, endNanos), null, true));
            }
        }

        @Override
        public void failed(HwCommand command, Throwable cause) {
            SubmissionImpl s = takeInFlightLocking(command);
            if (s != null) {
                delivering(() -> end(s, false, false, 0, null, new CommandFailedException(
                        "queue " + name + ": " + s + " failed on " + device + ": " + cause.getMessage(), cause), true));
            }
        }

        @Override
        public void lost(Throwable cause) {
            breakQueue(new CommandFailedException("device " + device + " lost: " + cause.getMessage(), cause));
        }
    };

    /**
     * Set while a driver's thread delivers a completion (and runs the application's callbacks on
     * its future): a {@link #close()} made there must not wait for completions that only this
     * very thread can deliver.
     */
    private static final ThreadLocal<Boolean> DELIVERING = ThreadLocal.withInitial(() -> Boolean.FALSE);

    private static void delivering(Runnable r) {
        boolean outer = DELIVERING.get();
        DELIVERING.set(Boolean.TRUE);
        try {
            r.run();
        } finally {
            DELIVERING.set(outer);
        }
    }

    /** The listener to open this queue's hardware queue with. */
    public HwQueueListener hardwareListener() {
        return hardware;
    }

    private SubmissionImpl takeInFlightLocking(HwCommand command) {
        state.lock();
        try {
            return takeInFlight(command);
        } finally {
            state.unlock();
        }
    }

    /**
     * The one place where a command that was launched ends: taken out of flight (unless the
     * caller did), counted, its future told, what may go launched ({@code pump}), and the node
     * told if the queue went idle.
     */
    private void end(SubmissionImpl s, boolean takeOut, boolean ok, long deviceNanos, CommandResult result,
                     CommandFailedException failure, boolean pump) {
        boolean idle;
        state.lock();
        try {
            if (takeOut) {
                inFlight.removeLastOccurrence(s); // the one just launched: at the tail
            }
            if (ok) {
                runNanos += deviceNanos;
                gate.completed(deviceNanos);
                completed++;
            } else {
                failed++;
            }
            idle = pending.isEmpty() && inFlight.isEmpty();
            if (idle) {
                readySinceNanos = 0;
            }
        } finally {
            state.unlock();
        }
        if (ok) {
            s.complete(result);
        } else {
            s.fail(failure);
        }
        if (pump) {
            pump();
        }
        if (idle) {
            announce();
        }
    }

    /** Tells the node (the scheduler decides again) and the state listeners that something changed. */
    private void announce() {
        events.changed(this);
        fireStateChange();
    }

    /** Fails every outstanding command with {@code cause} and refuses new ones: device or driver gone. */
    public void breakQueue(CommandFailedException cause) {
        List<SubmissionImpl> doomed = new ArrayList<>();
        state.lock();
        try {
            if (closed || error != null) {
                return;
            }
            error = cause;
            doomed.addAll(inFlight);
            doomed.addAll(pending);
            failed += doomed.size();
            inFlight.clear();
            pending.clear();
            readySinceNanos = 0;
        } finally {
            state.unlock();
        }
        log.error("queue " + name + " (" + handle + ") on " + device + " is broken; failing " + doomed.size() + " commands", cause);
        for (SubmissionImpl s : doomed) {
            s.fail(new CommandFailedException(
                    "queue " + name + ": " + s + " not run: " + cause.getMessage(), cause));
        }
        announce();
    }

    private SubmissionImpl takeInFlight(HwCommand command) {
        SubmissionImpl head = inFlight.peekFirst();
        if (head != null && head.hw.sequence() == command.sequence()) {
            return inFlight.pollFirst();
        }
        for (Iterator<SubmissionImpl> it = inFlight.iterator(); it.hasNext(); ) {
            SubmissionImpl s = it.next();
            if (s.hw.sequence() == command.sequence()) {
                it.remove();
                return s;
            }
        }
        return null; // already accounted for: cancelled by close or failed by device loss
    }

    // ------------------------------------------------------------------ suspend / resume

    /** The scheduler's decision; applied at once at the queue's level. */
    public void schedule(boolean suspend) {
        schedule(suspend, System.nanoTime());
    }

    @Override
    public void schedule(boolean suspend, long decisionNanos) {
        lockSpinning(state);
        try {
            if (suspendedByScheduler == suspend || closed) {
                return;
            }
            suspendedByScheduler = suspend;
            if (!suspend) {
                lastResumedNanos = decisionNanos;
            }
        } finally {
            state.unlock();
        }
        reconcile();
        fireStateChange();
    }

    @Override
    public void suspend() {
        setAppSuspended(true);
    }

    @Override
    public void resume() {
        setAppSuspended(false);
    }

    private void setAppSuspended(boolean suspend) {
        state.lock();
        try {
            if (closed) {
                // as hint() and configure(): using a closed queue is an error, not a silent no-op
                throw new IllegalStateException("queue " + name + " (" + handle + ") is closed; cannot " + (suspend ? "suspend" : "resume") + " it");
            }
            if (suspendedByApp == suspend) {
                return;
            }
            suspendedByApp = suspend;
        } finally {
            state.unlock();
        }
        reconcile();
        announce();
    }

    /**
     * Brings the hardware queue's preemption state in line with the flags and the level:
     * undo what is no longer wanted first, then apply what is. Then launch what may go.
     */
    void reconcile() {
        lockSpinning(control);
        try {
            reconcileLocked();
        } finally {
            control.unlock();
        }
        pump();
    }

    private void reconcileLocked() {
        boolean suspend;
        PreemptionLevel level;
        state.lock();
        try {
            suspend = (suspendedByScheduler || suspendedByApp) && !closed && error == null;
            level = effectiveLevelLocked();
        } finally {
            state.unlock();
        }
        preemption.reconcile(suspend, level);
        if (suspend) {
            Tracing.suspended(handle, name, level.number());
        } else {
            Tracing.resumed(handle, name);
        }
    }

    /**
     * Commands a driver took back off the hardware go to the front of the pending queue, in
     * launch order, to be launched again exactly once.
     */
    private void requeueFlushed(List<HwCommand> flushed) {
        state.lock();
        try {
            List<SubmissionImpl> back = new ArrayList<>(flushed.size());
            for (HwCommand c : flushed) {
                SubmissionImpl s = takeInFlight(c);
                if (s != null) {
                    back.add(s);
                }
            }
            for (int i = back.size() - 1; i >= 0; i--) {
                pending.addFirst(back.get(i));
            }
        } finally {
            state.unlock();
        }
    }

    private PreemptionLevel availableLevel() {
        return preemption.available();
    }

    private PreemptionLevel effectiveLevelLocked() {
        return config.level().min(availableLevel());
    }

    // ------------------------------------------------------------------ providers

    /** Offers a preemption provider; keeps the first that attaches. */
    public void offer(PreemptionProvider provider) {
        control.lock();
        try {
            if (closed || hw == null || !preemption.offer(provider)) {
                return;
            }
            reconcileLocked();
        } catch (RuntimeException e) {
            log.error("queue " + name + ": provider " + provider.name() + " failed to attach", e);
        } finally {
            control.unlock();
        }
        pump();
        announce();
    }

    /** Undoes everything done through {@code provider} and lets go of it; the queue falls back to its own level. */
    public void withdraw(PreemptionProvider provider) {
        control.lock();
        try {
            if (hw == null || !preemption.withdraw(provider)) {
                return;
            }
            reconcileLocked();
        } finally {
            control.unlock();
        }
        pump();
        announce();
    }

    // ------------------------------------------------------------------ hints / config

    @Override
    public void hint(Hint hint) {
        Objects.requireNonNull(hint, "hint is null; give a Hint such as new Hint.Priority(2)");
        state.lock();
        try {
            if (closed) {
                throw new IllegalStateException("queue " + name + " (" + handle + ") is closed");
            }
            hints.put(hint.getClass(), hint);
        } finally {
            state.unlock();
        }
        announce();
        events.hinted(this);
    }

    @Override
    public List<Hint> hints() {
        state.lock();
        try {
            return List.copyOf(hints.values());
        } finally {
            state.unlock();
        }
    }

    @Override
    public void configure(QueueConfig newConfig) {
        Objects.requireNonNull(newConfig, "config is null; give a QueueConfig such as QueueConfig.defaults().withThreshold(4)");
        state.lock();
        try {
            if (closed) {
                throw new IllegalStateException("queue " + name + " (" + handle + ") is closed");
            }
            config = newConfig;
            launchLimits = limitsLocked();
            gate.reconfigured();
        } finally {
            state.unlock();
        }
        reconcile();
        announce();
    }

    public QueueConfig config() {
        state.lock();
        try {
            return config;
        } finally {
            state.unlock();
        }
    }

    // ------------------------------------------------------------------ status

    public int pendingCount() {
        state.lock();
        try {
            return pending.size();
        } finally {
            state.unlock();
        }
    }

    public int inFlightCount() {
        state.lock();
        try {
            return inFlight.size();
        } finally {
            state.unlock();
        }
    }

    @Override
    public XQueueStatus status() {
        PreemptionLevel available = availableLevel();
        state.lock();
        try {
            return new XQueueStatus(handle, name, device, group, 0, stateLocked(), config, config.level().min(available), available,
                    suspendedByScheduler, suspendedByApp, pending.size(), inFlight.size(), submitted, completed, failed,
                    cancelled, gate.estimateNanos() / 1000, runNanos / 1000, List.copyOf(hints.values()),
                    error == null ? "" : error.getMessage(), limitsModeLocked(), 100);
        } finally {
            state.unlock();
        }
    }

    private QueueState stateLocked() {
        if (closed) {
            return QueueState.CLOSED;
        }
        if (error != null) {
            return QueueState.ERROR;
        }
        if (pending.isEmpty() && inFlight.isEmpty()) {
            return QueueState.IDLE;
        }
        return suspendedByScheduler || suspendedByApp ? QueueState.SUSPENDED : QueueState.READY;
    }

    /**
     * Takes a lock on the scheduler's path (views, decisions applied). Both locks are held for
     * microseconds, so a short spin almost always gets them; a plain {@code lock()} would park
     * this thread at the first contention, and the wake-up after the holder lets go costs far
     * more than the wait (milliseconds at the tail on a loaded or virtual host), all of it added
     * to the decision. Past the spin (the holder itself is descheduled) it parks as usual.
     */
    private static void lockSpinning(ReentrantLock lock) {
        if (lock.tryLock()) {
            return;
        }
        long giveUp = System.nanoTime() + 200_000L;
        do {
            Thread.onSpinWait();
            if (lock.tryLock()) {
                return;
            }
        } while (System.nanoTime() < giveUp);
        lock.lock();
    }

    @Override
    public QueueView view() {
        PreemptionLevel available = availableLevel();
        lockSpinning(state);
        try {
            if (closed) {
                return null;
            }
            boolean ready = error == null && !(pending.isEmpty() && inFlight.isEmpty());
            return new QueueView(handle, name, device, group, ready, suspendedByScheduler, suspendedByApp,
                    readySinceNanos, runNanos, lastResumedNanos, pending.size(), inFlight.size(), completed,
                    gate.estimateNanos(), List.copyOf(hints.values()), config.level().min(available));
        } finally {
            state.unlock();
        }
    }

    @Override
    public boolean isSuspendedByScheduler() {
        lockSpinning(state);
        try {
            return suspendedByScheduler;
        } finally {
            state.unlock();
        }
    }

    @Override
    public AutoCloseable onStateChange(java.util.function.Consumer<QueueState> listener) {
        return stateListeners.add(listener);
    }

    /** Tells the state listeners if the state moved since the last time anyone looked. */
    private void fireStateChange() {
        stateListeners.announce(() -> {
            state.lock();
            try {
                return stateLocked();
            } finally {
                state.unlock();
            }
        }, name, log);
    }

    // ------------------------------------------------------------------ close

    @Override
    public void close() {
        close(DEFAULT_CLOSE_GRACE);
    }

    /**
     * Closes: pending commands are cancelled at once; commands on the device get {@code grace}
     * to finish and are cancelled after it.
     */
    @Override
    public void close(Duration grace) {
        List<SubmissionImpl> dropped;
        state.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            dropped = new ArrayList<>(pending);
            pending.clear();
            cancelled += dropped.size();
        } finally {
            state.unlock();
        }
        for (SubmissionImpl s : dropped) {
            s.fail(new CommandCancelledException(
                    "queue " + name + " (" + handle + ") was closed before " + s + " was launched"));
        }
        control.lock();
        try {
            // Let what is on the device run out: undo any deactivate/interrupt first.
            preemption.release();
        } finally {
            control.unlock();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        if (DELIVERING.get()) {
            // Called from a completion callback, on the driver's thread: waiting here would hold
            // back every completion that thread delivers (another tenant's included) and cancel
            // commands that could have run. The rest of the close waits on a thread of its own.
            Thread.ofVirtual().name("xq-close-" + handle).start(() -> finishClose(deadline, grace));
            return;
        }
        finishClose(deadline, grace);
    }

    /** Lets what is on the device finish until {@code deadline}, cancels what is still there, lets go of the hardware. */
    private void finishClose(long deadline, Duration grace) {
        for (CompletableFuture<CommandResult> f : outstanding()) {
            try {
                f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
                // ended another way, or still running: handled below
            }
        }
        List<SubmissionImpl> stuck;
        state.lock();
        try {
            stuck = new ArrayList<>(inFlight);
            inFlight.clear();
            cancelled += stuck.size();
            readySinceNanos = 0;
        } finally {
            state.unlock();
        }
        for (SubmissionImpl s : stuck) {
            s.fail(new CommandCancelledException("queue " + name + " (" + handle + ") was closed while "
                    + s + " was still on the device after a grace of " + grace.toMillis() + " ms"));
        }
        control.lock();
        try {
            preemption.detachProvider();
            try {
                hw.close();
            } catch (RuntimeException e) {
                log.error("queue " + name + ": closing the hardware queue on " + device + " failed", e);
            }
        } finally {
            control.unlock();
        }
        events.closed(this);
        fireStateChange();
    }

    public boolean isClosed() {
        state.lock();
        try {
            return closed;
        } finally {
            state.unlock();
        }
    }

    @Override
    public String toString() {
        return "XQueue " + name + " (" + handle + ") on " + device;
    }
}
