package dev.xq.policy.spi;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * XQ's rule for space, for policies that decide it ({@link Policy#decidesSpace()}) and for the
 * node, which applies it with its defaults to the holds of policies that do not: what a
 * narrowable queue ({@link QueueSpace#narrowable()}) does beside the queues the policy prefers
 * on its device, measured on an H200 with mixes of unmodified PyTorch processes.
 *
 * <ul>
 *   <li>Held behind preferred queues, it is <b>narrowed</b>: it runs on the device less the
 *       multiprocessors the preferred queues' launches could fill (their widest, rounded up to
 *       {@value #STEP}, at least {@value #STEP}, at most half the device), instead of stopping: behind a
 *       launch-bound tenant a hold idles most of the device (training at 0.35 of its native
 *       speed behind an eager decoder).</li>
 *   <li>Unless a preferred queue <b>with work</b> is wider than half the device (a CUDA graph,
 *       a large batch) and the queue's commands are short: then it is <b>held</b> in time, as
 *       before space was decided. Wide by its current stretch of work (since 1.5): a chat server
 *       is wide for its prefill, then launches small kernels a token for tens of milliseconds,
 *       beside which training is narrowed, not held (held through them, it ran at 0.69 of its
 *       native-sharing speed on an H100). Narrowed to half, such a tenant runs on half the device
 *       (ResNet-50 graph inference beside narrowed training: 1.5-2.1 x its standalone P99).
 *       Optional ({@code holdBehindWide}).</li>
 *   <li>A queue of long commands (average {@value #LONG_COMMAND_NANOS} ns or more) stays narrowed
 *       while a preferred queue is open on the device, even when it runs: one 21 ms kernel
 *       launched on the whole device in a pause would hold the preferred tenant's next request
 *       as long (no level on NVIDIA cuts a running kernel). The node knows better where the
 *       preferred tenants are wide and arrive on a beat: there it turns such a narrowing into a
 *       hold while they work and a run on the whole device, under their arrival guards, between
 *       their requests (its "wide beats", {@code dev.xq.scheduler} {@code wideBeats}); beside
 *       narrow preferred tenants without such a beat (an eager decoder), a run on the device less
 *       their reserve.</li>
 *   <li>Narrowing leaves room only to preferred queues in the same space: a preferred queue in a
 *       context of its own ({@link QueueSpace#ownContext()}: the GPU time-slices it against the
 *       shared context, so no kernel of it ever runs beside the narrowed queue's) counts for
 *       whether to hold (behind a busy one wider than half the device), never for how far to
 *       narrow. Behind own-context queues only, a queue is held (behind a wide busy one) or
 *       runs on the whole device, whatever its commands' length: the GPU's time slices, not
 *       a narrowing, are what shares the device with them (since 1.4).</li>
 * </ul>
 *
 * @since 1.3
 */
public final class SpaceRule {

    /** {@link #leave} of a queue to hold in time. */
    public static final int HOLD = -1;

    /** The step of a device's partitions (green contexts on Hopper): what reserves are rounded to. */
    public static final int STEP = 8;

    /** Commands this long on average or longer stay narrowed while a preferred queue is open. */
    public static final long LONG_COMMAND_NANOS = 1_000_000L;

    /** The node's default for holding short commands behind a preferred queue wider than half the device. */
    public static final boolean DEFAULT_HOLD_BEHIND_WIDE = true;

    private SpaceRule() {
    }

    /**
     * @param deviceSms the device's multiprocessors, 0 when not known (128 assumed)
     * @return the most a reserve may be: half the device, in steps, at least one step
     */
    public static int cap(int deviceSms) {
        return Math.max(STEP, (deviceSms > 0 ? deviceSms : 128) / 2 / STEP * STEP);
    }

    /**
     * The rule itself, for preferred queues that all share the device's space (none in a context
     * of its own): {@link #leave(int, int, int, int, long, boolean, boolean)} with
     * {@code widestSharedPreferred} = {@code widestPreferred}.
     */
    public static int leave(int deviceSms, int widestPreferred, int widestBusyPreferred, long commandNanos, boolean held,
                            boolean holdBehindWide) {
        return leave(deviceSms, widestPreferred, widestBusyPreferred, widestPreferred, commandNanos, held, holdBehindWide);
    }

    /**
     * The rule itself.
     *
     * @param deviceSms the device's multiprocessors, 0 when not known
     * @param widestPreferred the widest of the open preferred queues on the device, -1: none
     * @param widestBusyPreferred the widest of those with work, by their current stretch of work
     *     ({@link QueueSpace#stretchWidthSms()}), -1: none
     * @param widestSharedPreferred the widest of the open preferred queues in the device's shared
     *     space (not {@link QueueSpace#ownContext()}), -1: none
     * @param commandNanos the queue's average command, 0 when not known
     * @param held whether the policy holds the queue (else it lets it run)
     * @param holdBehindWide whether short commands are held behind a busy preferred queue wider than half the device
     * @return {@link #HOLD}; 0: the whole device; n &gt; 0: run on the device less n multiprocessors
     * @since 1.4
     */
    public static int leave(int deviceSms, int widestPreferred, int widestBusyPreferred, int widestSharedPreferred,
                            long commandNanos, boolean held, boolean holdBehindWide) {
        if (widestPreferred < 0) {
            return held ? HOLD : 0; // nothing preferred: a hold for another reason stays one
        }
        int cap = cap(deviceSms);
        boolean behindWide = held && holdBehindWide && widestBusyPreferred > cap;
        if (widestSharedPreferred < 0) {
            // every preferred queue has a context of its own: the GPU time-slices them against
            // this one, a narrowing would leave them nothing
            return behindWide ? HOLD : 0;
        }
        boolean longCommands = commandNanos >= LONG_COMMAND_NANOS;
        if (!held && !longCommands) {
            return 0;
        }
        if (behindWide && !longCommands) {
            return HOLD;
        }
        return Math.min(cap, Math.max(STEP, (widestSharedPreferred + STEP - 1) / STEP * STEP));
    }

    /**
     * What {@code q} does in space as a policy that decided to hold it (or to let it run) sees
     * it: {@link #HOLD}, 0 (the whole device) or the multiprocessors to leave
     * ({@link Decision#narrow}). A queue that cannot be narrowed is held or runs.
     */
    public static int leave(SchedulerView view, Above above, QueueView q, boolean held, boolean holdBehindWide) {
        QueueSpace s = view.space(q.handle());
        if (!s.narrowable()) {
            return held ? HOLD : 0;
        }
        int p = q.priority();
        return leave(Math.max(s.deviceSms(), above.deviceSms()), above.widest(p), above.widestBusy(p), above.widestShared(p),
                q.estimatedCommandNanos(), held, holdBehindWide);
    }

    /**
     * Applies the rule to one queue of a decision: holds it, narrows it or lets it run.
     *
     * @return what was decided: {@link #HOLD}, 0 (runs on the whole device) or what it leaves
     */
    public static int decide(Decision d, SchedulerView view, Above above, QueueView q, boolean held, boolean holdBehindWide) {
        int leave = leave(view, above, q, held, holdBehindWide);
        if (leave > 0) {
            d.narrow(q, leave);
        } else {
            d.set(q, leave == 0);
        }
        return leave;
    }

    /**
     * The queues of one device by priority, for asking how wide the queues above a priority are
     * (O(log n) a question, O(n log n) to build). A queue whose width is not known (no
     * {@link QueueSpace}) counts as half the device.
     */
    public static final class Above {

        private final int[] priorities; // descending
        private final int[] widest;     // max width over [0, i]
        private final int[] widestBusy; // max width over [0, i] of queues with work, -1: none
        private final int[] widestShared; // max width over [0, i] of queues not in a context of their own, -1: none
        private final int deviceSms;

        /** @param deviceQueues the queues of one device, in any order */
        public Above(SchedulerView view, List<QueueView> deviceQueues) {
            int total = 0;
            for (QueueView q : deviceQueues) {
                total = Math.max(total, view.space(q.handle()).deviceSms());
            }
            deviceSms = total;
            List<QueueView> sorted = new ArrayList<>(deviceQueues);
            sorted.sort(Comparator.comparingInt(QueueView::priority).reversed());
            int n = sorted.size();
            priorities = new int[n];
            widest = new int[n];
            widestBusy = new int[n];
            widestShared = new int[n];
            int unknown = total > 0 ? total / 2 : 64;
            for (int i = 0; i < n; i++) {
                QueueView q = sorted.get(i);
                QueueSpace s = view.space(q.handle());
                int w = s.known() ? s.widthSms() : unknown;
                // behind a busy queue: the width of its current stretch of work (since 1.5)
                int now = s.known() ? Math.min(w, s.stretchWidthSms() > 0 ? s.stretchWidthSms() : w) : unknown;
                boolean busy = q.runnable() || q.inFlight() > 0;
                priorities[i] = q.priority();
                widest[i] = i == 0 ? w : Math.max(widest[i - 1], w);
                widestBusy[i] = Math.max(i == 0 ? -1 : widestBusy[i - 1], busy ? now : -1);
                widestShared[i] = Math.max(i == 0 ? -1 : widestShared[i - 1], s.ownContext() ? -1 : w);
            }
        }

        /** @return the device's multiprocessors as its queues tell, 0 when none does */
        public int deviceSms() {
            return deviceSms;
        }

        /** @return the widest of the queues of a higher priority than {@code priority}, -1: none */
        public int widest(int priority) {
            int k = countAbove(priority);
            return k == 0 ? -1 : widest[k - 1];
        }

        /** @return the widest current stretch of work of the queues with work of a higher priority than {@code priority}, -1: none */
        public int widestBusy(int priority) {
            int k = countAbove(priority);
            return k == 0 ? -1 : widestBusy[k - 1];
        }

        /**
         * @return the widest of the queues of a higher priority than {@code priority} that share
         *     the device's space (not in a context of their own), -1: none
         * @since 1.4
         */
        public int widestShared(int priority) {
            int k = countAbove(priority);
            return k == 0 ? -1 : widestShared[k - 1];
        }

        private int countAbove(int priority) {
            int lo = 0;
            int hi = priorities.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (priorities[mid] > priority) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }
    }
}
