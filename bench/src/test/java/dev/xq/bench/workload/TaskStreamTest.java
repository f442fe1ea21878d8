package dev.xq.bench.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TaskStreamTest {

    private final ScheduledExecutorService device = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        device.shutdownNow();
    }

    /** What a stream's thread waited on. */
    private record Wait(String thread, long sequence, long timeoutNanos, long atNanos) { }

    /** A queue whose every command ends a fixed time after its submit, and which records the waits on it. */
    private final class TimedQueue implements XQueue {
        final long lastsNanos;
        final AtomicLong sequence = new AtomicLong();
        final List<Wait> waits = new CopyOnWriteArrayList<>();

        TimedQueue(long lastsNanos) {
            this.lastsNanos = lastsNanos;
        }

        @Override
        public Submission submit(Command command) {
            long seq = sequence.incrementAndGet();
            long submitted = System.nanoTime();
            CompletableFuture<CommandResult> f = new CompletableFuture<>();
            device.schedule(() -> f.complete(new CommandResult(seq, submitted, submitted, System.nanoTime())), lastsNanos, TimeUnit.NANOSECONDS);
            return new Submission() {
                @Override
                public long sequence() {
                    return seq;
                }

                @Override
                public Command command() {
                    return command;
                }

                @Override
                public CompletionStage<CommandResult> stage() {
                    return f;
                }

                @Override
                public boolean isDone() {
                    return f.isDone();
                }

                @Override
                public CommandResult await() throws InterruptedException {
                    throw new AssertionError("a periodic stream never waits without a bound");
                }

                @Override
                public CommandResult await(Duration timeout) throws InterruptedException, TimeoutException {
                    waits.add(new Wait(Thread.currentThread().getName(), seq, timeout.toNanos(), System.nanoTime()));
                    try {
                        return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
                    } catch (ExecutionException e) {
                        throw new IllegalStateException(e);
                    }
                }
            };
        }

        @Override
        public long handle() {
            return 1;
        }

        @Override
        public String device() {
            return "test0";
        }

        @Override
        public void waitAll() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void waitAll(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void suspend() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void resume() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void hint(Hint hint) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<Hint> hints() {
            return List.of();
        }

        @Override
        public void configure(QueueConfig config) {
            throw new UnsupportedOperationException();
        }

        @Override
        public XQueueStatus status() {
            throw new UnsupportedOperationException();
        }

        @Override
        public AutoCloseable onStateChange(Consumer<QueueState> listener) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }

    private static List<TaskRecord> run(TaskStream s, long millis) throws InterruptedException {
        s.start();
        Thread.sleep(millis);
        s.stop();
        s.join(Duration.ofSeconds(5));
        return s.records();
    }

    @Test
    void aPeriodicTenantWaitsForEachTasksLastCommandUntilItsNextRelease() throws Exception {
        long period = 20_000_000L;
        TimedQueue q = new TimedQueue(3_000_000L);
        List<TaskRecord> tasks = run(TaskStream.periodic("fg", q, new Ledger(), TaskShape.spins(3, 100), period), 150);
        assertTrue(tasks.size() >= 4, "tasks " + tasks.size());
        assertTrue(q.waits.size() >= tasks.size() - 1, "waits " + q.waits + " for " + tasks.size() + " tasks");
        for (Wait w : q.waits) {
            assertEquals("xq-bench-fg", w.thread());
            assertEquals(0, w.sequence() % 3, "waited on command " + w.sequence() + ", not a task's last");
            assertTrue(w.timeoutNanos() > 0 && w.timeoutNanos() <= period, "timeout " + w.timeoutNanos());
        }
    }

    @Test
    void aPeriodicTenantWhoseTasksOutlastThePeriodIsStillReleasedOnTime() throws Exception {
        long period = 10_000_000L;
        TimedQueue q = new TimedQueue(35_000_000L);
        List<TaskRecord> tasks = run(TaskStream.periodic("fg", q, new Ledger(), TaskShape.spins(1, 100), period), 200);
        // waiting for each task in turn would give ~6 tasks in 200 ms; on time gives ~20
        assertTrue(tasks.size() >= 14, "tasks " + tasks.size());
        for (int i = 1; i < tasks.size(); i++) {
            assertEquals(period, tasks.get(i).releaseNanos() - tasks.get(i - 1).releaseNanos(), "release " + i);
        }
        for (Wait w : q.waits) {
            assertTrue(w.timeoutNanos() <= period, "waited " + w.timeoutNanos() + " ns, past the next release");
        }
    }
}
