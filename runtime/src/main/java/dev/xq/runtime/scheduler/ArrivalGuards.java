package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SpaceRule;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Keeps the device clear for queues that arrive on a beat (docs/processes.md, "Arrival guards").
 *
 * <p>A queue that can only hold launches back (level 1) cannot take the device from a command
 * already running: a latency-critical tenant that arrives while a best-effort one runs a 1 ms
 * kernel waits for that kernel. Where the latency-critical tenant arrives periodically (a frame
 * every 25 ms, a control loop) its next arrival can be foreseen, and the queues it would take
 * the device from can stop launching what would still run at that moment. This class learns
 * both halves from what it sees, for any policy:
 * <ul>
 * <li><b>the beat</b>: each queue's arrivals (the times it went from idle to having work, as its
 *     owner stamps them); with at least {@value #MIN_INTERVALS} intervals whose spread is small
 *     next to their median, the next arrival is foreseen at the last one plus the median, give or
 *     take the spread (at most an eighth of the period and {@value #MAX_JITTER_NANOS} ns); a
 *     rhythm just begun needs two intervals that agree within {@value #NEW_BEAT_MAX_JITTER_NANOS}
 *     ns (three such are a beat whatever came before); where the arrivals have no beat, that of
 *     the requests they make when each comes in pieces ({@link #requestRhythmOf});</li>
 * <li><b>who yields to whom</b>: a queue A is preferred over B when, in the latest decision in
 *     which both had work, A ran and B was held. Only that relation is used, so a policy's own
 *     rule (priorities, deadlines, shares) decides who is guarded, and a swap of policy forgets
 *     what the last one did.</li>
 * </ul>
 * A running queue B gets a guard from each idle, periodic queue A preferred over it:
 * {@code horizon} (the work B launches must be done by then) and {@code until} (after it the
 * guard lapses: A is late or gone, and B runs on as before). The nearest such A wins. A queue
 * whose commands average longer than the gap between A's busy periods gets no guard from A: none
 * of them would ever fit, and the guard would starve it.
 *
 * <p><b>The linger</b>: a periodic queue A that goes idle early in its busy period (before three
 * quarters of its median busy period, arrival to idle) is most likely between two of its own
 * commands, its owner's thread late with the next one (a host stall, a thread still waking up).
 * Resuming the queues it was preferred over then would have A's next command wait behind theirs
 * (below level 3, the running one cannot be taken back): a stall of the owner turns into a stall
 * plus a command of the other queue, and again at each such gap. So for a while ({@code linger},
 * at most half the median busy period) those queues stay held; A's next submit ends the linger
 * (a hit: the same busy period goes on, not a new arrival), or the linger runs out (a miss: A
 * had really finished, and the others resume; the deciding thread is woken for it). A queue whose
 * lingers keep running out (more misses than hits, plus two) is not lingered for until 64 more
 * early idles have passed.
 *
 * <p>Not thread-safe: only the deciding thread calls it (decisions are serialised).
 */
final class ArrivalGuards {

    /** Arrivals kept per queue. */
    static final int HISTORY = 17;
    /** Intervals needed before a beat is trusted (but see {@link #NEW_BEAT_MAX_JITTER_NANOS}). */
    static final int MIN_INTERVALS = 4;
    /**
     * A rhythm that has just begun (a queue's first arrivals, or the first after a pause or after
     * a faster run of them) is a beat after two intervals already, if they are this close (and
     * within a sixteenth of the period). Until 29 Nov it needed {@value #MIN_INTERVALS}: the
     * ResNet-50 graph tenant's requests 1-4 after its start (of 240 in 6 s) were then its slowest
     * in six of six runs beside training on the H200 (1.9-2.3 ms against 1.75 after), enough to
     * set its P99. Arrivals at random (exponential gaps of 20 ms) give such a pair for a few in
     * a hundred arrivals: a guard that lapses, costing the guarded queue a millisecond or two.
     */
    static final long NEW_BEAT_MAX_JITTER_NANOS = 500_000;
    /** Margin for the node's own reaction (decision, gate) before the foreseen arrival. */
    static final long EARLY_MARGIN_NANOS = 50_000;
    /**
     * Default of {@link #graceNanos(long)}: how long after the latest foreseen arrival a guard
     * still holds. It must cover the node's own reaction (the arrival's word, the decision, the
     * gate written: measured 300-500 us on the H200 host), or the guarded queue launches freely
     * in the gap between the guard's lapse and the gate's close, and the arriving queue waits
     * behind that (200 us, the default until 29 Nov, left 13-65 such gaps in 240 arrivals; 1 ms
     * none). It costs the guarded queue only when the other one skips an arrival, and is never
     * more than a quarter of the period.
     */
    static final long DEFAULT_GRACE_NANOS = 1_000_000;
    /**
     * Default of {@link #reactionCapNanos(long)}: the most the node's measured reaction
     * ({@link #reactionNanos(long)}) lengthens the grace: a slower tail is a host in trouble (a
     * collector's pause, the node starved of CPU), and holding guarded queues longer for it would
     * cost them more than it saves.
     */
    static final long MAX_REACTION_GRACE_NANOS = 5_000_000;
    static final long MIN_PERIOD_NANOS = 1_000_000;
    /**
     * Beyond this spread a guard costs the guarded queue more (it idles for twice the spread
     * around each arrival) than it can save the arriving one (one command of the other queue,
     * about a millisecond at most where guards matter): no beat.
     */
    static final long MAX_JITTER_NANOS = 1_000_000;
    static final long MAX_PERIOD_NANOS = 10_000_000_000L;
    /** Busy periods (arrival to idle) kept per queue, for the linger. */
    static final int BUSY_HISTORY = 16;
    /**
     * Wide beats: requests of a queue whose command counts must all agree before an idle that has
     * completed that many commands since its arrival ends its request at once ({@code Track.requestDone}).
     */
    static final int REQUEST_HISTORY = 8;
    /** Busy periods alone needed before the gap is reckoned from them ({@code Track.medianAloneBusy}). */
    static final int ALONE_BUSY = 4;
    /** An idle before an arrival off any beat this long at least may end a rhythm ({@code Track.arrivedLearning}). */
    static final long CHANGE_MIN_IDLE_NANOS = 5_000_000L;
    /** Busy periods needed before an idle can be told early. */
    static final int MIN_BUSY = 8;
    /** Busy periods since a quiet spell after which the wide beats' hold is theirs alone ({@code Track.hold}). */
    static final int PHASE_BUSY = 4;
    /**
     * Requests in a row without a return (work again within the request after an idle: a stall of
     * its owner) after which a queue's requests are taken for whole busy periods: the wide beats'
     * hold ({@code Track.hold}) is then none.
     */
    static final int STALL_FREE = 16;
    /**
     * A wide queue's first arrivals after a quiet spell, before its beat is known
     * ({@link #firstArrivals}): the intervals through which the queues it is preferred over stay
     * held between its requests (a beat needs two to four of them)...
     */
    static final int FIRST_ARRIVALS = 4;
    /** ...each hold lasting at most this long after its latest arrival, or twice the longest of its latest intervals... */
    static final long FIRST_HOLD_NANOS = 100_000_000L;
    /** ...of the longest of its latest this many intervals. */
    static final int FIRST_INTERVALS = 3;
    /**
     * ...or through whatever intervals it has within this long of its return (a service's last
     * warm-up requests on its main stream, back to back in the 75 ms before the first for real,
     * used up the four intervals before it: in 4 of 101 recorded graph runs a request of the first
     * three met a trainer's launches).
     */
    static final long FIRST_WINDOW_NANOS = 250_000_000L;
    /**
     * Returns in a row whose arrivals, up to the next return, were off any beat (more than
     * {@value #FIRST_ARRIVALS} of them, fewer than a quarter on one) after which a wide queue is
     * taken for a service whose requests come at random ({@link #randomReturns}): its returns
     * begin no spell of learning and no first arrivals' hold until one finds a beat.
     */
    static final int RANDOM_RETURNS = 2;
    /** Early idles without a linger after which a queue that lost its lingers gets them again. */
    static final int LINGER_RETRY = 64;
    /** Default of {@link #lingerNanos(long)}: 300 us. */
    static final long DEFAULT_LINGER_NANOS = 300_000;
    /**
     * A preferred queue with neither work nor an arrival for this long does not keep a narrowing
     * from turning into a wide beat (a process's side stream used at start-up only). With a
     * second, the ResNet-50 graph tenant's first 40 requests (its first second) beside GEMMs ran
     * narrowed (2.37 ms against 1.74 after) on the H200: enough to set its P99.
     */
    static final long QUIET_NANOS = 250_000_000L;
    /**
     * A narrow tenant that keeps its reserve and arrived this lately is taken to be within a
     * request ({@link #wholeBesideReserve}): an eager decoder's tokens arrive 2.5-8.5 ms apart
     * within a request, its requests 60 ms apart with about 30 ms of work each (H200, session 74).
     */
    static final long RESERVE_REQUEST_NANOS = 10_000_000L;
    /**
     * A narrow tenant's latest request starts (arrivals after an idle of
     * {@value #RESERVE_REQUEST_NANOS} ns or more) from which its next is foreseen
     * ({@link Track#nextRequestStart}).
     */
    static final int REQUEST_STARTS = 6;
    /**
     * A narrow tenant within a request that was not seen idle for this long has work all the time:
     * a queue whose commands fit only whole is not held for it ({@link #wholeBesideReserve}), it
     * would never run.
     */
    static final long RESERVE_IDLE_SEEN_NANOS = 1_000_000_000L;
    /**
     * Wide beats: what a command must leave of the gap between another's requests for the node's
     * own reaction (the idle seen, a decision, the gate written: 300-500 us on the H200 host).
     */
    static final long WIDE_REACTION_NANOS = 1_000_000L;
    /**
     * Wide beats: how long a queue that starved under them is left narrowed the first time; each
     * time it starves again within {@value #STARVED_MEMORY_NANOS} ns of the last, twice as long,
     * up to {@value #STARVED_OFF_NANOS} ns.
     */
    static final long STARVED_FIRST_OFF_NANOS = 500_000_000L;
    static final long STARVED_OFF_NANOS = 5_000_000_000L;
    static final long STARVED_MEMORY_NANOS = 20_000_000_000L;
    /**
     * Wide beats, learning: a wide queue's first arrivals after a quiet spell (or ever), before its
     * beat is known, hold the long commands behind it for this long from the first of them (until
     * the first arrival after it: a queue that fell silent before holds them until it is quiet), unless
     * a beat they fit is found before (its busy periods, not its requests, are arrivals until a
     * beat is known: an eager large batch's first request can be several, and five arrivals ended
     * the spell inside it)...
     */
    static final long LEARN_NANOS = 600_000_000L;
    /**
     * ...and the spells that held something are paid for: their time is a debt that falls by an
     * eighth of the time that passes, and a new spell begins only while it is under one spell's
     * length (a queue behind a wide one that never keeps a beat loses at most about a ninth of its
     * time to them; a warm-up's back-to-back requests cost a few tens of ms and leave the first
     * requests after it their own spell).
     */
    static final int LEARN_DECAY = 8;
    /**
     * Wide beats, learning: a queue behind a wide one that came back after a quiet spell this
     * recently begins a spell for it ({@code Track.spellOnReturn}).
     */
    static final long RETURN_WINDOW_NANOS = 20_000_000L;
    /**
     * Wide beats, learning: a wide queue whose latest spell ran out without a beat and that has
     * gone on arriving without one, neither quiet nor on a beat, for this long after that spell's
     * end, begins no spell again (on a return of the queue behind it or on a change of its rhythm)
     * until it goes quiet or shows a beat ({@code Track.aperiodic}): its arrivals are not on a
     * beat (a service whose requests come as they come), another spell would hold the queues
     * behind it for its whole length and learn nothing. A graph service with requests at random
     * (25 ms apart on average) held the GEMM behind it in two or three such spells of 600 ms in
     * each 12 s run, a fifth of the time the GEMM was not stopped (H200, session 73, two runs);
     * between spells the GEMM ran narrowed beside it, which set the graph's P99 anyway.
     */
    static final long APERIODIC_NANOS = LEARN_NANOS;
    /** How long after a guard's lapse the node decides again, to give the next one ({@code update}). */
    static final long LAPSE_MARGIN_NANOS = 50_000L;
    /** The fewest arrivals past a spell's length that tell a queue off any beat ({@code Track.aperiodic}). */
    static final int APERIODIC_ARRIVALS = 8;

    /** A guard for one queue; {@link #NONE} when it has none. */
    record Guard(long horizonNanos, long untilNanos) {
        static final Guard NONE = new Guard(0, 0);

        // written out, as Beat's below: a record's own are bootstrapped at their first call, and the
        // first guard compared cost that decision 10-17 ms on the build VM (docs/processes.md,
        // "First calls in a decision")
        @Override
        public boolean equals(Object o) {
            return o instanceof Guard g && g.horizonNanos == horizonNanos && g.untilNanos == untilNanos;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(horizonNanos) * 31 + Long.hashCode(untilNanos);
        }

        @Override
        public String toString() {
            return "Guard[horizonNanos=" + horizonNanos + ", untilNanos=" + untilNanos + "]";
        }
    }

    /**
     * A queue's beat: next arrival expected at {@code next}, give or take {@code jitter}. Its
     * methods are written out: a record's own are bootstrapped at their first call (14-26 ms on
     * the build VM), and the wide beats' trace first printed a beat in the decision that ended a
     * batch's spell of learning: the node applied that arrival's decision 6 ms late, and a GEMM
     * launched inside the batch's request (28.5 ms against 8, H200, session 65).
     */
    record Beat(long periodNanos, long jitterNanos, long nextNanos) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Beat b && b.periodNanos == periodNanos && b.jitterNanos == jitterNanos && b.nextNanos == nextNanos;
        }

        @Override
        public int hashCode() {
            return (Long.hashCode(periodNanos) * 31 + Long.hashCode(jitterNanos)) * 31 + Long.hashCode(nextNanos);
        }

        @Override
        public String toString() {
            return "Beat[periodNanos=" + periodNanos + ", jitterNanos=" + jitterNanos + ", nextNanos=" + nextNanos + "]";
        }
    }

    /**
     * Space as one decision placed the queues (the policy's narrowings), for the wide beats: what
     * a queue is narrowed to, its place in space, and in how many parts best-effort processes
     * split the device; and the two ways a narrowing can be changed here.
     */
    interface Space {
        /** No queue placed in space: the wide beats do nothing. */
        Space NONE = new Space() {
            @Override
            public int narrowed(long handle) {
                return 0;
            }

            @Override
            public QueueSpace space(long handle) {
                return QueueSpace.NONE;
            }

            @Override
            public int parts(long handle) {
                return 1;
            }

            @Override
            public void unnarrow(long handle, boolean hold) {
            }
        };

        /**
         * @return the fraction of what it may use that the queue's process has among best-effort
         *     processes (1 / {@link #parts} for equal parts)
         */
        default double fraction(long handle) {
            return 1.0 / Math.max(1, parts(handle));
        }

        /** Whether another process has the turn on what best-effort processes may use: held, whatever the decision (the wide beats). */
        default boolean offTurn(long handle) {
            return false;
        }

        /** The time a wide queue above it leaves between its requests for the queue's commands (its owner may weigh its part by it). */
        default void gap(long handle, long availNanos, long now) {
        }

        /**
         * Whether the scheduler never holds the queue in time ({@link ScheduledQueue#spaceOnly}: a
         * latency-critical process with the whole device in space): a hold decided for it is not
         * applied, and it works as if let run.
         */
        default boolean spaceOnly(long handle) {
            return false;
        }

        /** Whether the queue's process is stopped now ({@link ScheduledQueue#ownerStopped}): its silence is not starving. */
        default boolean stopped(long handle) {
            return false;
        }

        /** @return {busy periods timed, of which slow}: the queue's device lag ({@link ScheduledQueue#lags}) */
        default long[] lags(long handle) {
            return new long[2];
        }

        /** @return the multiprocessors this decision narrowed the queue to leave, 0 when not narrowed */
        int narrowed(long handle);

        /** @return the queue's place in space ({@link QueueSpace#NONE} when not known) */
        QueueSpace space(long handle);

        /** @return in how many parts the device is split among best-effort processes, the queue's one of them */
        int parts(long handle);

        /** Turns the queue's narrowing into a hold in time ({@code hold}) or a run on the whole device. */
        void unnarrow(long handle, boolean hold);

        /**
         * Narrows the queue, narrowed by the decision, to leave {@code leaveSms} instead (fewer):
         * what narrow tenants above it without a beat it fits keep while the wide ones' gaps are
         * its. A space that cannot leaves it as the decision narrowed it.
         */
        default void renarrow(long handle, int leaveSms) {
        }

        /**
         * Whether this decision placed queues in space (narrowed one at least): only then do the
         * wide beats change what it placed. False for {@link #widths}.
         */
        default boolean placing() {
            return true;
        }

        /**
         * A decision that placed nothing in space, among queues that may have a place in it: their
         * widths only (a wide tenant told apart, {@link #firstArrivals}); otherwise as {@link #NONE}.
         */
        static Space widths(java.util.function.LongFunction<QueueSpace> spaces) {
            return widths(spaces, h -> false);
        }

        /** {@link #widths(java.util.function.LongFunction)}, with the queues never held in time ({@link #spaceOnly}). */
        static Space widths(java.util.function.LongFunction<QueueSpace> spaces, java.util.function.LongPredicate spaceOnly) {
            return new Space() {
                @Override
                public boolean spaceOnly(long handle) {
                    return spaceOnly.test(handle);
                }

                @Override
                public int narrowed(long handle) {
                    return 0;
                }

                @Override
                public QueueSpace space(long handle) {
                    return spaces.apply(handle);
                }

                @Override
                public int parts(long handle) {
                    return 1;
                }

                @Override
                public void unnarrow(long handle, boolean hold) {
                }

                @Override
                public boolean placing() {
                    return false;
                }
            };
        }
    }

    private static final class Track {
        final long[] arrivals = new long[HISTORY];
        int count;
        int next;
        long lastReadySince;
        /** Queues this one was preferred over: handle to decision time. */
        final Map<Long, Long> over = new HashMap<>(4);
        /** The arrival that began the busy period in progress; 0 while idle. */
        long busyStart;
        final long[] busy = new long[BUSY_HISTORY];
        int busyCount;
        int busyNext;
        /** The busy periods that no queue it is preferred over ran beside ({@link #medianAloneBusy}). */
        final long[] alone = new long[BUSY_HISTORY];
        int aloneCount;
        int aloneNext;
        /** Whether a queue it is preferred over ran beside the busy period in progress. */
        boolean busyShared;
        /** When its latest busy period ended; 0 before. */
        long lastBusyEnd;
        /** Its latest idles, busy period's end to the next arrival. */
        final long[] idles = new long[BUSY_HISTORY];
        int idleCount;
        int idleNext;

        long longestIdle() {
            long m = 0;
            for (int i = 0; i < idleCount; i++) {
                m = Math.max(m, idles[i]);
            }
            return m;
        }
        /**
         * How many busy periods have ended since the latest quiet spell (the wide beats' hold,
         * {@link #hold}, is the longest of the latest of them); the history above keeps those
         * from before it too.
         */
        int phaseCount;
        /**
         * Requests that arrived since its latest return within a request or its latest quiet
         * spell ({@link #STALL_FREE}).
         */
        int sinceReturn;
        /** Whether the request in progress came back after an idle (a stall of its owner). */
        boolean returnedInRequest;
        /** The spans of its latest requests that had a stall, since its latest quiet spell ({@link #hold}). */
        final long[] stalled = new long[BUSY_HISTORY];
        int stalledCount;
        int stalledNext;
        /** While lingering: until when the queues it is preferred over stay held; 0 otherwise. */
        long lingerUntil;
        /** When the lingering queue went idle. */
        long lingerFrom;
        int hits;
        int misses;
        int skipped;
        /** Seen busy wider than half its device (a CUDA graph, a large batch). */
        boolean wideSeen;
        /** The arrival that began the latest spell of learning (the wide beats); 0 for none. */
        long learnStart;
        /** Whether that spell held a queue behind this one. */
        boolean learnHeld;
        /** When the queue came back after a quiet spell (or first arrived); 0 before. */
        long returnedAt;
        /** Its completed commands when last seen idle (nothing ready, nothing in flight); -1 before. */
        long idleCompleted = -1;
        /** Its completed commands when its latest request arrived (all of the earlier ones'); -1 before. */
        long requestBase = -1;
        /** Commands of its latest requests (arrival to arrival, idle to idle). */
        final long[] requestCommands = new long[REQUEST_HISTORY];
        int requestCount;
        int requestNext;
        /** The period of the beat seen at the latest arrival; 0 for none. */
        long lastPeriod;
        /** The time spells that held something cost, as of {@link #learnDebtAt}. */
        long learnDebt;
        long learnDebtAt;
        /** The spell whose end the trace printed ({@link #learnStart}); 0 for none. */
        long spellTraced;
        /** Arrivals since its latest quiet spell (or ever), the one that ended it the first ({@link #firstArrivals}). */
        int sinceQuiet;
        /** The arrival that ended its latest quiet spell (or its first); 0 before. */
        long quietReturn;
        /**
         * Its arrivals past its latest spell's length, on a beat and off any ({@link #aperiodic}),
         * and whether the first of them (the one that ran the spell out) was off any.
         */
        int onBeatAfterSpell;
        int offBeatAfterSpell;
        boolean ranOutOffBeat;
        /** Whether spells of learning begin for it even where it is {@link #aperiodic} ({@link ArrivalGuards#fruitlessSpells}). */
        boolean fruitlessSpells;
        /** Arrivals since its latest return (the arrival that ended a quiet spell, that one counted), and how many of them on a beat. */
        int sinceReturnArrivals;
        int sinceReturnOnBeat;
        /** Its latest returns in a row whose arrivals to the next return were off any beat ({@link #RANDOM_RETURNS}). */
        int returnsOffBeat;
        /** Whether {@link #returnsOffBeat} counts ({@link ArrivalGuards#randomReturns}). */
        boolean randomReturns = true;
        /** When it was last seen idle while keeping a reserve above a queue ({@link ArrivalGuards#wholeBesideReserve}), 0 never. */
        long reserveIdleAt;
        /** Its latest request starts ({@link #REQUEST_STARTS}), the next to be written at {@code requestStartNext}. */
        final long[] requestStarts = new long[REQUEST_STARTS];
        int requestStartNext;
        int requestStartCount;

        /** Its latest interval between two arrivals; 0 before two. */
        long lastInterval() {
            return count < 2 ? 0 : last() - arrivals[(next + HISTORY - 2) % HISTORY];
        }

        /** The longest of its latest {@code k} intervals between arrivals (0 with fewer than two arrivals). */
        long longestInterval(int k) {
            long longest = 0;
            int n = Math.min(k, Math.min(count, HISTORY) - 1);
            for (int i = 0; i < n; i++) {
                long later = arrivals[(next + HISTORY - 1 - i) % HISTORY];
                long earlier = arrivals[(next + HISTORY - 2 - i) % HISTORY];
                longest = Math.max(longest, later - earlier);
            }
            return longest;
        }

        /**
         * Its latest intervals between arrivals (ms, oldest first, at most {@code k}): what the
         * trace prints at a spell's end, to tell why no beat was found by then.
         */
        String intervals(int k) {
            int n = Math.min(k, count - 1);
            StringBuilder sb = new StringBuilder("[");
            for (int i = n; i >= 1; i--) {
                long a = arrivals[Math.floorMod(next - 1 - i, HISTORY)];
                long b = arrivals[Math.floorMod(next - i, HISTORY)];
                sb.append(i == n ? "" : ", ").append((b - a) / 100_000 / 10.0);
            }
            return sb.append("]").toString();
        }

        /** Counts an arrival at {@code t}, beginning a spell of learning after a quiet one. */
        void arrivedLearning(long t) {
            // quiet: for 250 ms, or for four periods of the rhythm it was on (a warm-up's requests
            // back to back, then the first request for real, sooner than 250 ms after them when
            // the service was the last of its node to be ready: the spell begun with the warm-up
            // had run out, and two of the first three requests met narrowed GEMMs, H200)
            // or after an idle twice the longest of its latest 16 (a warm-up's requests back to
            // back, idle 0.2-2.4 ms between their pieces, then the first request for real 18.6 ms
            // after: the spell begun with the warm-up ran out before its beat was known, and a
            // GEMM ready throughout ran narrowed beside its first requests; replayed on session
            // 42's 32 runs, four times the longest left 493 decisions narrowed, three 490, twice 392)
            long idle = lastBusyEnd == 0 ? 0 : t - lastBusyEnd;
            // a request start: its first arrival, or one after an idle of its own (seen since its
            // latest arrival) of RESERVE_REQUEST_NANOS or more
            if (count == 0 || (lastBusyEnd - last() > 0 && idle >= RESERVE_REQUEST_NANOS)) {
                requestStarts[requestStartNext] = t;
                requestStartNext = (requestStartNext + 1) % REQUEST_STARTS;
                requestStartCount = Math.min(requestStartCount + 1, REQUEST_STARTS);
            }
            boolean changed = idleCount >= MIN_BUSY && idle >= CHANGE_MIN_IDLE_NANOS && idle >= 2 * longestIdle();
            if (lastBusyEnd != 0 && idle > 0) {
                idles[idleNext] = idle;
                idleNext = (idleNext + 1) % BUSY_HISTORY;
                idleCount = Math.min(idleCount + 1, BUSY_HISTORY);
            }
            boolean afterQuiet = count == 0 || t - last() >= QUIET_NANOS || (lastPeriod > 0 && t - last() >= 4 * lastPeriod) || changed;
            boolean broken = afterQuiet && count > 0;
            if (broken) {
                phaseCount = 0;
                stalledCount = 0;
                sinceReturn = 0;
            }
            if (count == 0 || t - last() >= QUIET_NANOS) {
                returnedAt = t;
            }
            if (afterQuiet) {
                // the arrivals since the return before: off any beat (requests at random), or not
                if (sinceReturnArrivals > FIRST_ARRIVALS) {
                    returnsOffBeat = 4 * sinceReturnOnBeat < sinceReturnArrivals ? returnsOffBeat + 1 : 0;
                }
                sinceReturnArrivals = 0;
                sinceReturnOnBeat = 0;
                beginSpell(t);
                sinceQuiet = 0;
                quietReturn = t;
            }
            if (sinceQuiet <= FIRST_ARRIVALS) {
                sinceQuiet++;
            }
            arrived(t);
            Beat on = beat(t, DEFAULT_GRACE_NANOS);
            sinceReturnArrivals++;
            if (on != null) {
                sinceReturnOnBeat++;
            }
            // an interval that ended a rhythm leaves none (the old one still counts it as one late
            // arrival of eight)
            lastPeriod = on == null || broken ? 0 : on.periodNanos();
            if (learnStart != 0 && t - learnStart >= LEARN_NANOS) {
                if (onBeatAfterSpell + offBeatAfterSpell == 0) {
                    ranOutOffBeat = on == null;
                }
                if (on == null) {
                    offBeatAfterSpell++;
                } else {
                    onBeatAfterSpell++;
                }
            }
        }

        /**
         * Whether its arrivals at {@code t} are known to be off any beat ({@value #APERIODIC_NANOS}):
         * its latest spell of learning ran out (it arrived past the spell's length) off any beat,
         * with no quiet spell since, and it has gone on arriving for {@value #APERIODIC_NANOS} ns
         * past the spell's end, at least {@value #APERIODIC_ARRIVALS} times, fewer than a quarter of
         * them on a beat (requests at random line up now and then: a beat of a few intervals
         * seen at one arrival is lost at the next). A service's warm-up whose spell ran out just
         * before its first requests for real is not: those come within a spell's length, and on
         * a beat.
         */
        boolean aperiodic(long t) {
            if (learnStart == 0 || count == 0 || returnedAt - learnStart > 0 || !ranOutOffBeat) {
                return false;
            }
            int after = onBeatAfterSpell + offBeatAfterSpell;
            return after >= APERIODIC_ARRIVALS && 4 * onBeatAfterSpell < after && t - (learnStart + LEARN_NANOS) >= APERIODIC_NANOS
                    && t - last() < QUIET_NANOS;
        }

        /**
         * Whether its latest {@value #RANDOM_RETURNS} returns or more found no beat before the
         * next ({@link ArrivalGuards#randomReturns}): a service whose requests come at random, and
         * whose gaps now and then run past a quiet spell's length (a batch every 100 ms on average
         * has a gap of 250 ms or more about once in twelve requests). Such a return is not a
         * rhythm beginning, so holding the queues behind it until a beat is known holds them for
         * nothing.
         */
        boolean atRandom() {
            return randomReturns && returnsOffBeat >= RANDOM_RETURNS;
        }

        /**
         * When its next request is foreseen to start, as of {@code now}: where its latest
         * {@value #REQUEST_STARTS} request starts (arrivals after an idle of
         * {@value #RESERVE_REQUEST_NANOS} ns or more) came at intervals within a tenth (at least 2
         * ms) of their median, the latest start plus that median (a late one: imminent, so at most
         * that tolerance in the past; one skipped: the one after); else Long.MIN_VALUE, not
         * foreseen. An eager decoder's tokens come off any beat, 2.5-8.5 ms apart, while its
         * requests come every 60 ms (H200, session 82's traces).
         */
        long nextRequestStart(long now) {
            if (requestStartCount < REQUEST_STARTS) {
                return Long.MIN_VALUE;
            }
            long[] d = new long[REQUEST_STARTS - 1];
            for (int i = 0; i < d.length; i++) {
                d[i] = requestStarts[Math.floorMod(requestStartNext - 1 - i, REQUEST_STARTS)]
                        - requestStarts[Math.floorMod(requestStartNext - 2 - i, REQUEST_STARTS)];
            }
            long[] sorted = d.clone();
            java.util.Arrays.sort(sorted);
            long median = sorted[d.length / 2];
            long tolerance = Math.max(2_000_000L, median / 10);
            for (long x : d) {
                if (Math.abs(x - median) > tolerance) {
                    return Long.MIN_VALUE;
                }
            }
            long next = requestStarts[Math.floorMod(requestStartNext - 1, REQUEST_STARTS)] + median;
            while (next + tolerance < now) {
                next += median;
            }
            return next;
        }

        /** A request arrived: the one before it had the commands completed since its own arrival. */
        void requestArrived() {
            if (idleCompleted < 0) {
                return;
            }
            if (requestBase >= 0 && idleCompleted > requestBase) {
                requestCommands[requestNext] = idleCompleted - requestBase;
                requestNext = (requestNext + 1) % REQUEST_HISTORY;
                requestCount = Math.min(requestCount + 1, REQUEST_HISTORY);
            }
            requestBase = idleCompleted;
        }

        /**
         * The commands of each of its latest {@value #REQUEST_HISTORY} requests when they all
         * agree (an inference service of fixed shapes launches the same kernels every time), else
         * 0: not known.
         */
        long requestCommands() {
            if (requestCount < REQUEST_HISTORY) {
                return 0;
            }
            long c = requestCommands[0];
            for (int i = 1; i < REQUEST_HISTORY; i++) {
                if (requestCommands[i] != c) {
                    return 0;
                }
            }
            return c;
        }

        /**
         * Whether the request in progress is over at an idle with {@code completed} commands
         * completed: as many since its arrival as each of the latest requests had. An eager batch's
         * requests end 7-8 ms after their arrival and its stalls inside one reach 4-5 ms, so the
         * GEMMs behind it were let go 11-12 ms after each arrival (the hold: its longest busy
         * period), a millisecond or two too late for a fourth 21.5 ms kernel before the next one
         * under their guard: with two GEMM processes taking turns, three kernels a gap after the
         * first 16 requests in 6 of 14 runs (GEMMs 0.63-0.78 of native sharing), four in 8 (both
         * at 0.85-0.98 in 7 of them), H200.
         */
        boolean requestDone(long completed) {
            return counted() && completed - requestBase >= requestCommands();
        }

        /** Whether its requests' commands are known ({@link #requestCommands}) and the one in progress has a start. */
        boolean counted() {
            return requestBase >= 0 && requestCommands() > 0;
        }

        /**
         * Whether the queue, idle at {@code now} with {@code completed} commands done, is still
         * within its request on {@code beat} (a stall of its owner): where its requests' commands
         * are known, until it has done as many (at most half the period after its arrival: a
         * stall longer than its longest request is still one); else for {@link #hold}.
         */
        boolean idleWithin(long now, Beat beat, long completed) {
            if (counted()) {
                return !requestDone(completed) && now - last() < beat.periodNanos() / 2;
            }
            return now - last() < hold(beat);
        }

        /** Until when {@link #idleWithin} may hold, as of the latest arrival. */
        long withinUntil(Beat beat) {
            return last() + (counted() ? beat.periodNanos() / 2 : hold(beat));
        }

        /**
         * Whether work at {@code since} is the request in progress going on, not an arrival:
         * its commands are known and were not all done at its latest idle, within half the
         * period. An eager batch's request of 29 ms, back after a stall past its longest busy
         * period, counted as an arrival: the beat moved by 28 ms, a GEMM launched whole 2 ms
         * before the next request, which took 62 ms, and the GEMMs ran narrowed beside the four
         * after it (H200).
         */
        boolean unfinished(long since, Beat on) {
            return counted() && idleCompleted >= 0 && idleCompleted - requestBase < requestCommands() && since - last() < on.periodNanos() / 2;
        }

        /** Begins a spell of learning at {@code t} unless the spells that held something cost too much lately. */
        void beginSpell(long t) {
            if (learnHeld) {
                // what the spell held: until its end, or until the queue went quiet again
                // (a spell's silent tail, past its length, is not charged: the queue's warm-up
                // spells would otherwise leave the first requests for real none of their own)
                long end = Math.min(t, learnEnds());
                learnDebt = debt(learnStart) + Math.max(0, Math.min(LEARN_NANOS, end - learnStart));
                learnDebtAt = learnStart;
                learnHeld = false;
            }
            if (!fruitlessSpells && aperiodic(t)) {
                if (trace) {
                    TraceLines.line("xq: wide beats: a spell of learning skipped: its latest ran out " + (t - learnStart - LEARN_NANOS) / 1_000_000
                            + " ms ago off any beat, and " + offBeatAfterSpell + " of " + (offBeatAfterSpell + onBeatAfterSpell) + " arrivals since were off any too");
                }
            } else if (!fruitlessSpells && atRandom()) {
                if (trace) {
                    TraceLines.line("xq: wide beats: a spell of learning skipped: its latest " + returnsOffBeat
                            + " returns found no beat (requests at random)");
                }
            } else if (debt(t) < LEARN_NANOS) {
                learnStart = t;
                onBeatAfterSpell = 0;
                offBeatAfterSpell = 0;
                ranOutOffBeat = false;
            } else if (trace) {
                TraceLines.line("xq: wide beats: a spell of learning refused: its debt " + debt(t) / 1_000_000 + " ms");
            }
        }

        /**
         * Whether a spell of learning begins now for {@code behind}, a queue behind this one that
         * came back after a quiet spell within {@value #RETURN_WINDOW_NANOS} ns: this one is wide,
         * without a beat (the caller's; with one B does not fit there is nothing to learn, unless
         * {@link ArrivalGuards#fruitlessSpells}) and not learning, and no spell began since that
         * return (the spell holds B only while this one works or arrived lately). The first
         * request of a service for real follows its warm-up at once when the service is the last
         * of its node to be ready (nothing quiet between them), the spell begun with its warm-up
         * had run out, and the GEMMs that began with that request ran narrowed beside its first
         * three (36-50 ms against 8: the batch's P99 at 3.4-4.6 x its standalone in six runs of
         * fifteen, H200). Back within a spell, the queue is held by it, and the window opens as
         * that spell ends (one spell more for one return).
         */
        boolean spellOnReturn(long now, Track behind) {
            if (behind == null || behind.returnedAt == 0 || !wideSeen || count == 0 || learnStart - behind.returnedAt >= 0 || learning(now)) {
                return false;
            }
            // back within a spell (held by it), the window opens as that spell ends: a GEMM job
            // back with a batch's first request for real, 60 ms before the spell its warm-up had
            // begun ran out, was narrowed beside its first four requests (17-53 ms against 8, its
            // P99 3.15 x its standalone, H200)
            long from = behind.returnedAt;
            if (learnStart != 0 && learnEnds() - from > 0) {
                from = learnEnds();
            }
            return now - from >= 0 && now - from < RETURN_WINDOW_NANOS;
        }

        private long debt(long t) {
            return learnDebtAt == 0 ? 0 : Math.max(0, learnDebt - (t - learnDebtAt) / LEARN_DECAY);
        }

        /**
         * Whether a wide queue is in its first arrivals after a quiet spell (and not quiet again:
         * a burst of requests that ends well within the spell ends it). A beat found then
         * that the queue behind fits ends it (the wide beats take over); one it does not fit does
         * not: a rhythm of busy periods inside the first request (an eager large batch's) is a beat
         * too, and ending the spell on it let a narrowed GEMM beside the second request (19 ms
         * against 8, H200).
         */
        boolean learning(long now) {
            return wideSeen && learnStart != 0 && last() - learnStart < LEARN_NANOS && now - last() < QUIET_NANOS;
        }

        /**
         * When the spell in progress ends unless the queue arrives again: as it goes quiet, where it
         * has not arrived since the spell's length had passed (a spell runs out at the queue's first
         * arrival after {@value #LEARN_NANOS} ns, not while it is silent). A CUDA graph service's
         * capture stream worked without a beat, then fell silent as its main stream began its
         * requests on a 25 ms beat; its spell ran out at 600 ms and left it "arrived lately" and
         * without a beat until it went quiet, and the GEMM behind was narrowed beside the graph's
         * requests 5-9 (2.3-2.4 ms against 1.65: the graph's P99 at 1.33 x its standalone, H200
         * session 58, whose trace has the capture stream's spell "run out").
         */
        long learnEnds() {
            return last() - learnStart < LEARN_NANOS ? last() + QUIET_NANOS : learnStart + LEARN_NANOS;
        }

        void busyEnded(long duration) {
            if (!busyShared) {
                alone[aloneNext] = duration;
                aloneNext = (aloneNext + 1) % BUSY_HISTORY;
                aloneCount = Math.min(aloneCount + 1, BUSY_HISTORY);
            }
            busyShared = false;
            if (returnedInRequest) {
                stalled[stalledNext] = duration;
                stalledNext = (stalledNext + 1) % BUSY_HISTORY;
                stalledCount = Math.min(stalledCount + 1, BUSY_HISTORY);
                returnedInRequest = false;
            }
            phaseCount++;
            busy[busyNext] = duration;
            busyNext = (busyNext + 1) % BUSY_HISTORY;
            busyCount = Math.min(busyCount + 1, BUSY_HISTORY);
            lastBusyEnd = busyStart + duration;
            busyStart = 0;
        }

        /**
         * Its median busy period among the latest {@value #BUSY_HISTORY} that no queue it is
         * preferred over ran beside (held, nothing of theirs in flight), once
         * {@value #ALONE_BUSY} are known; else {@link #medianBusy}: what its requests take while
         * the queues behind it are held through them, as they are between whole runs in the
         * gaps. Beside a narrowed GEMM a graph tenant's requests took 2.4 ms against 1.8 alone, and
         * its busy periods as the node saw them 3.2: the gap it left was reckoned 21.7 ms of 25, too
         * short for the GEMM's 21.1 ms command with the node's reaction, so the GEMM stayed narrowed
         * beside it all run (0.47 of native sharing, the graph's P99 1.56-1.58 x its standalone,
         * four runs of four, H200).
         */
        long medianAloneBusy() {
            if (aloneCount < ALONE_BUSY) {
                return busyCount > 0 ? medianBusy() : 0;
            }
            long[] d = Arrays.copyOf(alone, aloneCount);
            Arrays.sort(d);
            return d[aloneCount / 2];
        }

        /**
         * The busy period the gaps are reckoned from: {@link #medianAloneBusy}, or the median of
         * all its latest busy periods where that is shorter. Those alone may all be old: a graph's
         * first requests, slow and alone while the queues behind it were held through its spell of
         * learning (3.23 ms), were its only ones alone all run once the GEMM behind it was narrowed
         * beside every later one (1.79-1.90 ms of all): the gap came to 20.7 ms, less than the
         * GEMM's 21.5 ms command, so the GEMM stayed narrowed, no request ran alone again to put it
         * right, and the graph was at 1.39 x its standalone P99 (H200, session 46; session 45: 2.36
         * ms alone against 1.84-2.21 of all, a gap 0.08 ms longer than the GEMM's command). All of
         * them longer (its requests slowed by, or waiting behind, what ran beside them), those alone
         * stand, as before.
         */
        long gapBusy() {
            long alone = medianAloneBusy();
            return busyCount > 0 ? Math.min(alone, medianBusy()) : alone;
        }

        long medianBusy() {
            long[] d = Arrays.copyOf(busy, busyCount);
            Arrays.sort(d);
            return d[busyCount / 2];
        }

        /**
         * How long after an arrival on {@code beat} the queue is still within its request: its
         * longest recent busy period, at most a quarter of the period; 0 without busy periods.
         */
        long within(Beat beat) {
            long m = 0;
            for (int i = 0; i < busyCount; i++) {
                m = Math.max(m, busy[i]);
            }
            return Math.min(m, beat.periodNanos() / 4);
        }

        /**
         * How long after an arrival on {@code beat} the queues behind it are held while it is idle
         * (a stall of its owner inside a request): {@link #within}, but once {@value #PHASE_BUSY}
         * busy periods have ended since its latest quiet spell, the longest of the latest
         * {@value #BUSY_HISTORY} of those only (at most a quarter of the period). The busy periods
         * from before the spell still tell a return of the queue from a new arrival
         * ({@link #within}): forgotten, the fragments of an eager batch's first requests after its
         * warm-up counted as arrivals, no beat was found and the GEMMs behind it ran narrowed
         * through its requests (its P99 at 2.7-7.5 x, H200). Kept for the hold too, one long
         * warm-up request held the GEMMs 25 ms after each of its first 16 requests for 8 ms
         * requests: three 21 ms kernels a 100 ms gap instead of four. And the longest since the
         * spell without a window, one slow request held them after every later one (GEMMs at
         * 0.67-0.70 of native sharing against 0.88-0.97, H200). Once its requests are told apart
         * (a return within one, after its owner's stall, or {@value #STALL_FREE} in a row
         * without), only the requests that had a stall count: the longest of the latest of those,
         * or, where the latest {@value #STALL_FREE} had none, its usual request
         * ({@link #medianAloneBusy}): a slow request that never stalled holds nothing after it.
         */
        long hold(Beat beat) {
            if (phaseCount < PHASE_BUSY) {
                return within(beat);
            }
            if (sinceReturn >= STALL_FREE) {
                // its latest requests were whole busy periods: held through an idle before its
                // usual length only (replayed, a ResNet-50 graph's one request of 3.4 ms among
                // ones of 1.7 held a 21.5 ms GEMM until 3.4 ms after each of the next arrivals,
                // less than its command left of the 25 ms beat: on the H200 the GEMM got none for
                // five gaps there, was narrowed for starving and the graph ran beside it, P50
                // 2.4 ms against 1.8)
                return Math.min(medianAloneBusy(), beat.periodNanos() / 4);
            }
            if (stalledCount > 0) {
                // what it is held for is a stall: the longest of its latest requests that had one
                long m = 0;
                for (int i = 0; i < stalledCount; i++) {
                    m = Math.max(m, stalled[i]);
                }
                return Math.min(m, beat.periodNanos() / 4);
            }
            long m = 0;
            for (int i = 1, n = Math.min(phaseCount, busyCount); i <= n; i++) {
                m = Math.max(m, busy[Math.floorMod(busyNext - i, BUSY_HISTORY)]);
            }
            return Math.min(m, beat.periodNanos() / 4);
        }

        void outcome(boolean hit) {
            if (hit) {
                hits++;
            } else {
                misses++;
            }
            if (hits + misses >= 16) {
                hits /= 2;
                misses /= 2;
            }
        }

        boolean lingers() {
            return misses <= hits + 2;
        }

        void arrived(long t) {
            arrivals[next] = t;
            next = (next + 1) % HISTORY;
            count = Math.min(count + 1, HISTORY);
            seen++;
        }

        /** Arrivals counted ever; the beat's period and spread as of {@code rhythmOf} of them ({@link #beat}). */
        long seen;
        long rhythmOf = -1;
        long rhythmPeriod;
        long rhythmJitter;
        /** How long before the latest arrival the latest request of the beat began (0 unless found by {@link #requestRhythmOf}). */
        long rhythmAnchor;
        /** Whether a beat of requests in fragments is looked for ({@link ArrivalGuards#requestBeats}). */
        boolean requestBeats = true;
        /** Whether its owner prints a trace ({@link ArrivalGuards#trace}). */
        boolean trace;

        long last() {
            return arrivals[(next + HISTORY - 1) % HISTORY];
        }

        /**
         * The beat of the latest intervals: the most of them (down to {@value #MIN_INTERVALS}) whose
         * spread is small next to their median. A queue whose rhythm changed (warm-up requests back
         * to back, a pause, then requests on a beat) is on its new beat once it has that many
         * intervals of it, not once the old ones have left the history (they kept the guards off
         * for the first 15 requests of a tenant beside training on the H200).
         */
        Beat beat(long now, long grace) {
            int n = count - 1;
            if (n < 2) {
                return null;
            }
            // the rhythm changes only with an arrival: found once per arrival, not at every call
            // (several a decision; on the 2-CPU build VM, where the simulated device's commands are
            // spins, a profile had it among the node's busiest frames)
            if (rhythmOf != seen) {
                rhythm(n);
                rhythmOf = seen;
            }
            long period = rhythmPeriod;
            long jitter = rhythmJitter;
            if (jitter < 0) {
                return null;
            }
            long nextAt = last() - rhythmAnchor + period;
            grace = Math.min(grace, period / 4);
            if (nextAt + jitter + grace < now) {
                nextAt += period; // one arrival missed: the beat may go on
                if (nextAt + jitter + grace < now) {
                    return null;
                }
            }
            return new Beat(period, jitter, nextAt);
        }

        /** Sets {@link #rhythmPeriod} and {@link #rhythmJitter} (-1: no beat) from the last {@code n} intervals. */
        private void rhythm(int n) {
            long[] d = new long[n];
            int start = (next + HISTORY - count) % HISTORY;
            for (int i = 0; i < n; i++) {
                d[i] = arrivals[(start + i + 1) % HISTORY] - arrivals[(start + i) % HISTORY];
            }
            long[] found = rhythmOf(d, n);
            // (only for a queue preferred over another, where a beat is used: 2-3 times the cost
            // of rhythmOf, and a best-effort queue off any beat arrives with each command)
            if (found[1] < 0 && requestBeats && !over.isEmpty()) {
                long[] requests = requestRhythmOf(d, n);
                if (requests != null) {
                    found = requests;
                }
            }
            rhythmPeriod = found[0];
            rhythmJitter = found[1];
            rhythmAnchor = found.length > 2 ? found[2] : 0;
        }
    }

    /**
     * The beat of the intervals {@code d[0..n)} (oldest first): {period, jitter}, jitter -1 for none.
     * The most of the latest intervals (down to {@value #MIN_INTERVALS}) whose median is a period
     * and whose deviations from it stay within an eighth of it and {@value #MAX_JITTER_NANOS} ns for
     * 7 of 8 (one in eight may be off: a late request, a pause); else a rhythm just begun (below).
     * One sort of the intervals, the latest windows' medians kept by taking the oldest out, and a
     * count of the deviations within bounds; the deviations are sorted only for the window that is
     * a beat (a queue off any beat with an arrival per command sorted 24 arrays an arrival: on the
     * 2-vCPU build VM, where the simulated device's commands are spins, the node's busiest frame).
     */
    static long[] rhythmOf(long[] d, int n) {
        return rhythmOf(d, n, 2);
    }

    /** {@link #rhythmOf(long[], int)}, a rhythm just begun taken only once {@code newRun} intervals agree. */
    private static long[] rhythmOf(long[] d, int n, int newRun) {
        long period = 0;
        long jitter = -1;
        long[] sorted = Arrays.copyOf(d, n);
        Arrays.sort(sorted);
        int len = n;
        for (int m = n; m >= MIN_INTERVALS && jitter < 0; m--) {
            if (m < n) {
                // the window loses its oldest interval
                int at = Arrays.binarySearch(sorted, 0, len, d[n - m - 1]);
                System.arraycopy(sorted, at + 1, sorted, at, len - at - 1);
                len--;
            }
            long p = sorted[m / 2];
            if (p < MIN_PERIOD_NANOS || p > MAX_PERIOD_NANOS) {
                continue;
            }
            // the k-th smallest deviation is within the bound when at least k + 1 deviations are
            int k = Math.max(0, (int) Math.ceil(m * 7 / 8.0) - 1);
            long bound = Math.min(p / 8, MAX_JITTER_NANOS);
            int within = 0;
            for (int i = n - m; i < n; i++) {
                if (Math.abs(d[i] - p) <= bound) {
                    within++;
                }
            }
            if (within > k) {
                long[] dev = new long[m];
                for (int i = 0; i < m; i++) {
                    dev[i] = Math.abs(d[n - m + i] - p);
                }
                Arrays.sort(dev);
                period = p;
                jitter = dev[k];
            }
        }
        if (jitter < 0 && n >= 2) {
            // a rhythm just begun (the first arrivals, or after a pause or a faster run such as
            // back-to-back warm-up requests): two intervals that agree closely are taken at once
            long a = d[n - 2];
            long b = d[n - 1];
            long p = Math.max(a, b);
            long j = Math.abs(a - b);
            // the intervals at the end that agree with the last: the new rhythm so far (at its
            // fourth arrival, three of them: too few for the rule above, which lets none of four
            // be off, and the beat was lost for a request on the H200)
            int run = 2;
            while (run < n && Math.abs(d[n - 1 - run] - b) <= Math.min(p / 16, NEW_BEAT_MAX_JITTER_NANOS)) {
                j = Math.max(j, Math.abs(d[n - 1 - run] - b));
                run++;
            }
            // three that agree are a beat whatever came before (the interval from a warm-up's last
            // request to the first for real, 4 ms longer than the 100 ms beat after it, kept an
            // eager batch's beat unknown for a request more, H200)
            boolean begun = run >= 3 || run == n || d[n - 1 - run] < p / 2 || d[n - 1 - run] > 2 * p;
            if (begun && run >= newRun && p >= MIN_PERIOD_NANOS && p <= MAX_PERIOD_NANOS && j <= p / 16 && j <= NEW_BEAT_MAX_JITTER_NANOS) {
                period = p;
                jitter = j;
            }
        }
        return new long[] {period, jitter};
    }

    /** Periods {@link #requestRhythmOf} tries at most. */
    static final int REQUEST_RHYTHM_TRIES = 6;

    /**
     * The beat of requests that come in fragments, for intervals {@code d[0..n)} (oldest first) that
     * {@link #rhythmOf} finds none in: {period, jitter, how long before the latest arrival the
     * latest request began}, or null. Until a beat is known every busy period is an arrival, and
     * an eager batch's request is often two or three of them (its owner's stalls inside it, 0.3-2
     * ms idle, then more launches): 100 ms apart, then 4, then 96, then 100... has no beat, and
     * without a beat the stalls are never told from arrivals (in 14 of 24 H200 runs, the
     * interposer's timeline of the batch's first 1.5 s held 3-14 such fragments, as gaps between
     * its runs of 1 ms or more; a beat was known only once four requests in a row came whole, up
     * to 1.1 s after the first). So each of the
     * latest intervals long enough to leave shorter ones a quarter of it is tried as the period
     * (an arrival within a quarter of a period after a request began is a fragment of that
     * request, the bound {@link Track#within} keeps too), the requests' intervals are made from
     * the arrivals that begin one, and they must be a beat ({@link #rhythmOf}) of about that
     * period (within an eighth). A token loop whose generations look like requests fails that
     * bound: its fragments run past a quarter of the period.
     */
    static long[] requestRhythmOf(long[] d, int n) {
        if (n < 3) {
            return null;
        }
        long shortest = Long.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            shortest = Math.min(shortest, d[i]);
        }
        long[] tried = new long[REQUEST_RHYTHM_TRIES];
        int tries = 0;
        long[] requests = new long[n];
        for (int i = n - 1; i >= 0 && tries < REQUEST_RHYTHM_TRIES; i--) {
            long p = d[i];
            // a period with nothing to merge is rhythmOf's, already tried
            if (p < MIN_PERIOD_NANOS || p > MAX_PERIOD_NANOS || p / 4 <= shortest) {
                continue;
            }
            boolean seen = false;
            for (int k = 0; k < tries && !seen; k++) {
                seen = Math.abs(p - tried[k]) <= tried[k] / 8;
            }
            if (seen) {
                continue;
            }
            tried[tries++] = p;
            long t = 0;
            long start = 0;
            int m = 0;
            for (int k = 0; k < n; k++) {
                t += d[k];
                if (t - start >= p / 4) {
                    requests[m++] = t - start;
                    start = t;
                }
            }
            if (m < 2) {
                continue;
            }
            // a rhythm of requests just begun needs three that agree: two, a few in a hundred
            // windows of arrivals at random with fragments had one
            long[] found = rhythmOf(requests, m, 3);
            if (found[1] >= 0 && Math.abs(found[0] - p) <= p / 8) {
                return new long[] {found[0], found[1], t - start};
            }
        }
        return null;
    }

    private final Map<Long, Track> tracks = new HashMap<>();
    /**
     * Queues the latest decision's wide beats left narrowed only to keep the narrow tenants'
     * reserve, between the wide ones' requests, with their command at that width: guarded as if
     * they ran ({@link #guards}).
     */
    private final Map<Long, Long> partly = new HashMap<>();
    private final Map<Long, Guard> given = new HashMap<>();
    private long lingerNanos = DEFAULT_LINGER_NANOS;
    private long graceNanos = DEFAULT_GRACE_NANOS;
    /** The node's reaction to arrivals lately (its P99; {@link ArrivalReactions#tailNanos}), 0 unknown. */
    private long reactionNanos;
    private long reactionCapNanos = MAX_REACTION_GRACE_NANOS;
    private boolean wideBeats = true;
    private boolean narrowedGuards = true;
    private boolean requestBeats = true;
    private boolean fruitlessSpells;
    private boolean randomReturns = true;
    private boolean wholeBesideReserve;
    private java.util.Set<String> holdBesideNarrow = java.util.Set.of();
    private boolean holdBesideSlowed;
    /** Where what {@link #holdBesideSlowed} finds is told (the node's log, as a warning: a tenant slowed by its company; nowhere by default). */
    private java.util.function.Consumer<String> notes = NO_NOTES;
    /** No lambda here (FirstCallsTest): each site's first call would spin a class inside a decision. */
    private static final java.util.function.Consumer<String> NO_NOTES = new java.util.function.Consumer<>() {
        @Override
        public void accept(String m) {
        }
    };
    /** {@link #holdBesideSlowed}: per narrow latency-critical queue, what its device lag said and who is held beside it. */
    private final Map<Long, Slowed> slowed = new HashMap<>();
    /** Decisions that held a queue beside a narrow one found slowed ({@link #holdBesideSlowed}). */
    private long traceHeldBesideSlowed;
    /** Decisions that held a queue named in {@link #holdBesideNarrow} while a narrow one was within a request. */
    private long traceHeldBesideNarrow;
    private boolean narrowBeatsKeepReserve = true;
    /** After {@link #update}: the earliest end of a linger in force, Long.MAX_VALUE for none. */
    private long lingerWake = Long.MAX_VALUE;
    /** After {@link #update}: just past the earliest lapse of a guard in force, Long.MAX_VALUE for none. */
    private long lapseWake = Long.MAX_VALUE;

    /** Sets the longest linger (the class comment); 0 turns lingers off. */
    void lingerNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("linger " + nanos + " ns is negative; give 0 (off) or more");
        }
        lingerNanos = nanos;
    }

    long lingerNanos() {
        return lingerNanos;
    }

    /** Sets how long after the latest foreseen arrival a guard still holds (the class comment). */
    void graceNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("grace " + nanos + " ns is negative; give 0 or more");
        }
        graceNanos = nanos;
    }

    long graceNanos() {
        return graceNanos;
    }

    /**
     * Tells the guards how long the node has lately taken to hold others for an arrival (the P99;
     * 0 unknown): a guard must not lapse before the node has reacted to an arrival on time, or the
     * guarded queue launches in between and the arriving one waits behind that. The grace in use
     * ({@link #grace()}) is the configured one or this, whichever is longer, this up to
     * {@link #reactionCapNanos()} (and a quarter period in all).
     */
    void reactionNanos(long nanos) {
        reactionNanos = Math.max(0, nanos);
    }

    /** Sets the most the reaction lengthens the grace ({@link #MAX_REACTION_GRACE_NANOS} by default); 0: not at all. */
    void reactionCapNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("reaction cap " + nanos + " ns is negative; give 0 (off) or more");
        }
        reactionCapNanos = nanos;
    }

    long reactionCapNanos() {
        return reactionCapNanos;
    }

    /** The grace in use: the configured one (0: none, whatever the reaction), or the node's reaction (up to its cap) where longer. */
    long grace() {
        return graceNanos == 0 ? 0 : Math.max(graceNanos, Math.min(reactionNanos, reactionCapNanos));
    }

    /** Turns the wide beats (the class comment) on or off. */
    void wideBeats(boolean on) {
        wideBeats = on;
    }

    /**
     * Turns on spells of learning with nothing to learn; off by default: a wide queue whose
     * arrivals are off any beat ({@link #APERIODIC_NANOS}) begins no new spell, and a queue coming
     * back behind one whose beat is known (its commands do not fit the gaps) begins none for it.
     */
    void fruitlessSpells(boolean on) {
        fruitlessSpells = on;
        for (Track t : tracks.values()) {
            t.fruitlessSpells = on;
        }
    }

    boolean fruitlessSpells() {
        return fruitlessSpells;
    }

    /**
     * Turns off (on by default) taking a wide queue whose latest {@value #RANDOM_RETURNS} returns
     * found no beat for one whose requests come at random ({@link Track#atRandom}): on, its
     * returns begin no spell of learning and no first arrivals' hold ({@link #firstArrivals}),
     * until one finds a beat. Off, every return after {@value #QUIET_NANOS} ns without a request
     * holds the queues behind it through its next four requests (a bf16 trainer beside a batch
     * service at random gaps of 100 ms on average: 45 % of the run in such holds, 0.71 of
     * native sharing, H200 session 82).
     */
    void randomReturns(boolean on) {
        randomReturns = on;
        for (Track t : tracks.values()) {
            t.randomReturns = on;
        }
    }

    boolean randomReturns() {
        return randomReturns;
    }

    /**
     * Turns on (off by default) the whole device for a queue whose commands fit the wide beats'
     * gaps only there: beside a narrow tenant's reserve (an eager decoder's) they fit none, and
     * narrowed no wide one's gaps. Off, it is left narrowed, its long kernels running through the
     * wide ones' requests; on, it is held while a narrow one is within a request
     * ({@link #RESERVE_REQUEST_NANOS}) and runs on the whole device between the wide ones'
     * requests, under their guards, while none is. Off by default: on the H200 (session 74) it
     * kept a graph's requests clear of the GEMM (9-85 of 480 beside a narrowed GEMM kernel against
     * 136-269) and the bf16 trainer gained (0.70-0.74 of native sharing against 0.50-0.64), but the
     * GEMM lost (0.35 against 0.41-0.66), the eager decoder's P99 while the others ran rose
     * (47-51 ms against 39-43), and the graph's only in one run of two. Since session 82 (not yet
     * measured on a GPU), where the narrow tenants' requests are on a beat
     * ({@link Track#nextRequestStart}), the command is let onto the whole device only where it
     * ends before the next of them, and is held until that request is over otherwise.
     */
    void wholeBesideReserve(boolean on) {
        wholeBesideReserve = on;
    }

    /**
     * Best-effort processes, by name ({@code NAME} of their queues' {@code NAME/STREAM}), held in
     * time while a narrow tenant above them (an eager decoder, at most half the device, keeping its
     * reserve) is within a request (working, or arrived within {@link #RESERVE_REQUEST_NANOS}), and
     * narrowed as decided between its requests. Empty by default: an experiment. Why: on an H100 an
     * eager decoder's device part (the wait at its one synchronize) was 2.8-4.9 ms at P99 beside
     * Triton's memory-bound row softmax on the other multiprocessors wherever its host launched
     * fast, and 0.06-0.16 ms in every recorded mix without Triton (session 102's files,
     * {@code bench/gpu/lc-device-part.py}): space splits multiprocessors, not memory bandwidth.
     */
    void holdBesideNarrow(java.util.Set<String> names) {
        holdBesideNarrow = java.util.Set.copyOf(names);
    }

    java.util.Set<String> holdBesideNarrow() {
        return holdBesideNarrow;
    }

    /** The process name of a queue's name ({@code NAME/STREAM}). */
    static String processName(String queueName) {
        int slash = queueName == null ? -1 : queueName.indexOf('/');
        return queueName == null ? "" : slash < 0 ? queueName : queueName.substring(0, slash);
    }

    boolean wholeBesideReserve() {
        return wholeBesideReserve;
    }

    /**
     * Turns on (off by default) a narrow tenant on a beat keeping its reserve beside a wide one: a
     * queue narrower than the cap above B (an eager decoder, 24 of an H200's 132 multiprocessors)
     * whose beat B's commands fit is, with a wide one on a beat above B too, counted as a reserve,
     * as a narrow one off any beat is, not as a tenant B is held for: B runs on the device less
     * that reserve while only the narrow one works, and is held while the wide one does. Off, B is
     * "held while they work", the narrow one's requests included, time taken where space would
     * do: beside a decoder on a 60 ms beat (its requests 18-33 ms) and a graph or a large batch,
     * the trainers at 0.70-0.77 of native sharing in four mixes (H200, session 80), against
     * 0.89-0.96 beside the decoder alone, where B stays narrowed beside its reserve. Not measured
     * on a GPU yet.
     */
    void narrowBeatsKeepReserve(boolean on) {
        narrowBeatsKeepReserve = on;
    }

    boolean narrowBeatsKeepReserve() {
        return narrowBeatsKeepReserve;
    }

    /**
     * Whether best-effort processes are held through the requests of a narrow latency-critical
     * tenant whose kernels its company slows ({@link Slowed}). Off by default: an experiment. On an
     * H200 (session 110, one call) it held a process in 4 of 5 mixes where the decoder's device
     * part was 0.12-0.18 ms at P99 (the lag then read the tracker's look, since a lower bound); slow
     * readings in most requests left the processes not yet probed held through every request (bf16
     * training 0.59-0.79 of native sharing against 0.93-1.10 off).
     */
    void holdBesideSlowed(boolean on) {
        holdBesideSlowed = on;
        if (!on) {
            slowed.clear();
        }
    }

    boolean holdBesideSlowed() {
        return holdBesideSlowed;
    }

    void notes(java.util.function.Consumer<String> notes) {
        this.notes = notes == null ? NO_NOTES : notes;
    }

    /** @return what {@link #holdBesideSlowed} keeps for the queue, for tests and traces: null for nothing */
    Slowed slowed(long handle) {
        return slowed.get(handle);
    }

    /**
     * A narrow latency-critical tenant's device lag ({@link Space#lags}: per busy period, the longest
     * a batch of its commands ended after the last of them was launched) and the best-effort
     * processes held through its requests for it ({@link #holdBesideSlowed}).
     *
     * <p>Why: space splits multiprocessors, not memory bandwidth. An eager decoder keeps its reserve
     * and the best-effort processes run on the rest of the device; beside a memory-bound one (Triton's
     * row softmax) its kernels ran slower than it launched them, and what its synchronize waited for
     * at P99 was 2.8-10 ms against 0.06-0.16 ms beside training and GEMMs (H100, sessions 102-109),
     * while Triton ran at 1.5-2.1 x its native-sharing rate. Held through the decoder's requests
     * (session 104, by name), that wait fell to 0.12 ms; holding a trainer as well would have cost it a
     * quarter of its time for nothing. So the node finds the process itself:
     * <ol>
     * <li>after its first {@link #WARM_LAGS} busy periods (its start),
     * {@link #SLOW_SEEN} of the tenant's latest {@link #LAG_WINDOW} busy periods slow (a lag of
     * {@link dev.xq.external.spi.ExternalQueueShare#SLOW_LAG_MICROS} or more) while no one is held for
     * it: every best-effort process narrowed beside it is held through its requests from then on;</li>
     * <li>{@link #LAG_WINDOW} busy periods in a row without a slow one: one of them (by name) is let
     * run beside it again, a probe; the next slow period finds it the cause and it is held again for
     * good, {@link #LAG_WINDOW} in a row without finds it not, and it stays let run. Every process is
     * probed, the last one too: where none is found, nothing is held for it for
     * {@link #GIVE_UP_NANOS} (a burst of slow requests that no process made);</li>
     * <li>still slowed with those it holds held, between probes ({@link #SLOW_SEEN} of its latest
     * {@link #LAG_WINDOW} since the change, the first after it skipped): holding does not help,
     * nothing is held for it for {@link #GIVE_UP_NANOS}, and what was found is forgotten. A first
     * build gave up only where nothing had been found yet; on an H200 whose decoder read slow in
     * most requests, the processes not yet probed then stayed held through every request (session
     * 110).</li>
     * </ol>
     * Session 111 (H100): a second build waited for no slow period at all since the latest change
     * before it probed, so a single slow period while all were held left every process held for the
     * rest of the run (a four-process mix: it never probed), and it named the one process left
     * unprobed the cause without a probe (a GEMM process beside a decoder whose device part read
     * 0.11 ms at P99);
     * the runs and the probes now need {@link #LAG_WINDOW} clean periods in a row, and none is named
     * without its own probe.
     * Not for a tenant that is busy most of the time ({@link #MAX_BUSY_SHARE}): held through its
     * requests, the others would get almost nothing; and a held process that starves is let go by
     * the starvation rule as before. What is found stays while the queues live, unless the tenant is
     * slowed again (above).
     */
    static final class Slowed {
        long lagsSeen = -1;
        long slowSeen;
        /** The latest lags, slow or not, newest at {@code next - 1}. */
        final boolean[] recent = new boolean[LAG_WINDOW];
        int count;
        int next;
        boolean engaged;
        /** Lags counted since the latest change (engaged, a probe begun or ended): the first is skipped. */
        int sinceChange;
        int slowSinceChange;
        /** Clean lags in a row since the latest change or the latest slow one (the first after a change skipped). */
        int cleanRun;
        long giveUpUntil;
        /** When it was last found slowed (engaged). */
        long engagedAt;
        /** Best-effort processes seen narrowed beside it while engaged. */
        final java.util.TreeSet<String> beside = new java.util.TreeSet<>();
        final Set<String> cleared = new HashSet<>();
        final Set<String> causes = new HashSet<>();
        /** The process let run as a probe, null for none. */
        String probing;

        int slowInRecent() {
            int n = 0;
            for (int i = 0; i < count; i++) {
                n += recent[i] ? 1 : 0;
            }
            return n;
        }

        void push(boolean slow) {
            recent[next] = slow;
            next = (next + 1) % LAG_WINDOW;
            count = Math.min(LAG_WINDOW, count + 1);
            sinceChange++;
            if (sinceChange > 1) {
                slowSinceChange += slow ? 1 : 0;
                cleanRun = slow ? 0 : cleanRun + 1;
            }
        }

        /** Slow ones among the latest lags since the latest change (the first after it skipped), at most {@link #LAG_WINDOW}. */
        int slowLatelySinceChange() {
            int n = Math.min(Math.max(0, sinceChange - 1), count);
            int slow = 0;
            for (int i = 1; i <= n; i++) {
                slow += recent[(next - i + LAG_WINDOW) % LAG_WINDOW] ? 1 : 0;
            }
            return slow;
        }

        void changed() {
            sinceChange = 0;
            slowSinceChange = 0;
            cleanRun = 0;
        }

        /** Time seen, and of it working (ready or with work in flight), between decisions; halved past {@link #BUSY_SPAN_NANOS}. */
        long seenNanos;
        long workingNanos;
        long at;
        boolean working;

        void account(long now, boolean workingNow) {
            if (at != 0 && now > at) {
                seenNanos += now - at;
                workingNanos += working ? now - at : 0;
                if (seenNanos > BUSY_SPAN_NANOS) {
                    seenNanos /= 2;
                    workingNanos /= 2;
                }
            }
            at = now;
            working = workingNow;
        }

        /** The share of its time the tenant worked lately; 1 (busy) before {@link #BUSY_KNOWN_NANOS} were seen. */
        double busyShare() {
            return seenNanos < BUSY_KNOWN_NANOS ? 1 : (double) workingNanos / seenNanos;
        }

        /** Whether process {@code name} is held through the tenant's requests now. */
        boolean holds(String name) {
            return engaged && !cleared.contains(name) && !name.equals(probing);
        }
    }

    /** {@link Slowed}: the busy periods looked at. */
    static final int LAG_WINDOW = 8;
    /**
     * {@link Slowed}: a tenant's first busy periods, never counted: an eager decoder's start (its
     * weights copied in, its warm-up requests) read slow in 3 of its first 6 on an H100 whose
     * decoder's device part then read 0.11 ms at P99, and the rule held every process beside it
     * from there (session 111).
     */
    static final int WARM_LAGS = 16;
    /** {@link Slowed}: slow ones among them that find the tenant slowed. */
    static final int SLOW_SEEN = 2;
    /** {@link Slowed}: how long nothing is held for a tenant that holding did not help. */
    static final long GIVE_UP_NANOS = 30_000_000_000L;
    /** {@link Slowed}: a tenant working more of its time than this is not held for. */
    static final double MAX_BUSY_SHARE = 0.6;
    /** {@link Slowed}: the time over which a tenant's share of time working is taken (halved past it). */
    static final long BUSY_SPAN_NANOS = 4_000_000_000L;
    /** {@link Slowed}: the time seen before that share counts. */
    static final long BUSY_KNOWN_NANOS = 200_000_000L;

    /** {@link #holdBesideSlowed}: each narrow latency-critical queue's new lags read and acted on. */
    private void slowedUpdate(long now, List<QueueView> views, Space space) {
        Set<Long> open = new HashSet<>();
        for (QueueView a : views) {
            // latency-critical processes only (the whole device, never held in time): a best-effort
            // one's lag is its own queueing behind the others
            long[] l = space.spaceOnly(a.handle()) ? space.lags(a.handle()) : null;
            if (l == null || l[0] <= 0) {
                continue;
            }
            open.add(a.handle());
            Slowed st = slowed.get(a.handle());
            if (st == null) {
                st = new Slowed();
                slowed.put(a.handle(), st);
            }
            st.account(now, a.ready() || a.inFlight() > 0);
            if (st.lagsSeen < 0 || l[0] <= WARM_LAGS) {
                // its first busy periods are its start (weights copied in, kernels loaded on their
                // first launch, a warm-up): not what company does to it; a queue met late counts
                // from now
                st.lagsSeen = l[0];
                st.slowSeen = l[1];
                continue;
            }
            long fresh = l[0] - st.lagsSeen;
            long freshSlow = Math.max(0, Math.min(fresh, l[1] - st.slowSeen));
            st.lagsSeen = l[0];
            st.slowSeen = l[1];
            for (long i = 0; i < Math.min(fresh, LAG_WINDOW); i++) {
                st.push(i >= fresh - freshSlow);
            }
            if (fresh <= 0) {
                continue;
            }
            if (!st.engaged) {
                Track ta = tracks.get(a.handle());
                if (now >= st.giveUpUntil && st.slowInRecent() >= SLOW_SEEN && st.busyShare() <= MAX_BUSY_SHARE) {
                    st.engaged = true;
                    st.engagedAt = now;
                    st.changed();
                    notes.accept("xq: " + a.name() + ": its kernels fell behind its launches in " + st.slowInRecent() + " of its latest "
                            + st.count + " requests (a lag of " + dev.xq.external.spi.ExternalQueueShare.SLOW_LAG_MICROS
                            + " us or more): the best-effort processes beside it are held through its requests (holdBesideSlowed)");
                }
                continue;
            }
            if (st.probing == null) {
                if (st.slowLatelySinceChange() >= SLOW_SEEN) {
                    // slowed while it holds what it holds: found or not, holding does not help
                    st.engaged = false;
                    st.beside.clear();
                    st.giveUpUntil = now + GIVE_UP_NANOS;
                    st.changed();
                    notes.accept("xq: " + a.name() + ": still slowed with " + (st.causes.isEmpty() && st.cleared.isEmpty() ? "the best-effort processes beside it"
                            : "those it found or has not probed") + " held through its requests; none is held for it for "
                            + GIVE_UP_NANOS / 1_000_000_000L + " s (holdBesideSlowed)");
                    st.causes.clear();
                    st.cleared.clear();
                    continue;
                }
                // a run of clean requests (one slow one among them starts the run again: the first
                // build waited for none since the change, and one slow one held every process for good)
                if (st.cleanRun >= LAG_WINDOW) {
                    java.util.List<String> unknown = new java.util.ArrayList<>();
                    for (String n : st.beside) {
                        if (!st.cleared.contains(n) && !st.causes.contains(n)) {
                            unknown.add(n);
                        }
                    }
                    if (!unknown.isEmpty()) {
                        // each is probed, the last one too: one is never named the cause because the
                        // others were not (a burst of slow requests that no process made named one)
                        st.probing = unknown.get(0);
                        st.changed();
                    } else if (st.causes.isEmpty() && !st.cleared.isEmpty()) {
                        st.engaged = false;
                        st.beside.clear();
                        st.cleared.clear();
                        st.giveUpUntil = now + GIVE_UP_NANOS;
                        st.changed();
                        notes.accept("xq: " + a.name() + ": none of the processes beside it slows it (each ran beside "
                                + LAG_WINDOW + " of its requests without a slow one); none is held for it for "
                                + GIVE_UP_NANOS / 1_000_000_000L + " s (holdBesideSlowed, " + (now - st.engagedAt) / 1_000_000
                                + " ms after it was found slowed)");
                    }
                }
            } else if (st.slowSinceChange > 0) {
                st.causes.add(st.probing);
                notes.accept("xq: " + a.name() + ": " + st.probing + " slows it: held through its requests (holdBesideSlowed, "
                        + (now - st.engagedAt) / 1_000_000 + " ms after it was found slowed)");
                st.probing = null;
                st.changed();
            } else if (st.cleanRun >= LAG_WINDOW) {
                st.cleared.add(st.probing);
                notes.accept("xq: " + a.name() + ": " + st.probing + " does not slow it (" + LAG_WINDOW
                        + " requests in a row beside it without a slow one): let run through its requests (holdBesideSlowed, "
                        + (now - st.engagedAt) / 1_000_000 + " ms after it was found slowed)");
                st.probing = null;
                st.changed();
            }
        }
        slowed.keySet().retainAll(open);
    }


    /**
     * Turns the beat of requests in fragments ({@link #requestRhythmOf}) on or off (on by default;
     * off for replays that compare the node with and without it).
     */
    void requestBeats(boolean on) {
        requestBeats = on;
        for (Track t : tracks.values()) {
            t.requestBeats = on;
            t.rhythmOf = -1;
        }
    }

    boolean wideBeats() {
        return wideBeats;
    }

    /**
     * Turns on or off the guards of a queue the wide beats leave narrowed: held while a wide queue
     * on a beat whose gaps its command fits at the width it runs works, and guarded against that
     * queue's next arrival between ({@link #wideBeats}).
     */
    void narrowedGuards(boolean on) {
        narrowedGuards = on;
    }

    boolean narrowedGuards() {
        return narrowedGuards;
    }

    /** @return when the deciding thread must decide again for a linger to end; Long.MAX_VALUE for none */
    long lingerWake() {
        return lingerWake;
    }

    /**
     * @return when the deciding thread must decide again, just past the earliest lapse of a guard
     *     given (for the next guard of the queue it guarded, {@link #update}); Long.MAX_VALUE for none
     */
    long lapseWake() {
        return lapseWake;
    }
    private String policy = "";
    private long decisions;

    /**
     * Learns from one applied decision and says which queues' guards change.
     *
     * @param policyName the policy that decided (relations are forgotten when it changes)
     * @param now the decision's time
     * @param views what the policy decided on
     * @param decided the policy's actions: handle to suspend (true) or resume (false); a resume
     *        that a linger puts off is turned into a suspend here (the queue stays held)
     * @return the queues whose guard changes, with the new guard ({@link Guard#NONE} to lift one)
     */
    Map<Long, Guard> update(String policyName, long now, List<QueueView> views, Map<Long, Boolean> decided) {
        return update(policyName, now, views, decided, Space.NONE);
    }

    /**
     * {@link #update(String, long, List, Map)} for a decision that placed queues in space: a
     * narrowing the wide beats change is changed through {@code space} (and in {@code decided}).
     */
    Map<Long, Guard> update(String policyName, long now, List<QueueView> views, Map<Long, Boolean> decided, Space space) {
        if (!policyName.equals(policy)) {
            policy = policyName;
            for (Track t : tracks.values()) {
                t.over.clear();
            }
        }
        List<QueueView> arrived = null;
        for (QueueView v : views) {
            if (!v.ready() || v.readySinceNanos() == 0) {
                if (!v.ready() && v.inFlight() == 0) {
                    Track idle = tracks.get(v.handle());
                    if (idle != null) {
                        idle.idleCompleted = v.completed();
                    }
                }
                continue;
            }
            Track t = tracks.get(v.handle());
            if (t == null) {
                t = new Track();
                t.requestBeats = requestBeats;
                t.fruitlessSpells = fruitlessSpells;
                t.randomReturns = randomReturns;
                t.trace = trace;
                tracks.put(v.handle(), t);
            }
            if (!t.wideSeen && space != Space.NONE) {
                QueueSpace sv = space.space(v.handle());
                t.wideSeen = sv.known() && sv.widthSms() > SpaceRule.cap(sv.deviceSms());
            }
            if (v.readySinceNanos() != t.lastReadySince) {
                t.lastReadySince = v.readySinceNanos();
                if (t.lingerUntil != 0) {
                    // back while lingered for: the same busy period goes on
                    t.lingerUntil = 0;
                    t.outcome(true);
                    t.sinceReturn = 0;
                    t.returnedInRequest = true;
                    continue;
                }
                Beat on = t.busyCount > 0 ? t.beat(now, grace()) : null;
                if (on != null && (v.readySinceNanos() - t.last() < t.within(on) || t.unfinished(v.readySinceNanos(), on))) {
                    // back within its usual busy period on a beat: the same request goes on after a
                    // stall of its owner, not a new arrival (counted as one, it broke the beat for
                    // the next four: an eager large batch on a 100 ms beat lost it for six requests
                    // on the H200, and the GEMMs beside it ran narrowed again)
                    t.busyStart = t.last();
                    t.sinceReturn = 0;
                    t.returnedInRequest = true;
                    continue;
                }
                t.busyStart = v.readySinceNanos();
                t.requestArrived();
                t.arrivedLearning(v.readySinceNanos());
                if (t.sinceReturn < STALL_FREE) {
                    t.sinceReturn++;
                }
                if (arrived == null) {
                    arrived = new java.util.ArrayList<>(2);
                }
                arrived.add(v);
            }
        }
        if (arrived != null) {
            // who yields to a queue that just arrived: those with work that it left held, and that
            // it outranks where both have priorities (one held for another reason, on another's
            // turn or behind a third queue, does not yield to a queue of its own class)
            for (QueueView a : arrived) {
                if (held(a, decided) && !space.spaceOnly(a.handle())) {
                    // held on arrival (a queue whose hold is never applied, a latency-critical
                    // process with the whole device in space, works as if let run: its arrivals
                    // count. A large batch on a 100 ms beat that arrived with a CUDA graph of a
                    // higher priority, on a 25 ms beat, was "held" at each of its arrivals, never
                    // took its place over the GEMM process below it, and so had no beat for it:
                    // the GEMM's half-device kernels ran through its requests, unguarded, and kept
                    // its kernels from starting until they ended; H200, sessions 68-69)
                    continue;
                }
                Track ta = tracks.get(a.handle());
                for (QueueView b : views) {
                    if (b.handle() != a.handle() && b.ready() && !b.suspendedByApp() && held(b, decided) && outranks(a, b)) {
                        ta.over.put(b.handle(), now);
                        Track tb = tracks.get(b.handle());
                        if (tb != null) {
                            tb.over.remove(a.handle()); // the latest decision between them wins
                        }
                    }
                }
            }
        }
        if (++decisions % 1024 == 0) {
            forgetClosed(views);
        }
        partly.clear(); // this decision's, from the wide beats below or none
        long wideWake = wideBeats && space != Space.NONE && space.placing() ? wideBeats(now, views, decided, space) : Long.MAX_VALUE;
        shared(views, decided, space);
        linger(now, views, decided);
        lingerWake = Math.min(lingerWake, Math.min(wideWake, firstArrivals(now, views, decided)));
        Map<Long, Guard> changes = guards(now, views, decided, space);
        // a guard that lapses (its queue late or gone) leaves the guarded queue free until the next
        // decision, though another queue preferred over it may be due soon after: decided again
        // just past the lapse, it gets that one's guard. Beside an eager decoder and a CUDA graph
        // on a 25 ms beat, an fp32 trainer launched 1.4-1.8 ms before three of the graph's five
        // slowest requests and ran into them: its latest guard was for the decoder's next token,
        // foreseen 8-9 ms before each, after the last token of a request that had ended 10 ms
        // before; it lapsed, and nothing gave the graph's until the graph arrived (H200, session 73)
        lapseWake = Long.MAX_VALUE;
        for (Guard g : given.values()) {
            if (g.untilNanos() - now > 0) {
                lapseWake = Math.min(lapseWake, g.untilNanos() + LAPSE_MARGIN_NANOS);
            }
        }
        return changes;
    }

    /**
     * Marks the busy periods in progress that a queue they are preferred over runs beside: one
     * narrowed beside them or not held, with work, or with commands still in flight.
     */
    private void shared(List<QueueView> views, Map<Long, Boolean> decided, Space space) {
        for (Map.Entry<Long, Track> e : tracks.entrySet()) {
            Track a = e.getValue();
            if (a.busyStart == 0 || a.busyShared || a.over.isEmpty()) {
                continue;
            }
            for (long b : a.over.keySet()) {
                QueueView bv = find(views, b);
                if (bv != null && (bv.inFlight() > 0 || (bv.ready() && (space.narrowed(b) > 0 || !held(bv, decided))))) {
                    a.busyShared = true;
                    break;
                }
            }
        }
    }

    /** Busy periods' ends, lingers begun and ended, and the resumes they put off (the class comment). */
    private void linger(long now, List<QueueView> views, Map<Long, Boolean> decided) {
        lingerWake = Long.MAX_VALUE;
        for (Map.Entry<Long, Track> e : tracks.entrySet()) {
            Track a = e.getValue();
            if (a.busyStart == 0 && a.lingerUntil == 0) {
                continue;
            }
            QueueView av = find(views, e.getKey());
            if (av == null) {
                a.lingerUntil = 0;
                a.busyStart = 0;
                continue;
            }
            if (av.ready()) {
                continue;
            }
            if (a.lingerUntil != 0) {
                if (now - a.lingerUntil >= 0 || lingerNanos == 0) {
                    a.outcome(false); // it had finished: the others resume
                    a.lingerUntil = 0;
                    a.busyEnded(a.lingerFrom - a.busyStart);
                    continue;
                }
            } else {
                long elapsed = now - a.busyStart;
                if (lingerNanos > 0 && !a.over.isEmpty() && a.busyCount >= MIN_BUSY && elapsed < a.medianBusy() / 4 * 3
                        && a.beat(now, grace()) != null) {
                    if (a.lingers()) {
                        a.lingerFrom = now;
                        a.lingerUntil = now + Math.min(lingerNanos, a.medianBusy() / 2);
                    } else if (++a.skipped >= LINGER_RETRY) {
                        a.skipped = 0;
                        a.hits = 0;
                        a.misses = 0;
                    }
                }
                if (a.lingerUntil == 0) {
                    a.busyEnded(elapsed);
                    continue;
                }
            }
            lingerWake = Math.min(lingerWake, a.lingerUntil);
            for (long b : a.over.keySet()) {
                QueueView bv = find(views, b);
                if (bv != null && bv.suspended() && Boolean.FALSE.equals(decided.get(b))) {
                    decided.put(b, Boolean.TRUE);
                }
            }
        }
    }

    /**
     * A wide queue's first arrivals after a quiet spell (a service's first requests), before its
     * beat is known: no guard keeps the launches of the queues it is preferred over clear of its
     * next request yet, so those the decision lets run between its requests stay held, from its
     * first arrival to its beat (or past its first four intervals and {@value #FIRST_WINDOW_NANOS}
     * ns), each time until twice the longest of its latest three intervals after its latest arrival (at most
     * {@value #FIRST_HOLD_NANOS} ns; at the first, that). Queues
     * narrowed behind it are held by the spell of learning already ({@link #wideBeats}); these are
     * the ones held in time, whose commands are short (a trainer's): in 15 of 16 runs of a CUDA
     * graph service beside a trainer on the H200 (sessions 54-58) its requests 2-4 took 2.0-3.8 ms
     * against a P50 of 1.6-1.9, and in none of its standalone runs. Replayed on the 101 recorded
     * graph runs with a trainer's short commands behind (RecordedBeatsTest): the trainer let run
     * unguarded before 194 of the graph's 303 requests 2-4 before, 1 after, held 45 ms (median; at
     * most 69) of the run's first 1.5 s with no stream of the graph working. On the 119 recorded by
     * session 69 the hold by the latest interval alone let it run before 7 of 357; by the longest
     * of the latest three, before none (held 45 ms, at most 69).
     *
     * @return when the deciding thread must decide again for such a hold to end; Long.MAX_VALUE for none
     */
    private long firstArrivals(long now, List<QueueView> views, Map<Long, Boolean> decided) {
        long wake = Long.MAX_VALUE;
        for (Map.Entry<Long, Track> e : tracks.entrySet()) {
            Track a = e.getValue();
            if (!a.wideSeen || a.sinceQuiet == 0 || (a.sinceQuiet > FIRST_ARRIVALS && now - a.quietReturn >= FIRST_WINDOW_NANOS) || a.over.isEmpty()) {
                continue;
            }
            if (a.atRandom()) {
                firstSkippedAtRandom++;
                continue; // requests at random: no beat to wait for
            }
            QueueView av = find(views, e.getKey());
            if (av == null || av.ready() || av.inFlight() > 0 || a.beat(now, grace()) != null) {
                continue; // gone, working (the policy holds the others itself), or on a beat: its guards
            }
            // the longest of its latest three intervals: a service whose last warm-up calls came
            // 1-3 ms before its first request for real (a READY, then GO) had the hold end 2-7 ms
            // after that request, and the trainer ran before its second (replayed: 4 of the 7
            // requests 2-4 so met in 119 recorded graph runs were in runs of
            // graph:3+decode:2+bulk:2+gemm, sessions 68-69)
            long interval = a.longestInterval(FIRST_INTERVALS);
            long until = a.last() + (a.sinceQuiet >= 2 && interval > 0 ? Math.min(FIRST_HOLD_NANOS, 2 * interval) : FIRST_HOLD_NANOS);
            if (now - until >= 0) {
                continue;
            }
            for (long b : a.over.keySet()) {
                QueueView bv = find(views, b);
                if (bv != null && bv.ready() && !bv.suspendedByApp() && !held(bv, decided)) {
                    decided.put(b, Boolean.TRUE);
                    firstHeld++;
                    wake = Math.min(wake, until);
                    if (trace && firstHeldLines < TRACE_BLOCKED_LINES) {
                        firstHeldLines++;
                        TraceLines.line("xq: first arrivals: q" + b + " held behind q" + e.getKey() + " (its arrival " + a.sinceQuiet
                                + " since a quiet spell, " + (now - a.last()) / 1000 + " us ago, latest interval " + interval / 1000
                                + " us, no beat yet) until " + (until - now) / 1000 + " us from now");
                    }
                }
            }
        }
        return wake;
    }

    /** How many times a queue the decision let run was held through a wide queue's first arrivals ({@link #firstArrivals}). */
    private long firstHeld;
    private int firstHeldLines;
    /** Decisions that held a command fitting only whole for a narrow tenant's foreseen next request ({@link #wholeBesideReserve}). */
    private long traceReserveSoon;
    /** Decisions in which a wide queue's first arrivals held nothing, its requests at random ({@link Track#atRandom}). */
    private long firstSkippedAtRandom;

    long firstHeld() {
        return firstHeld;
    }

    /**
     * Whether a queue held as {@code a} arrived may be taken as yielding to it: not where both carry
     * a priority and {@code a}'s is not the higher. Two best-effort processes of one priority are
     * never preferred one over the other by hpf; one is held as the other arrives for other
     * reasons (on the other's turn, behind a third, wider queue's request), and taken as yielding
     * it was guarded against the other's rhythm and held through the other's "first arrivals": on
     * the H200 a Triton loop's steps (3.5 ms apart, on the whole device) held a GEMM process for up
     * to 100 ms at a time beside a decoder and a large batch (the GEMM at 0.52-0.55 of native
     * sharing between the paired reading's stops, the Triton loop at 1.15-1.31; sessions 66-67).
     * Queues without priorities (a policy of deadlines) keep the decisions' word, as before.
     */
    static boolean outranks(QueueView a, QueueView b) {
        boolean aHas = false;
        boolean bHas = false;
        for (dev.xq.api.Hint h : a.hints()) {
            aHas |= h instanceof dev.xq.api.Hint.Priority;
        }
        for (dev.xq.api.Hint h : b.hints()) {
            bHas |= h instanceof dev.xq.api.Hint.Priority;
        }
        return !aHas || !bHas || a.priority() > b.priority();
    }

    private static boolean held(QueueView v, Map<Long, Boolean> decided) {
        Boolean d = decided.get(v.handle());
        return d != null ? d : v.suspended();
    }

    /**
     * The wide beats: a queue B that the decision narrowed, whose preferred queues open on its
     * device (of a higher priority) all either arrive on a beat, have been preferred over B and
     * leave gaps between their busy periods longer than B's commands (at the width B would run:
     * its whole-device average times the parts best-effort processes split the device in), or
     * have been quiet (no work, no arrival) for {@value #QUIET_NANOS} ns, one of them at least
     * on a beat and wider than half the device, is not narrowed: it is held while one of them
     * works and runs on the whole device (its part of it) between their requests, under their
     * guards, which keep its commands clear of the next arrival. Narrowed beside a wide tenant, both halve: the tenant ran on half the
     * device (a ResNet-50 graph at 1.4-1.6 x its standalone P99, a large batch at 2.1 x) and 21 ms
     * GEMMs on the other half took 42-94 ms each (0.54 of native sharing). Where the others
     * include narrow ones (at most half the device) that work or arrived lately without a beat B
     * fits (an eager decoder), B is held the same way through the wide ones' requests and between
     * them runs on the device less the narrow ones' reserve (their widest, in steps of
     * {@value SpaceRule#STEP}), still a narrowing, under the wide ones' guards, where its command
     * at that width fits their gaps and that reserve is less than the decision's. Without a beat,
     * or with commands too long for the gaps, B stays narrowed as decided. While such a queue
     * learns its beat (from its first arrival after a quiet spell or a change of rhythm to its
     * first arrival {@value #LEARN_NANOS} ns after, or to its going quiet, the spells paid for as
     * {@link #LEARN_DECAY} says), B is held throughout.
     */
    private long wideBeats(long now, List<QueueView> views, Map<Long, Boolean> decided, Space space) {
        long wake = Long.MAX_VALUE;
        if (holdBesideSlowed) {
            slowedUpdate(now, views, space);
        }
        for (QueueView b : views) {
            if (space.offTurn(b.handle())) {
                // another process's turn (BestEffortSplit.alternate): held, whatever the policy
                // decided and whatever fits. Held only where it would have run on the whole device
                // between the wide ones' requests, it ran beside the one whose turn it was:
                // - short commands (under SpaceRule.LONG_COMMAND_NANOS) are not narrowed by hpf: a
                //   Triton loop's went with the GEMM's 21.5 ms kernel in most gaps and waited behind
                //   it, and each wait for them began the GEMM's turn again (turns of 150-250 ms
                //   against the Triton's 50: the GEMM at 1.23, the Triton at 0.72 of native sharing
                //   beside a graph);
                // - a GEMM narrowed beside an eager decoder's reserve, where its command did not fit
                //   the gaps at that width, went on launching through a bf16 trainer's turn, which
                //   waited for it 176 ms at a time and did 0.03 of native sharing (H200, session 46)
                if (space.narrowed(b.handle()) > 0) {
                    space.unnarrow(b.handle(), true);
                }
                decided.put(b.handle(), Boolean.TRUE);
                progress.remove(b.handle());
                tellGaps(now, views, b, space);
                continue;
            }
            if (space.narrowed(b.handle()) <= 0) {
                tellGaps(now, views, b, space);
                continue;
            }
            QueueSpace sb = space.space(b.handle());
            long command = atWidth(b.estimatedCommandNanos(), space.fraction(b.handle()));
            if (!sb.narrowable() || command <= 0) {
                continue;
            }
            if (starved(b, now, space)) {
                starvingGuarded(b, sb, command, now, views, decided, space);
                continue;
            }
            boolean wide = false;
            boolean fits = true;
            long period = Long.MAX_VALUE;
            boolean busy = false;
            boolean learning = false;
            // the widest of the narrow tenants above it that keep their reserve (no beat B fits,
            // working or arrived lately), and the least time the wide ones' gaps leave B
            int reserve = 0;
            // the narrow ones on a beat B fits (narrowBeatsKeepReserve): their widest, whether one
            // works, the least gap they leave B, and when to decide again once an early idle's request is over
            int beatReserve = 0;
            boolean beatBusy = false;
            long beatAvail = Long.MAX_VALUE;
            long beatWake = Long.MAX_VALUE;
            // whether a narrow one keeping its reserve is within a request (working, or arrived
            // within RESERVE_REQUEST_NANOS), and when the latest such arrival stops counting
            boolean reserveBusy = false;
            boolean reserveStuck = false;
            // the narrow ones' next request start where every one of them has it foreseen
            // (wholeBesideReserve: a command let onto the whole device must end before it)
            long reserveNext = Long.MAX_VALUE;
            boolean reserveForeseen = true;
            long reserveWake = Long.MAX_VALUE;
            long leastAvail = Long.MAX_VALUE;
            Track tb = tracks.get(b.handle());
            // where B stays narrowed after all (below): its command at the width the decision left it,
            // and the wide ones on a beat whose gaps that fits (narrowedGuards)
            int deviceSmsB = sb.deviceSms() > 0 ? sb.deviceSms() : 128;
            long atNarrowed = command * deviceSmsB / Math.max(1, deviceSmsB - Math.min(deviceSmsB - 1, space.narrowed(b.handle())));
            boolean narrowedFits = false;
            boolean narrowedBusy = false;
            long narrowedPeriod = Long.MAX_VALUE;
            // the periodic outcome line (trace): each queue above B as the decision saw it
            StringBuilder seen = trace && outcomeDue(b.handle(), now) ? new StringBuilder() : null;
            // holdBesideNarrow: B is named, and a narrow one above it is within a request
            boolean holdsBeside = !holdBesideNarrow.isEmpty() && holdBesideNarrow.contains(processName(b.name()));
            boolean narrowWithin = false;
            boolean bySlowed = false;
            long narrowWake = Long.MAX_VALUE;
            for (QueueView a : views) {
                if (a.handle() == b.handle() || a.priority() <= b.priority() || !a.device().equals(b.device())) {
                    continue;
                }
                QueueSpace sa = space.space(a.handle());
                Track ta = tracks.get(a.handle());
                Beat beat = ta == null || !ta.over.containsKey(b.handle()) ? null : ta.beat(now, grace());
                // within its request (an early idle: a stall of its owner) it still counts as working;
                // where its requests' commands are known, until it has done them
                boolean idle = !a.ready() && a.inFlight() == 0 && beat != null;
                boolean idleEarly = idle && ta.idleWithin(now, beat, a.completed());
                if (trace && idle && !idleEarly && now - ta.last() < ta.hold(beat)) {
                    traceCounted++;
                }
                boolean working = a.ready() || a.inFlight() > 0 || idleEarly;
                Slowed sl = holdBesideSlowed ? slowed.get(a.handle()) : null;
                boolean narrowA = !sa.ownContext() && sa.known() && sa.widthSms() > 0
                        && sa.widthSms() <= SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms()));
                if (narrowA && sl != null && sl.engaged) {
                    sl.beside.add(processName(b.name()));
                }
                boolean slowedHolds = narrowA && sl != null && sl.holds(processName(b.name()));
                if ((holdsBeside || slowedHolds) && narrowA) {
                    long sinceArrival = ta == null || ta.count == 0 ? Long.MAX_VALUE : now - ta.last();
                    if (working || sinceArrival < RESERVE_REQUEST_NANOS) {
                        narrowWithin = true;
                        bySlowed |= slowedHolds && !holdsBeside;
                        if (!working) {
                            narrowWake = Math.min(narrowWake, ta.last() + RESERVE_REQUEST_NANOS);
                        }
                    }
                }
                long avail = beat == null ? 0 : avail(ta, beat);
                if (beat != null && !sa.ownContext() && sa.known()
                        && sa.widthSms() > SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms())) && avail > 0) {
                    space.gap(b.handle(), avail, now); // what B's commands may fill, whatever its width now
                }
                boolean fitting = beat != null && command < avail && !sa.ownContext();
                if (seen != null) {
                    seen.append(" q").append(a.handle()).append(" (").append(a.name()).append(")[width ").append(sa.known() ? sa.widthSms() + "/" + sa.deviceSms() : "unknown")
                            .append(working ? ", working" : "").append(ta == null ? ", untracked" : ta.over.containsKey(b.handle()) ? ", over it" : ", not over it")
                            .append(", beat ").append(beat == null ? (ta == null ? "-" : ta.beat(now, grace()) == null ? "none" : "not for it")
                                    : beat.periodNanos() / 1000 + " us, gap for it " + avail / 1000 + " us")
                            .append(ta != null && ta.count > 0 ? ", last arrival " + (now - ta.last()) / 1_000_000 + " ms ago" : "")
                            .append(ta != null && ta.learning(now) ? ", learning" : "").append(fitting ? ", fits" : "").append(']');
                }
                if (narrowedGuards && beat != null && !sa.ownContext() && sa.known()
                        && sa.widthSms() > SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms())) && atNarrowed < avail) {
                    narrowedFits = true;
                    narrowedBusy |= working;
                    narrowedPeriod = Math.min(narrowedPeriod, beat.periodNanos());
                }
                if (trace && ta != null && ta.wideSeen && ta.learnStart != 0 && ta.spellTraced != ta.learnStart && !ta.learning(now)) {
                    // a spell of learning over (run out, quiet again, or a beat B fits): why B goes where it goes next
                    ta.spellTraced = ta.learnStart;
                    TraceLines.line("xq: wide beats: q" + a.handle() + "'s spell of learning over after " + (now - ta.learnStart) / 1_000_000
                            + " ms (" + (now - ta.last() >= QUIET_NANOS ? "quiet" : now - ta.learnStart >= LEARN_NANOS ? "run out" : "?")
                            + "), arrivals " + ta.count + ", intervals ms " + ta.intervals(8) + ", beat " + beat
                            + (beat != null ? ", gap " + gap(ta, beat, ta.gapBusy()) / 1000 + " us (busy alone " + ta.medianAloneBusy() / 1000
                                    + " us, of all " + (ta.busyCount > 0 ? ta.medianBusy() / 1000 : 0) + "), for q" + b.handle() + " " + avail / 1000 + " us" : "")
                            + ", q" + b.handle() + "'s command " + command / 1000 + " us at its part: " + (fitting ? "fits" : "does not fit"));
                }
                // a spell on B's return learns A's beat; one known already (B's command does not
                // fit its gaps) has nothing to learn: the spells held a GEMM of n=16384 for 747 ms
                // after its returns beside a batch on a 150 ms beat (H200, session 73)
                if (!fitting && (beat == null || fruitlessSpells) && ta != null && !sa.ownContext() && ta.spellOnReturn(now, tb)) {
                    ta.beginSpell(now);
                    if (trace) {
                        TraceLines.line("xq: wide beats: q" + b.handle() + " came back behind q" + a.handle() + ", off any beat it fits: a spell of learning for q"
                                + a.handle() + (ta.learnStart == now ? "" : ta.aperiodic(now) && !fruitlessSpells ? " skipped (off any beat)" : " refused"));
                    }
                }
                boolean fittingNarrow = fitting && narrowBeatsKeepReserve && sa.known() && sa.widthSms() > 0
                        && sa.widthSms() <= SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms()));
                if (fittingNarrow) {
                    // a narrow one on a beat B fits keeps its reserve, as one off any beat does
                    // (narrowBeatsKeepReserve): B beside it, not held for its requests, where B's
                    // command beside that reserve still fits the wide ones' gaps (after the views)
                    beatReserve = Math.max(beatReserve, sa.widthSms());
                    beatBusy |= working;
                    beatAvail = Math.min(beatAvail, avail);
                    if (idleEarly) {
                        beatWake = Math.min(beatWake, ta.withinUntil(beat));
                    }
                } else if (fitting) {
                    // on a beat whose gaps B's commands fit: B keeps clear of it under its guard
                    boolean aWide = sa.known() && sa.widthSms() > SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms()));
                    if (aWide) {
                        // B's starving limit counts the wide ones' periods: a narrow decoder's 3 ms
                        // token beat made it 13 ms, less than a batch's request B is held through
                        // (Triton narrowed for five seconds beside a decoder and a batch, H200)
                        period = Math.min(period, beat.periodNanos());
                    }
                    wide |= aWide;
                    busy |= working;
                    leastAvail = Math.min(leastAvail, avail);
                    if (idleEarly) {
                        wake = Math.min(wake, ta.withinUntil(beat)); // decide again when its request is over
                    }
                } else if (ta != null && ta.learning(now) && !sa.ownContext()) {
                    // a wide queue back after a quiet spell (a service's first requests), its beat
                    // not known yet: B is held, neither narrowed beside it nor let run between its
                    // requests, until it shows a beat B fits (three arrivals) or the spell is over
                    // (narrowed, an eager large batch's first five requests on a 100 ms beat took
                    // 22-48 ms against 8 alone, and set the run's P99 on the H200)
                    wide = true;
                    busy = true;
                    learning = true;
                    ta.learnHeld = true;
                    wake = Math.min(wake, ta.learnEnds());
                    if (trace) {
                        traceLearning++;
                    }
                } else if ((working || (ta != null && ta.count > 0 && now - ta.last() < QUIET_NANOS)) && !sa.ownContext() && sa.known()
                        && sa.widthSms() > 0 && sa.widthSms() <= SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms()))) {
                    // a narrow one that works or arrived lately without such a beat (an eager
                    // decoder) keeps its reserve, and only that, where wide ones above have gaps B
                    // fits (below)
                    reserve = Math.max(reserve, sa.widthSms());
                    long nextStart = ta == null ? Long.MIN_VALUE : ta.nextRequestStart(now);
                    if (nextStart == Long.MIN_VALUE) {
                        reserveForeseen = false;
                    } else {
                        reserveNext = Math.min(reserveNext, nextStart);
                    }
                    long sinceArrival = ta == null || ta.count == 0 ? Long.MAX_VALUE : now - ta.last();
                    if (working || sinceArrival < RESERVE_REQUEST_NANOS) {
                        if (ta == null || now - ta.reserveIdleAt > RESERVE_IDLE_SEEN_NANOS) {
                            // never idle lately (a tenant with work all the time): no gaps to wait
                            // for, and B stays where the decision left it
                            reserveStuck = true;
                        }
                        reserveBusy = true;
                        if (!working) {
                            reserveWake = Math.min(reserveWake, ta.last() + RESERVE_REQUEST_NANOS);
                        }
                    } else if (ta != null) {
                        ta.reserveIdleAt = now;
                    }
                } else if (working || (ta != null && ta.count > 0 && now - ta.last() < QUIET_NANOS)) {
                    // one that works or arrived lately without such a beat keeps its reserve: B is
                    // not let onto the whole device. The others are still looked at: one that
                    // learns its beat holds B throughout whatever else is above it (it was left
                    // narrowed, and where such a queue came first among the views the learning one
                    // was never looked at)
                    if (trace && fits) {
                        traceBlocked++;
                    }
                    fits = false;
                    if (trace) {
                        traceLast = "q" + a.handle() + " (width " + sa.widthSms() + " of " + sa.deviceSms() + ", working "
                                + working + ", tracked " + (ta != null) + ", preferred over it " + (ta != null && ta.over.containsKey(b.handle()))
                                + ", beat " + (ta == null ? "-" : String.valueOf(ta.beat(now, grace())))
                                + (beat != null ? ", gap " + gap(ta, beat, ta.gapBusy()) / 1000 + " us, busy alone " + ta.medianAloneBusy() / 1000
                                        + " us, of all " + (ta.busyCount > 0 ? ta.medianBusy() / 1000 : 0) + " us" : "") + ") above q" + b.handle()
                                + " (command " + command / 1000 + " us at its part)";
                        if (ta != null && traceBlockedLines < TRACE_BLOCKED_LINES) {
                            // each one, while few: why a queue behind a wide one was left narrowed (a
                            // GEMM beside a graph's first requests, 1.3 x its alone P99 for 3-5 of them,
                            // H200 session 58, had only the count and the last)
                            traceBlockedLines++;
                            TraceLines.line("xq: wide beats: q" + b.handle() + " left narrowed behind q" + a.handle() + " at "
                                    + System.currentTimeMillis() + " ms: " + traceLast + "; q" + a.handle() + " wide seen " + ta.wideSeen
                                    + ", learning " + ta.learning(now) + ", spell " + (ta.learnStart == 0 ? "none" : "began " + (now - ta.learnStart) / 1_000_000 + " ms ago")
                                    + ", spell debt " + ta.debt(now) / 1_000_000 + " ms, arrivals " + ta.count + ", last " + (now - ta.last()) / 1_000_000
                                    + " ms ago; q" + b.handle() + " back " + (tb == null || tb.returnedAt == 0 ? "never" : (now - tb.returnedAt) / 1_000_000 + " ms ago"));
                        }
                    }
                }
                // else quiet: a queue of the same process that has not worked lately (a side stream
                // used at start-up) has nothing for the narrowing to keep room for
            }
            if (narrowWithin) {
                // named in holdBesideNarrow: held in time while a narrow one above it is within a
                // request, narrowed as decided between them (the experiment; see holdBesideNarrow)
                space.unnarrow(b.handle(), true);
                decided.put(b.handle(), Boolean.TRUE);
                wake = Math.min(wake, narrowWake);
                if (bySlowed) {
                    traceHeldBesideSlowed++;
                } else {
                    traceHeldBesideNarrow++;
                }
                if (seen != null) {
                    TraceLines.line("xq: wide beats: q" + b.handle() + " (" + b.name() + ") at " + now
                            + " ns: held while a narrow one above it is within a request (" + (bySlowed ? "holdBesideSlowed" : "holdBesideNarrow") + ");" + seen);
                }
                continue;
            }
            int deviceSms = sb.deviceSms() > 0 ? sb.deviceSms() : 128;
            if (beatReserve > 0) {
                // the narrow ones on a beat keep their reserve where B's command beside it (with the
                // others') fits the wide ones' gaps: a trainer's short steps do. One that fits them only
                // whole is held through the narrow ones' requests as through the wide ones' (the rule
                // before narrowBeatsKeepReserve) and runs whole between them: left narrowed to half the
                // device instead ("the reserve too wide"), a GEMM's 44 ms kernels ran unguarded through
                // a graph's requests, its P50 2.34 ms against 1.75 alone (decode+graph+trainbf16+gemm,
                // H200, session 81)
                int with = Math.max(reserve, beatReserve);
                int leaveWith = Math.min(SpaceRule.cap(deviceSms), (with + SpaceRule.STEP - 1) / SpaceRule.STEP * SpaceRule.STEP);
                long atWith = command * deviceSms / Math.max(1, deviceSms - leaveWith);
                if (leaveWith < space.narrowed(b.handle()) && atWith < leastAvail) {
                    reserve = with;
                    reserveBusy |= beatBusy;
                } else {
                    busy |= beatBusy;
                    leastAvail = Math.min(leastAvail, beatAvail);
                    wake = Math.min(wake, beatWake);
                    if (trace) {
                        traceBeatReserveDropped++;
                    }
                }
            }
            int leave = reserve == 0 ? 0 : Math.min(SpaceRule.cap(deviceSms), (reserve + SpaceRule.STEP - 1) / SpaceRule.STEP * SpaceRule.STEP);
            // on the multiprocessors the reserve leaves, B's commands take longer (as many SMs fewer)
            long atLeave = leave == 0 ? command : command * deviceSms / Math.max(1, deviceSms - leave);
            boolean narrowerFits = leave > 0 && leave < space.narrowed(b.handle()) && atLeave < leastAvail;
            // beside the reserve its command fits no gap, on the whole device it does, and narrowed
            // it fits no wide one's gaps either (it would run through all their requests, unguarded):
            // held while a narrow one is within a request, run whole between the wide ones' requests
            // while none is. Where narrowed it fits some wide one's gaps (a batch's on a 100 ms
            // beat), it stays with those (narrowedGuards): held for the decoder too, a GEMM beside a
            // graph, a batch and a decoder completed nothing for 125 ms four times in 12 s, was
            // narrowed 7.5 s by the starving rule, and all three tenants above it lost (H200, session 74)
            boolean wholeAround = wholeBesideReserve && leave > 0 && !narrowerFits && command < leastAvail && !reserveStuck && !narrowedFits;
            if (wholeAround && !reserveBusy && reserveForeseen && reserveNext != Long.MAX_VALUE && reserveNext - now < command + grace()) {
                // the narrow ones' requests are on a beat and the next would meet the command on
                // the whole device (a GEMM kernel let go between a decoder's requests ran into the
                // next one: the decoder's P99 47-51 ms against 39-43, H200 session 74): held until
                // that request is over, as within one
                reserveBusy = true;
                if (trace) {
                    traceReserveSoon++;
                }
            }
            if (learning && !(fits && wide && (leave == 0 || narrowerFits || wholeAround))) {
                // a wide one learns its beat: held throughout, not left narrowed for the others
                space.unnarrow(b.handle(), true);
                decided.put(b.handle(), Boolean.TRUE);
                if (trace) {
                    traceHeldLearningBlocked++;
                }
            }
            boolean placedAround = fits && wide && (leave == 0 || narrowerFits || wholeAround);
            if (!placedAround && !learning && narrowedFits && space.narrowed(b.handle()) > 0) {
                // left narrowed (no width fits every wide one's gaps, the narrow ones' reserve kept),
                // yet its command at the width it runs fits the gaps of some wide ones on a beat: it
                // is held while one of those works and runs narrowed between their requests, under
                // their guards. Narrowed beside them it ran into their requests unguarded (the policy
                // "holds" a narrowed queue, so no guard was given), and a half-device GEMM kernel
                // kept a large batch's kernels from starting until it ended: each of the 43 groups of
                // its commands slowed beside one ended within 2 ms of a GEMM kernel's end
                // (bench/gpu/blocked-by.py), and a CUDA graph above both waited behind them (5.95 x
                // its standalone P99 against 2.65 natively, H200, session 68). So held, the three
                // latency-critical tenants of that mix were within 0.94-1.25 x in three runs (4.4-8.6 x
                // without), the GEMM at 0.40-0.51 of native sharing (0.52-0.57 without; session 69)
                if (narrowedBusy) {
                    space.unnarrow(b.handle(), true);
                    decided.put(b.handle(), Boolean.TRUE);
                } else {
                    partly.put(b.handle(), atNarrowed);
                }
                progress(b, now, narrowedPeriod, atNarrowed);
                progress.get(b.handle()).underNarrowed = true;
                if (trace) {
                    traceNarrowedGuarded++;
                }
            }
            if (placedAround) {
                if (wholeAround && !busy) {
                    space.unnarrow(b.handle(), reserveBusy);
                    decided.put(b.handle(), reserveBusy);
                    if (reserveBusy && reserveWake != Long.MAX_VALUE) {
                        wake = Math.min(wake, reserveWake); // decide again once the narrow one's request looks over
                    }
                } else if (leave == 0 || busy) {
                    space.unnarrow(b.handle(), busy);
                    decided.put(b.handle(), busy);
                } else {
                    // between the wide ones' requests, beside the narrow ones' reserve, under the
                    // wide ones' guards (its decision stays a hold: a narrowing counts as one)
                    space.renarrow(b.handle(), leave);
                    partly.put(b.handle(), atLeave);
                }
                if (!learning) {
                    progress(b, now, period, wholeAround ? command : atLeave);
                    progress.get(b.handle()).underNarrowed = false;
                }
            }
            if (seen != null) {
                String outcome = placedAround && wholeAround && !busy ? (reserveBusy ? "held while a narrow one is within a request (its command fits only whole)"
                        : "whole between their requests, the narrow ones idle (its command fits only whole)")
                        : placedAround ? (leave == 0 || busy ? (busy ? "held while they work" : "whole between their requests")
                        : "beside the reserve " + leave + " between their requests")
                        : learning ? "held while one learns its beat"
                        : !learning && narrowedFits && space.narrowed(b.handle()) > 0 ? (narrowedBusy ? "narrowed, held while one it fits works" : "narrowed between the requests of those it fits")
                        : "left narrowed" + (fits ? (wide ? ", the reserve " + leave + " too wide" : ", no wide beat above") : ", a queue above without a beat it fits");
                TraceLines.line("xq: wide beats: q" + b.handle() + " (" + b.name() + ", narrowed by " + space.narrowed(b.handle()) + " SMs, command " + command / 1000
                        + " us at its part, " + atNarrowed / 1000 + " us narrowed) at " + now + " ns: " + outcome + ";" + seen);
            }
            if (trace) {
                traceConsidered++;
                if (fits && wide && (leave == 0 || narrowerFits || wholeAround)) {
                    if (busy || (wholeAround && reserveBusy)) {
                        traceHeld++;
                    } else if (leave > 0) {
                        tracePartly++;
                    } else {
                        traceWhole++;
                    }
                } else if (fits && wide) {
                    traceReserveTooWide++;
                } else if (fits) {
                    traceNoWide++;
                }
            }
        }
        if (trace && now - traceAt > 1_000_000_000L) {
            traceAt = now;
            TraceLines.line("xq: wide beats: narrowings considered " + traceConsidered + ", on the whole device " + traceWhole
                    + ", on the device less a narrow tenant's reserve " + tracePartly + " (kept: its command too long for the gap there, or the reserve no"
                    + " narrower " + traceReserveTooWide + "), held " + traceHeld + " (" + traceLearning + " while a beat was learnt), let go within the hold at a request's commands "
                    + traceCounted + ", kept: no wide beat above " + traceNoWide + ", a queue above without a fitting beat "
                    + traceBlocked + " (held all the same while one above learnt its beat " + traceHeldLearningBlocked + ")"
                    + ", left narrowed but held and guarded by the wide beats it fits at that width " + traceNarrowedGuarded
                    + ", held for narrow ones on a beat, its command beside their reserve too long for the wide gaps " + traceBeatReserveDropped
                    + ", not taken as starving while stopped " + stoppedNotStarving + ", held through a wide queue's first arrivals " + firstHeld
                    + " (not held: its requests at random " + firstSkippedAtRandom + ")"
                    + ", held whole-only for a narrow one's foreseen request " + traceReserveSoon
                    + ", starving and held through the wide beats it fits narrowed " + starvingGuarded
                    + (holdBesideNarrow.isEmpty() ? "" : ", held beside a narrow one's request (holdBesideNarrow " + holdBesideNarrow + ") " + traceHeldBesideNarrow)
                    + (traceHeldBesideSlowed == 0 ? "" : ", held beside a slowed narrow one's request (holdBesideSlowed) " + traceHeldBesideSlowed)
                    + (traceLast.isEmpty() ? "" : " (last: " + traceLast + ")"));
        }
        return wake;
    }

    /**
     * What B has between A's requests on {@code beat}: it is held until A's usual end, then let go
     * (the node's reaction) and must be done before A's next arrival (at its usual end where A's
     * requests' commands are known: let go as it completes them).
     */
    private long avail(Track ta, Beat beat) {
        long late = ta.requestCommands() > 0 ? 0 : Math.max(0, ta.hold(beat) - ta.medianAloneBusy());
        return gap(ta, beat, ta.gapBusy()) - WIDE_REACTION_NANOS - late;
    }

    /**
     * Tells the gaps of the wide queues on a beat above a queue B that this decision did not narrow
     * (it holds it, or lets a queue of short commands run on the whole device): the turns among
     * best-effort processes are weighed by every one's gap. Told for narrowed queues only, a Triton
     * loop whose commands came to 0.13 ms on the whole device, never narrowed, had its gap age out
     * within half a second of turns, and the turns ended for good: the GEMM beside it narrowed at
     * 0.44-0.48 of native sharing, a graph above at 1.39-1.40 x its standalone P99 (H200, session 46).
     */
    private void tellGaps(long now, List<QueueView> views, QueueView b, Space space) {
        QueueSpace sb = space.space(b.handle());
        if (!sb.narrowable()) {
            return;
        }
        for (QueueView a : views) {
            if (a.handle() == b.handle() || a.priority() <= b.priority() || !a.device().equals(b.device())) {
                continue;
            }
            QueueSpace sa = space.space(a.handle());
            Track ta = tracks.get(a.handle());
            Beat beat = ta == null || !ta.over.containsKey(b.handle()) ? null : ta.beat(now, grace());
            if (beat == null || sa.ownContext() || !sa.known() || sa.widthSms() <= SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms()))) {
                continue;
            }
            long avail = avail(ta, beat);
            if (avail > 0) {
                space.gap(b.handle(), avail, now);
            }
        }
    }

    /** {@code -Dxq.trace.wideBeats=true}: the node prints what the wide beats did, once a second, on stderr. */
    private static final boolean TRACE = Boolean.getBoolean("xq.trace.wideBeats");
    /** {@link #TRACE} for the node's guards; off for a rehearsal's ({@link DecisionRehearsal}). */
    private final boolean trace;

    /** Guards that print the wide beats' trace when {@code -Dxq.trace.wideBeats=true}. */
    ArrivalGuards() {
        this(TRACE);
    }

    /** Guards that print the wide beats' trace or not. */
    ArrivalGuards(boolean trace) {
        this.trace = trace;
    }
    private long traceConsidered;
    private long traceNarrowedGuarded;
    /** Trace: decisions where narrow ones on a beat lost their reserve, B's command fitting the wide gaps only whole. */
    private long traceBeatReserveDropped;
    private long traceWhole;
    private long tracePartly;
    private long traceReserveTooWide;
    private long traceHeld;
    private long traceNoWide;
    private long traceBlocked;
    private long traceHeldLearningBlocked;
    private long traceLearning;
    private long traceCounted;
    private long traceAt;
    private String traceLast = "";
    /** How many blocked considerations were printed one by one (at most {@link #TRACE_BLOCKED_LINES} a node's life). */
    private int traceBlockedLines;
    static final int TRACE_BLOCKED_LINES = 24;
    /** The periodic outcome lines (trace): at most one a queue in this long, and this many a node's life. */
    static final long TRACE_OUTCOME_NANOS = 250_000_000L;
    static final int TRACE_OUTCOME_LINES = 2_000;
    private final Map<Long, Long> traceOutcomeAt = new HashMap<>();
    private int traceOutcomeLines;

    /** Whether B's periodic outcome line is due (and counted as printed). */
    private boolean outcomeDue(long b, long now) {
        Long at = traceOutcomeAt.get(b);
        if (traceOutcomeLines >= TRACE_OUTCOME_LINES || (at != null && now - at < TRACE_OUTCOME_NANOS)) {
            return false;
        }
        traceOutcomeAt.put(b, now);
        traceOutcomeLines++;
        return true;
    }

    /**
     * What the wide beats keep per queue they let run on the whole device: its completions when it
     * last made progress, and then; and until when it is left narrowed because it made none.
     */
    private static final class Progress {
        long completed;
        long at;
        long limit;
        long offUntil;
        /** How long it was left narrowed the latest time, and when that ended; 0 before. */
        long lastOff;
        long lastOffEnd;
        /** Whether its process was stopped at the latest look past the limit: back since, its wait begins at the next. */
        boolean stopped;
        /** Whether its latest wait was under the narrowed guards (narrowed, held through the wide beats it fits), and whether the one it starved in was */
        boolean underNarrowed;
        boolean offUnderNarrowed;
    }

    private final Map<Long, Progress> progress = new HashMap<>();

    /**
     * A queue the wide beats let run between another's requests and that completes nothing for four
     * of its periods plus one of its commands is starving: its commands never fit what the guard
     * leaves (estimates short of the truth, a reaction slower than allowed for), and the guard
     * refuses them for good (21 ms GEMMs between a ResNet-50 graph's requests, 25 ms apart, ran at
     * 0.03 of native sharing on the H200 while the node's sums said they fit). It is left narrowed
     * (narrowed, it makes progress) for {@value #STARVED_FIRST_OFF_NANOS} ns, then tries again,
     * twice as long each time it starves again soon after, up to {@value #STARVED_OFF_NANOS} ns
     * (five seconds at once, a GEMM that had run whole between a graph's requests for three
     * seconds ran narrowed beside it to the end of the run after five gaps without a command:
     * 0.62 of native sharing, the graph's P99 1.55 x its standalone, against 0.80 and 1.15 in the
     * same build's run where it did not starve, H200).
     */
    void progress(QueueView b, long now, long period, long command) {
        Progress p = progress.get(b.handle()); // no lambda: its first call is bootstrapped (FirstCallsTest)
        if (p == null) {
            p = new Progress();
            progress.put(b.handle(), p);
        }
        long limit = (period == Long.MAX_VALUE ? 0 : 4 * period) + command;
        if (b.completed() != p.completed || p.at == 0 || now - p.at > 2 * Math.max(limit, p.limit)) {
            // progress, or the first look (or the first after a long while without a wide beat)
            p.completed = b.completed();
            p.at = now;
            p.stopped = false;
            p.limit = limit;
        } else {
            // one wait under rules that alternate (whole in a 25 ms graph's gaps while an eager
            // decoder is quiet, narrowed and guarded by a 100 ms batch's beat while it works) is
            // starving past the longest limit among them: by the last one alone, the graph's 121 ms
            // cut the batch's wait short, and the starving queue ran narrowed and unguarded for
            // 0.5-2 s through both tenants' requests (H200, session 69)
            p.limit = Math.max(p.limit, limit);
        }
    }

    boolean starved(QueueView b, long now, Space space) {
        Progress p = progress.get(b.handle());
        if (p == null) {
            return false;
        }
        if (p.offUntil != 0) {
            if (now - p.offUntil < 0) {
                return true;
            }
            p.offUntil = 0;
            p.at = 0;
            return false;
        }
        if (p.at != 0 && b.completed() == p.completed && now - p.at > p.limit && now - p.at <= 2 * p.limit) {
            boolean stoppedNow = space.stopped(b.handle());
            if (stoppedNow || p.stopped) {
                // its process is stopped (or was at the last look, and is back since): nothing ended
                // because nothing of it ran; its wait begins again
                p.stopped = stoppedNow;
                p.at = now;
                stoppedNotStarving++;
                return false;
            }
            long off = p.lastOffEnd != 0 && now - p.lastOffEnd < STARVED_MEMORY_NANOS
                    ? Math.min(STARVED_OFF_NANOS, 2 * p.lastOff) : STARVED_FIRST_OFF_NANOS;
            p.lastOff = off;
            p.offUntil = now + off;
            p.lastOffEnd = p.offUntil;
            p.offUnderNarrowed = p.underNarrowed;
            if (trace) {
                TraceLines.line("xq: wide beats: q" + b.handle() + " completed nothing for " + (now - p.at) / 1000
                        + " us on the whole device between another's requests; narrowed for " + off / 1_000_000 + " ms");
            }
            return true;
        }
        return false;
    }

    /**
     * A queue taken as starving where the wide beats ran it whole between another's requests is
     * left narrowed, as before, and (with {@link #narrowedGuards}) still held through the requests
     * of the wide queues on a beat whose gaps its command at that width fits, under their guards,
     * as a queue the wide beats leave narrowed is: narrowed and unguarded it ran through every
     * latency-critical request for the half second or more it starved, and a CUDA graph's requests
     * that came with a large batch's took 8.7-9.6 ms against 5-6 beside the batch alone (the GEMM
     * process, starving between the graph's requests behind a queue without a beat, narrowed for
     * 500 ms; the graph 1.54 x its P99 alone, H200, session 72). Starved under those guards
     * themselves, it is left as decided, unguarded: that is where it makes progress.
     */
    private void starvingGuarded(QueueView b, QueueSpace sb, long command, long now, List<QueueView> views, Map<Long, Boolean> decided,
            Space space) {
        Progress p = progress.get(b.handle());
        if (!narrowedGuards || space.narrowed(b.handle()) <= 0 || p == null || p.offUnderNarrowed) {
            return;
        }
        int deviceSmsB = sb.deviceSms() > 0 ? sb.deviceSms() : 128;
        long atNarrowed = command * deviceSmsB / Math.max(1, deviceSmsB - Math.min(deviceSmsB - 1, space.narrowed(b.handle())));
        boolean fits = false;
        boolean busy = false;
        for (QueueView a : views) {
            if (a.handle() == b.handle() || a.priority() <= b.priority() || !a.device().equals(b.device())) {
                continue;
            }
            QueueSpace sa = space.space(a.handle());
            Track ta = tracks.get(a.handle());
            Beat beat = ta == null || !ta.over.containsKey(b.handle()) ? null : ta.beat(now, grace());
            if (beat == null || sa.ownContext() || !sa.known() || sa.widthSms() <= SpaceRule.cap(Math.max(sa.deviceSms(), sb.deviceSms()))
                    || atNarrowed >= avail(ta, beat)) {
                continue;
            }
            fits = true;
            busy |= a.ready() || a.inFlight() > 0 || (a.inFlight() == 0 && ta.idleWithin(now, beat, a.completed()));
        }
        if (!fits) {
            return;
        }
        if (busy) {
            space.unnarrow(b.handle(), true);
            decided.put(b.handle(), Boolean.TRUE);
        } else {
            partly.put(b.handle(), atNarrowed);
        }
        starvingGuarded++;
    }

    /** How many times a starving queue was held through the requests of a wide beat its narrowed command fits ({@link #starvingGuarded}). */
    private long starvingGuarded;

    long starvingGuarded() {
        return starvingGuarded;
    }

    /** Whether the queue is in a time it is left narrowed for starving (read only, for tests). */
    boolean leftForStarving(long handle, long now) {
        Progress p = progress.get(handle);
        return p != null && p.offUntil != 0 && now - p.offUntil < 0;
    }

    /**
     * Per queue under an arrival guard: its completions when it last made progress, and then; until
     * when it goes unguarded because it made none.
     */
    private final Map<Long, Progress> guarded = new HashMap<>();

    /**
     * A queue under a guard that waits to launch (work held in its process, nothing of it on the
     * device, not held by the policy) and completes nothing for four of A's periods plus one of its
     * commands: the guard refuses its every command. That happens where the process's own estimate
     * of a command is not the node's: a GEMM narrowed to half the device measured 41 ms a command
     * in its process, where the node reckoned 21.8 ms at the whole device, fitting a ResNet-50
     * graph's 23 ms gaps; the interposer refused it 190,499 times in 8 s (0.03 of native sharing,
     * H200, session 47, the graph in a context of its own). It goes unguarded, as a command that
     * never fits does (it runs between A's requests and is held during them), until it has
     * completed a command, at most {@value #STARVED_FIRST_OFF_NANOS} ns; then it is guarded again.
     * So a guard that cannot be met costs its queue at most one command a round of four of A's
     * periods, and A at most the request that command runs into.
     */
    private boolean guardStarved(QueueView b, long now, long period, long command, Space space) {
        Progress p = guarded.get(b.handle()); // no lambda: its first call is bootstrapped (FirstCallsTest)
        if (p == null) {
            p = new Progress();
            guarded.put(b.handle(), p);
        }
        if (p.offUntil != 0) {
            if (b.completed() == p.completed && now - p.offUntil < 0) {
                return true;
            }
            p.offUntil = 0; // a command done (or the time up): guarded again, its wait begins now
            p.at = 0;
        }
        long limit = 4 * period + command;
        boolean waiting = b.pending() > 0 && b.inFlight() == 0;
        if (!waiting || b.completed() != p.completed || p.at == 0 || now - p.at > 2 * Math.max(limit, p.limit)) {
            // progress, nothing to launch, or the first look (or the first after a long while)
            p.completed = b.completed();
            p.at = waiting ? now : 0;
            p.limit = limit;
            p.stopped = false;
            return false;
        }
        p.limit = limit;
        if (now - p.at <= limit) {
            return false;
        }
        boolean stoppedNow = space.stopped(b.handle());
        if (stoppedNow || p.stopped) {
            // its process is stopped (or was at the last look, and is back since): it waited because
            // it could not launch, not because of the guard; its wait begins again
            p.stopped = stoppedNow;
            p.at = now;
            stoppedNotStarving++;
            return false;
        }
        p.offUntil = now + STARVED_FIRST_OFF_NANOS;
        starvedGuards++;
        if (trace) {
            TraceLines.line("xq: arrival guard: q" + b.handle() + " waited to launch for " + (now - p.at) / 1000
                    + " us under it with no command ended (its command " + command / 1000 + " us by the node's reckoning); unguarded for "
                    + "a command, at most " + STARVED_FIRST_OFF_NANOS / 1_000_000 + " ms");
        }
        return true;
    }

    /** B held by the policy (or not guarded): its wait under a guard begins again. */
    private void waited(QueueView b) {
        Progress p = guarded.get(b.handle());
        if (p != null) {
            p.at = 0;
        }
    }

    /** How many times a queue went unguarded because the guard refused its every command. */
    private long starvedGuards;

    /**
     * How many times a queue that would have been taken as starving (under the wide beats or a
     * guard) was not, its process being stopped.
     */
    private long stoppedNotStarving;

    long stoppedNotStarving() {
        return stoppedNotStarving;
    }

    long starvedGuards() {
        return starvedGuards;
    }

    /**
     * The longest command that fits between A's busy periods (a median busy period as long as the
     * period cannot be this beat's: measured across a change of rhythm, or from stamps written
     * late; not counted).
     */
    private static long atWidth(long wholeDeviceNanos, double fraction) {
        return fraction >= 1 ? wholeDeviceNanos : (long) (wholeDeviceNanos / Math.max(1.0 / 16, fraction));
    }

    /** The gap between requests on {@code beat} of a queue whose requests take {@code busy}. */
    private static long gap(Track a, Beat beat, long busy) {
        return beat.periodNanos() - (busy < beat.periodNanos() ? busy : 0) - beat.jitterNanos() - EARLY_MARGIN_NANOS;
    }

    private Map<Long, Guard> guards(long now, List<QueueView> views, Map<Long, Boolean> decided, Space space) {
        Map<Long, Guard> want = null;
        for (Map.Entry<Long, Track> e : tracks.entrySet()) {
            Track a = e.getValue();
            if (a.over.isEmpty()) {
                continue;
            }
            QueueView av = find(views, e.getKey());
            if (av == null || av.ready()) {
                continue; // gone, or here already: the policy holds the others itself
            }
            Beat beat = a.beat(now, grace());
            if (beat == null) {
                continue;
            }
            long horizon = beat.nextNanos() - beat.jitterNanos() - EARLY_MARGIN_NANOS;
            // the gap its requests leave when they run alone, as the wide beats weigh it (Track.gapBusy): by all its
            // busy periods, those B ran into count too, and once half of them had (a graph's
            // requests waiting 13-22 ms behind an unguarded 21.6 ms GEMM on a 25 ms beat), the gap
            // left no room for B's command, B went unguarded, and ran into the next ones: for the
            // whole run (the graph at 14 x its standalone P99, H200, session 45)
            long gap = gap(a, beat, a.gapBusy());
            for (long b : a.over.keySet()) {
                QueueView bv = find(views, b);
                Long partlyCommand = partly.get(b);
                if (bv == null || (held(bv, decided) && partlyCommand == null)) {
                    if (bv != null) {
                        waited(bv); // held by the policy: not the guard's doing
                    }
                    continue;
                }
                // at the width B runs at: its whole-device average times the parts the device is split in
                // (less the narrow tenants' reserve, where that is all it leaves)
                long command = partlyCommand != null ? partlyCommand : atWidth(bv.estimatedCommandNanos(), space.fraction(b));
                if (command >= gap) {
                    // its commands never fit before A's next arrival: a guard would refuse every one
                    // of them, for good (21 ms GEMMs beside a 25 ms beat ran at 0.03 of native);
                    // unguarded, it runs between A's requests and is held during them
                    continue;
                }
                if (guardStarved(bv, now, beat.periodNanos(), command, space)) {
                    continue; // as one that never fits, for a while
                }
                if (want == null) {
                    want = new HashMap<>(4);
                }
                // how long after the foreseen arrival the guard waits for a late one: the configured
                // grace, or a quarter of B's command where that is longer (a request 1-2 ms late
                // met a 21 ms GEMM let go a millisecond after its due time and took 22-29 ms
                // against 8 on the H200: three of its 121 requests, its P99)
                // (a grace configured to 0 stays 0)
                long grace = graceNanos == 0 ? 0 : Math.max(grace(), command / 4);
                long until = beat.nextNanos() + beat.jitterNanos() + Math.min(grace, beat.periodNanos() / 4);
                Guard g = want.get(b);
                if (g == null || horizon < g.horizonNanos()) {
                    want.put(b, new Guard(horizon, until));
                }
            }
        }
        Map<Long, Guard> changes = null;
        for (Iterator<Map.Entry<Long, Guard>> it = given.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Guard> e = it.next();
            if (want == null || !want.containsKey(e.getKey())) {
                it.remove();
                changes = put(changes, e.getKey(), Guard.NONE);
            }
        }
        if (want != null) {
            for (Map.Entry<Long, Guard> e : want.entrySet()) {
                if (!e.getValue().equals(given.get(e.getKey()))) {
                    given.put(e.getKey(), e.getValue());
                    changes = put(changes, e.getKey(), e.getValue());
                }
            }
        }
        return changes == null ? Map.of() : changes;
    }

    private static Map<Long, Guard> put(Map<Long, Guard> m, long k, Guard g) {
        Map<Long, Guard> r = m == null ? new HashMap<>(4) : m;
        r.put(k, g);
        return r;
    }

    private static QueueView find(List<QueueView> views, long handle) {
        for (QueueView v : views) {
            if (v.handle() == handle) {
                return v;
            }
        }
        return null;
    }

    private void forgetClosed(List<QueueView> views) {
        Set<Long> open = new HashSet<>(views.size() * 2);
        for (QueueView v : views) {
            open.add(v.handle());
        }
        tracks.keySet().retainAll(open);
        progress.keySet().retainAll(open);
        guarded.keySet().retainAll(open);
        given.keySet().retainAll(open);
        for (Track t : tracks.values()) {
            t.over.keySet().retainAll(open);
        }
    }

    /** Forgets everything (guards were lifted by the caller, or the feature was turned off). */
    void clear() {
        tracks.clear();
        progress.clear();
        guarded.clear();
        given.clear();
        partly.clear();
        lingerWake = Long.MAX_VALUE;
        lapseWake = Long.MAX_VALUE;
    }

    /** @return the beat learnt for a queue now, or null (for status and tests) */
    Beat beat(long handle, long now) {
        Track t = tracks.get(handle);
        return t == null ? null : t.beat(now, grace());
    }

    /** @return the guards in force, by handle (a copy) */
    Map<Long, Guard> given() {
        return Map.copyOf(given);
    }
}
