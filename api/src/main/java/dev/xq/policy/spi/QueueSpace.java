package dev.xq.policy.spi;

/**
 * What the scheduler can do with a queue's place in space, and how much of its device the
 * queue's work fills: the facts a policy needs to decide space beside time
 * ({@link Decision#narrow}, {@link SpaceRule}).
 *
 * <p>On NVIDIA a process under the node's MPS server that can be narrowed runs on the whole
 * device, and its launches can be moved onto part of it (a green context) while queues the policy
 * prefers run; a latency-critical process has the whole device and is never narrowed, but its
 * width tells how much of the device it needs.
 *
 * @param narrowable whether {@link Decision#narrow} is honoured for the queue; false: only time
 *     (run or hold)
 * @param widthSms the multiprocessors the queue's recent launches could fill at once (a CUDA
 *     graph counts as the whole device), 0 when not known
 * @param deviceSms the multiprocessors of the queue's device, 0 when not known
 * @param ownContext whether the queue's process runs in a device context of its own, which the
 *     GPU time-slices against the shared one the narrowable queues run in (on NVIDIA: a process
 *     kept out of the node's MPS server): narrowing others leaves such a queue nothing, since
 *     its kernels never run beside theirs; only holding them in time does (since 1.4)
 * @param stretchWidthSms the multiprocessors the queue's current stretch of work could fill (its
 *     widest launches of its last milliseconds of launching; a stretch begun after a quiet spell
 *     counts as {@code widthSms} until it has launched a few milliseconds), 0 when not known: what
 *     {@link SpaceRule} holds others behind, where {@code widthSms} is what it reserves (since 1.5)
 * @since 1.3
 */
public record QueueSpace(boolean narrowable, int widthSms, int deviceSms, boolean ownContext, int stretchWidthSms) {

    /** A queue the scheduler decides in time only, whose width is not known (an application's queue). */
    public static final QueueSpace NONE = new QueueSpace(false, 0, 0);

    /**
     * A queue in the device's shared space (not {@link #ownContext()}).
     *
     * @throws IllegalArgumentException if a count is negative
     */
    public QueueSpace(boolean narrowable, int widthSms, int deviceSms) {
        this(narrowable, widthSms, deviceSms, false, widthSms);
    }

    /**
     * A queue whose current stretch of work is as wide as its recent launches.
     *
     * @throws IllegalArgumentException if a count is negative
     * @since 1.4
     */
    public QueueSpace(boolean narrowable, int widthSms, int deviceSms, boolean ownContext) {
        this(narrowable, widthSms, deviceSms, ownContext, widthSms);
    }

    /**
     * @throws IllegalArgumentException if a count is negative
     */
    public QueueSpace {
        if (widthSms < 0 || deviceSms < 0 || stretchWidthSms < 0) {
            throw new IllegalArgumentException("widthSms " + widthSms + ", deviceSms " + deviceSms + " and stretchWidthSms "
                    + stretchWidthSms + " must be 0 (not known) or more");
        }
    }

    /** @return whether the queue says how wide it is (its process tells the node) */
    public boolean known() {
        return deviceSms > 0;
    }
}
