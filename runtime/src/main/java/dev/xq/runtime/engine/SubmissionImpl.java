package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.Submission;
import dev.xq.hal.spi.HwCommand;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
    volatile long launchThread;

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
    }

    /** Ends the command with a failure or cancellation. */
    void fail(Throwable cause) {
        ended();
        future.completeExceptionally(cause);
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
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    @Override
    public CommandResult await(Duration timeout) throws InterruptedException, TimeoutException {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
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
