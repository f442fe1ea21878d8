package dev.xq.api;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The completion handle of one submitted command. It always ends: completed, failed with
 * a {@link CommandFailedException}, or cancelled with a {@link CommandCancelledException}.
 */
@ProviderType
public interface Submission {

    /** @return the command's number within its queue, from 1 */
    long sequence();

    /** @return the command */
    Command command();

    /**
     * @return a stage that completes with the result or exceptionally with
     * {@link CommandFailedException} / {@link CommandCancelledException}; dependent actions
     * given without an executor may run on a driver thread, so keep them short
     */
    CompletionStage<CommandResult> stage();

    /** @return whether the command has ended in any way */
    boolean isDone();

    /**
     * Waits for the command to end.
     * @throws CommandFailedException if it failed
     * @throws CommandCancelledException if its queue was closed before it ran
     */
    CommandResult await() throws InterruptedException;

    /**
     * Waits at most {@code timeout} for the command to end.
     * @throws TimeoutException if it has not ended by then (it keeps going)
     */
    CommandResult await(Duration timeout) throws InterruptedException, TimeoutException;
}
