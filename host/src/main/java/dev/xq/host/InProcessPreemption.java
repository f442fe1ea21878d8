package dev.xq.host;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one process offers to preempt inside itself (docs/processes.md): level 2, the CUDA
 * interposer's stall of a held stream's launched work (nothing to ask), or level 3, the HIP
 * interposer's interrupts, which the node asks for with SUSPEND and RESUME lines; and what the
 * process reported of them ({@code LV3} lines). Set by its HELLO on the session thread; the
 * counts are bumped by whichever thread sends or reads.
 */
final class InProcessPreemption {

    private volatile boolean lv3Offered;
    /** The CUDA interposer stalls what a held stream launched (XQ_STALL=1): shown, nothing to ask. */
    private volatile boolean lv2Offered;
    private volatile boolean interrupts;
    private final AtomicLong lv3Suspended = new AtomicLong();
    private final AtomicLong lv3Resumed = new AtomicLong();
    private final AtomicLong lv3Failed = new AtomicLong();
    /** SUSPEND and RESUME lines sent. */
    private final AtomicLong lv3Asked = new AtomicLong();
    private volatile String lv3LastFailure;

    /** At HELLO: the capabilities offered, and whether the node asks processes for interrupts. */
    void hello(List<String> caps, boolean interruptProcesses) {
        lv3Offered = caps.contains("lv3");
        lv2Offered = caps.contains("lv2");
        interrupts = lv3Offered && interruptProcesses;
    }

    boolean lv3Offered() {
        return lv3Offered;
    }

    /** Whether this process is asked to stop its streams' GPU queues (Lv3). */
    boolean interrupts() {
        return interrupts;
    }

    /** A SUSPEND or RESUME line is about to go. */
    void asking() {
        lv3Asked.incrementAndGet();
    }

    /** ... and it did not: the socket's buffer was full, or the session is ending. */
    void notAsked() {
        lv3Asked.decrementAndGet();
    }

    /** An {@code LV3 <slot> suspended} or {@code resumed} line. */
    void done(boolean suspended) {
        (suspended ? lv3Suspended : lv3Resumed).incrementAndGet();
    }

    /** An {@code LV3 <slot> failed <reason>} line. */
    void failed(String reason) {
        lv3Failed.incrementAndGet();
        lv3LastFailure = reason;
    }

    /**
     * The LV2/3 column: "lv2" a CUDA process that stalls its held streams' launched work itself;
     * for Lv3: "-" not offered, "off" not asked by this node, else suspends done and failed (the last reason).
     */
    String display() {
        if (lv2Offered) {
            return "lv2";
        }
        if (!lv3Offered) {
            return "-";
        }
        if (!interrupts) {
            return "off";
        }
        long failed = lv3Failed.get();
        return lv3Suspended.get() + " suspended" + (failed == 0 ? "" : ", " + failed + " failed (" + lv3LastFailure + ")");
    }
}
