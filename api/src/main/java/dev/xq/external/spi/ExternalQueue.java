package dev.xq.external.spi;

import dev.xq.api.Hint;
import org.osgi.annotation.versioning.ProviderType;

/** The runtime's side of one external queue, held by the bundle that opened it. */
@ProviderType
public interface ExternalQueue extends AutoCloseable {
    /** @return the XQueue handle operators and policies know it by */
    long handle();

    /** Its counters moved in a way that matters to scheduling (ready or idle): decide again. */
    void changed();

    /** Sets a hint as its owner wishes (e.g. a stream priority learnt later). */
    void hint(Hint hint);

    /**
     * The owner's process can no longer be narrowed ({@link ExternalQueueShare#narrows()} turned
     * false, e.g. its driver failed to make a green context): the scheduler holds it from now on
     * where it would have narrowed it, and a narrowing in force becomes a hold at once.
     *
     * @since 1.3
     */
    default void narrowingStopped() {
    }

    /** The queue is gone (stream destroyed, process ended). Idempotent. */
    @Override
    void close();
}
