package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.XQueueStatus;
import dev.xq.hal.spi.DeviceOp;
import dev.xq.hal.spi.HwCommand;
import dev.xq.policy.spi.QueueView;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The books of one application queue ({@link XQueueImpl}): its commands by stage (pending, in
 * flight) and their counts, its hints and launch limits, and the flags that hold its commands
 * back (closed, broken, suspended by the scheduler or by the application). What may launch next
 * and what the queue reports (its state, status and view) follow from them.
 *
 * <p>Not thread-safe: the owner holds its {@code state} lock around every use.
 */
final class CommandBook {

    final ArrayDeque<SubmissionImpl> pending = new ArrayDeque<>();
    final ArrayDeque<SubmissionImpl> inFlight = new ArrayDeque<>();
    final Map<Class<? extends Hint>, Hint> hints = new LinkedHashMap<>();
    /** The configured limits and those the gate applies (widened while the queue is alone or on top). */
    final WidenedLimits limits;
    final LaunchGate gate = new LaunchGate();
    boolean suspendedByScheduler;
    boolean suspendedByApp;
    boolean closed;
    Throwable error;
    private long nextSequence = 1;
    private long submitted;
    private long completed;
    private long failed;
    private long cancelled;
    private long runNanos;
    long readySinceNanos;
    long lastResumedNanos;

    CommandBook(QueueConfig config, List<Hint> initialHints) {
        this.limits = new WidenedLimits(config);
        for (Hint h : initialHints) {
            hints.put(h.getClass(), h);
        }
    }

    /** @return whether no command is pending or in flight */
    boolean idle() {
        return pending.isEmpty() && inFlight.isEmpty();
    }

    /** @return whether the scheduler or the application holds the queue */
    boolean held() {
        return suspendedByApp || suspendedByScheduler;
    }

    /** @return the next command, numbered; not yet in the books */
    SubmissionImpl newSubmission(Command command, DeviceOp op, long now, boolean traced) {
        return new SubmissionImpl(nextSequence++, command, op, now, traced);
    }

    /**
     * Puts a submitted command at the tail of the pending ones.
     *
     * @return whether the queue became ready with it (it was idle)
     */
    boolean submitted(SubmissionImpl s, long now) {
        boolean becameReady = idle();
        if (becameReady) {
            readySinceNanos = now;
        }
        pending.addLast(s);
        submitted++;
        return becameReady;
    }

    /** Whether the next pending command may go to the hardware now. */
    boolean mayLaunch() {
        if (pending.isEmpty() || closed || error != null || suspendedByScheduler || suspendedByApp) {
            return false;
        }
        return gate.mayLaunch(inFlight.size(), limits.launchLimits());
    }

    /** Moves the next pending command in flight ({@link #mayLaunch} said it may go). */
    SubmissionImpl launching() {
        SubmissionImpl s = pending.pollFirst();
        inFlight.addLast(s);
        return s;
    }

    SubmissionImpl takeInFlight(HwCommand command) {
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

    /**
     * Commands a driver took back off the hardware go to the front of the pending queue, in
     * launch order, to be launched again exactly once.
     */
    void requeue(List<HwCommand> flushed) {
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
    }

    /**
     * Counts a command that was launched and ended; takes it out of flight first if
     * {@code takeOut} (the caller did not).
     *
     * @return whether the queue went idle
     */
    boolean ended(SubmissionImpl s, boolean takeOut, boolean ok, long deviceNanos) {
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
        boolean idle = idle();
        if (idle) {
            readySinceNanos = 0;
        }
        return idle;
    }

    /** Marks the queue broken by {@code cause}; @return the commands to fail, counted as failed */
    List<SubmissionImpl> markBroken(Throwable cause) {
        List<SubmissionImpl> doomed = new ArrayList<>();
        error = cause;
        doomed.addAll(inFlight);
        doomed.addAll(pending);
        failed += doomed.size();
        inFlight.clear();
        pending.clear();
        readySinceNanos = 0;
        return doomed;
    }

    /** Marks the queue closed; @return the pending commands to cancel, counted as cancelled */
    List<SubmissionImpl> markClosed() {
        closed = true;
        List<SubmissionImpl> dropped = new ArrayList<>(pending);
        pending.clear();
        cancelled += dropped.size();
        return dropped;
    }

    /** @return the commands still in flight at the end of the close's grace, counted as cancelled */
    List<SubmissionImpl> stuck() {
        List<SubmissionImpl> stuck = new ArrayList<>(inFlight);
        inFlight.clear();
        cancelled += stuck.size();
        readySinceNanos = 0;
        return stuck;
    }

    /** @return the commands not yet ended, in order (those in flight, then those pending) */
    List<SubmissionImpl> outstanding() {
        List<SubmissionImpl> all = new ArrayList<>(inFlight.size() + pending.size());
        all.addAll(inFlight);
        all.addAll(pending);
        return all;
    }

    /** @return whether the hardware queue should be held now */
    boolean suspendWanted() {
        return (suspendedByScheduler || suspendedByApp) && !closed && error == null;
    }

    /** @return the level the queue runs at, given the level its hardware queue offers */
    PreemptionLevel level(PreemptionLevel available) {
        return limits.config().level().min(available);
    }

    QueueState state() {
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

    XQueueStatus status(long handle, String name, String device, String group, PreemptionLevel available) {
        QueueConfig config = limits.config();
        return new XQueueStatus(handle, name, device, group, 0, state(), config, config.level().min(available), available,
                suspendedByScheduler, suspendedByApp, pending.size(), inFlight.size(), submitted, completed, failed,
                cancelled, gate.estimateNanos() / 1000, runNanos / 1000, List.copyOf(hints.values()),
                error == null ? "" : error.getMessage(), limits.mode(), 100);
    }

    /** @return the scheduler's view of the queue; null once it is closed */
    QueueView view(long handle, String name, String device, String group, PreemptionLevel available) {
        if (closed) {
            return null;
        }
        boolean ready = error == null && !(pending.isEmpty() && inFlight.isEmpty());
        return new QueueView(handle, name, device, group, ready, suspendedByScheduler, suspendedByApp,
                readySinceNanos, runNanos, lastResumedNanos, pending.size(), inFlight.size(), completed,
                gate.estimateNanos(), List.copyOf(hints.values()), limits.config().level().min(available));
    }
}
