package dev.xq.external.spi;

import dev.xq.api.QueueConfig;
import org.osgi.annotation.versioning.ConsumerType;

/** Implemented by the bundle that owns an external queue: reads it and enforces decisions. */
@ConsumerType
public interface ExternalQueueControl {
    /** The counters now. Called in every scheduling decision: cheap, never blocking. */
    ExternalCounters counters();

    /**
     * Holds the queue back ({@code held}) or lets it go, and sets its launch limits. Called by
     * the deciding thread: must not block (a peer that does not listen must not stall the node).
     */
    void apply(boolean held, QueueConfig config);
}
