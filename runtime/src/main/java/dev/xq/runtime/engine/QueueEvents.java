package dev.xq.runtime.engine;

/** What a queue tells the node about itself; implemented by the scheduler. */
public interface QueueEvents {
    /** The queue's scheduling-relevant state changed (ready, idle, hint, config, app suspend, error). */
    void changed(XQueueImpl queue);

    /** The queue was closed and must be forgotten. */
    void closed(XQueueImpl queue);

    QueueEvents NONE = new QueueEvents() {
        @Override
        public void changed(XQueueImpl queue) {
        }

        @Override
        public void closed(XQueueImpl queue) {
        }
    };
}
