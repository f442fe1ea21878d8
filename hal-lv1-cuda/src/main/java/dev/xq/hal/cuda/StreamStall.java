package dev.xq.hal.cuda;

import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.Preemption;
import java.util.List;

/**
 * Level 2 of one CUDA queue ({@link CudaQueue}) by stalling in place: commands stay on the
 * stream, held by the guard in front of each; nothing is handed back to the runtime. The runtime
 * calls deactivate and reactivate under the queue's control lock, never concurrently; launches
 * may run beside them (a command launched unguarded just then runs, as at level 1).
 */
final class StreamStall implements Preemption {

    /** How many of its last holds a queue keeps for chained starts. */
    static final int HOLDS = 8;

    private final CudaQueue queue;
    private final CudaDevice device;

    StreamStall(CudaQueue queue, CudaDevice device) {
        this.queue = queue;
        this.device = device;
    }

    /** The flag word in device memory, 0 until the first deactivate (or the first launch, with stall=always). */
    private volatile long word;
    private volatile boolean held;
    /** Adaptive: guard launches until then (System.nanoTime). */
    private volatile long guardUntil;

    @Override
    public PreemptionLevel level() {
        return PreemptionLevel.DEACTIVATE;
    }

    /** The last holds' host times, [from, to) with to = Long.MAX_VALUE while one lasts: a ring, guarded by this. */
    private final long[] holdFrom = new long[HOLDS];
    private final long[] holdTo = new long[HOLDS];
    private int holds;

    @Override
    public List<HwCommand> deactivate() {
        if (queue.isClosed()) {
            return List.of();
        }
        long w = word();
        synchronized (this) {
            int i = holds++ % HOLDS;
            holdFrom[i] = System.nanoTime();
            holdTo[i] = Long.MAX_VALUE;
        }
        held = true;
        device.writeFlag(w, 1);
        return List.of();
    }

    @Override
    public void reactivate() {
        long w = word;
        if (w == 0) {
            return;
        }
        guardUntil = System.nanoTime() + device.stallHoldNanos();
        device.writeFlag(w, 0);
        held = false;
        synchronized (this) {
            if (holds > 0) {
                holdTo[(holds - 1) % HOLDS] = System.nanoTime();
            }
        }
    }

    /**
     * A guarded command that could have started at {@code t}: where the holds let it start.
     *
     * @return t, or the end of the hold that covered it (repeatedly), or Long.MAX_VALUE if a hold covers it still
     */
    synchronized long startAfterHolds(long t) {
        boolean moved = true;
        for (int round = 0; moved && round <= HOLDS; round++) {
            moved = false;
            for (int k = 0; k < Math.min(holds, HOLDS); k++) {
                if (holdFrom[k] <= t && t < holdTo[k]) {
                    t = holdTo[k];
                    moved = true;
                }
            }
        }
        return t;
    }

    @Override
    public void interrupt() {
        throw new IllegalStateException("cuda queue '" + queue.name() + "' offers level 2 (deactivate), not level 3 (interrupt)");
    }

    @Override
    public void restore() {
        throw new IllegalStateException("cuda queue '" + queue.name() + "' offers level 2 (deactivate), not level 3 (restore)");
    }

    private long word() {
        long w = word;
        if (w == 0) {
            synchronized (this) {
                w = word;
                if (w == 0) {
                    w = device.flagWord();
                    word = w;
                }
            }
        }
        return w;
    }

    /** Whether the runtime said the next launch may go unguarded; read and cleared by {@link #guardFor}. */
    private volatile boolean unheldNext;

    @Override
    public void nextLaunchUnheld(boolean unheld) {
        unheldNext = unheld;
    }

    /**
     * Caller holds launchLock: @return the flag word to guard the next launch with, or 0 for
     * none. {@code adaptive} leaves out the guard of a launch the runtime said may go unheld
     * (it foresees no deactivate before that command ends); {@code always} guards every one.
     */
    long guardFor(long now) {
        boolean unheld = unheldNext;
        unheldNext = false;
        return switch (device.stallMode()) {
            case ALWAYS -> word();
            case ADAPTIVE -> !unheld && word != 0 && (held || now - guardUntil < 0) ? word : 0;
            case OFF -> 0;
        };
    }

    /** @return whether a deactivate holds the queue now */
    boolean held() {
        return held;
    }

    /** The queue goes away: let whatever it holds run out. */
    void release() {
        long w = word;
        if (w != 0 && held) {
            try {
                device.writeFlag(w, 0);
            } catch (RuntimeException e) {
                device.log().warn("cuda queue '" + queue.name() + "': its level 2 flag could not be lowered at release", e);
            }
            held = false;
        }
    }
}
