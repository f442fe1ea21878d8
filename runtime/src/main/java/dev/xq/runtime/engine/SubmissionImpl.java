package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.Submission;
import dev.xq.hal.spi.HwCommand;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/** One submitted command and its completion handle. */
final class SubmissionImpl implements Submission {
    final HwCommand hw;
    final long submitNanos;
    final CompletableFuture<CommandResult> future = new CompletableFuture<>();
    /**
     * Whether a flight recording wanted command events when it was submitted: only then are the
     * host times below taken (they cost a clock read each on the launch path).
     */
    final boolean traced;
    /** The thread that submitted it (0 unless traced). */
    final long submitThread;
    /** When submit() was entered (submitter only, before publication). */
    long enterNanos;
    // Written by the submitter (pump and submit() returned) and by the thread that launches it (the
    // submitter, or another that pumped the queue); read by the completion thread for the command
    // event (0: not yet known).
    volatile long pumpEndNanos;
    volatile long returnNanos;
    volatile long launchBeginNanos;
    volatile long launchEndNanos;
    /** Traced only: whether the launch went unheld (arrival guards). */
    volatile boolean unheld;
    volatile long launchThread;

    /** {@link #expectedEndNanos} before the launch. */
    static final long NOT_LAUNCHED = Long.MIN_VALUE;
    /** {@link #expectedEndNanos} of a command launched with no estimate of its length. */
    static final long NO_ESTIMATE = Long.MIN_VALUE + 1;

    /** When the command is expected to end (System.nanoTime), set by the thread that launched it. */
    private volatile long expectedEndNanos = NOT_LAUNCHED;
    /** How long await() spins before and after the expected end (0: it parks at once); set before publication. */
    long spinNanos;
    /**
     * Its hardware queue, whose adapter a spinning waiter asks to look for completions itself
     * ({@code HwQueue.poll}): the end is seen while the adapter's thread is late. Set before
     * publication; null: the waiter only waits.
     */
    dev.xq.hal.spi.HwQueue looker;
    /** A spinning waiter's looks at the hardware are this far apart at least. */
    static final long LOOK_EVERY_NANOS = 5_000;
    /** Past the spin window, a waiter with a {@link #looker} parks this long between looks. */
    static final long LATE_LOOK_EVERY_NANOS = 50_000;
    /** ... for up to this many spin lengths past the expected end; then it only waits. */
    static final int LATE_LOOK_SPINS = 20;
    /**
     * The thread in await()'s spin phase, if any: the launcher and the completer wake it. One at a
     * time: another thread awaiting the same command waits as a plain await does.
     */
    private volatile Thread waiter;
    private static final VarHandle WAITER;

    static {
        try {
            WAITER = MethodHandles.lookup().findVarHandle(SubmissionImpl.class, "waiter", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    SubmissionImpl(long sequence, Command command, long submitNanos, boolean traced) {
        this(sequence, command, null, submitNanos, traced);
    }

    SubmissionImpl(long sequence, Command command, dev.xq.hal.spi.DeviceOp op, long submitNanos, boolean traced) {
        this.hw = new HwCommand(sequence, command, op);
        this.submitNanos = submitNanos;
        this.traced = traced;
        this.submitThread = traced ? Thread.currentThread().threadId() : 0;
    }

    /** Runs once when the command ends, before its future completes: gives back the buffers it used. */
    Runnable onEnd;

    private void ended() {
        Runnable r = onEnd;
        if (r != null) {
            onEnd = null;
            r.run();
        }
    }

    /** Ends the command with its result. */
    void complete(CommandResult result) {
        ended();
        future.complete(result);
        wake();
    }

    /** Ends the command with a failure or cancellation. */
    void fail(Throwable cause) {
        ended();
        future.completeExceptionally(cause);
        wake();
    }

    /** The command went to the hardware and is expected to end then ({@link #NO_ESTIMATE}: unknown). */
    void launched(long expectedEnd) {
        expectedEndNanos = expectedEnd;
        wake();
    }

    long expectedEndNanos() {
        return expectedEndNanos;
    }

    private void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /**
     * The spin phase of await (like CUDA's spinning synchronisation, but only around the end): parks
     * until {@code spinNanos} before the command's expected end, then spins until it ends, so that
     * the waiter is running when the completion arrives instead of being woken then (a Linux wake-up
     * costs tens of microseconds). Gives up, leaving the rest to a plain park, when the command is
     * later than {@code spinNanos} past its expected end or its length is unknown. While it spins it
     * asks the adapter to look for completions every {@link #LOOK_EVERY_NANOS} ({@link #looker}):
     * a host that keeps the adapter's completion thread off its CPU for milliseconds (the H100
     * machine did, now and then) no longer makes the waiter wait for it. Past the spin, a waiter
     * with a looker still looks every {@link #LATE_LOOK_EVERY_NANOS}, parked in between, up to
     * {@link #LATE_LOOK_SPINS} spin lengths past the expected end: an end that both the adapter's
     * thread and the spin missed is then seen within ~50 us, not when that thread comes back.
     */
    private void spinNearEnd(long timeoutNanos) throws InterruptedException {
        long spin = spinNanos;
        if (spin <= 0 || future.isDone()) {
            return;
        }
        boolean timed = timeoutNanos < Long.MAX_VALUE / 2;
        long deadline = System.nanoTime() + (timed ? timeoutNanos : 0);
        if (!WAITER.compareAndSet(this, null, Thread.currentThread())) {
            return; // another thread spins for it already
        }
        try {
            long lastLook = System.nanoTime();
            while (!future.isDone()) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                long now = System.nanoTime();
                long left = timed ? deadline - now : Long.MAX_VALUE;
                if (left <= 0) {
                    return;
                }
                long expected = expectedEndNanos;
                long parkFor;
                if (expected == NOT_LAUNCHED) {
                    parkFor = left; // the launch wakes it
                } else if (expected == NO_ESTIMATE) {
                    return;
                } else if (now - (expected + spin) > 0) {
                    // past the spin: the command runs long, or it has ended and the adapter's own
                    // thread has not seen it (off its CPU): look now and then, for a while
                    if (looker == null || now - (expected + LATE_LOOK_SPINS * spin) > 0) {
                        return;
                    }
                    if (now - lastLook >= LATE_LOOK_EVERY_NANOS) {
                        lastLook = now;
                        look();
                        continue;
                    }
                    parkFor = Math.min(LATE_LOOK_EVERY_NANOS - (now - lastLook), left);
                } else if (expected - spin - now > 0) {
                    parkFor = Math.min(expected - spin - now, left);
                } else {
                    if (looker != null && now - lastLook >= LOOK_EVERY_NANOS) {
                        lastLook = now;
                        look();
                        continue;
                    }
                    Thread.onSpinWait();
                    continue;
                }
                LockSupport.parkNanos(this, parkFor);
            }
        } finally {
            waiter = null;
        }
    }

    /** Asks the adapter to look for completions; one that fails to is not asked again (its own thread reports). */
    private void look() {
        dev.xq.hal.spi.HwQueue l = looker;
        if (l != null) {
            try {
                l.poll();
            } catch (RuntimeException e) {
                looker = null;
            }
        }
    }

    @Override
    public long sequence() {
        return hw.sequence();
    }

    @Override
    public Command command() {
        return hw.command();
    }

    @Override
    public CompletionStage<CommandResult> stage() {
        return future.minimalCompletionStage();
    }

    @Override
    public boolean isDone() {
        return future.isDone();
    }

    @Override
    public CommandResult await() throws InterruptedException {
        spinNearEnd(Long.MAX_VALUE);
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    @Override
    public CommandResult await(Duration timeout) throws InterruptedException, TimeoutException {
        long start = System.nanoTime();
        long nanos = timeout.toNanos();
        spinNearEnd(nanos);
        try {
            return future.get(Math.max(0, nanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    private static RuntimeException unwrap(ExecutionException e) {
        if (e.getCause() instanceof RuntimeException re) {
            return re;
        }
        return new IllegalStateException(e.getCause());
    }

    @Override
    public String toString() {
        return "command #" + hw.sequence() + " (" + hw.command().kind() + ")";
    }
}
