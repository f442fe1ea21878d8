package dev.xq.api;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A preemptible command queue in front of one hardware queue. Thread-safe.
 */
@ProviderType
public interface XQueue extends AutoCloseable {

    /** @return this queue's handle, unique on the node */
    long handle();

    /** @return the device id */
    String device();

    /**
     * Submits a command. It is held by XQ (pending) until the scheduler and the launch limits
     * let it go to the hardware queue.
     * @throws IllegalArgumentException if the device does not support this kind of command
     * @throws IllegalStateException if the queue is closed or broken (the message says which)
     */
    Submission submit(Command command);

    /** Waits until every command submitted so far has ended. */
    void waitAll() throws InterruptedException;

    /**
     * Waits at most {@code timeout} until every command submitted so far has ended.
     * @throws TimeoutException if some have not ended by then
     */
    void waitAll(Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Holds the queue back, whatever the scheduler decides, at the queue's level: stop
     * launching (Lv1), deactivate (Lv2), interrupt the running command (Lv3).
     * @throws IllegalStateException after {@link #close()}, as {@code hint} and {@code configure}
     */
    void suspend();

    /**
     * Undoes {@link #suspend()}; the scheduler's own decision still applies.
     * @throws IllegalStateException after {@link #close()}
     */
    void resume();

    /**
     * Sets a hint, replacing an earlier hint of the same kind.
     */
    void hint(Hint hint);

    /** @return the current hints */
    List<Hint> hints();

    /** Changes how the queue launches; takes effect at the next launch. */
    void configure(QueueConfig config);

    /** @return a snapshot of this queue */
    XQueueStatus status();

    /**
     * Calls {@code listener} whenever the queue's {@link QueueState} changes (idle, ready,
     * suspended, error, closed), on the thread that caused the change; keep it short.
     * @return closing it stops the calls
     */
    AutoCloseable onStateChange(java.util.function.Consumer<QueueState> listener);

    /**
     * Closes the queue: pending commands are cancelled with {@link CommandCancelledException};
     * commands already on the device are given time to finish and are cancelled if they do not.
     * Idempotent.
     */
    @Override
    void close();
}
