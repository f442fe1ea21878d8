package dev.xq.runtime.scheduler;

import dev.xq.runtime.scheduler.PolicyRegistry.Registered;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Watches the decision under way: one that runs past the deadline is handed to the scheduler to
 * be taken away (its policy set aside, its thread abandoned). It never interrupts or runs a
 * policy itself. It wakes every half deadline, so an overrun is caught within 1.5 deadlines (200
 * wake-ups a second at the default deadline of 10 ms).
 *
 * <p>The record of the decision under way is shared with the deciding thread: whoever swaps it
 * out of the reference (the decider at its end, or the scheduler when it takes the decision
 * away) owns the decision's end.
 */
final class Watchdog {

    /**
     * A decision under way: its policy (null for the built-in one), when it started, and on which
     * thread; {@code left} is set by that thread when, after the decision was taken away from it,
     * it came out of the policy (the policy may then be retried: {@link RetryBackoff}).
     */
    record InProgress(Registered policy, long startNanos, long startCpuNanos, long threadId,
                      java.util.concurrent.atomic.AtomicBoolean left) {
    }

    private final AtomicReference<InProgress> inProgress;
    private final LongSupplier deadlineNanos;
    private final BooleanSupplier running;
    private final BiConsumer<InProgress, String> takeAway;

    /**
     * @param takeAway called with the overrunning decision and why; takes it away unless it ended meanwhile
     */
    Watchdog(AtomicReference<InProgress> inProgress, LongSupplier deadlineNanos, BooleanSupplier running,
             BiConsumer<InProgress, String> takeAway) {
        this.inProgress = inProgress;
        this.deadlineNanos = deadlineNanos;
        this.running = running;
        this.takeAway = takeAway;
    }

    Thread start() {
        Thread w = new Thread(this::watch, "xq-watchdog");
        w.setDaemon(true);
        w.start();
        return w;
    }

    private void watch() {
        while (running.getAsBoolean()) {
            long deadline = deadlineNanos.getAsLong();
            LockSupport.parkNanos(this, Math.max(500_000L, deadline / 2));
            if (!running.getAsBoolean()) {
                return;
            }
            InProgress d = inProgress.get();
            // the built-in policy is the node's own and is not watched
            String overrun = d == null || d.policy() == null ? null : overrun(d, deadline);
            if (overrun != null) {
                takeAway.accept(d, overrun);
            }
        }
    }

    /**
     * Whether the decision under way ran past its deadline: the deadline counts the CPU time
     * the deciding thread used, so that a thread the OS did not run (a loaded host) or a JVM
     * pause is not blamed on the policy; a decision that waits without using CPU (a lock, a
     * sleep) is caught by a wall-clock limit of ten deadlines.
     */
    static String overrun(InProgress d, long deadline) {
        long wall = System.nanoTime() - d.startNanos();
        long cpu = ThreadClock.of(d.threadId());
        if (cpu >= 0 && d.startCpuNanos() >= 0) {
            if (cpu - d.startCpuNanos() > deadline) {
                return "decision used more than its deadline of " + deadline / 1000 + " us of CPU";
            }
            if (wall > 10 * deadline) {
                return "decision did not return within " + 10 * deadline / 1000 + " us (ten deadlines)";
            }
            return null;
        }
        return wall > deadline ? "decision ran past its deadline of " + deadline / 1000 + " us" : null;
    }
}
