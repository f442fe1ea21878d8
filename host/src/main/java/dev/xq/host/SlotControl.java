package dev.xq.host;

import dev.xq.api.QueueConfig;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueueControl;
import dev.xq.external.spi.ExternalQueueGuard;
import dev.xq.external.spi.ExternalQueueShare;

/**
 * One stream's queue as the node reaches it: counters from the process's half of the slot,
 * decisions into the node's half, and a {@code GATE} line when held threads should look again.
 * Retired when its stream closes, so that a slot reused by a later stream is not driven by the
 * queue that had it before.
 */
final class SlotControl implements ExternalQueueControl, ExternalQueueGuard, ExternalQueueShare {

    private final Session session;
    private final SharedMemory memory;
    private final int slot;
    private volatile boolean retired;
    /** The process heard {@code Q} for this stream: before that no thread of it waits on the slot, and a GATE would come before the answer it waits for */
    private volatile boolean answered;
    /** The node holds the queue, as last applied (for SUSPEND and RESUME on a change; deciding thread) */
    private boolean held;
    private final int smShare;
    private final boolean heldInTime;
    private final long holdBehindMicros;
    private volatile boolean narrows;
    private final boolean ownContext;

    /**
     * @param smShare the process's share of the device in space (100: all of it, or not an MPS client)
     * @param heldInTime whether the scheduler's holds and limits apply (see {@link ExternalQueueShare})
     * @param holdBehindMicros see {@link ExternalQueueShare#holdBehindMicros()}
     */
    SlotControl(Session session, SharedMemory memory, int slot, int smShare, boolean heldInTime, long holdBehindMicros) {
        this(session, memory, slot, smShare, heldInTime, holdBehindMicros, false);
    }

    /** @param narrows the process can be narrowed (it said so, and the node lets it): see {@link ExternalQueueShare#narrows()} */
    SlotControl(Session session, SharedMemory memory, int slot, int smShare, boolean heldInTime, long holdBehindMicros,
                boolean narrows) {
        this(session, memory, slot, smShare, heldInTime, holdBehindMicros, narrows, false);
    }

    /** @param ownContext the process is not a client of the node's MPS server while it runs: see {@link ExternalQueueShare#ownContext()} */
    SlotControl(Session session, SharedMemory memory, int slot, int smShare, boolean heldInTime, long holdBehindMicros,
                boolean narrows, boolean ownContext) {
        this.ownContext = ownContext;
        this.narrows = narrows;
        this.session = session;
        this.memory = memory;
        this.slot = slot;
        this.smShare = smShare;
        this.heldInTime = heldInTime;
        this.holdBehindMicros = holdBehindMicros;
    }

    @Override
    public long holdBehindMicros() {
        return holdBehindMicros;
    }

    @Override
    public boolean narrows() {
        return narrows;
    }

    /** The process said its narrowing stopped ({@code NARROW off}): held in time from now on. */
    void narrowingStopped() {
        narrows = false;
    }

    @Override
    public synchronized void narrow(int reserveSms) {
        if (narrows && !retired) {
            memory.reserve(slot, reserveSms);
        }
    }

    @Override
    public synchronized void part(int index, int count) {
        if (narrows && !retired) {
            memory.part(slot, index, count);
        }
    }

    @Override
    public synchronized void share(int offset, int width) {
        if (narrows && !retired) {
            memory.share(slot, offset, width);
        }
    }

    @Override
    public int widthSms() {
        return retired ? 0 : widest(memory.width(slot));
    }

    @Override
    public int stretchWidthSms() {
        return retired ? 0 : stretch(memory.width(slot));
    }

    @Override
    public int deviceSms() {
        return retired ? 0 : sms(memory.width(slot));
    }

    /** The widest launch of a slot's width word ({@link SharedMemory#S_WIDTH}): of the stream's last seconds of launching. */
    static int widest(int word) {
        return word < 0 ? word & 0x3ff : word & 0xffff;
    }

    /** The widest launch of the stream's current stretch of work, from its width word; the widest where the word has none. */
    static int stretch(int word) {
        return word < 0 ? word >>> 10 & 0x3ff : word & 0xffff;
    }

    /** The device's multiprocessors, from a slot's width word. */
    static int sms(int word) {
        return word < 0 ? word >>> 20 & 0x7ff : word >>> 16;
    }

    @Override
    public boolean ownContext() {
        return ownContext;
    }

    /** Busy periods whose device lag the process told ({@code WAKE <slot> <lag>}), and how many were slow. */
    private final java.util.concurrent.atomic.AtomicLong lags = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong slowLags = new java.util.concurrent.atomic.AtomicLong();

    /** The process told a busy period's device lag, in microseconds (the session's thread). */
    void lagged(long micros) {
        if (micros >= SLOW_LAG_MICROS) {
            slowLags.incrementAndGet();
        }
        lags.incrementAndGet();
    }

    @Override
    public long lags() {
        return lags.get();
    }

    @Override
    public long slowLags() {
        return slowLags.get();
    }

    @Override
    public long hostWaits() {
        return session.hostWaits();
    }

    @Override
    public int smSharePercent() {
        return smShare;
    }

    @Override
    public boolean heldInTime() {
        return heldInTime;
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
        if (memory.apply(slot, held, config) && answered) {
            session.sendGate(slot);
        }
        // Lv3: the process stops the stream's GPU queue while the node holds it (the gate already
        // holds new launches; this also stops what is in flight), and lets it go with the gate
        if (held != this.held) {
            this.held = held;
            if (answered) {
                session.sendInterrupt(held, slot);
            }
        }
    }

    /**
     * Into the slot; no wake-up: a thread the guard holds waits no longer than the guard lasts, and
     * the node holds the queue itself when the other queue arrives.
     */
    @Override
    public synchronized void guard(long horizonNanos, long untilNanos) {
        if (!retired) {
            memory.guard(slot, horizonNanos, untilNanos);
        }
    }

    /**
     * The {@code Q} line is going out (the session holds its send lock, so a wake-up sent from
     * now on follows it). One due before is not sent: the stream's first launches are still being
     * registered, and a thread that does wait reads the slot again at each completion and every
     * 100 ms.
     */
    void answered() {
        answered = true;
    }

    /**
     * No decision reaches the slot from now on, and the ones that would outlive the stream are
     * cleared: a later stream in this slot starts unguarded, on the whole device. Under the lock of
     * the writes: a guard the scheduler was writing for the closed queue as it closed landed after
     * the clear, and was the next stream's (HostServerTest found the clear racing the close).
     */
    synchronized void retire() {
        retired = true;
        memory.guard(slot, 0, 0);
        memory.reserve(slot, 0);
        memory.part(slot, 0, 1);
    }
}
