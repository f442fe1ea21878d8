package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.Submission;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueControl;
import dev.xq.external.spi.ExternalQueueGuard;
import dev.xq.external.spi.ExternalQueueShare;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SpaceRule;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A queue whose commands another party launches (a process, through the interposer). The node
 * decides for it like for any queue; what it decides goes to its owner's
 * {@link ExternalQueueControl}, which enforces it where the launches happen. Its level is 1:
 * holding launches back is all a process's owner can do from outside the driver.
 */
public final class ExternalQueueImpl implements NodeQueue {

    private final long handle;
    private final ExternalQueueSpec spec;
    private final ExternalQueueControl control;
    private final QueueEvents events;
    private final RuntimeLog log;
    private final StateListeners stateListeners = new StateListeners();

    // guarded by this
    private final Map<Class<? extends Hint>, Hint> hints = new LinkedHashMap<>();
    /** guarded by this: {@link #hints}' values as an immutable list, made when they change (every decision's view shares it) */
    private List<Hint> hintList = List.of();
    private QueueConfig config;
    private boolean suspendedByScheduler;
    private boolean suspendedByApp;
    private boolean closed;
    private long lastResumedNanos;
    private boolean countersFailed;
    private boolean contended = true;
    /** The window while on top of its company, us; 0: not on top (the core tells). */
    private long topWindow;
    private long guardHorizon;
    private long guardUntil;
    /**
     * The owner's process shares the device in space with the whole device to itself
     * ({@link ExternalQueueShare#heldInTime()} false): the scheduler neither holds nor throttles it.
     */
    private final boolean spaceOnly;
    /** On a capped share: held only behind a preferred queue whose commands average this long (ns); -1: not on a capped share */
    private final long holdBehindNanos;
    /**
     * The owner can be narrowed instead of held ({@link ExternalQueueShare#narrows()}): behind a
     * preferred queue the scheduler's hold becomes a reserve left to it.
     */
    private volatile boolean narrows;
    /**
     * The owner is never held in time ({@link #spaceOnly}) but can be narrowed
     * ({@link ExternalQueueShare#narrows()}): a latency-critical process below a wider one of a
     * higher priority. A hold decided for it becomes a narrowing to the upper half of the device
     * while such a queue has work and it is wide itself ({@link QueueEvents#rankedLeave}), else
     * nothing.
     */
    private volatile boolean ranked;
    private final boolean openedNarrowable;
    /** guarded by this: the scheduler's hold is a narrowing (its owner was given {@link #reserve}) */
    private boolean narrowed;
    /** guarded by this: narrowed while a wide queue preferred over it is open (the narrowed window applies) */
    private boolean narrowedTight;
    /** With a part (or measured alone) and no queue preferred over it open on its device: no limits ({@link #company}). */
    private boolean unbounded;
    /** Taking turns with other best-effort processes ({@link #inTurns(boolean)}). */
    private boolean inTurns;
    /** Measured alone ({@link #spell(boolean)}). */
    private boolean spell;
    /** guarded by this: the multiprocessors left to the preferred queues, as last given (0: none) */
    private int reserve;
    /** guarded by this: the part among best-effort processes, as last given (index, count; count 1: all) */
    private int partIndex;
    private int partCount = 1;
    /** guarded by this: a part of its own size, in sixteenths (width 0: none, the equal parts apply) */
    private int shareOffset;
    private int shareWidth;
    /** Another process's turn on all of what best-effort processes may use ({@link BestEffortSplit#alternate}). */
    private volatile boolean offTurn;
    /** What the wide beats last found between the requests of a wide queue above it ({@link #fitGap}), and when. */
    private volatile long fitGapNanos;
    private volatile long fitGapAt;

    ExternalQueueImpl(long handle, ExternalQueueSpec spec, QueueConfig config, ExternalQueueControl control, QueueEvents events,
                      RuntimeLog log) {
        this.handle = handle;
        this.spec = spec;
        this.control = Objects.requireNonNull(control, "control");
        this.events = events;
        this.log = log;
        this.config = config;
        this.spaceOnly = control instanceof ExternalQueueShare share && !heldInTime(share, log);
        this.holdBehindNanos = !spaceOnly && control instanceof ExternalQueueShare share && smShare(share) < 100
                ? Math.max(0, holdBehind(share)) * 1000 : -1;
        boolean canNarrow = control instanceof ExternalQueueShare share && narrows(share, log);
        this.narrows = !spaceOnly && canNarrow;
        this.ranked = spaceOnly && canNarrow;
        this.openedNarrowable = canNarrow;
        for (Hint h : spec.hints()) {
            hints.put(h.getClass(), h);
        }
        hintList = List.copyOf(hints.values());
    }

    private static boolean heldInTime(ExternalQueueShare share, RuntimeLog log) {
        try {
            return share.heldInTime();
        } catch (RuntimeException e) {
            log.error("external queue owner failed to say whether it is held in time; it is", e);
            return true;
        }
    }

    private static boolean narrows(ExternalQueueShare share, RuntimeLog log) {
        try {
            return share.narrows();
        } catch (RuntimeException e) {
            log.error("external queue owner failed to say whether it can be narrowed; it is held instead", e);
            return false;
        }
    }

    /**
     * @return the share of the device's multiprocessors the owner's process may use now (100: all,
     *     or not shared in space); a narrowed queue's is what its reserve leaves
     */
    public int smSharePercent() {
        int r;
        int k;
        int w;
        int o;
        synchronized (this) {
            r = reserve;
            k = partCount;
            w = shareWidth;
            o = shareOffset;
        }
        int total = r > 0 || k > 1 || (w > 0 && w < 16) ? deviceSms() : 0;
        if (total > 0) {
            int n = partSms(total, r, k, w, o);
            return n >= total ? 100 : Math.max(1, n * 100 / total);
        }
        return control instanceof ExternalQueueShare share ? smShare(share) : 100;
    }

    /**
     * The multiprocessors a part comes to, as the interposer reckons it (cuda_narrow.c): the
     * region the reserve leaves, rounded down to {@link #NARROW_STEP}, split by count ({@code k}
     * equal parts) or by width ({@code w} sixteenths at offset {@code o}; the last part takes what
     * the others leave).
     */
    static int partSms(int total, int r, int k, int w, int o) {
        int region = r == 0 ? total : r >= total ? NARROW_STEP : Math.max(NARROW_STEP, (total - r) / NARROW_STEP * NARROW_STEP);
        if (r == 0 && w <= 0 && k <= 1) {
            return total;
        }
        int n = w > 0 ? Math.max(NARROW_STEP, region * w / 16 / NARROW_STEP * NARROW_STEP)
                : k > 1 ? Math.max(NARROW_STEP, region / k / NARROW_STEP * NARROW_STEP) : region;
        if (w > 0 && o + w == 16) {
            int off = region * o / 16 / NARROW_STEP * NARROW_STEP;
            n = Math.max(n, (region - off) / NARROW_STEP * NARROW_STEP);
        }
        return n;
    }

    /** Green contexts come in multiples of 8 multiprocessors on Hopper: what an owner narrows to. */
    static final int NARROW_STEP = 8;

    /** Its process can no longer be narrowed: held where it would be narrowed; a narrowing in force becomes a hold now. */
    void narrowingStopped() {
        synchronized (this) {
            if (!narrows && !ranked) {
                return;
            }
            boolean wasRanked = ranked;
            narrows = false;
            ranked = false;
            if (!narrowed || closed) {
                return;
            }
            narrowed = false;
            reserve = 0;
            if (wasRanked) {
                suspendedByScheduler = false; // never held: the whole device back, nothing more
                shareOffset = 0;
                shareWidth = 0;
                applyRankLocked();
            }
            applyNarrowLocked();
            applyLocked(); // held (a best-effort queue): suspended by the scheduler, no longer narrowed
        }
        fireStateChange();
    }

    /** @return whether this queue, never held in time, is narrowed below wider latency-critical queues of a higher priority */
    public boolean ranked() {
        return ranked;
    }

    /** @return whether its process could be narrowed when the queue opened (the core counts such queues) */
    boolean openedNarrowable() {
        return openedNarrowable;
    }

    /** @return whether the scheduler narrows this queue instead of holding it behind preferred queues */
    public boolean narrows() {
        return narrows;
    }

    /**
     * Its part among the best-effort processes with work on its device (the node's core decides,
     * after each decision); applied when it changed.
     */
    void part(int index, int count) {
        synchronized (this) {
            if (closed || (index == partIndex && count == partCount && shareWidth == 0)) {
                return;
            }
            partIndex = index;
            partCount = count;
            shareOffset = 0;
            shareWidth = 0;
            try {
                ((ExternalQueueShare) control).part(index, count);
            } catch (RuntimeException e) {
                log.error("external queue " + this + ": its owner failed to take its part", e);
            }
            if (unbounded) {
                applyLocked(); // its limits depend on having a part
            }
        }
    }

    /**
     * A part of its own size among the best-effort processes with work on its device: {@code
     * width} sixteenths from the {@code offset}-th ({@link ExternalQueueShare#share}); applied when
     * it changed.
     */
    public void share(int offset, int width) {
        synchronized (this) {
            if (closed || (offset == shareOffset && width == shareWidth)) {
                return;
            }
            shareOffset = offset;
            shareWidth = width;
            partIndex = 0;
            partCount = 1;
            try {
                ((ExternalQueueShare) control).share(offset, width);
            } catch (RuntimeException e) {
                log.error("external queue " + this + ": its owner failed to take its share", e);
            }
            if (unbounded) {
                applyLocked(); // its limits depend on having a part
            }
        }
    }

    /**
     * Another best-effort process's turn begins ({@link BestEffortSplit#alternate}): held in time
     * now, and by every decision while it is off its turn ({@link #holdOffTurn}). The decision that
     * passed the turn may just have let it go between a wide queue's requests.
     *
     * @return whether it was not held already
     */
    boolean holdForTurn(long now) {
        synchronized (this) {
            if (closed || (suspendedByScheduler && !narrowed)) {
                return false;
            }
        }
        inTime(true, now, true);
        return true;
    }

    /**
     * Whether its process is measured alone ({@link BestEffortBalance}: the other best-effort
     * processes held): the limits of a narrowed queue (no threshold; the narrowed window beside a
     * wide tenant) on all of the device. Under a best-effort queue's own limits its rate alone was
     * not its rate: on the H100 a bf16 trainer measured so did fewer commands a second than on half
     * the device beside Triton (1.33 of its "rate alone" there; 23,976 launches refused by the
     * threshold against 11,844 without the spells), and the node moved width away from it.
     */
    void spell(boolean on) {
        synchronized (this) {
            if (spell == on || closed) {
                return;
            }
            spell = on;
            applyLocked();
        }
    }

    /** Whether its process takes turns on all of what best-effort processes may use (its own or another's): a part in time. */
    void inTurns(boolean on) {
        synchronized (this) {
            if (inTurns == on || closed) {
                return;
            }
            inTurns = on;
            if (unbounded) {
                applyLocked(); // its limits depend on having a part
            }
        }
    }

    /** Whether it is another process's turn ({@link BestEffortSplit#alternate}): the wide beats hold it between requests too. */
    void offTurn(boolean off) {
        offTurn = off;
    }

    @Override
    public boolean offTurn() {
        return offTurn;
    }

    /** @return {offset, width} in sixteenths of its part of its own size, {0, 0} when it has none */
    public synchronized int[] share() {
        return new int[] {shareOffset, shareWidth};
    }

    /**
     * The share of the device its part comes to where nothing is reserved (between a wide
     * tenant's requests): the multiprocessors the interposer gives it over the device's, as the
     * interposer scales its whole-device estimate (11 sixteenths of 132 are 88, two thirds, not
     * 0.6875); in sixteenths where the device's size is not known.
     */
    @Override
    public double partFraction() {
        int k;
        int w;
        int o;
        synchronized (this) {
            k = partCount;
            w = shareWidth;
            o = shareOffset;
        }
        double plain = w > 0 ? w / 16.0 : 1.0 / Math.max(1, k);
        if (plain >= 1) {
            return 1;
        }
        int total = deviceSms();
        if (total < NARROW_STEP) {
            return plain;
        }
        return Math.min(1.0, partSms(total, 0, k, w, o) / (double) total);
    }

    /** Whether it had work at the last decision's view: only then does the loop's sweep read its counters. */
    private volatile boolean busyAtView;
    /** guarded by this: the counters' moving parts when they last moved, and when (0: idle) */
    private long frozenLaunched = -1;
    private long frozenCompleted = -1;
    private int frozenPending = -1;
    private long frozenSince;
    /** guarded by this: when the process's state was last looked at while frozen (0: not yet), and what it was */
    private long frozenLookAt;
    private boolean frozenStopped;

    /**
     * The counters as the scheduler sees them ({@link #view}): a stopped process's counters are
     * frozen with it and say it has work it cannot do, held in a launch call or launched before the
     * stop; the scheduler takes it as idle instead, so that a latency-critical process stopped in
     * its request (a debugger, job control) does not hold the others for as long as it stays
     * stopped, nor a best-effort one keep a part or a turn. Only counters that have not moved for
     * {@link #FROZEN_LOOK_NANOS} while it has work are looked behind, by the scheduler's loop
     * ({@link #sweepStopped}); its first completion or launch after it is back moves them and it
     * has work again.
     */
    private ExternalCounters asScheduled(ExternalCounters c, long now) {
        busyAtView = c.ready() && spec.pid() > 0;
        if (!c.ready() || spec.pid() <= 0) {
            backSeen |= frozenStopped;
            frozenSince = 0;
            frozenStopped = false;
            return c;
        }
        if (frozenSince == 0 || c.launched() != frozenLaunched || c.completed() != frozenCompleted || c.pending() != frozenPending) {
            backSeen |= frozenStopped;
            frozenLaunched = c.launched();
            frozenCompleted = c.completed();
            frozenPending = c.pending();
            frozenSince = now;
            frozenLookAt = 0;
            frozenStopped = false;
            return c;
        }
        // the look itself is the scheduler's loop's (sweepStopped): no file is read on the decision path
        return frozenStopped ? new ExternalCounters(0, 0, c.launched(), c.completed(), c.failed(), c.runNanos(), c.estimateNanos(), 0) : c;
    }

    /**
     * guarded by this: a view found the process back (its counters moved after it was found
     * stopped); {@link #view} tells the scheduler once it has let go of this queue's lock
     * ({@link QueueEvents#backFromStop}).
     */
    private boolean backSeen;

    /** Whether the scheduler's loop last found its process stopped, its counters not moved since (no file read here). */
    synchronized boolean seenStopped() {
        return frozenStopped;
    }

    /**
     * Whether a decision to let it go is taken as a hold: its process was found stopped with work
     * (the policy sees it idle, {@link #asScheduled}, and hpf lets an idle queue go where nothing
     * above it is ready). Stopped, it launches nothing either way; continued, what it had announced
     * before the stop would go to the device at once through a gate the policy left open, without
     * the decision that places it (its turn, its part; its guard, still given, reckons with its
     * kernel alone on the device). Three GEMM processes stopped
     * 1.5 s of every 3 beside a large batch, taking turns on its gaps: after a continue the one
     * whose turn it was waited 64 ms for another's kernels, two read 27 ms for their 21.6 ms ones
     * (run side by side), and one of the batch's requests took 38 ms against a median of 7.7
     * (H200, session 57; the open gate is the reading of those lines, not seen directly). Held in
     * time, not narrowed (a narrowed one launches at once too, onto multiprocessors another's turn
     * may be using), it goes once the loop's look finds it back and a decision places it. Not a
     * queue that space alone decides for (never held).
     */
    private boolean heldWhileStopped() {
        return !spaceOnly && seenStopped();
    }

    /** Whether its hold is the one {@link #heldWhileStopped} gave (in time, whatever was decided). */
    private volatile boolean stopHold;

    /** {@code -Dxq.trace.stops=true}: a line on stderr at each step of a stopped process's queue (found stopped, back, asleep, placed). */
    static final boolean TRACE_STOPS = Boolean.getBoolean("xq.trace.stops");
    /** The first word of each arrival timed ({@link #toldNanos}): only with the wide beats' trace. */
    static final boolean TRACE_TOLD = Boolean.getBoolean("xq.trace.wideBeats");
    /** The ready stamp the node was last told of, and when (TRACE_TOLD; toldAt written first). */
    private volatile long toldFor;
    private volatile long toldAt;

    /** The owner's word (a WAKE) read: the first for a new ready stamp is timed. */
    private void told() {
        long since = counters().readySinceNanos();
        if (since != 0 && since != toldFor) {
            toldAt = System.nanoTime();
            toldFor = since;
        }
    }

    @Override
    public long toldNanos(long readySinceNanos) {
        long at = toldAt;
        return readySinceNanos != 0 && toldFor == readySinceNanos ? at : 0;
    }

    /** With {@link #TRACE_STOPS}: how many of the holds and goes applied after a stop's hold ended are still to be traced. */
    private volatile int traceApplies;

    void traceStop(String what) {
        ExternalCounters c = counters();
        dev.xq.runtime.scheduler.TraceLines.line("xq: stops: q" + handle + " (pid " + spec.pid() + ") " + what + " at " + System.currentTimeMillis()
                + " ms: ready " + c.ready() + ", pending " + c.pending() + ", in flight " + c.inFlight() + ", held " + suspendedByScheduler
                + ", narrowed " + narrowed + ", reserve " + reserve + ", stop hold " + stopHold);
    }

    /**
     * Held in time for a stop and found back: the next decision that holds it places it as such a
     * decision does (narrowed, say), not left held in time because it is held already.
     */
    @Override
    public boolean holdStale() {
        return stopHold && !seenStopped();
    }

    /**
     * The scheduler's loop, off the decision path: where the queue has work and its counters have
     * stood still for {@link #FROZEN_LOOK_NANOS} (and it was not looked at for as long), looks at
     * whether its process is stopped. @return whether that changed (the next decision's view shows
     * it: the scheduler decides again)
     */
    boolean sweepStopped(long now) {
        if (!busyAtView) {
            return false; // idle at the last decision (asleep, most of thousands): its counters are not read
        }
        ExternalCounters c = counters();
        synchronized (this) {
            if (closed || !c.ready() || spec.pid() <= 0) {
                return false;
            }
            if (frozenSince == 0 || c.launched() != frozenLaunched || c.completed() != frozenCompleted || c.pending() != frozenPending) {
                frozenLaunched = c.launched();
                frozenCompleted = c.completed();
                frozenPending = c.pending();
                frozenSince = now;
                frozenLookAt = 0;
                boolean was = frozenStopped;
                frozenStopped = false;
                if (TRACE_STOPS && was) {
                    traceStop("moved (back)");
                }
                return was;
            }
            // found stopped, it is looked at again every BACK_LOOK_NANOS (the loop looks that often
            // while one is found stopped): back, it waits for the look that finds it so (its process,
            // waiting for launches it had announced, sends nothing new); running with its counters
            // still, every 100 ms
            long again = frozenStopped ? (now - foundStoppedAt < BACK_LOOK_WINDOW_NANOS ? BACK_LOOK_NANOS : STOPPED_LOOK_NANOS) : FROZEN_LOOK_NANOS;
            if (now - frozenSince < FROZEN_LOOK_NANOS || (frozenLookAt != 0 && now - frozenLookAt < again)) {
                return false;
            }
            boolean was = frozenStopped;
            frozenStopped = was ? ownerStoppedNow() : ownerStopped();
            frozenLookAt = now;
            if (frozenStopped && !was) {
                foundStoppedAt = now;
            }
            if (TRACE_STOPS && frozenStopped != was) {
                traceStop(frozenStopped ? "found stopped" : "found back");
            }
            return frozenStopped != was;
        }
    }

    /**
     * How long a queue's counters must stand still while it has work before the scheduler looks at
     * whether its process is stopped ({@link #asScheduled}): longer than most commands (a 21 ms GEMM
     * moves them every 21 ms), short beside the stops it is for (a debugger, job control, a batch
     * system's suspend: seconds); and then as often while it runs ({@link #STOPPED_LOOK_NANOS} once
     * found stopped: it is looked at again at each of the loop's looks).
     */
    static final long FROZEN_LOOK_NANOS = 100_000_000L;

    /** How long a look at the process's state stands: the node asks at every decision (parts, turns). */
    static final long STOPPED_LOOK_NANOS = 20_000_000L;

    /**
     * Found stopped, how often the loop looks again whether it is back ({@link #sweepStopped}, a
     * read of its {@code /proc} stat, fresh each time). Back from a stop, a process waiting for
     * launches it announced before it sends nothing new, and it stays held until a look finds it
     * back: at the loop's looks 50 ms apart, best-effort trainers beside a decoder completed their
     * first step 20-95 ms after each continue, against about 1 ms natively (H100, session 105).
     */
    static final long BACK_LOOK_NANOS = 5_000_000L;

    /**
     * For how long after it was found stopped a process is looked at every {@link #BACK_LOOK_NANOS};
     * then at the loop's looks, 50 ms apart (a job suspended for hours costs no more than that).
     */
    static final long BACK_LOOK_WINDOW_NANOS = 10_000_000_000L;

    /** guarded by this: when {@link #sweepStopped} last found its process stopped. */
    private long foundStoppedAt;

    /** Whether its process was found stopped less than {@link #BACK_LOOK_WINDOW_NANOS} ago and not seen back since. */
    synchronized boolean stoppedLately(long now) {
        return frozenStopped && now - foundStoppedAt < BACK_LOOK_WINDOW_NANOS;
    }
    private volatile long stoppedLookAt;
    private volatile boolean stoppedSeen;

    @Override
    public boolean ownerStopped() {
        long now = System.nanoTime();
        long at = stoppedLookAt;
        if (at != 0 && now - at < STOPPED_LOOK_NANOS) {
            return stoppedSeen;
        }
        return ownerStoppedNow();
    }

    /** Whether its process is stopped, read now (the look {@link #ownerStopped} keeps for a while). */
    private boolean ownerStoppedNow() {
        long now = System.nanoTime();
        boolean stopped = ProcessState.stopped(pid());
        stoppedSeen = stopped;
        stoppedLookAt = now;
        return stopped;
    }

    @Override
    public void fitGap(long availNanos, long now) {
        fitGapNanos = availNanos;
        fitGapAt = now;
    }

    /**
     * @return the time a wide queue above it leaves between its requests for this queue's commands
     *     (the wide beats' reckoning), as last found no longer ago than {@code maxAgeNanos}; 0: none
     */
    long fitGapWithin(long now, long maxAgeNanos) {
        long at = fitGapAt;
        return at != 0 && now - at <= maxAgeNanos ? fitGapNanos : 0;
    }

    /** @return {index, count}: its part among best-effort processes (count 1: all it may use) */
    public synchronized int[] part() {
        return new int[] {partIndex, partCount};
    }

    @Override
    public synchronized int partCount() {
        return Math.max(1, partCount);
    }

    /** @return the multiprocessors left to preferred queues now (0: the whole device is this queue's) */
    public synchronized int reserve() {
        return reserve;
    }

    /** @return the multiprocessors the queue's recent launches could fill, 0 when not known */
    public int widthSms() {
        return shareCount(ExternalQueueShare::widthSms);
    }

    /** @return the multiprocessors the queue's current stretch of work could fill, 0 when not known */
    public int stretchWidthSms() {
        return shareCount(ExternalQueueShare::stretchWidthSms);
    }

    /** @return the multiprocessors of the queue's device, 0 when not known */
    public int deviceSms() {
        return shareCount(ExternalQueueShare::deviceSms);
    }

    @Override
    public long[] lags() {
        if (control instanceof ExternalQueueShare share) {
            try {
                return new long[] {Math.max(0, share.lags()), Math.max(0, share.slowLags())};
            } catch (RuntimeException e) {
                return new long[2];
            }
        }
        return new long[2];
    }

    /** @return the process's waits on the device so far (ExternalQueueShare.hostWaits), -1 when it tells none or fails to */
    public long hostWaits() {
        if (control instanceof ExternalQueueShare share) {
            try {
                return Math.max(-1, share.hostWaits());
            } catch (RuntimeException e) {
                return -1;
            }
        }
        return -1;
    }

    /** A count the owner's process tells, 0 when it tells none or fails to. */
    private int shareCount(java.util.function.ToIntFunction<ExternalQueueShare> what) {
        if (control instanceof ExternalQueueShare share) {
            try {
                return Math.max(0, what.applyAsInt(share));
            } catch (RuntimeException e) {
                return 0;
            }
        }
        return 0;
    }

    private static int smShare(ExternalQueueShare share) {
        try {
            int p = share.smSharePercent();
            return p >= 1 && p <= 100 ? p : 100;
        } catch (RuntimeException e) {
            return 100;
        }
    }

    private static long holdBehind(ExternalQueueShare share) {
        try {
            return share.holdBehindMicros();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** @return whether the scheduler's holds and limits pass this queue by (its process has the whole device in space) */
    @Override
    public boolean spaceOnly() {
        return spaceOnly;
    }

    /** The owner's handle on this queue. */
    ExternalQueue ownerHandle() {
        return new ExternalQueue() {
            @Override
            public long handle() {
                return handle;
            }

            @Override
            public void changed() {
                if (TRACE_TOLD) {
                    told();
                }
                if (firstWork()) {
                    events.firstWork(ExternalQueueImpl.this);
                }
                events.changed(ExternalQueueImpl.this);
                fireStateChange();
            }

            @Override
            public void hint(Hint hint) {
                ExternalQueueImpl.this.hint(hint);
            }

            @Override
            public void close() {
                ExternalQueueImpl.this.close();
            }

            @Override
            public void narrowingStopped() {
                ExternalQueueImpl.this.narrowingStopped();
            }

            @Override
            public String toString() {
                return ExternalQueueImpl.this.toString();
            }
        };
    }

    /** Tells the owner the starting limits (the gate open). */
    void start() {
        applyLocked();
    }

    /**
     * No company until its first work (issue 41): set at its open when it never had work and is
     * decided in time only; cleared by the first event about it ({@link #firstWork}).
     */
    private final java.util.concurrent.atomic.AtomicBoolean uncounted = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * @return whether this queue, as it opens, is to count as no one's company until its first work:
     *         it never had work (its counters are all zero: a stream just registered) and the node
     *         decides it in time only (not narrowable, not on a share that ignores holds). Its own
     *         limits are then its configured ones until that work comes. Marks it so.
     */
    boolean bornUncounted() {
        if (narrows || spaceOnly) {
            return false;
        }
        ExternalCounters c;
        try {
            c = control.counters();
        } catch (RuntimeException e) {
            return false;
        }
        boolean never = c.completed() == 0 && c.runNanos() == 0 && !c.ready() && c.launched() == 0;
        uncounted.set(never);
        return never;
    }

    /** @return whether this is the owner's first event while it counted as no one's company (once only) */
    boolean firstWork() {
        return uncounted.get() && uncounted.compareAndSet(true, false);
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public String name() {
        return spec.name();
    }

    @Override
    public String device() {
        return spec.device();
    }

    @Override
    public String group() {
        return spec.group();
    }

    /** @return the owning process, or 0 */
    public long pid() {
        return spec.pid();
    }

    private ExternalCounters counters() {
        try {
            ExternalCounters c = control.counters();
            return c == null ? ExternalCounters.IDLE : c;
        } catch (RuntimeException e) {
            synchronized (this) {
                if (countersFailed) {
                    return ExternalCounters.IDLE;
                }
                countersFailed = true;
            }
            log.error("external queue " + this + ": reading its counters failed; it counts as idle from now on", e);
            return ExternalCounters.IDLE;
        }
    }

    // ------------------------------------------------------------------ ScheduledQueue

    @Override
    public QueueView view() {
        ExternalCounters c = counters();
        QueueView v;
        boolean back;
        synchronized (this) {
            if (closed) {
                return null;
            }
            c = asScheduled(c, System.nanoTime());
            back = backSeen;
            backSeen = false;
            v = new QueueView(handle, spec.name(), spec.device(), spec.group(), c.ready(), suspendedByScheduler,
                    suspendedByApp, c.ready() ? c.readySinceNanos() : 0, c.runNanos(), lastResumedNanos, c.pending(), c.inFlight(),
                    c.completed(), c.estimateNanos(), hintList, PreemptionLevel.BLOCK);
        }
        if (back) {
            if (TRACE_STOPS) {
                traceStop("seen back by a view");
            }
            events.backFromStop(this);
        }
        return v;
    }

    @Override
    public synchronized boolean isSuspendedByScheduler() {
        return suspendedByScheduler;
    }

    /**
     * Held (not narrowed, not on a share that ignores holds): its process launches nothing until
     * the node lets it, and its interposer sends WAKE on each step from idle to active, which
     * reaches the scheduler as {@code changed()}.
     */
    @Override
    public synchronized boolean wakesWhenHeld() {
        return suspendedByScheduler && !narrowed && !spaceOnly && !closed;
    }

    /**
     * Its interposer sends WAKE on its first step from idle to active, held or not. Only while it
     * has company (its limits apply: its first launches, made before a decision sees them, are
     * bounded by them; alone, nobody waits for them and it may as well stay awake). Not for a queue
     * the node may narrow (its decisions place it in space, beside the preferred queues, with
     * every launch) nor one on a share that ignores holds.
     */
    @Override
    public synchronized boolean wakesWhenUsed() {
        return contended && !narrowed && !spaceOnly && !closed && !narrows;
    }

    @Override
    public void schedule(boolean suspend, long decisionNanos) {
        if (heldWhileStopped()) {
            stopHold = true;
            inTime(true, decisionNanos);
            return;
        }
        if (TRACE_STOPS && stopHold) {
            traceStop("decided after its return: " + (suspend ? "hold" : "go"));
            traceApplies = 4;
        }
        stopHold = false;
        if (ranked) {
            rank(suspend, decisionNanos);
            return;
        }
        if (offTurn && !spaceOnly && events.offTurnHolds(this, decisionNanos)) {
            holdOffTurn(decisionNanos);
            return;
        }
        // space decides for such a queue: its company runs beside it on capped shares, and a hold
        // would idle the multiprocessors it could use (a second latency-critical process held
        // behind the first went to 18 x its standalone P99 on the H200)
        if (spaceOnly && suspend) {
            return;
        }
        // a queue that can be narrowed leaves the preferred queues the multiprocessors they use
        // instead of stopping: behind a launch-bound tenant a hold idles most of the device (training
        // at 0.35 of its native speed behind an eager decoder on the H200); with no preferred queue
        // on the device (a budget's hold, say) it is held as any queue
        if (narrows && scheduleNarrow(suspend, decisionNanos)) {
            return;
        }
        inTime(suspend, decisionNanos);
    }

    /**
     * Another process's turn, or a spell that measures another alone ({@link #offTurn(boolean)}):
     * held in time, whatever the policy decided, where {@link QueueEvents#offTurnHolds} says so (a
     * spell on its device, or best-effort company only). The policy's decision alone let it go: only
     * the wide beats kept such a queue held, and they run only in decisions that narrowed a queue,
     * so that beside best-effort company only, turns and the spells of {@link BestEffortBalance}
     * held nobody (a Triton loop synced every 3 ms through the bf16 trainer's spells "alone", which
     * ran beside it on the whole device; H200, session 94).
     */
    private void holdOffTurn(long decisionNanos) {
        inTime(true, decisionNanos, true);
    }

    /** A hold or a run in time; a narrowing in force ends (the whole device back, then the hold). */
    private void inTime(boolean suspend, long decisionNanos) {
        inTime(suspend, decisionNanos, false);
    }

    private void inTime(boolean suspend, long decisionNanos, boolean whatever) {
        // on a capped share, a hold behind a queue of short commands would only idle the device:
        // its share leaves that queue room (asked again at the next decision, which the other's
        // next arrival or completion brings)
        if (suspend && !whatever && holdBehindNanos > 0 && !isSuspendedByScheduler()
                && !events.preferredFillsTheDevice(this, holdBehindNanos)) {
            return;
        }
        synchronized (this) {
            boolean widen = narrowed || reserve != 0;
            if ((suspendedByScheduler == suspend && !widen) || closed) {
                return;
            }
            suspendedByScheduler = suspend;
            if (!suspend) {
                lastResumedNanos = decisionNanos;
            }
            if (widen) {
                narrowed = false;
                reserve = 0;
                applyNarrowLocked();
            }
            applyLocked();
        }
        fireStateChange();
    }

    /**
     * A decision of a policy that decides space ({@link dev.xq.policy.spi.Policy#decidesSpace()}):
     * {@link SpaceRule#HOLD} holds in time, 0 runs on the whole device, n &gt; 0 runs on the device
     * less n multiprocessors (a hold where the queue cannot be narrowed). An owner whose process
     * has the whole device in space is never held, as for {@link #schedule}.
     */
    @Override
    public void place(int leaveSms, long decisionNanos) {
        if (heldWhileStopped()) {
            stopHold = true;
            inTime(true, decisionNanos);
            return;
        }
        if (TRACE_STOPS && stopHold) {
            traceStop("placed after its return: leave " + leaveSms);
            traceApplies = 4;
        }
        stopHold = false;
        if (ranked) {
            rank(leaveSms != 0, decisionNanos);
            return;
        }
        if (offTurn && !spaceOnly && events.offTurnHolds(this, decisionNanos)) {
            holdOffTurn(decisionNanos);
            return;
        }
        if (spaceOnly && leaveSms != 0) {
            return;
        }
        if (leaveSms <= 0 || !narrows) {
            inTime(leaveSms != 0, decisionNanos);
            return;
        }
        narrowTo(true, leaveSms, decisionNanos);
    }

    @Override
    public boolean placed() {
        return narrows || ranked;
    }

    /**
     * A ranked queue's decision ({@link #ranked}): held, it is narrowed while a queue of a higher
     * priority wider than half the device has work beside it, and runs on the whole device
     * otherwise; never held in time, whatever was decided.
     */
    private void rank(boolean held, long decisionNanos) {
        boolean narrow = held && events.rankedLeave(this) > 0;
        synchronized (this) {
            if (closed || !ranked || narrowed == narrow) {
                return;
            }
            narrowed = narrow;
            suspendedByScheduler = narrow;
            if (!narrow) {
                lastResumedNanos = decisionNanos;
            }
            shareOffset = narrow ? 16 - RANKED_SIXTEENTHS : 0;
            shareWidth = narrow ? RANKED_SIXTEENTHS : 0;
            applyRankLocked();
            applyLocked();
        }
        fireStateChange();
    }

    /**
     * The part of the device a ranked queue runs on while narrowed, in sixteenths of it: the upper
     * half. Not the device less a reserve (which starts at its first multiprocessor): best-effort
     * queues narrowed below it run there, on the device less what the latency-critical ones keep,
     * which is its upper end (H200: a decoder narrowed from the first multiprocessor ran among the
     * GEMM process's kernels, 105 ms at P99 against 42).
     */
    static final int RANKED_SIXTEENTHS = 8;

    /** Caller holds this. */
    private void applyRankLocked() {
        try {
            ExternalQueueShare share = (ExternalQueueShare) control;
            if (narrowed && !closed) {
                share.share(16 - RANKED_SIXTEENTHS, RANKED_SIXTEENTHS);
            } else {
                share.part(0, 1);
            }
        } catch (RuntimeException e) {
            log.error("external queue " + this + ": its owner failed to narrow it", e);
        }
    }

    @Override
    public QueueSpace space() {
        if (!(control instanceof ExternalQueueShare)) {
            return QueueSpace.NONE;
        }
        return new QueueSpace(narrows, widthSms(), deviceSms(), ownContext(), stretchWidthSms());
    }

    /** @return whether the owner's process runs in a device context of its own, time-sliced against the shared one */
    public boolean ownContext() {
        return shareCount(share -> share.ownContext() ? 1 : 0) == 1;
    }

    /** @return whether the decision was taken as a narrowing (or a widening), else it is a hold to apply as usual */
    private boolean scheduleNarrow(boolean suspend, long decisionNanos) {
        int r = events.spaceFor(this, suspend);
        if (r == SpaceRule.HOLD) {
            synchronized (this) {
                if (!narrowed || closed) {
                    return false; // a hold as any queue's
                }
                // from narrowed to held (nothing preferred is left, or one wider than half the
                // device has work and this queue's commands are short): the whole device back,
                // then the hold
                narrowed = false;
                reserve = 0;
                applyNarrowLocked();
                applyLocked();
            }
            fireStateChange();
            return true;
        }
        narrowTo(suspend, r, decisionNanos);
        return true;
    }

    /** Narrowed (or, with {@code r} 0, widened) as decided; {@code suspend}: the scheduler's hold became this narrowing. */
    private void narrowTo(boolean suspend, int r, long decisionNanos) {
        // a wide queue preferred over it may arrive and wait for what it left in flight (asked
        // before taking this queue's lock: the answer reads the other queues)
        boolean tight = suspend && events.widePreferredOpen(this, decisionNanos);
        synchronized (this) {
            if (closed) {
                return;
            }
            boolean was = suspendedByScheduler;
            boolean changed = was != suspend || narrowed != suspend || reserve != r || narrowedTight != tight;
            suspendedByScheduler = suspend;
            narrowed = suspend;
            narrowedTight = tight;
            if (!suspend && was) {
                lastResumedNanos = decisionNanos;
            }
            if (!changed) {
                return;
            }
            reserve = r;
            applyNarrowLocked();
            applyLocked();
        }
        fireStateChange();
    }

    /** Caller holds this. */
    private void applyNarrowLocked() {
        try {
            ((ExternalQueueShare) control).narrow(closed ? 0 : reserve);
        } catch (RuntimeException e) {
            log.error("external queue " + this + ": its owner failed to narrow it", e);
        }
    }

    @Override
    public void guard(long horizonNanos, long untilNanos) {
        if (!(control instanceof ExternalQueueGuard g) || (spaceOnly && horizonNanos != 0)) {
            return;
        }
        boolean widens = events.guardedWindowMicros() > 0;
        synchronized (this) {
            if (closed || (horizonNanos == guardHorizon && untilNanos == guardUntil)) {
                return;
            }
            boolean was = guardHorizon != 0;
            guardHorizon = horizonNanos;
            guardUntil = untilNanos;
            if (widens && was && horizonNanos == 0) {
                applyLocked(); // the guarded window goes before the guard does
            }
        }
        try {
            g.guard(horizonNanos, untilNanos);
        } catch (RuntimeException e) {
            log.error("external queue " + this + ": its owner failed to apply a guard", e);
        }
        if (widens && horizonNanos != 0) {
            synchronized (this) {
                if (!closed && guardHorizon != 0) {
                    applyLocked(); // widened once the guard is in force
                }
            }
        }
    }

    /** @return the guard in force: {horizon, until} nanos, both 0 when none */
    public synchronized long[] guard() {
        return new long[] {guardHorizon, guardUntil};
    }

    /**
     * Whether another queue shares the device with this one in a way that it may have to wait for
     * this one's work: a queue of another group, or of this group at another priority. Without such
     * a queue the limits (threshold, window) bound nothing worth bounding, only this queue's speed,
     * so they are lifted until one appears; the node's core decides (at every open, close and hint).
     * {@code topWindowMicros} &gt; 0: the queue has company but the policy put it on top of it
     * (docs/runtime.md, the on-top rule), so its window is widened to that much estimated work and
     * its threshold lifted; bounded, unlike the lift for a queue alone, as a newcomer the policy
     * prefers finds that much already launched.
     */
    void contended(boolean c, long topWindowMicros) {
        synchronized (this) {
            if ((contended == c && topWindow == topWindowMicros) || closed) {
                return;
            }
            contended = c;
            topWindow = topWindowMicros;
            applyLocked();
        }
        fireStateChange();
    }

    /** {@link #contended(boolean, long)} with nobody on top. */
    void contended(boolean c) {
        contended(c, 0);
    }

    /** @return whether another queue shares the device, so that the limits apply (widened while on top; see {@link #contended(boolean, long)}) */
    public synchronized boolean contended() {
        return contended;
    }

    /** The limits in force now. Caller holds this. */
    private QueueConfig limitsLocked() {
        if (!contended || spaceOnly || freeLocked()) {
            return config.withThreshold(QueueConfig.MAX_THRESHOLD).withWindowMicros(0);
        }
        // narrowed, what it launches runs beside the preferred queues, not before them: no
        // threshold, but a wide window, for a third queue that arrives and holds it
        if (narrowed || spell) {
            long n = narrowedTight ? events.narrowedWindowMicros() : events.aloneWindowMicros();
            long w = n > 0 && config.windowMicros() > 0 ? Math.max(n, config.windowMicros()) : 0;
            return config.withThreshold(QueueConfig.MAX_THRESHOLD).withWindowMicros(w);
        }
        long wide = Math.max(topWindow, guardHorizon != 0 ? events.guardedWindowMicros() : 0);
        return wide > 0 && config.windowMicros() > 0 && config.windowMicros() < wide
                ? config.withThreshold(QueueConfig.MAX_THRESHOLD).withWindowMicros(wide)
                : config;
    }

    /** Whether {@link #company} found it free of limits and it has a part (in space or in turns, or is measured alone). Caller holds this. */
    private boolean freeLocked() {
        return unbounded && (shareWidth > 0 || partCount > 1 || spell || narrowed || inTurns);
    }

    /** Which limits {@link #limitsLocked()} gives, for the status. Caller holds this. */
    private XQueueStatus.Limits limitsModeLocked() {
        QueueConfig l = limitsLocked();
        if (l.equals(config)) {
            return XQueueStatus.Limits.CONFIGURED;
        }
        if (!contended) {
            return XQueueStatus.Limits.ALONE;
        }
        if (freeLocked() && !spaceOnly) {
            return XQueueStatus.Limits.ON_TOP; // nothing preferred over it open on its device
        }
        if (narrowed && !spaceOnly) {
            return XQueueStatus.Limits.NARROWED;
        }
        long g = events.guardedWindowMicros();
        boolean guarded = !spaceOnly && !narrowed && guardHorizon != 0 && g > topWindow && l.windowMicros() == g;
        return guarded ? XQueueStatus.Limits.GUARDED : XQueueStatus.Limits.ON_TOP;
    }

    /**
     * Whether it launches without limits at this decision: a process queue with a part of the
     * device among best-effort processes (or measured alone), none preferred over it open on its
     * device, and {@code bestEffortUnbounded} on. The core asks at every decision, where it gives
     * the parts; before taking this queue's lock (the answer reads the other queues); the limits
     * change only where it changed.
     */
    void company(long decisionNanos) {
        boolean u = narrows && events.bestEffortUnbounded() && !events.preferredOpen(this, decisionNanos);
        synchronized (this) {
            if (u == unbounded || closed) {
                return;
            }
            unbounded = u;
            applyLocked();
        }
    }

    /** Caller holds this (or is the constructor's caller before publication). */
    private void applyLocked() {
        boolean held = ((suspendedByScheduler && !narrowed) || suspendedByApp) && !closed;
        QueueConfig limits = limitsLocked();
        if (TRACE_STOPS && traceApplies > 0) {
            traceApplies--;
            dev.xq.runtime.scheduler.TraceLines.line("xq: stops: q" + handle + " applied at " + System.currentTimeMillis() + " ms: " + (held ? "hold" : "go")
                    + (narrowed ? ", narrowed, reserve " + reserve : ""));
        }
        try {
            control.apply(held, limits.withLevel(PreemptionLevel.BLOCK));
        } catch (RuntimeException e) {
            log.error("external queue " + this + ": its owner failed to apply " + (held ? "hold" : "go"), e);
        }
    }

    // ------------------------------------------------------------------ XQueue

    @Override
    public Submission submit(Command command) {
        throw new UnsupportedOperationException("queue " + spec.name() + " (" + handle + ") belongs to "
                + (spec.pid() > 0 ? "process " + spec.pid() : "group " + spec.group())
                + ": its commands come from there; create a queue of your own with XQueueService.create to submit");
    }

    @Override
    public void waitAll() throws InterruptedException {
        while (!isClosed() && counters().ready()) {
            Thread.sleep(1);
        }
    }

    @Override
    public void waitAll(Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(timeout, "timeout is null; give a Duration such as Duration.ofSeconds(5), or call waitAll()");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!isClosed() && counters().ready()) {
            if (System.nanoTime() >= deadline) {
                ExternalCounters c = counters();
                throw new TimeoutException("queue " + spec.name() + ": " + (c.pending() + c.inFlight())
                        + " commands still outstanding after " + timeout);
            }
            Thread.sleep(1);
        }
    }

    @Override
    public void suspend() {
        setAppSuspended(true);
    }

    @Override
    public void resume() {
        setAppSuspended(false);
    }

    private void setAppSuspended(boolean suspend) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("queue " + spec.name() + " (" + handle + ") is closed; cannot " + (suspend ? "suspend" : "resume") + " it");
            }
            if (suspendedByApp == suspend) {
                return;
            }
            suspendedByApp = suspend;
            applyLocked();
        }
        events.changed(this);
        fireStateChange();
    }

    @Override
    public void hint(Hint hint) {
        Objects.requireNonNull(hint, "hint is null; give a Hint such as new Hint.Priority(2)");
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("queue " + spec.name() + " (" + handle + ") is closed");
            }
            hints.put(hint.getClass(), hint);
            hintList = List.copyOf(hints.values());
        }
        events.changed(this);
        events.hinted(this);
        fireStateChange();
    }

    @Override
    public synchronized List<Hint> hints() {
        return hintList;
    }

    /**
     * Threshold, batch and window apply; the level asked for is kept as the wish (as for any
     * queue), and the level in use stays 1: holding launches back is all a process's owner can do.
     */
    @Override
    public void configure(QueueConfig newConfig) {
        Objects.requireNonNull(newConfig, "config is null; give a QueueConfig such as QueueConfig.defaults().withThreshold(4)");
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("queue " + spec.name() + " (" + handle + ") is closed");
            }
            config = newConfig;
            applyLocked();
        }
        events.changed(this);
        fireStateChange();
    }

    public synchronized QueueConfig config() {
        return config;
    }

    @Override
    public XQueueStatus status() {
        ExternalCounters c = counters();
        int smShare = smSharePercent();
        long[] lag = lags();
        int width = widthSms();
        int stretch = stretchWidthSms();
        int sms = deviceSms();
        synchronized (this) {
            return new XQueueStatus(handle, spec.name(), spec.device(), spec.group(), spec.pid(), stateLocked(c), config,
                    PreemptionLevel.BLOCK, PreemptionLevel.BLOCK, suspendedByScheduler && !narrowed, suspendedByApp, c.pending(),
                    c.inFlight(), c.launched() + c.pending() + c.failed(), c.completed(), c.failed(), 0,
                    c.estimateNanos() / 1000, c.runNanos() / 1000, hintList, "", limitsModeLocked(),
                    smShare, lag[0], lag[1], width, stretch, sms);
        }
    }

    private QueueState stateLocked(ExternalCounters c) {
        if (closed) {
            return QueueState.CLOSED;
        }
        if (!c.ready()) {
            return QueueState.IDLE;
        }
        return (suspendedByScheduler && !narrowed) || suspendedByApp ? QueueState.SUSPENDED : QueueState.READY;
    }

    @Override
    public AutoCloseable onStateChange(Consumer<QueueState> listener) {
        return stateListeners.add(listener);
    }

    private void fireStateChange() {
        stateListeners.announce(() -> {
            ExternalCounters c = counters();
            synchronized (this) {
                return stateLocked(c);
            }
        }, spec.name(), log);
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * The node lets go of the queue: its gate is opened for good (a process is never left held
     * by a queue the node forgot) and it leaves the scheduler.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (narrows && reserve != 0) {
                applyNarrowLocked(); // the whole device again: a closed queue is never left narrowed
            }
            applyLocked();
        }
        events.closed(this);
        fireStateChange();
    }

    @Override
    public void close(Duration grace) {
        close();
    }

    @Override
    public String toString() {
        return "XQueue " + spec.name() + " (" + handle + ") on " + spec.device() + " of " + spec.group();
    }
}
