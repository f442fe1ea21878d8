package dev.xq.bench.workload;

import dev.xq.api.CommandResult;
import dev.xq.api.Submission;
import dev.xq.api.XQueueException;
import java.util.List;

/**
 * One task: the commands submitted for it and when it was meant to be released. Results are
 * read once the task has ended.
 *
 * @param releaseNanos when the workload meant to issue the task ({@link System#nanoTime()})
 * @param submitCpuNanos CPU time the submitting thread spent submitting the task's commands; -1 when not measured
 */
public record TaskRecord(String tenant, long releaseNanos, List<Submission> commands, long submitCpuNanos) {

    /** A task whose submitting thread's CPU time was not measured. */
    public TaskRecord(String tenant, long releaseNanos, List<Submission> commands) {
        this(tenant, releaseNanos, commands, -1);
    }

    public TaskRecord {
        commands = List.copyOf(commands);
        if (commands.isEmpty()) {
            throw new IllegalArgumentException("a task needs at least one command");
        }
    }

    /** @return the result of a command that completed, or null if it failed, was cancelled or has not ended */
    public static CommandResult resultOf(Submission s) {
        if (!s.isDone()) {
            return null;
        }
        try {
            return s.await();
        } catch (XQueueException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** @return whether every command of the task completed */
    public boolean ok() {
        for (Submission s : commands) {
            if (resultOf(s) == null) {
                return false;
            }
        }
        return true;
    }

    /** @return when the first command was submitted, from its result; -1 unless the task is {@link #ok()} */
    public long firstSubmitNanos() {
        CommandResult r = resultOf(commands.getFirst());
        return r == null ? -1 : r.submitNanos();
    }

    /** @return when the last command ended; -1 unless it completed */
    public long endNanos() {
        CommandResult r = resultOf(commands.getLast());
        return r == null ? -1 : r.endNanos();
    }

    /** @return submit of the first command to the end of the last, or -1 unless the task is {@link #ok()} */
    public long latencyNanos() {
        return ok() ? endNanos() - firstSubmitNanos() : -1;
    }

    /** @return whether the last command has ended in any way */
    public boolean done() {
        return commands.getLast().isDone();
    }
}
