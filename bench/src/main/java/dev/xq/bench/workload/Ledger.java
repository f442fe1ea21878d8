package dev.xq.bench.workload;

import dev.xq.api.Command;
import dev.xq.api.CommandCancelledException;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.bench.report.Counts;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Counts what becomes of every command a mode submits, from the client's side: the suite
 * checks the engine's promise that no command is lost rather than trusting its counters.
 */
public final class Ledger {

    private final AtomicLong submitted = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong cancelled = new AtomicLong();
    private final AtomicReference<Throwable> firstFailure = new AtomicReference<>();

    /** Submits {@code c} to {@code q} and counts how it ends. */
    public Submission submit(XQueue q, Command c) {
        Submission s = q.submit(c);
        submitted.incrementAndGet();
        s.stage().whenComplete((r, e) -> {
            if (e == null) {
                completed.incrementAndGet();
                return;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof CommandCancelledException) {
                cancelled.incrementAndGet();
            } else {
                failed.incrementAndGet();
                firstFailure.compareAndSet(null, cause);
            }
        });
        return s;
    }

    /** @return the counts now */
    public Counts counts() {
        // Read the outcomes first: a command counted as ended is always counted as submitted.
        long c = completed.get();
        long f = failed.get();
        long x = cancelled.get();
        return new Counts(submitted.get(), c, f, x);
    }

    /** @return commands submitted that have not ended yet */
    public long outstanding() {
        return counts().lost();
    }

    /**
     * Waits until every submitted command has ended, or {@code timeout} passes.
     * @return the counts then; {@link Counts#lost()} is what had not ended
     */
    public Counts settle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (outstanding() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        return counts();
    }

    /** @return the first failure seen, or null */
    public Throwable firstFailure() {
        return firstFailure.get();
    }
}
