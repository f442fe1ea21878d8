package dev.xq.runtime.engine;

import dev.xq.api.XQueue;
import dev.xq.runtime.scheduler.ScheduledQueue;
import java.time.Duration;

/**
 * A queue the node manages: its own ({@link XQueueImpl}, commands submitted through the API)
 * or an external one ({@link ExternalQueueImpl}, commands launched by a process).
 */
public interface NodeQueue extends XQueue, ScheduledQueue {
    String name();

    String group();

    /** Closes with {@code grace} for work already on the device (where the node holds any). */
    void close(Duration grace);
}
