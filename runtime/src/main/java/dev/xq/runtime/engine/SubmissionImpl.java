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

    SubmissionImpl(long sequence, Command command, long submitNanos) {
        this.hw = new HwCommand(sequence, command);
        this.submitNanos = submitNanos;
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
