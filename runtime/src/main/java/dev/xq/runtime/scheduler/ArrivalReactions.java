package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The node's reaction to an arrival that takes the device from others: from the moment a queue
 * became ready (its {@code readySinceNanos}: for a process's stream the stamp its interposer wrote,
 * on the same monotonic clock) to the end of applying the decision that held others for it (their
 * gates written). What a best-effort kernel launched in between costs the arriving tenant is
 * bounded by it; the arrival guards' margins are sized against it (300-500 us was read off the
 * H200 host's timelines; this measures it). Only the deciding thread calls {@link #decided}.
 *
 * <p>Always measured: the guards' grace after a foreseen arrival is at least the P99 of the
 * latest reactions ({@link #tailNanos}). On the H200 host beside an fp32 trainer it was 2-4 ms
 * (P50 about 0.3 ms), past the 1 ms grace: a guard lapsed before the node had held the trainer
 * for the arrival, the trainer launched a 1-2 ms kernel in that gap, and the arriving graph
 * waited behind it (1 Dec: the graph's P99 1.36-1.89 x its P99 alone in the runs where it did).
 *
 * <p>With {@code -Dxq.trace.wideBeats=true} (as the GPU scripts run the node) a line
 * {@code xq: arrival reaction: N arrivals that held others, P50 .. us, P90 .., P99 .., max ..}
 * is printed at most every {@value #PRINT_NANOS} ns, when there were more since the last one,
 * over the latest {@value #RECENT} such arrivals. Arrivals the node held others ahead of (the
 * arrival guards' holds on the simulated device) hold nothing new and are not counted: on this
 * 2-vCPU VM's `fixed-priority` run, 4 of about 200 foreground arrivals in 10 s.
 */
final class ArrivalReactions {

    static final int RECENT = 1024;
    static final long PRINT_NANOS = 2_000_000_000L;
    /** A queue ready longer than this before the decision held others for it: not an arrival's reaction. */
    static final long MAX_NANOS = 1_000_000_000L;
    /**
     * A pause this long without an arrival that held others begins a new run: the printed
     * figures ({@link #summary()}) count the current run's reactions only, so that two runs of a
     * benchmark against one node (an A/B, its modes a few seconds apart) each get their own line;
     * the tail the guards follow ({@link #tailNanos()}) keeps every recent one. A tenant beside
     * nothing to hold (its company stopped for 1.5 s in the paired reading) does not begin one.
     */
    static final long RUN_GAP_NANOS = 3_000_000_000L;

    /**
     * Reactions needed before {@link #tailNanos()} says anything: below that, the P99 is the
     * slowest one or two, and a single outlier (a tenant's first arrival, 40 ms on the build VM's
     * process pair, a thread still waking up) would set the tail; from 200 on it is the third
     * slowest at least (5 s of a 25 ms beat).
     */
    static final int TAIL_MIN = 200;
    /** New reactions after which the tail is found again (a sort of at most {@value #RECENT}). */
    static final int TAIL_EVERY = 64;

    private final boolean print;
    private long tail;
    private long tailAt;
    /** Per queue: the latest readySinceNanos seen, so that an arrival is counted once. */
    private final Map<Long, Long> seen = new HashMap<>();
    private final long[] recent = new long[RECENT];
    /** Per entry of {@link #recent}: the part before the node was told (-1 unknown). */
    private final long[] way = new long[RECENT];
    private int count;
    private int next;
    private long total;
    private long lastPrint;
    private long printedTotal;
    /** {@link #total} when the current run began (the first reaction after {@value #RUN_GAP_NANOS} ns without one). */
    private long runFrom;
    private long lastCounted;

    ArrivalReactions(boolean print) {
        this.print = print;
    }

    /**
     * A decision was applied at {@code appliedNanos}, newly holding {@code suspends} queues.
     *
     * @param decided what the decision said per queue (true: held); queues absent kept their state
     */
    void decided(List<QueueView> views, Map<Long, Boolean> decided, int suspends, long appliedNanos) {
        decided(views, decided, suspends, appliedNanos, (h, since) -> 0);
    }

    /** When the node was first told of a queue's work ready since a stamp ({@code ScheduledQueue.toldNanos}); 0 unknown. */
    interface Told {
        long at(long handle, long readySinceNanos);
    }

    /**
     * As {@link #decided(List, Map, int, long)}, each counted reaction also split where the node's
     * first word of the arrival is known ({@code told}): from the stamp to that word read (the
     * owner's interposer, its tracker, the socket) and from it to the decision applied (the node).
     */
    void decided(List<QueueView> views, Map<Long, Boolean> decided, int suspends, long appliedNanos, Told told) {
        for (QueueView v : views) {
            long since = v.readySinceNanos();
            if (!v.ready() || since == 0) {
                continue;
            }
            Long was = seen.get(v.handle());
            if (was != null && was == since) {
                continue; // ready since an arrival already seen
            }
            seen.put(v.handle(), since);
            long r = appliedNanos - since;
            if (suspends > 0 && !Boolean.TRUE.equals(decided.get(v.handle())) && !v.suspended() && r >= 0 && r <= MAX_NANOS) {
                if (lastCounted != 0 && appliedNanos - lastCounted > RUN_GAP_NANOS) {
                    if (print) {
                        // the run that ended, whole (its last periodic line may be up to PRINT_NANOS old);
                        // a prefix of its own, so that a reader of the periodic lines passes it by
                        TraceLines.line("xq: arrival reaction, the run before (its last " + (appliedNanos - lastCounted) / 1_000_000
                                + " ms before this one): " + summary());
                    }
                    runFrom = total; // a new run of work: the printed figures start again
                }
                lastCounted = appliedNanos;
                recent[next] = r;
                long at = told.at(v.handle(), since);
                way[next] = at >= since && at <= appliedNanos ? at - since : -1;
                next = (next + 1) % RECENT;
                count = Math.min(count + 1, RECENT);
                total++;
            }
        }
        if (seen.size() > 2 * views.size() + 16) {
            Set<Long> open = new HashSet<>(views.size() * 2);
            for (QueueView v : views) {
                open.add(v.handle());
            }
            seen.keySet().retainAll(open);
        }
        if (print && total != printedTotal && appliedNanos - lastPrint >= PRINT_NANOS) {
            lastPrint = appliedNanos;
            printedTotal = total;
            long t = tailNanos();
            TraceLines.line("xq: arrival reaction: " + summary() + (t > 0 ? "; guards hold at least its P99 after a foreseen arrival (P99 " + t / 1000 + " us, of it arrivalReactionGraceMicros at most)" : ""));
        }
    }

    /**
     * The P99 of the latest reactions ({@value #RECENT} at most), found again every
     * {@value #TAIL_EVERY} of them; 0 until there are {@value #TAIL_MIN}. The arrival guards
     * hold at least this long after a foreseen arrival ({@link ArrivalGuards#reactionNanos}).
     */
    long tailNanos() {
        if (count < TAIL_MIN) {
            return 0;
        }
        if (tail == 0 || total - tailAt >= TAIL_EVERY) {
            tail = at(sorted(), 0.99);
            tailAt = total;
        }
        return tail;
    }

    /** How many arrivals held others so far (since the node started). */
    long total() {
        return total;
    }

    /** The latest arrivals' reactions, in nanoseconds, sorted. */
    long[] sorted() {
        long[] c = Arrays.copyOf(recent, count);
        Arrays.sort(c);
        return c;
    }

    /** The current run's reactions (the latest {@value #RECENT} of it at most), as {@link #sorted()}. */
    long[] run() {
        int k = (int) Math.min(count, total - runFrom);
        long[] c = new long[k];
        for (int i = 0; i < k; i++) {
            c[i] = recent[Math.floorMod(next - 1 - i, RECENT)];
        }
        Arrays.sort(c);
        return c;
    }

    String summary() {
        long[] s = run();
        if (s.length == 0) {
            return "no arrival held others";
        }
        String line = total + " arrivals that held others (the latest " + s.length
                + (runFrom > 0 ? " since a pause of " + RUN_GAP_NANOS / 1_000_000_000L + " s without one" : "") + ": P50 " + at(s, 0.50) / 1000 + " us, P90 "
                + at(s, 0.90) / 1000 + " us, P99 " + at(s, 0.99) / 1000 + " us, max " + s[s.length - 1] / 1000 + " us)";
        long[][] parts = split();
        if (parts[0].length > 0) {
            line += "; of " + parts[0].length + " with the node's first word timed: to the word P50 " + at(parts[0], 0.50) / 1000
                    + " us, P99 " + at(parts[0], 0.99) / 1000 + " us, max " + parts[0][parts[0].length - 1] / 1000
                    + " us; from it to applied P50 " + at(parts[1], 0.50) / 1000 + " us, P99 " + at(parts[1], 0.99) / 1000
                    + " us, max " + parts[1][parts[1].length - 1] / 1000 + " us";
        }
        return line;
    }

    /** The current run's reactions whose first word was timed: {the part before the word, the part after}, each sorted. */
    long[][] split() {
        int k = (int) Math.min(count, total - runFrom);
        int n = 0;
        for (int j = 0; j < k; j++) {
            n += way[Math.floorMod(next - 1 - j, RECENT)] >= 0 ? 1 : 0;
        }
        long[] before = new long[n];
        long[] after = new long[n];
        for (int j = 0, m = 0; j < k; j++) {
            int i = Math.floorMod(next - 1 - j, RECENT);
            if (way[i] >= 0) {
                before[m] = way[i];
                after[m++] = recent[i] - way[i];
            }
        }
        Arrays.sort(before);
        Arrays.sort(after);
        return new long[][] {before, after};
    }

    private static long at(long[] sorted, double p) {
        int i = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
