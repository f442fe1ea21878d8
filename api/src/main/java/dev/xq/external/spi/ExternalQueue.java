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

    /** The queue is gone (stream destroyed, process ended). Idempotent. */
    @Override
    void close();
}
