package dev.xq.external.spi;

import org.osgi.annotation.versioning.ProviderType;

/** The runtime's service: adds queues whose commands someone else launches. */
@ProviderType
public interface ExternalQueues {
    /**
     * Opens a queue and lets the scheduler decide for it from now on. The node calls
     * {@code control.apply} at once with the queue's starting limits.
     *
     * @throws IllegalArgumentException for a bad spec, naming the value
     */
    ExternalQueue open(ExternalQueueSpec spec, ExternalQueueControl control);
}
