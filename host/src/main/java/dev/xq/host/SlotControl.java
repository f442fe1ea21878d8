package dev.xq.host;

import dev.xq.api.QueueConfig;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueueControl;

/**
 * One stream's queue as the node reaches it: counters from the process's half of the slot,
 * decisions into the node's half, and a {@code GATE} line when held threads should look again.
 * Retired when its stream closes, so that a slot reused by a later stream is not driven by the
 * queue that had it before.
 */
final class SlotControl implements ExternalQueueControl {

    private final Session session;
    private final SharedMemory memory;
    private final int slot;
    private volatile boolean retired;

    SlotControl(Session session, SharedMemory memory, int slot) {
        this.session = session;
        this.memory = memory;
        this.slot = slot;
    }

    @Override
    public ExternalCounters counters() {
        return retired ? ExternalCounters.IDLE : memory.counters(slot);
    }

    @Override
    public void apply(boolean held, QueueConfig config) {
        if (retired) {
            return;
        }
        if (memory.apply(slot, held, config)) {
            session.sendGate(slot);
        }
    }

    void retire() {
        retired = true;
    }
}
