package dev.xq.runtime.engine;

import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SpaceRule;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.scheduler.ScheduledQueue;
import dev.xq.runtime.scheduler.Scheduler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Space among best-effort processes (the node's part of issue 40's "space and time"): after each
 * decision, what the latency-critical tenants leave of each device is split among the best-effort
 * processes that can be narrowed and have work there: parts of their own widths (weighed by what
 * fits a wide tenant's gaps, by width, or by the measured cut, {@link BestEffortBalance}), laid out
 * in the device's sixteenths, or turns on all of it ({@link BestEffortSplit}). Held apart from
 * {@link XqCore}, which keeps the queues and the scheduler and hands this the decisions' views;
 * its settings are the {@code bestEffort...} ones of {@code dev.xq.scheduler}, which
 * {@link XqCore} passes on. Used from the deciding thread, its settings from any.
 */
final class BestEffortSpace {

    /** Whether a queue wider than half the device, preferred over the given one, is open now ({@link XqCore#widePreferredOpen}). */
    interface WideOpen {
        boolean widePreferredOpen(NodeQueue queue, long decisionNanos);
    }

    private final RuntimeLog log;
    private final Scheduler scheduler;
    private final WideOpen wide;

    BestEffortSpace(RuntimeLog log, Scheduler scheduler, WideOpen wide) {
        this.log = log;
        this.scheduler = scheduler;
        this.wide = wide;
    }

    /** How long a best-effort process keeps its part after its queues were last busy. */
    static final long PART_LINGER_NANOS = 500_000_000L;

    /** When each narrowable process last had a busy queue (the deciding thread; concurrent for a decider the watchdog replaced) */
    private final Map<Long, Long> lastBusy = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * After each decision ({@link XqCore#decided}): each device's best-effort processes placed.
     * @return the earliest time a decision in turns asked to be decided again at (nanoTime; Long.MAX_VALUE: none)
     */
    long decided(List<QueueView> views, Map<Long, ScheduledQueue> byHandle) {
        turnWake = Long.MAX_VALUE;
        parts(views, byHandle);
        return turnWake;
    }

    /** No process can be narrowed: nothing is kept for one. */
    void noneNarrowable() {
        lastBusy.clear();
    }

    private void parts(List<QueueView> views, Map<Long, ScheduledQueue> byHandle) {
        Map<String, java.util.TreeSet<Long>> active = null;
        List<ExternalQueueImpl> narrowing = null;
        Map<Long, QueueView> narrowingViews = bestEffortWeights ? new HashMap<>() : null;
        long now = System.nanoTime();
        for (QueueView v : views) {
            if (byHandle.get(v.handle()) instanceof ExternalQueueImpl o && !(o.narrows() && o.pid() > 0) && o.offTurn()) {
                // no longer among the processes that take turns (it cannot be narrowed any more: its
                // green contexts failed): off its turn is a hold whatever the policy decides, so
                // left on it would hold it for good
                o.offTurn(false);
                scheduler.signalLoop(o);
            }
            if (byHandle.get(v.handle()) instanceof ExternalQueueImpl e && e.narrows() && e.pid() > 0) {
                if (narrowing == null) {
                    narrowing = new ArrayList<>();
                    active = new HashMap<>();
                }
                narrowing.add(e);
                if (narrowingViews != null) {
                    narrowingViews.put(e.handle(), v);
                }
                Long last = lastBusy.get(e.pid());
                // a process between two steps of its work (a training loop's host side) still has its
                // part; a stopped one (SIGSTOP: a batch system's suspend, job control, a debugger) has
                // none, whatever its counters, frozen with it, say: its part and its turns go to the
                // others until it is back (the scheduler's loop finds it stopped, and back, and has
                // the scheduler decide again: ExternalQueueImpl.sweepStopped)
                if ((v.ready() || (last != null && now - last < PART_LINGER_NANOS)) && !e.seenStopped()) {
                    if (v.ready()) {
                        lastBusy.put(e.pid(), now);
                    }
                    active.computeIfAbsent(v.device(), d -> new java.util.TreeSet<>()).add(e.pid());
                }
            }
        }
        if (narrowing == null) {
            lastBusy.clear();
            return;
        }
        if (lastBusy.size() > 4 * narrowing.size() + 64) {
            lastBusy.values().removeIf(t -> now - t > PART_LINGER_NANOS);
        }
        spellPid.keySet().retainAll(balances.keySet());
        spelling.retainAll(balances.keySet());
        Map<String, Map<Long, int[]>> weighed = bestEffortParts && narrowingViews != null ? weigh(narrowingViews, narrowing, active, now) : Map.of();
        Map<String, Map<Long, int[]>> framed = bestEffortParts && (bestEffortOneFrame || bestEffortDeviceFrame)
                ? framed(narrowing, active, weighed) : Map.of();
        for (ExternalQueueImpl e : narrowing) {
            Long alone = weighed.containsKey(e.device()) ? spellPid.get(e.device()) : null;
            e.spell(alone != null && alone == e.pid());
            e.company(now);
            java.util.TreeSet<Long> pids = active.get(e.device());
            Map<Long, int[]> shares = weighed.get(e.device());
            int[] share = shares == null ? null : shares.get(e.pid());
            boolean off = share != null && share.length > 2 && share[2] == OFF_TURN;
            if (share == null && (pids == null || !pids.contains(e.pid()))) {
                // away (stopped, or idle past the linger) from turns now paused: off its turn as it
                // stood, so that the decision that finds it back, made before the turns are weighed
                // again, does not let it go on the whole device beside the one whose turn it is. Left
                // on for all while paused, three GEMM processes continued together all went whole in
                // that decision, 43-63 ms for their 21.5 ms kernels side by side, through a large
                // batch's request (49.6 ms against a median of 9.1; H200, session 81, at 7 of 8 continues)
                Weights w = weights.get(e.device());
                int at = w == null ? -1 : w.pids().indexOf(e.pid());
                off = w != null && w.turn() >= 0 && w.pausedAt() != 0 && at >= 0 && at != w.turn();
            }
            if (e.offTurn() && !off) {
                scheduler.signalLoop(e); // held for another's turn no longer: the next decision places it
            }
            e.offTurn(off);
            e.inTurns(share != null && share.length > 2);
            if (pids == null || !bestEffortParts) {
                e.part(0, 1);
            } else if (share != null && share.length > 2) {
                e.part(0, 1); // turns: each in its turn on all of what they may use
            } else if (framed.containsKey(e.device()) && framed.get(e.device()).containsKey(e.pid())) {
                int[] f = framed.get(e.device()).get(e.pid());
                e.share(f[0], f[1]);
            } else if (share != null) {
                e.share(share[0], share[1]);
            } else if (pids.contains(e.pid())) {
                int index = pids.headSet(e.pid()).size();
                int count = pids.size();
                if (bestEffortWeights && (count == 2 || count == 4)) {
                    // equal parts of their own size: the first ones as a split by count makes
                    // them, the last one what they leave (a split by count of 104 multiprocessors,
                    // what an eager decoder's reserve leaves of an H200, gives 48 and 48 and leaves
                    // 8 idle; these give 48 and 56)
                    e.share(index * (BestEffortSplit.UNITS / count), BestEffortSplit.UNITS / count);
                } else {
                    e.part(index, count);
                }
            }
        }
    }

    private volatile boolean bestEffortOneFrame;

    /**
     * Whether the parts of best-effort processes are laid out in one frame of the device (off by
     * default; off: each process's sixteenths of its own region, as before session 117). A part
     * is given in sixteenths of what the process's reserve leaves it (cuda_narrow.c), and
     * processes beside one another have different reserves: a GEMM process stays narrowed by a
     * wide tenant's reserve (64 of an H100's 132) while Triton beside it, between the tenant's
     * requests, has none. Halves of their own regions put the GEMM on multiprocessors 0-31 and
     * Triton on 64-127, leaving 32-63 idle, or, the pids the other way round, Triton on 0-63 over
     * the GEMM's 32-63 and 64-131 idle (the bench's node-queues.tsv, session 117). On: the cut is
     * laid out in the narrowest region, processes of long commands first (they stay narrowed), and
     * each part is given in its own process's sixteenths so that it starts where the one before it
     * ends; the last one runs to the end of its own region (the reserve, where its process has
     * none). Measured on an H200 (session 117, random-arrival graph and chat, each beside a GEMM
     * process and Triton, one run each): Triton on 96 multiprocessors instead of 64 kept 1.53 and
     * 1.51 of native sharing (1.33 and 1.22 off) and the GEMM 0.41 and 0.45 (0.49 and 0.54 off):
     * the idle multiprocessors had kept Triton's memory traffic from the GEMM, the tenant short
     * of its goal. Off by default, then; the layout is right, the cut it lays out is not yet.
     */
    public void bestEffortOneFrame(boolean on) {
        bestEffortOneFrame = on;
    }

    public boolean bestEffortOneFrame() {
        return bestEffortOneFrame;
    }

    private volatile boolean bestEffortDeviceFrame = true;

    /**
     * Whether the cut among best-effort processes is read in sixteenths of the whole device and
     * laid out in one frame of it (on by default since session 118; it goes before {@link #bestEffortOneFrame}). Each
     * process's sixteenths are of the device, not of what its reserve leaves it; processes narrowed
     * by a reserve (a GEMM process beside a wide tenant: its 20 ms commands cannot be held off the
     * reserve when the tenant comes) are laid out first, each kept within its region, and the others
     * after them to the end of the device, over the reserve, which is theirs between the tenant's
     * requests (their short commands are held or narrowed off it when it comes). Until now a GEMM
     * beside a wide tenant and Triton got half of its own region (32 of 132 multiprocessors on an
     * H100, 0.40-0.57 of native sharing, session 117) and 32-63 went to no one; read in the device's
     * sixteenths, half is 64, the whole of its region, and Triton keeps the reserve's 64-131 as
     * before. The one frame of session 117 laid the cut out in the narrowest region instead, so
     * Triton took 32-63 as well. Measured with {@link #bestEffortBalanceRegion} on an H100 (session
     * 118, three calls, ten readings beside a random-arrival graph or chat and Triton): the GEMM at
     * 0.57-0.70 of native sharing against 0.32-0.52, Triton alike (1.49-1.77 against 1.47-1.89), the
     * tenants' P99 within the noise of their runs (the graph's device part 2.69-3.30 ms at P99
     * against 2.42-3.36).
     */
    public void bestEffortDeviceFrame(boolean on) {
        bestEffortDeviceFrame = on;
    }

    public boolean bestEffortDeviceFrame() {
        return bestEffortDeviceFrame;
    }

    /**
     * Per device whose best-effort processes with work have a whole cut of parts of their own size
     * (weighed, or equal halves or quarters), per pid, its part {offset, width} in sixteenths of its
     * own region, laid out in one frame ({@link #bestEffortOneFrame}).
     */
    private Map<String, Map<Long, int[]>> framed(List<ExternalQueueImpl> narrowing, Map<String, java.util.TreeSet<Long>> active,
                                                 Map<String, Map<Long, int[]>> weighed) {
        Map<String, Map<Long, int[]>> out = null;
        for (Map.Entry<String, java.util.TreeSet<Long>> d : active.entrySet()) {
            java.util.TreeSet<Long> pids = d.getValue();
            int count = pids.size();
            if (count < 2) {
                continue;
            }
            Map<Long, int[]> shares = weighed.get(d.getKey());
            Map<Long, Integer> widths = new HashMap<>();
            for (long pid : pids) {
                int[] sh = shares == null ? null : shares.get(pid);
                if (sh != null && sh.length == 2) {
                    widths.put(pid, sh[1]);
                } else if (shares == null && bestEffortWeights && (count == 2 || count == 4)) {
                    widths.put(pid, BestEffortSplit.UNITS / count);
                }
            }
            if (widths.size() != count || widths.values().stream().mapToInt(Integer::intValue).sum() != BestEffortSplit.UNITS) {
                continue; // turns, parts by count, or a cut that is not whole: as before
            }
            int sms = 0;
            Map<Long, Integer> reserve = new HashMap<>();
            for (ExternalQueueImpl e : narrowing) {
                if (e.device().equals(d.getKey()) && pids.contains(e.pid())) {
                    sms = Math.max(sms, e.deviceSms());
                    reserve.merge(e.pid(), e.reserve(), Math::max);
                }
            }
            if (sms <= 0) {
                continue;
            }
            List<Long> order = new ArrayList<>(pids);
            Map<Long, Integer> region = new HashMap<>();
            Map<Long, Boolean> longer = new HashMap<>();
            for (long pid : order) {
                region.put(pid, regionSms(sms, reserve.getOrDefault(pid, 0)));
                longer.put(pid, lastCommand.getOrDefault(pid, 0L) >= SpaceRule.LONG_COMMAND_NANOS);
            }
            if (bestEffortDeviceFrame && !bestEffortOneFrame && region.values().stream().distinct().count() == 1) {
                continue; // one region for all: the cut as weighed, in its own order
            }
            java.util.Comparator<Long> longFirst = java.util.Comparator.comparing((Long pid) -> !longer.get(pid));
            order.sort(bestEffortDeviceFrame ? java.util.Comparator.comparing((Long pid) -> region.get(pid)).thenComparing(longFirst)
                    .thenComparing(pid -> pid) : longFirst.thenComparing(pid -> pid));
            int[] w = new int[order.size()];
            int[] r = new int[order.size()];
            for (int i = 0; i < w.length; i++) {
                w[i] = widths.get(order.get(i));
                r[i] = region.get(order.get(i));
            }
            int[][] laid = bestEffortDeviceFrame ? inDeviceFrame(w, r) : inOneFrame(w, r);
            Map<Long, int[]> m = new HashMap<>();
            for (int i = 0; i < laid.length; i++) {
                m.put(order.get(i), laid[i]);
            }
            if (out == null) {
                out = new HashMap<>();
            }
            out.put(d.getKey(), m);
        }
        return out == null ? Map.of() : out;
    }

    /** The multiprocessors a reserve leaves a process, as the interposer reckons them (cuda_narrow.c). */
    static int regionSms(int sms, int reserve) {
        if (reserve <= 0) {
            return sms;
        }
        return reserve >= sms ? 8 : Math.max(8, (sms - reserve) / 8 * 8);
    }

    private static int floor8(double sms) {
        return (int) sms / 8 * 8;
    }

    /**
     * Parts of the given widths (sixteenths, in layout order, adding up to 16) laid out one after
     * another in the narrowest of the processes' regions (multiprocessors each one's reserve
     * leaves it): each part {offset, width} in sixteenths of its own process's region, as the
     * interposer reads it (an offset of o sixteenths of a region of n starts at n * o / 16 rounded
     * down to 8; a width w covers n * w / 16 rounded down to 8, at least 8; the last part runs to
     * the end of its region). A part starts at or after the end of the one before it, and ends at
     * or before the start of the next (a rounding may leave a step of 8 between them).
     */
    static int[][] inOneFrame(int[] widths, int[] regions) {
        int n = widths.length;
        int u = BestEffortSplit.UNITS;
        int frame = Integer.MAX_VALUE;
        for (int r : regions) {
            frame = Math.min(frame, r);
        }
        int[][] out = new int[n][];
        int cum = 0;
        int prevEnd = 0; // where the part before ends, as the interposer will make it
        for (int i = 0; i < n; i++) {
            int region = regions[i];
            boolean last = i == n - 1;
            int from = floor8((double) frame * cum / u);
            cum += widths[i];
            int to = floor8((double) frame * cum / u);
            if (region == frame && from >= prevEnd) {
                // the frame's own sixteenths: the cut as given
                out[i] = new int[] {cum - widths[i], widths[i]};
                int at = floor8((double) region * (cum - widths[i]) / u);
                prevEnd = last ? region : at + Math.max(8, floor8((double) region * widths[i] / u));
                continue;
            }
            int start = prevEnd; // right after the part before, as near as this region's sixteenths come
            int o = 0;
            while (o < u - 1 && floor8((double) region * o / u) < start) {
                o++;
            }
            int at = floor8((double) region * o / u);
            int w;
            if (last) {
                w = u - o;
                prevEnd = region;
            } else {
                // the most multiprocessors that end by the next part's start (at least a step), in the fewest sixteenths
                int end = Math.max(to, at + 8);
                w = 1;
                int best = -1;
                for (int k = 1; k <= u - o; k++) {
                    int sms = Math.max(8, floor8((double) region * k / u));
                    if (at + sms <= end && sms > best) {
                        best = sms;
                        w = k;
                    }
                }
                prevEnd = at + Math.max(8, floor8((double) region * w / u));
            }
            out[i] = new int[] {o, w};
        }
        return out;
    }

    /**
     * Parts of the given widths (sixteenths of the device, in layout order, narrowest region first,
     * adding up to 16) laid out one after another across the device ({@link #bestEffortDeviceFrame}):
     * each part {offset, width} in sixteenths of its own process's region, as the interposer reads
     * it (an offset of o sixteenths of a region of n starts at n * o / 16 rounded down to 8; a width
     * w covers n * w / 16 rounded down to 8, at least 8, or, where o + w is 16, runs to the end of
     * the region). The parts of one region that would not fit in what is left of it are shrunk
     * alike to fit; what one leaves goes to the parts after it; the last runs to the end of its
     * region. Regions all alike: the cut as given.
     */
    static int[][] inDeviceFrame(int[] widths, int[] regions) {
        int n = widths.length;
        int u = BestEffortSplit.UNITS;
        int frame = 0;
        boolean alike = true;
        for (int r : regions) {
            frame = Math.max(frame, r);
            alike &= r == regions[0];
        }
        if (alike) {
            return inOneFrame(widths, regions);
        }
        double[] ends = new double[n]; // where each part should end, in multiprocessors
        double at = 0;
        for (int i = 0; i < n; ) {
            int j = i;
            double sum = 0;
            while (j < n && regions[j] == regions[i]) {
                sum += (double) frame * widths[j] / u;
                j++;
            }
            double room = Math.max(0, regions[i] - at);
            double scale = sum > room ? room / sum : 1;
            for (int k = i; k < j; k++) {
                at += (double) frame * widths[k] / u * scale;
                ends[k] = at;
            }
            i = j;
        }
        int[][] out = new int[n][];
        int prevEnd = 0;
        for (int i = 0; i < n; i++) {
            int region = regions[i];
            int o = 0;
            while (o < u - 1 && floor8((double) region * o / u) < prevEnd) {
                o++;
            }
            int start = floor8((double) region * o / u);
            if (i == n - 1) {
                out[i] = new int[] {o, u - o};
                break;
            }
            int end = Math.max(floor8(ends[i]), start + 8);
            int w = 1;
            int best = -1;
            for (int k = 1; k <= u - o; k++) {
                int sms = o + k == u ? (region - start) / 8 * 8 : Math.max(8, floor8((double) region * k / u));
                if (sms >= 8 && start + sms <= end && sms > best) {
                    best = sms;
                    w = k;
                }
            }
            out[i] = new int[] {o, w};
            prevEnd = start + (best > 0 ? best : Math.max(8, floor8((double) region * w / u)));
        }
        return out;
    }

    /** The cut by the operator's weights where every one of names has one ({@link #bestEffortShares(String)}), else null. */
    private int[] namedCut(String[] names) {
        Map<String, Integer> shares = bestEffortShares;
        if (shares.isEmpty()) {
            return null;
        }
        int[] w = new int[names.length];
        for (int i = 0; i < names.length; i++) {
            Integer v = names[i] == null ? null : shares.get(names[i]);
            if (v == null) {
                return null;
            }
            w[i] = v;
        }
        return BestEffortSplit.proportional(w);
    }

    /**
     * The parts weighed by what fits ({@link BestEffortSplit}) on each device with two to four
     * best-effort processes with work, one of them at least with a gap found by the wide beats: per
     * device, per pid, {offset, width} in sixteenths. A device left out keeps equal parts.
     */
    private Map<String, Map<Long, int[]>> weigh(Map<Long, QueueView> views, List<ExternalQueueImpl> narrowing,
                                                Map<String, java.util.TreeSet<Long>> active, long now) {
        Map<String, Map<Long, int[]>> out = null;
        // turns on a device none of whose processes is active now (all stopped, or idle past the
        // linger) are paused from here (Weights.pausedAt)
        for (Map.Entry<String, Weights> w : weights.entrySet()) {
            Weights x = w.getValue();
            if (x.turn() >= 0 && x.pausedAt() == 0 && !active.containsKey(w.getKey())) {
                weights.put(w.getKey(), new Weights(x.pids(), x.widths(), x.since(), x.turn(), x.waiting(), x.yielding(), now));
            }
        }
        for (Map.Entry<String, java.util.TreeSet<Long>> d : active.entrySet()) {
            java.util.TreeSet<Long> pids = d.getValue();
            if (pids.size() < 2 || pids.size() > BestEffortSplit.MAX_PROCESSES) {
                weights.remove(d.getKey());
                recutWanted.remove(d.getKey());
                BestEffortBalance b = balances.get(d.getKey());
                if (b != null) {
                    b.pause();
                }
                spellPid.remove(d.getKey());
                continue;
            }
            List<Long> order = new ArrayList<>(pids);
            long[] command = new long[order.size()];
            long[] gap = new long[order.size()];
            boolean drained = true;
            boolean[] working = new boolean[order.size()];
            boolean[] inFlight = new boolean[order.size()];
            int sms = 0;
            String[] names = new String[order.size()];
            long[] completed = new long[order.size()];
            long[] run = new long[order.size()];
            long[] waits = new long[order.size()];
            java.util.Arrays.fill(waits, -1);
            for (ExternalQueueImpl e : narrowing) {
                int i = order.indexOf(e.pid());
                if (i < 0 || !e.device().equals(d.getKey())) {
                    continue;
                }
                if (bestEffortBalanceSliceMicros > 0) {
                    waits[i] = Math.max(waits[i], e.hostWaits()); // the process's count, which each of its queues gives
                }
                if (names[i] == null) {
                    names[i] = processName(e.name());
                }
                sms = Math.max(sms, e.deviceSms());
                QueueView v = views.get(e.handle());
                if (v != null) {
                    completed[i] += v.completed();
                    run[i] += v.runNanos();
                }
                if (v != null && (v.ready() || v.inFlight() > 0)) {
                    command[i] = Math.max(command[i], v.estimatedCommandNanos());
                    working[i] = true;
                }
                drained &= v == null || v.inFlight() == 0;
                inFlight[i] |= v != null && v.inFlight() > 0;
            }
            for (int i = 0; i < order.size(); i++) {
                if (working[i]) {
                    idleSince.remove(order.get(i));
                } else {
                    idleSince.putIfAbsent(order.get(i), now);
                }
            }
            for (int i = 0; i < order.size(); i++) {
                // a process between two steps (a trainer's host side) has nothing ready nor in flight: its
                // last known command stands (unknown, it counted as a long one, and on the H200 the cut went
                // between 12/4 and 6/10 with every step of a bf16 trainer beside GEMMs: session 37)
                if (command[i] > 0) {
                    lastCommand.put(order.get(i), command[i]);
                } else {
                    command[i] = lastCommand.getOrDefault(order.get(i), 0L);
                }
            }
            for (ExternalQueueImpl e : narrowing) {
                int i = order.indexOf(e.pid());
                if (i < 0 || !e.device().equals(d.getKey())) {
                    continue;
                }
                long g = e.fitGapWithin(now, FIT_GAP_AGE_NANOS);
                if (g > 0) {
                    gap[i] = gap[i] == 0 ? g : Math.min(gap[i], g);
                }
            }
            List<BestEffortSplit.Process> ps = new ArrayList<>();
            for (int i = 0; i < order.size(); i++) {
                ps.add(new BestEffortSplit.Process(command[i], gap[i]));
            }
            Weights was = weights.get(d.getKey());
            boolean samePids = was != null && was.pids.equals(order);
            boolean wasTurns = samePids && was.turn >= 0;
            if (wasTurns && was.pausedAt != 0) {
                // paused, not stuck (Weights.pausedAt): the turn's clock resumes where it stood
                was = new Weights(was.pids, was.widths, Math.min(now, was.since + (now - was.pausedAt)), was.turn, was.waiting, was.yielding, 0);
            }
            if (wasTurns && now - was.since > TURN_STALE_NANOS) {
                // no moment to pass the turn for so long (nothing of theirs ever drained): out of
                // turns, the held ones would otherwise wait on for good; and none for as long again
                // (turns begin at once, all held until nothing of theirs is in flight)
                weights.remove(d.getKey());
                turnsOffUntil.put(d.getKey(), now + TURN_STALE_NANOS);
                was = null;
                samePids = false;
                wasTurns = false;
            }
            Long off = turnsOffUntil.get(d.getKey());
            if (off != null && now - off >= 0) {
                turnsOffUntil.remove(d.getKey());
                off = null;
            }
            // an operator's weights for every one of them (bestEffortShares): their cut, no turns
            int[] named = namedCut(names);
            // the node's measured cut (bestEffortBalance): where none of them has a gap beside a wide tenant
            boolean balance = named == null && bestEffortBalance && ps.stream().noneMatch(BestEffortSplit.Process::gapped);
            if (!balance) {
                spellPid.remove(d.getKey());
            }
            if (!balance && balances.remove(d.getKey()) != null && !wasTurns) {
                // the measured cut ends (off, or a gap found): the node's own weighs afresh, not kept by its hysteresis
                was = null;
                samePids = false;
            }
            boolean alternate = !balance && named == null && off == null && (BestEffortSplit.alternate(ps, sms, wasTurns)
                    || (bestEffortTurnsWithoutGap && BestEffortSplit.ungappedTurns(ps)));
            if (alternate) {
                // turns on the whole of what they may use, one process a gap (BestEffortSplit.alternate),
                // the others held by the wide beats meanwhile (ArrivalGuards); the turn passes only
                // while nothing of theirs is in flight, and the one whose turn ends is held at once
                // (this decision may have let it go): the next decision lets the other go
                int turn = wasTurns ? was.turn : first(working);
                long since = wasTurns ? was.since : now;
                boolean passed = !wasTurns;
                // the last decision had the one whose turn it is wait for the others' kernels: its time starts now
                boolean waited = wasTurns && was.waiting;
                // a process with nothing ready nor in flight passes its turn once it has had none for
                // TURN_IDLE_NANOS: one that waits for each of its steps (a Triton loop, a trainer's
                // host side) has none between two of them, for microseconds; passed then, its turns
                // ended at the first such moment, 28 ms median against the GEMM's 72 (Triton 0.59,
                // the GEMM 1.37 of native sharing beside a graph, H200, session 45). Its time up,
                // the turn passes at a moment it has work held and nothing in flight (as the wide
                // tenant's request holds it), as a long-command process's does
                long idle = idleFor(order.get(turn), working[turn], now);
                // its time long up and its work still in flight: held until that ends, then the turn
                // passes. A process whose kernels nothing holds never drains by itself: a GEMM narrowed
                // beside an eager decoder's reserve ran them back to back and kept its turns for 2 s
                // at a time (until TURN_STALE_NANOS ended the turns), a bf16 trainer beside it had 50
                // ms turns and did 0.44-0.47 of native sharing (H200, session 46)
                boolean yielding = wasTurns && !waited && working[turn]
                        && (was.yielding || now - since >= turnNanos(command[turn], gap[turn]) * TURN_OVERDUE_PERCENT / 100);
                if (wasTurns && drained && !waited && ((working[turn] && (yielding || turnUp(now - since, command[turn], gap[turn])))
                        || idle >= TURN_IDLE_NANOS)) {
                    // to the next one with work, or on to the next one where none has any: the turn
                    // goes back and forth between idle ones (up to 800 passes a second on the H200),
                    // and it is the better rule: passed only to one with work, two GEMM processes
                    // beside an eager batch did 0.52-0.85 of native sharing against 0.79-1.03 so, in
                    // three pairs of runs taken in turn on one machine (session 39; why is not known)
                    for (int k = 1; k < order.size(); k++) {
                        int next = (turn + k) % order.size();
                        if (idleFor(order.get(next), working[next], now) < TURN_IDLE_NANOS || k == order.size() - 1) {
                            passed = next != turn;
                            turn = next;
                            break;
                        }
                    }
                    since = now;
                    yielding = false;
                } else if (wasTurns && !working[turn] && idle < TURN_IDLE_NANOS) {
                    // decide again when its idle has lasted long enough to pass the turn: the others
                    // are held and may bring no decision by themselves
                    turnWake = Math.min(turnWake, now + TURN_IDLE_NANOS - idle);
                }
                boolean yieldBegins = yielding && !(wasTurns && was.yielding);
                if (passed || yieldBegins) {
                    boolean held = false;
                    for (ExternalQueueImpl e : narrowing) {
                        int i = order.indexOf(e.pid());
                        if (i >= 0 && (i != turn || yieldBegins) && e.device().equals(d.getKey())) {
                            e.offTurn(true);
                            held |= e.holdForTurn(now);
                        }
                    }
                    if (held) {
                        scheduler.signalLoop(); // the next decision lets the one whose turn it is go
                    }
                }
                if (TRACE_WEIGHTS && yieldBegins) {
                    dev.xq.runtime.scheduler.TraceLines.line("xq: turns on " + d.getKey() + ": pid " + order.get(turn) + "'s given up after " + (now - since) / 1000
                            + " us, its work in flight, at " + now + " ns");
                }
                if (TRACE_WEIGHTS && passed) {
                    dev.xq.runtime.scheduler.TraceLines.line("xq: weighed parts on " + d.getKey() + ": pids " + order + ", turns on all of it, pid "
                            + order.get(turn) + "'s, commands us " + java.util.Arrays.toString(
                                    java.util.Arrays.stream(command).map(c -> c / 1000).toArray())
                            + ", gaps us " + java.util.Arrays.toString(java.util.Arrays.stream(gap).map(c -> c / 1000).toArray())
                            + (wasTurns ? ", after " + (now - was.since) / 1000 + " us" : "") + ", at " + now + " ns");
                }
                // the one whose turn it is waits until the others' kernels have ended (its turn's time
                // starts then): one launched as the turn passed runs beside its first, each at half
                // speed, past the guard that admitted it by its time alone (H200, session 39: each GEMM
                // kernel that ran into the batch's request ran 42.6 ms, twice its 21.5, beside the
                // other's; the guards had foreseen the request to within 0.2 ms). The counters this
                // decision read may be just older than such a launch (the old one's next, made as its
                // last ended: its gate closes only now), and the wide beats place queues by the turns
                // of the decision before: so it waits in this decision too, and the next one (signalled)
                // lets it go if the counters, read after the hold, show nothing of the others' in flight
                boolean others = passed;
                for (int i = 0; i < order.size(); i++) {
                    others |= i != turn && inFlight[i];
                }
                // into turns at once, all of them held (the one whose turn it is too) until nothing of
                // theirs runs on the parts they had: kernels narrowed beside the wide tenant, too long
                // for its gaps at their parts (three GEMM processes on a third each, 94.7 ms against a
                // 90 ms gap), are never all done at once by themselves, and turns that waited for that
                // never began (H200, session 39: the three at 0.32, 0.32 and 0.74 of native sharing)
                others |= waited && !drained;
                if (others != waited) {
                    // a wait begins, or ends and the turn with it: its time counts from now (a wait
                    // keeps the time it began: one that never ends, behind kernels that never end,
                    // ends the turns after TURN_STALE_NANOS as turns never passed do)
                    if (TRACE_WEIGHTS && waited) {
                        dev.xq.runtime.scheduler.TraceLines.line("xq: turns on " + d.getKey() + ": pid " + order.get(turn) + "'s begins after a wait of "
                                + (now - since) / 1000 + " us, at " + now + " ns");
                    }
                    since = now;
                }
                if ((passed || (waited && !others)) && working[turn]) {
                    scheduler.signalLoop(); // the next decision places it: now, not at its next event
                }
                if (yielding || others) {
                    // held until work in flight ends (its own, given up, or the others'): nothing of
                    // theirs brings a decision while held, and the wide tenant's requests that did may
                    // have stopped (a service gone quiet, or exiting): looked at again soon
                    turnWake = Math.min(turnWake, now + TURN_DRAIN_LOOK_NANOS);
                }
                weights.put(d.getKey(), new Weights(order, null, since, turn, others, yielding, 0));
                Map<Long, int[]> shares = new HashMap<>();
                for (int i = 0; i < order.size(); i++) {
                    shares.put(order.get(i), new int[] {0, BestEffortSplit.UNITS, i == turn && !others && !yielding ? ON_TURN : OFF_TURN});
                }
                if (out == null) {
                    out = new HashMap<>();
                }
                out.put(d.getKey(), shares);
                continue;
            }
            if (wasTurns && !drained) {
                // out of turns only where no kernel of the last turn still runs on all of it (nor
                // of the others', as in turns)
                boolean others = false;
                for (int i = 0; i < order.size(); i++) {
                    others |= i != was.turn && inFlight[i];
                }
                Map<Long, int[]> shares = new HashMap<>();
                for (int i = 0; i < order.size(); i++) {
                    shares.put(order.get(i), new int[] {0, BestEffortSplit.UNITS, i == was.turn && !others ? ON_TURN : OFF_TURN});
                }
                turnWake = Math.min(turnWake, now + TURN_DRAIN_LOOK_NANOS); // out of turns once drained, no event needed
                if (out == null) {
                    out = new HashMap<>();
                }
                out.put(d.getKey(), shares);
                continue;
            }
            // the cut by width only where no wide tenant is open above them: beside one (a graph, a
            // large batch on a beat) the wide beats' gaps decide, and until a gap is found the parts
            // are equal, as before session 55. By width there, the GEMMs of bulk+gemm+triton did
            // 0.76-0.83 of native sharing in three runs, 1.00-1.01 without (the same calls, H200,
            // session 56), the graph beside GEMMs and Triton 1.15-2.39 x its standalone P99 against 1.14-1.69
            boolean byWidth = bestEffortWidths && !wideAbove(narrowing, d.getKey(), now);
            int[] widths = named != null ? named : BestEffortSplit.split(ps, samePids && !wasTurns ? was.widths : null, sms, byWidth);
            if (balance) {
                if (bestEffortBalanceRegion || bestEffortDeviceFrame) {
                    regionWeights(d.getKey(), order, command, sms, narrowing, now);
                } else {
                    BestEffortBalance b = balances.get(d.getKey());
                    if (b != null) {
                        b.regionWeights(order, null);
                        b.regionCaps(order, null);
                    }
                }
                Map<Long, int[]> shares = balanced(d.getKey(), order, completed, run, waits, inFlight, widths, narrowing, now);
                if (out == null) {
                    out = new HashMap<>();
                }
                out.put(d.getKey(), shares);
                continue;
            }
            if (widths == null) {
                weights.remove(d.getKey());
                recutWanted.remove(d.getKey());
                continue;
            }
            if (wasTurns) {
                was = null;
                samePids = false;
            }
            if (!samePids || drained || java.util.Arrays.equals(was.widths, widths)) {
                recutWanted.remove(d.getKey());
            } else {
                // a new cut for the same processes waits until nothing of theirs is in flight (they
                // are held during the wide tenant's request): a part moved onto multiprocessors
                // where another's kernel still runs slows that kernel past the estimate its arrival
                // guard admitted it by (on the H200 the cut went 10/6 and 11/5 up to 80 times in
                // 12 s as the GEMMs' estimate moved about the edge of two fitting). By width alone
                // (no wide tenant above, no guard to keep) the wait is bounded: processes that are
                // never all drained at once (a GEMM, Triton and a trainer, each always busy) kept
                // the first cut for good, 6/6/4 taken on Triton's first estimate (1.6 ms, a long
                // command) where the next weighing wanted 6/5/5: the trainer ran on 32
                // multiprocessors for the whole run, 0.53 of native sharing (H200, session 77)
                long wanted = recutWanted.computeIfAbsent(d.getKey(), k -> now);
                if (!byWidth || now - wanted < UNDRAINED_RECUT_NANOS) {
                    widths = was.widths;
                }
            }
            boolean same = samePids && java.util.Arrays.equals(was.widths, widths);
            long since = same ? was.since : now;
            boolean turn = false;
            if (same && drained && now - since >= ROTATE_NANOS) {
                // cuts as good as each other (two processes alike: one gets two kernels a gap, the
                // other one) are taken in turn, each while nothing of theirs is in flight (between
                // the wide tenant's request and its end, when they are held), so that no part
                // overlaps a kernel still running on the last cut. Kept, one GEMM process would get
                // two kernels a gap for good and the other one (about 1.0 and 0.5 of native sharing).
                List<int[]> ties = BestEffortSplit.bestCuts(ps, sms);
                for (int k = 0; k < ties.size() && ties.size() > 1; k++) {
                    if (java.util.Arrays.equals(ties.get(k), widths)) {
                        widths = ties.get((k + 1) % ties.size());
                        since = now;
                        turn = true;
                        break;
                    }
                }
            }
            if (TRACE_WEIGHTS && (was == null || !was.pids.equals(order) || !java.util.Arrays.equals(was.widths, widths))) {
                dev.xq.runtime.scheduler.TraceLines.line("xq: weighed parts on " + d.getKey() + ": pids " + order + ", sixteenths "
                        + java.util.Arrays.toString(widths) + ", commands us " + java.util.Arrays.toString(
                                java.util.Arrays.stream(command).map(c -> c / 1000).toArray())
                        + ", gaps us " + java.util.Arrays.toString(java.util.Arrays.stream(gap).map(c -> c / 1000).toArray())
                        + (turn ? ", a turn among cuts as good" : ""));
            }
            weights.put(d.getKey(), new Weights(order, widths, since, -1, false, false, 0));
            Map<Long, int[]> shares = new HashMap<>();
            int offset = 0;
            for (int i = 0; i < order.size(); i++) {
                shares.put(order.get(i), new int[] {offset, widths[i]});
                offset += widths[i];
            }
            if (out == null) {
                out = new HashMap<>();
            }
            out.put(d.getKey(), shares);
        }
        for (Map.Entry<String, BestEffortBalance> b : balances.entrySet()) {
            if (!active.containsKey(b.getKey())) {
                b.getValue().pause(); // none of them active there (stopped, idle): counted afresh at their return
                spellPid.remove(b.getKey());
            }
        }
        if (weights.size() > active.size() + 16) {
            weights.keySet().retainAll(active.keySet());
        }
        if (lastCommand.size() > 4 * narrowing.size() + 64) {
            lastCommand.keySet().retainAll(lastBusy.keySet());
        }
        if (idleSince.size() > 4 * narrowing.size() + 64) {
            idleSince.keySet().retainAll(lastBusy.keySet());
        }
        return out == null ? Map.of() : out;
    }

    /**
     * The node's measured cut on one device ({@link BestEffortBalance}): the parts it weighs, or a
     * spell alone for one process, the others held (as in turns: off their turn, held at once where
     * the spell's process changes).
     */
    /**
     * Per pid, the reserve its long-command queues were last narrowed by and when (ns): a process
     * held or in a spell a moment has none then, and the region it ran on stays what it was.
     */
    private final Map<Long, long[]> lastReserve = new java.util.concurrent.ConcurrentHashMap<>();

    /** Short-command processes' time narrowed ({@link #bestEffortBalanceRegionShort}). */
    private final NarrowedTime shortNarrowed = new NarrowedTime();

    /** How long a long-command process's last reserve stands for its region once it has none. */
    static final long REGION_MEMORY_NANOS = 2_000_000_000L;

    /**
     * With {@link #bestEffortBalanceRegion}: each process's share kept weighed by the region its
     * rate alone was measured on ({@link BestEffortBalance#regionWeights}): a process of long
     * commands stays narrowed by the preferred tenants' reserve while they are open, so its rate
     * alone is its rate on the device less that reserve, (n - r) / n of its rate on the whole
     * device (a GEMM's rate goes with its width), which native time slicing gives it in its turns;
     * a process of short commands runs on the whole device between their requests and weighs 1.
     */
    private void regionWeights(String device, List<Long> order, long[] command, int sms, List<ExternalQueueImpl> narrowing, long now) {
        double[] w = new double[order.size()];
        java.util.Arrays.fill(w, 1.0);
        int[] reserve = new int[order.size()];
        for (ExternalQueueImpl e : narrowing) {
            int i = order.indexOf(e.pid());
            if (i >= 0 && e.device().equals(device)) {
                reserve[i] = Math.max(reserve[i], e.reserve());
            }
        }
        double[] capOf = w.clone();
        for (int i = 0; i < order.size(); i++) {
            long pid = order.get(i);
            if (command[i] < SpaceRule.LONG_COMMAND_NANOS || sms <= 0) {
                lastReserve.remove(pid);
                // short commands: narrowed only while a tenant works, so their rate alone is
                // measured on the region for that share of the time (NarrowedTime); no cap, their
                // part runs over the reserve between the tenant's requests
                shortNarrowed.observe(pid, reserve[i], now);
                int sr = shortNarrowed.reserve(pid);
                if (bestEffortBalanceRegionShort && sr > 0 && sms > 0) {
                    int region = sr >= sms ? 8 : Math.max(8, (sms - sr) / 8 * 8);
                    w[i] = Math.min(1.0, shortNarrowed.weight(pid, region, sms));
                }
                continue;
            }
            shortNarrowed.forget(pid);
            int r = reserve[i];
            if (r > 0) {
                lastReserve.put(pid, new long[] {r, now});
            } else {
                long[] last = lastReserve.get(pid);
                r = last != null && now - last[1] < REGION_MEMORY_NANOS ? (int) last[0] : 0;
            }
            if (r > 0) {
                // the region the interposer gives (cuda_narrow.c): what the reserve leaves, in steps of 8
                int region = r >= sms ? 8 : Math.max(8, (sms - r) / 8 * 8);
                w[i] = Math.min(1.0, (double) region / sms);
                capOf[i] = w[i];
            }
        }
        if (lastReserve.size() > 64) {
            lastReserve.values().removeIf(v -> now - v[1] > REGION_MEMORY_NANOS);
        }
        BestEffortBalance b = balances.computeIfAbsent(device, k -> new BestEffortBalance(balanceTimes));
        b.regionWeights(order, bestEffortBalanceRegion ? w : null);
        if (bestEffortDeviceFrame) {
            // read in the device's sixteenths, a narrowed process's part ends at its region's end
            // (inDeviceFrame): sixteenths past that give it nothing
            int[] caps = new int[w.length];
            for (int i = 0; i < w.length; i++) {
                caps[i] = capOf[i] < 1 ? (int) Math.ceil(BestEffortSplit.UNITS * capOf[i] - 1e-9) : BestEffortSplit.UNITS;
            }
            b.regionCaps(order, caps);
        } else {
            b.regionCaps(order, null);
        }
    }

    /** Devices whose measured cut last stayed rather than move straight back (logged once, {@link #balanced}). */
    private final java.util.Set<String> balanceStayed = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private Map<Long, int[]> balanced(String device, List<Long> order, long[] completed, long[] run, long[] waits, boolean[] inFlight, int[] weighed,
                                      List<ExternalQueueImpl> narrowing, long now) {
        BestEffortBalance b = balances.computeIfAbsent(device, k -> new BestEffortBalance(balanceTimes));
        b.memory(bestEffortBalanceMemory);
        b.quick(bestEffortBalanceQuick);
        b.early(bestEffortBalanceEarly);
        b.carry(bestEffortBalanceCarry);
        b.longCommands(bestEffortBalanceLongCommands);
        b.sliceNanos(bestEffortBalanceSliceMicros * 1_000L);
        int[] initial = weighed;
        if (initial == null || initial.length != order.size()) {
            initial = new int[order.size()];
            for (int i = 0; i < initial.length; i++) {
                initial[i] = BestEffortSplit.UNITS / order.size() + (i < BestEffortSplit.UNITS % order.size() ? 1 : 0);
            }
        }
        // held now by another rule (the wide beats, a preferred tenant's request): a spell alone
        // measures its process let go, not held (BestEffortBalance.HELD_RESTART_NANOS)
        boolean[] heldElse = new boolean[order.size()];
        for (ExternalQueueImpl e : narrowing) {
            int i = order.indexOf(e.pid());
            if (i >= 0 && e.device().equals(device) && !e.offTurn() && e.wakesWhenHeld()) {
                heldElse[i] = true;
            }
        }
        BestEffortBalance.Step s = b.step(now, order, completed, run, waits, inFlight, heldElse, initial);
        turnWake = Math.min(turnWake, s.wakeNanos());
        String line = b.trace();
        if (TRACE_WEIGHTS && !line.isEmpty()) {
            dev.xq.runtime.scheduler.TraceLines.line("xq: balance on " + device + ": pids " + order + ", " + line + ", at " + now + " ns");
        } else {
            // the operator's record of why the parts moved (at most one move a second a device), of a
            // move back not taken (once, until the cut moves or a weighing takes it again), and of a
            // rate alone not taken or taken again (at most once a round)
            boolean stays = line.contains(", stays: ");
            if (line.contains(" -> ") || (stays && balanceStayed.add(device)) || line.contains("measured alone again")
                    || line.contains("held by another rule")) {
                log.info("measured cut on " + device + ": pids " + order + ", " + line);
            }
            if (!stays && line.startsWith("rates kept alone")) {
                balanceStayed.remove(device);
            }
        }
        Map<Long, int[]> shares = new HashMap<>();
        if (s.probing()) {
            spelling.add(device);
            boolean held = false;
            for (ExternalQueueImpl e : narrowing) {
                int i = order.indexOf(e.pid());
                if (i >= 0 && i != s.turn() && e.device().equals(device) && !e.offTurn()) {
                    e.offTurn(true);
                    held |= e.holdForTurn(now);
                }
            }
            if (held || s.turn() >= 0) {
                scheduler.signalLoop(); // the next decision sees the others drained, or lets the one alone go
            }
            for (int i = 0; i < order.size(); i++) {
                shares.put(order.get(i), new int[] {0, BestEffortSplit.UNITS, i == s.turn() ? ON_TURN : OFF_TURN});
            }
            if (s.turn() >= 0) {
                spellPid.put(device, order.get(s.turn()));
            } else {
                spellPid.remove(device);
            }
            return shares;
        }
        spellPid.remove(device);
        spelling.remove(device);
        weights.put(device, new Weights(order, s.widths(), now, -1, false, false, 0));
        int offset = 0;
        for (int i = 0; i < order.size(); i++) {
            shares.put(order.get(i), new int[] {offset, s.widths()[i]});
            offset += s.widths()[i];
        }
        return shares;
    }

    /** Devices in a round of the measured cut's spells (its others held, or all while they drain). */
    private final java.util.Set<String> spelling = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Whether a queue off its turn on {@code device} is held whatever the policy decides, a
     * preferred tenant open or not ({@link XqCore#offTurnHolds} adds: with best-effort company only).
     * Off its turn, a queue is held whatever the policy decides during a spell on its device (a
     * measurement alone is no measurement beside the others) and with best-effort company only
     * (turns there have nothing else to hold them: the wide beats, which hold a queue off its turn,
     * run only in decisions that narrowed some queue, and with best-effort company only none does,
     * so turns and spells held nobody until session 95). Beside a preferred tenant the wide beats
     * decide, as measured since session 46.
     */
    boolean offTurnHeldOn(String device) {
        return offTurnAlwaysHeld || spelling.contains(device);
    }

    /**
     * Whether a queue off its turn is held whatever the policy decides beside a preferred tenant
     * too ({@link XqCore#offTurnHolds}): between a wide tenant's requests no queue is narrowed and the wide
     * beats do not run, so the one off its turn runs beside the one whose turn it is. Off by
     * default: every turn of the default family was measured so.
     */
    private volatile boolean offTurnAlwaysHeld;

    public void offTurnAlwaysHeld(boolean on) {
        offTurnAlwaysHeld = on;
    }

    public boolean offTurnAlwaysHeld() {
        return offTurnAlwaysHeld;
    }

    /** Per device: the process measured alone now ({@link ExternalQueueImpl#spell(boolean)}), none: no entry. */
    private final Map<String, Long> spellPid = new java.util.concurrent.ConcurrentHashMap<>();

    /** Per device: the node's measured cut ({@link #bestEffortBalance(boolean)}). */
    private final Map<String, BestEffortBalance> balances = new java.util.concurrent.ConcurrentHashMap<>();

    /** @return the measured cut of {@code device}, null when none was ever weighed there (tests) */
    BestEffortBalance balance(String device) {
        return balances.get(device);
    }

    /** The measured cut's times (tests shorten them). */
    volatile BestEffortBalance.Times balanceTimes = BestEffortBalance.Times.DEFAULT;

    private volatile boolean bestEffortBalance = true;

    /**
     * Whether the node cuts what best-effort processes with no gap beside a wide tenant may use by
     * measuring them ({@link BestEffortBalance}: each one's rate alone in short spells, the others
     * held, and a sixteenth at a time toward equal shares of those rates) instead of by a model of
     * their widths. An operator's weights ({@link #bestEffortShares(String)}) come first. On by
     * default since session 96, once its spells held (session 95): on an H100 it put a bf16 trainer
     * beside Triton at 0.76-0.80 of native sharing where the cut by width gave 0.55-0.57, and met
     * every best-effort goal on GEMMs, Triton and a trainer together (1.15, 1.72, 0.93) where the cut
     * by width missed two (0.76, 0.84).
     */
    public void bestEffortBalance(boolean on) {
        bestEffortBalance = on; // off: each device's measured cut ends at its next weighing
    }

    public boolean bestEffortBalance() {
        return bestEffortBalance;
    }

    private volatile boolean bestEffortBalanceMemory = true;

    /**
     * Whether the measured cut keeps each process's rate alone and each set's cut across changes of
     * the set (one stopped or idle for a while and back), measures alone again at once where a
     * process did more on its part than alone, and moves up to three sixteenths where the shares
     * kept are far apart ({@link BestEffortBalance#memory(boolean)}; on by default since session
     * 102). Off: as before.
     */
    public void bestEffortBalanceMemory(boolean on) {
        bestEffortBalanceMemory = on;
    }

    public boolean bestEffortBalanceMemory() {
        return bestEffortBalanceMemory;
    }

    private volatile boolean bestEffortBalanceQuick = true;

    /**
     * Whether the measured cut jumps to where the shares kept would come out equal and weighs over
     * half a second ({@link BestEffortBalance#quick(boolean)}; on by default since session 104).
     * Off: as before.
     */
    public void bestEffortBalanceQuick(boolean on) {
        bestEffortBalanceQuick = on;
    }

    public boolean bestEffortBalanceQuick() {
        return bestEffortBalanceQuick;
    }

    private volatile boolean bestEffortBalanceEarly = true;

    /**
     * Whether a round of spells is followed at once by a weighing of what the processes did on
     * their parts before it ({@link BestEffortBalance#early(boolean)}; on by default since session
     * 105). Off: the first weighing after a round counts from the round's end.
     */
    public void bestEffortBalanceEarly(boolean on) {
        bestEffortBalanceEarly = on;
    }

    public boolean bestEffortBalanceEarly() {
        return bestEffortBalanceEarly;
    }

    private volatile boolean bestEffortBalanceCarry = true;

    /**
     * Whether a count on the parts that a stop cuts short goes on after it, on the same set and cut
     * ({@link BestEffortBalance#carry(boolean)}; on by default since session 106). Off: each stop
     * drops the count, and it begins again after the stop.
     */
    public void bestEffortBalanceCarry(boolean on) {
        bestEffortBalanceCarry = on;
    }

    public boolean bestEffortBalanceCarry() {
        return bestEffortBalanceCarry;
    }

    private volatile boolean bestEffortBalanceLongCommands = true;

    /**
     * With {@link #bestEffortBalance}: the time slice (us) of the GPU's own time slicing that the
     * measured cut reckons with, 0 (the default) for none. Where it is set, each process's share
     * kept is weighed against what native time slicing would give it: a process that waits on the
     * device after s of work (its device time over its waits, in its spell alone) gives the device
     * up at each wait, so it is aimed at min(s, slice) / slice of the share the others keep
     * ({@link BestEffortBalance#sliceNanos(long)}; docs/processes.md, "A model of native's split,
     * to be tested"). An experiment, off until a GPU says whether the model holds.
     */
    private volatile long bestEffortBalanceSliceMicros;

    public void bestEffortBalanceSliceMicros(long micros) {
        if (micros != 0 && (micros < 100 || micros > 100_000)) {
            throw new IllegalArgumentException("bestEffortBalanceSliceMicros " + micros + " is not allowed; allowed: 0 (off) or 100 to 100000 (us)");
        }
        bestEffortBalanceSliceMicros = micros;
    }

    public long bestEffortBalanceSliceMicros() {
        return bestEffortBalanceSliceMicros;
    }

    private volatile boolean bestEffortBalanceRegion = true;

    /**
     * With {@link #bestEffortBalance}: whether each process's share kept is weighed by the region
     * its rate alone was measured on (on by default since session 118, with {@link
     * #bestEffortDeviceFrame}; docs/processes.md, "The region a rate alone was measured on"). The
     * measured cut aims at equal shares of each
     * process's rate alone; a GEMM process stays narrowed by the latency-critical tenants' reserve
     * while they are open (half the device beside a wide one), so its rate alone is half its rate
     * on the whole device, while Triton's short commands run on all of it between their requests.
     * Equal shares of those left the GEMMs at 0.42-0.56 of native sharing beside a wide or random
     * tenant and Triton (Triton 1.3-1.9; H100, session 116), and at 0.92 beside an eager decoder's
     * reserve of a fifth. On: a long-command process's share kept counts times (n - r) / n.
     */
    public void bestEffortBalanceRegion(boolean on) {
        bestEffortBalanceRegion = on;
    }

    public boolean bestEffortBalanceRegion() {
        return bestEffortBalanceRegion;
    }

    private volatile boolean bestEffortBalanceRegionShort = true;

    /**
     * With {@link #bestEffortBalanceRegion}: whether a process of short commands is weighed by the
     * region it was measured on too, for the share of the last seconds it spent narrowed
     * ({@link NarrowedTime}; on by default since session 119). Without it (session 118) a short
     * command process weighs 1, as if it ran on the whole device whenever the GEMM beside it ran on
     * its region; beside an eager decoder busy half the time, which narrows both, the cut then
     * favoured the GEMM: bf16 training at 0.47-0.99 of native sharing beside a decoder and GEMMs in
     * six readings with the region weighed against 0.86-1.07 in six without (H100, sessions 116,
     * 118 and 119), the GEMM at 1.00-1.26 against 0.88-1.03.
     */
    public void bestEffortBalanceRegionShort(boolean on) {
        bestEffortBalanceRegionShort = on;
    }

    public boolean bestEffortBalanceRegionShort() {
        return bestEffortBalanceRegionShort;
    }

    /**
     * Whether a weighing takes a process whose rate on its part is timed over two gaps or more
     * between whole batches as counted enough, however few commands it completed ({@link
     * BestEffortBalance#longCommands(boolean)}; on by default since session 107). Off: every process
     * must complete {@link BestEffortBalance#MIN_PART_COMMANDS} commands.
     */
    public void bestEffortBalanceLongCommands(boolean on) {
        bestEffortBalanceLongCommands = on;
    }

    public boolean bestEffortBalanceLongCommands() {
        return bestEffortBalanceLongCommands;
    }

    /** The split weighed last per device, kept while it is nearly as good as the best ({@link BestEffortSplit#HYSTERESIS}). */
    /**
     * @param pausedAt when a decision found none of their processes active on the device (all stopped,
     *     or idle past {@link #PART_LINGER_NANOS}), 0 while they are: turns paused so are not stuck.
     *     Back, the turn's time resumes where it stood, instead of the turns being taken as never
     *     passed ({@link #TURN_STALE_NANOS}). The paired reading's stops (1.5 s of every 3) ended the
     *     turns at the processes' return and kept them off for a second, on parts meanwhile: a GEMM at
     *     half the device, its command too long for a graph's gaps there, ran through the graph's
     *     requests for that second (the graph's slow requests, 2.1-2.5 ms against 1.75, all in it;
     *     H200, session 80, graph+triton+gemm)
     */
    private record Weights(List<Long> pids, int[] widths, long since, int turn, boolean waiting, boolean yielding, long pausedAt) {
    }

    /**
     * A turn whose process still has work in flight this long (in percent of its time, {@link
     * #turnNanos}) is given up: the process is held until its work ends, then the turn passes. Past
     * its time only: a turn passes sooner where its process is held anyway (a wide tenant's request),
     * and a short-command process let go at its time up lost the rest of a gap (on the H200 the turns
     * beside a graph passed at its requests, 49.5 ms apart).
     */
    static final long TURN_OVERDUE_PERCENT = 150;

    /** Per device: no turns until then (turns that ended because none could pass, {@link #TURN_STALE_NANOS}). */
    private final Map<String, Long> turnsOffUntil = new java.util.concurrent.ConcurrentHashMap<>();

    /** In a share of the weighed parts: the process's turn ({@link BestEffortSplit#alternate}), or another's. */
    private static final int ON_TURN = 0;
    private static final int OFF_TURN = 1;

    private static int first(boolean[] working) {
        for (int i = 0; i < working.length; i++) {
            if (working[i]) {
                return i;
            }
        }
        return 0;
    }

    /**
     * How long the process whose turn it is may have nothing ready nor in flight before its turn
     * passes (between two of its steps it keeps it).
     */
    static final long TURN_IDLE_NANOS = 10_000_000L;

    /** Per pid: when a decision first saw it with no work ready nor in flight, since it last had some. */
    private final Map<Long, Long> idleSince = new java.util.concurrent.ConcurrentHashMap<>();

    /** The earliest time a decision in turns asked to be decided again at (nanoTime; Long.MAX_VALUE: none). */
    private long turnWake = Long.MAX_VALUE;

    /** How long {@code pid} has had no work, as the decisions saw it (0 while it has). */
    private long idleFor(long pid, boolean working, long now) {
        Long since = working ? null : idleSince.get(pid);
        return since == null ? 0 : now - since;
    }

    /**
     * While a turn waits for work in flight to end (a turn given up, or the next one's wait for the
     * others' kernels), how soon the decision is made again without an event. The held processes
     * bring none, and the wide tenant whose requests did may have stopped: at a batch's or a graph's
     * exit two best-effort processes in turns stood 0.85-0.98 s on an H100 until its session
     * closed, the last trace line a turn given up (session 107; 82 of 1,434 recorded best-effort
     * logs of xq runs ran 0.4 s or more past their length).
     */
    static final long TURN_DRAIN_LOOK_NANOS = 2_000_000L;

    /** Turns not passed for this long (nothing of theirs drained in between) end. */
    static final long TURN_STALE_NANOS = 1_000_000_000L;

    /**
     * How long a process's turn on all of the device stands, at least, before it passes at a
     * moment nothing of theirs is in flight: {@link #ROTATE_NANOS}, or where its gap beside the
     * wide tenant is known, until another of its commands no longer fits it (the turn passes as the
     * wide tenant's request holds it, one process a gap). A process that launches its next kernel
     * only once the last has ended (nothing in flight between them) passed its turn after its third
     * 21.5 ms GEMM of a 92.5 ms gap, 65 ms into it; the other's kernel launched then fitted the gap
     * in some gaps and not in others: three kernels a gap where four fit, and it got 0.63 of native
     * sharing beside one that launches ahead and got 0.91 (H200, session 42).
     *
     * <p>{@link #turnUp}: where the gap is shorter than the turn (several gaps a turn), the turn is
     * up half a gap before, so that it passes at the end of the gap nearest its time rather than
     * the first after it: beside a graph's 21.8 ms gaps, 25 ms apart, a 50 ms turn that began a
     * moment after the wide tenant's request passed at its third, the other's at its second (the
     * GEMM's turns 72 ms median, Triton's 54: the GEMM 1.25-1.28 and Triton 0.70-0.71 of native
     * sharing, H200, session 45). Measured in two runs it changed nothing (the GEMM's turns still
     * three kernels, 71.6 ms; why is not known: the turn trace lines carry their time since).
     */
    static boolean turnUp(long elapsedNanos, long commandNanos, long gapNanos) {
        long need = turnNanos(commandNanos, gapNanos);
        return elapsedNanos >= (gapNanos > 0 && gapNanos < need ? need - gapNanos / 2 : need);
    }

    static long turnNanos(long commandNanos, long gapNanos) {
        return gapNanos > 0 && commandNanos > 0 ? Math.max(ROTATE_NANOS, gapNanos - commandNanos) : ROTATE_NANOS;
    }

    /** How long a weighed cut stands, at least, before one as good takes its turn. */
    static final long ROTATE_NANOS = 50_000_000L;

    private final Map<String, Weights> weights = new java.util.concurrent.ConcurrentHashMap<>();

    /** Per device, since when a new cut by width has been wanted while the processes were never drained. */
    private final Map<String, Long> recutWanted = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * How long a new cut by width (no wide tenant above the processes) waits for a moment when
     * nothing of theirs is in flight before it is taken all the same: a kernel still running on a
     * part moved away is slowed once, where a cut taken on a first estimate would stand for good.
     */
    static final long UNDRAINED_RECUT_NANOS = 500_000_000L;

    /** Per pid, the longest command of its narrowable queues when it last had one ready or in flight (ns). */
    private final Map<Long, Long> lastCommand = new java.util.concurrent.ConcurrentHashMap<>();

    /** {@code -Dxq.trace.wideBeats=true}: the node prints each new weighed split on stderr. */
    private static final boolean TRACE_WEIGHTS = Boolean.getBoolean("xq.trace.wideBeats");

    /** How old a gap found by the wide beats may be to weigh a split by. */
    static final long FIT_GAP_AGE_NANOS = 500_000_000L;

    private volatile boolean bestEffortWeights = true;

    /**
     * Whether the parts of best-effort processes are weighed by what fits ({@link
     * BestEffortSplit}) where the wide beats found a gap for one of them (the default, measured on
     * the H200 in session 37); off, equal parts.
     */
    public void bestEffortWeights(boolean on) {
        bestEffortWeights = on;
    }

    public boolean bestEffortWeights() {
        return bestEffortWeights;
    }

    private volatile boolean bestEffortWidths = true;

    /**
     * Whether the parts of best-effort processes are weighed by their widths where no gap is found
     * for any of them ({@link BestEffortSplit#split(List, int[], int, boolean)}: beside an eager
     * decoder's reserve, or with no preferred tenant): long commands by their width, short ones
     * by the short-command curve, so that a GEMM process gets nine sixteenths beside a trainer's
     * seven instead of halves. On by default since session 55 (H200, 13 paired A/B readings in
     * six mixes: the GEMM beside a decoder and a trainer 0.80-1.02 of native sharing against
     * 0.72-0.88 with halves, higher in every reading; the trainers 1.00-1.63; the latency-critical
     * tenants' paired tails within the runs' spread of the halves'). Needs {@link #bestEffortWeights()}.
     */
    public void bestEffortWidths(boolean on) {
        bestEffortWidths = on;
    }

    public boolean bestEffortWidths() {
        return bestEffortWidths;
    }

    private volatile Map<String, Integer> bestEffortShares = Map.of();
    private volatile String bestEffortSharesText = "";

    /**
     * Weights an operator gives best-effort processes by name ({@code XQ_NAME}, or the name the
     * interposer gave the process): where every best-effort process with work on a device has one,
     * their parts are cut in proportion to the weights ({@link BestEffortSplit#proportional}),
     * instead of weighed by what fits or taking turns; where one has none, the node weighs as
     * without this. What the node cannot see for itself: a memory-bound process keeps most of its
     * speed on a narrow part and takes the memory bandwidth from the others on theirs (bf16 training
     * beside Triton's row softmax at 0.72 of native sharing on half an H200, 1.14 beside a GEMM on
     * seven sixteenths; session 93).
     *
     * @param spec {@code NAME=WEIGHT[,NAME=WEIGHT...]}, each weight 1 to 100, each name once, no
     *     '=', ',' or '/' in a name; empty: none
     * @throws IllegalArgumentException naming the entry that is wrong and what is allowed; nothing changes then
     */
    public void bestEffortShares(String spec) {
        Map<String, Integer> parsed = parseShares(spec);
        bestEffortShares = parsed;
        bestEffortSharesText = spec == null ? "" : spec.trim();
    }

    public String bestEffortShares() {
        return bestEffortSharesText;
    }

    static Map<String, Integer> parseShares(String spec) {
        if (spec == null || spec.isBlank()) {
            return Map.of();
        }
        Map<String, Integer> out = new java.util.LinkedHashMap<>();
        for (String entry : spec.split(",", -1)) {
            String e = entry.trim();
            int eq = e.indexOf('=');
            if (eq <= 0 || eq != e.lastIndexOf('=') || eq == e.length() - 1) {
                throw new IllegalArgumentException("'" + e + "' is not NAME=WEIGHT; allowed: NAME=WEIGHT[,NAME=WEIGHT...], weights 1 to 100");
            }
            String name = e.substring(0, eq).trim();
            String w = e.substring(eq + 1).trim();
            if (name.isEmpty() || name.contains("/")) {
                throw new IllegalArgumentException("name '" + name + "' in '" + e + "' is not allowed; allowed: a process name without '/', '=' or ','");
            }
            int weight;
            try {
                weight = Integer.parseInt(w);
            } catch (NumberFormatException x) {
                weight = -1;
            }
            if (weight < 1 || weight > 100) {
                throw new IllegalArgumentException("weight '" + w + "' of " + name + " is not allowed; allowed: a whole number 1 to 100");
            }
            if (out.putIfAbsent(name, weight) != null) {
                throw new IllegalArgumentException("name '" + name + "' given twice; allowed: each name once");
            }
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    /** The process name of a queue's name ({@code NAME/STREAM}). */
    private static String processName(String queueName) {
        int slash = queueName == null ? -1 : queueName.indexOf('/');
        return queueName == null ? "" : slash < 0 ? queueName : queueName.substring(0, slash);
    }

    private volatile boolean bestEffortTurnsWithoutGap = false;

    /**
     * Whether two or three best-effort processes for none of which the wide beats found a gap
     * (beside a wide tenant whose requests come at random, or with no preferred tenant) take turns
     * on all of what they may use instead of splitting it ({@link BestEffortSplit#ungappedTurns}).
     * Off by default: session 89 built it for the A/B that tells whether a memory-bound process on
     * its part slows the others beyond their width; on the H200 (session 92) turns cost a bf16
     * trainer beside Triton more than the cut (0.54-0.57 of native sharing against 0.70-0.71). Needs {@link
     * #bestEffortWeights()}.
     */
    public void bestEffortTurnsWithoutGap(boolean on) {
        bestEffortTurnsWithoutGap = on;
    }

    public boolean bestEffortTurnsWithoutGap() {
        return bestEffortTurnsWithoutGap;
    }

    private volatile boolean bestEffortParts = true;

    /**
     * Whether best-effort processes with work on a device split what they may use in equal parts
     * ({@link #decided}); off, each has all of it (under MPS they then share the multiprocessors
     * as the hardware's block scheduler has it: long kernels win). For comparisons: the split was
     * made because training beside 21 ms GEMMs ran at 0.05-0.19 of native sharing without it
     * (H200); the GEMMs beside Triton and a wide tenant run at 0.51-0.53 with it (they fit one
     * kernel on their half per gap between requests, while Triton uses its half throughout).
     */
    public void bestEffortParts(boolean on) {
        bestEffortParts = on;
    }

    public boolean bestEffortParts() {
        return bestEffortParts;
    }

    /** Whether a queue wider than half the device is open above any of the narrowed processes' queues on {@code device}. */
    private boolean wideAbove(List<ExternalQueueImpl> narrowing, String device, long now) {
        for (ExternalQueueImpl e : narrowing) {
            if (e.device().equals(device) && wide.widePreferredOpen(e, now)) {
                return true;
            }
        }
        return false;
    }
}
