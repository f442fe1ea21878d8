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
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The XQueue engine: the command life cycle of one application queue. It holds commands back
 * from one hardware queue and lets them go as the scheduler, the application and the launch
 * limits allow; each command is submitted, pending, in flight, and ends exactly once: completed,
 * failed, or cancelled by close.
 *
 * <p>Two locks. {@code state} guards the books ({@link CommandBook}) and is held only for
 * bookkeeping, never across a HAL call. {@code control} serialises every HAL call that changes
 * what the hardware queue runs (launch, deactivate, interrupt, their reverses, close); it is
 * only ever tried, never awaited, from completion callbacks, so a driver thread that reports a
 * completion can never block on a thread that is waiting for that driver. Whoever holds
 * {@code control} launches ("single pumper"), so launches reach the hardware in order.
 *
 * <p>Apart: when the next command may go ({@link LaunchGate}), how a suspend reaches the
 * hardware at levels 2 and 3 ({@link PreemptionControl}), the state listeners, what the driver
 * tells ({@link DriverCallbacks}), the waits ({@link QueueWaits}), and the tail-latency rules:
 * the widened limits of a queue alone or on top ({@link WidenedLimits}), the hold on arrival
 * ({@link HoldOnArrival}), arrival guards ({@link ArrivalGuard}) and the expected ends that
 * waiters spin on ({@link ExpectedEnds}).
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
    private final CommandBook book;

    // --- guarded by control ---
    private final ExpectedEnds expectedEnds = new ExpectedEnds();

    // --- guarded by control (set once by attach) ---
    private volatile PreemptionControl preemption;

    // --- tail-latency rules (each with its own publication; see the class) ---
    /** The hold on arrival (docs/runtime.md): the queues this one holds when it becomes ready. */
    private final HoldOnArrival holdOnArrival = new HoldOnArrival();
    /** The arrival guard in force ({@link #guard}). */
    private final ArrivalGuard arrivalGuard = new ArrivalGuard();

    public XQueueImpl(long handle, String name, String device, String group, QueueConfig config, List<Hint> initialHints,
                      QueueEvents events, RuntimeLog log) {
        this.handle = handle;
        this.name = name == null || name.isEmpty() ? "q" + handle : name;
        this.device = device;
        this.group = group;
        this.book = new CommandBook(Objects.requireNonNull(config, "config"), initialHints);
        this.events = events;
        this.log = log;
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
        state.lock();
        try {
            book.limits.available(preemption.available());
        } finally {
            state.unlock();
        }
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
        DataCommands.Resolved resolved = DataCommands.isData(command) ? DataCommands.resolve(data, command, device, name) : null;
        SubmissionImpl s;
        boolean becameReady;
        boolean held;
        boolean alone;
        state.lock();
        try {
            if (book.closed || book.error != null) {
                if (resolved != null) {
                    resolved.release();
                }
                if (book.closed) {
                    throw new IllegalStateException("queue " + name + " (" + handle + ") is closed; create a new queue");
                }
                throw new IllegalStateException("queue " + name + " (" + handle + ") is broken: " + book.error.getMessage());
            }
            long now = System.nanoTime();
            s = book.newSubmission(command, resolved == null ? null : resolved.op(), now, traced);
            if (resolved != null) {
                s.onEnd = resolved::release;
            }
            s.enterNanos = enter;
            s.spinNanos = events.awaitSpinNanos();
            s.looker = s.spinNanos > 0 ? hw : null;
            held = book.held();
            alone = book.limits.alone();
            becameReady = book.submitted(s, now);
        } finally {
            state.unlock();
        }
        // a queue held itself would not take the device from them
        boolean onTop = becameReady && !held && holdOnArrival.holdOthers();
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
        QueueWaits.all(outstandingSubmissions());
    }

    @Override
    public void waitAll(Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(timeout, "timeout is null; give a Duration such as Duration.ofSeconds(5), or call waitAll()");
        long deadline = System.nanoTime() + timeout.toNanos();
        QueueWaits.all(outstandingSubmissions(), deadline,
                () -> "queue " + name + ": " + (pendingCount() + inFlightCount()) + " commands still outstanding after " + timeout);
    }

    /** @return the commands not yet ended, in order (those in flight, then those pending) */
    private List<SubmissionImpl> outstandingSubmissions() {
        return read(CommandBook::outstanding);
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
                if (!book.mayLaunch()) {
                    return;
                }
                s = book.launching();
                estimate = book.gate.estimateNanos();
            } finally {
                state.unlock();
            }
            try {
                if (s.traced) {
                    s.launchThread = Thread.currentThread().threadId();
                    s.launchBeginNanos = System.nanoTime();
                }
                long expectedEnd = expectedEnds.of(estimate);
                PreemptionControl p = preemption;
                if (p != null) {
                    boolean unheld = estimate > 0 && arrivalGuard.endsBefore(expectedEnd);
                    p.nextLaunchUnheld(unheld);
                    if (s.traced) {
                        s.unheld = unheld;
                    }
                }
                hw.launch(s.hw);
                if (s.traced) {
                    s.launchEndNanos = System.nanoTime();
                }
                expectedEnds.launched(s, estimate, expectedEnd);
            } catch (RuntimeException e) {
                // No pump: this thread is the pumper and goes on with the next one itself.
                end(s, true, false, 0, null, new CommandFailedException(
                        "queue " + name + ": launch of " + s + " on " + device + " failed: " + e.getMessage(), e), false);
            }
        }
    }

    /** The core names the queues this one is on top of ({@link HoldOnArrival}); empty when it is not on top. */
    public void holdsOnArrival(List<NodeQueue> others) {
        holdOnArrival.set(others);
    }

    /** @return the queues held when this one becomes ready ({@link #holdsOnArrival}) */
    List<NodeQueue> holdOnArrival() {
        return holdOnArrival.queues();
    }

    /** Arrival guards (docs/runtime.md): see {@link ArrivalGuard}. */
    @Override
    public void guard(long horizonNanos, long untilNanos) {
        arrivalGuard.set(horizonNanos, untilNanos);
    }

    /** @return the arrival guard in force: {horizon, until} nanos, both 0 when none */
    public long[] arrivalGuard() {
        return arrivalGuard.get();
    }

    /** The tenant-alone rule (issue 13; {@link WidenedLimits}): whether the queue is contended, and the bound. */
    public void alone(boolean isContended, long windowMicros) {
        limits(isContended, false, windowMicros);
    }

    /** {@link #alone} and the on-top rule ({@link WidenedLimits}): {@code isOnTop} while the policy keeps it above its company. */
    public void limits(boolean isContended, boolean isOnTop, long windowMicros) {
        boolean wider;
        state.lock();
        try {
            if (book.closed || book.limits.same(isContended, isOnTop, windowMicros)) {
                return;
            }
            wider = book.limits.set(isContended, isOnTop, windowMicros);
            book.gate.reconfigured();
        } finally {
            state.unlock();
        }
        if (wider) {
            pump();
        }
    }

    /** @return whether the queue's limits apply in full now (another queue shares its device, none keeps it on top); see {@link #alone} */
    public boolean contended() {
        return read(b -> b.limits.inFull());
    }

    // ------------------------------------------------------------------ HAL callbacks

    /** What the driver tells; a private object so that host applications never see these calls. */
    private final DriverCallbacks hardware = new DriverCallbacks(this);

    /** The listener to open this queue's hardware queue with. */
    public HwQueueListener hardwareListener() {
        return hardware;
    }

    SubmissionImpl takeInFlightLocking(HwCommand command) {
        state.lock();
        try {
            return book.takeInFlight(command);
        } finally {
            state.unlock();
        }
    }

    /**
     * The one place where a command that was launched ends: taken out of flight (unless the
     * caller did), counted, its future told, what may go launched ({@code pump}), and the node
     * told if the queue went idle.
     */
    void end(SubmissionImpl s, boolean takeOut, boolean ok, long deviceNanos, CommandResult result, CommandFailedException failure,
             boolean pump) {
        boolean idle;
        state.lock();
        try {
            idle = book.ended(s, takeOut, ok, deviceNanos);
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
        List<SubmissionImpl> doomed;
        state.lock();
        try {
            if (book.closed || book.error != null) {
                return;
            }
            doomed = book.markBroken(cause);
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

    // ------------------------------------------------------------------ suspend / resume

    /** The scheduler's decision; applied at once at the queue's level. */
    public void schedule(boolean suspend) {
        schedule(suspend, System.nanoTime());
    }

    @Override
    public void schedule(boolean suspend, long decisionNanos) {
        SpinningLocks.lock(state);
        try {
            if (book.suspendedByScheduler == suspend || book.closed) {
                return;
            }
            book.suspendedByScheduler = suspend;
            if (!suspend) {
                book.lastResumedNanos = decisionNanos;
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
            if (book.closed) {
                // as hint() and configure(): using a closed queue is an error, not a silent no-op
                throw new IllegalStateException("queue " + name + " (" + handle + ") is closed; cannot " + (suspend ? "suspend" : "resume") + " it");
            }
            if (book.suspendedByApp == suspend) {
                return;
            }
            book.suspendedByApp = suspend;
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
        SpinningLocks.lock(control);
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
            suspend = book.suspendWanted();
            level = book.level(availableLevel());
            if (book.limits.available(availableLevel())) {
                book.gate.reconfigured(); // a provider came or went: the window applies or not (WidenedLimits); reconcile pumps
            }
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

    /** Commands a driver took back off the hardware ({@link CommandBook#requeue}). */
    private void requeueFlushed(List<HwCommand> flushed) {
        state.lock();
        try {
            book.requeue(flushed);
        } finally {
            state.unlock();
        }
    }

    private PreemptionLevel availableLevel() {
        return preemption.available();
    }

    // ------------------------------------------------------------------ providers

    /** Offers a preemption provider; keeps the first that attaches. */
    public void offer(PreemptionProvider provider) {
        control.lock();
        try {
            if (book.closed || hw == null || !preemption.offer(provider)) {
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
            if (book.closed) {
                throw new IllegalStateException("queue " + name + " (" + handle + ") is closed");
            }
            book.hints.put(hint.getClass(), hint);
        } finally {
            state.unlock();
        }
        announce();
        events.hinted(this);
    }

    @Override
    public List<Hint> hints() {
        return read(b -> List.copyOf(b.hints.values()));
    }

    @Override
    public void configure(QueueConfig newConfig) {
        Objects.requireNonNull(newConfig, "config is null; give a QueueConfig such as QueueConfig.defaults().withThreshold(4)");
        state.lock();
        try {
            if (book.closed) {
                throw new IllegalStateException("queue " + name + " (" + handle + ") is closed");
            }
            book.limits.configure(newConfig);
            book.gate.reconfigured();
        } finally {
            state.unlock();
        }
        reconcile();
        announce();
    }

    public QueueConfig config() {
        return read(b -> b.limits.config());
    }

    // ------------------------------------------------------------------ status

    /** Reads the books under {@code state}. */
    private <T> T read(Function<CommandBook, T> reader) {
        state.lock();
        try {
            return reader.apply(book);
        } finally {
            state.unlock();
        }
    }

    public int pendingCount() {
        return read(b -> b.pending.size());
    }

    public int inFlightCount() {
        return read(b -> b.inFlight.size());
    }

    @Override
    public XQueueStatus status() {
        PreemptionLevel available = availableLevel();
        state.lock();
        try {
            return book.status(handle, name, device, group, available);
        } finally {
            state.unlock();
        }
    }

    @Override
    public QueueView view() {
        PreemptionLevel available = availableLevel();
        SpinningLocks.lock(state);
        try {
            return book.view(handle, name, device, group, available);
        } finally {
            state.unlock();
        }
    }

    @Override
    public boolean isSuspendedByScheduler() {
        SpinningLocks.lock(state);
        try {
            return book.suspendedByScheduler;
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
        stateListeners.announce(() -> read(CommandBook::state), name, log);
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
            if (book.closed) {
                return;
            }
            dropped = book.markClosed();
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
        if (DriverCallbacks.delivering()) {
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
        QueueWaits.grace(outstandingSubmissions(), deadline);
        List<SubmissionImpl> stuck;
        state.lock();
        try {
            stuck = book.stuck();
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
        return read(b -> b.closed);
    }

    @Override
    public String toString() {
        return "XQueue " + name + " (" + handle + ") on " + device;
    }
}
