package dev.xq.runtime.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Waiting for an application queue's outstanding commands: its waitAll calls and its close's grace. */
final class QueueWaits {

    private QueueWaits() {
    }

    /** Waits for each of {@code outstanding} to end, however it ends. */
    static void all(List<SubmissionImpl> outstanding) throws InterruptedException {
        // each await spins near its command's end where awaitSpinMicros says so, as Submission.await does
        for (SubmissionImpl s : outstanding) {
            try {
                s.await();
            } catch (RuntimeException ignored) {
                // failures and cancellations are the submitter's to see through its Submission
            }
        }
    }

    /** Waits for each of {@code outstanding} to end until {@code deadline}; then throws what {@code timedOut} says. */
    static void all(List<SubmissionImpl> outstanding, long deadline, Supplier<String> timedOut)
            throws InterruptedException, TimeoutException {
        for (SubmissionImpl s : outstanding) {
            try {
                s.await(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (RuntimeException ignored) {
                // ended; how is the submitter's business
            } catch (TimeoutException e) {
                throw new TimeoutException(timedOut.get());
            }
        }
    }

    /** Close's grace: lets {@code outstanding} end until {@code deadline}; what is still running is the caller's. */
    static void grace(List<SubmissionImpl> outstanding, long deadline) {
        for (SubmissionImpl s : outstanding) {
            try {
                s.future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
                // ended another way, or still running: handled below
            }
        }
    }
}
