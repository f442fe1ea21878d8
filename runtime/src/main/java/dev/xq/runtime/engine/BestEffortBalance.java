package dev.xq.runtime.engine;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The node's own cut among best-effort processes none of which has a gap beside a wide tenant
 * (two to four on one device), measured instead of modelled: equal slowdowns. Each process's
 * rate alone (commands completed a second with the whole of what they may use to itself) is
 * measured in short spells, one process at a time, the others held meanwhile ({@link
 * #PROBE_NANOS} each, every {@link #PROBE_PERIOD_NANOS}, up to {@link #MAX_PERIODS} times that while
 * the rates alone and the cut stay as they were); between them its rate on its part,
 * over {@link #PERIOD_NANOS}. A sixteenth moves from the process that keeps the most of its rate
 * alone to the one that keeps the least, while the two differ by more than {@link #DEADBAND}; a move
 * straight back to the cut just left only where the shares kept differ more here than they did there
 * ({@link #spread}).
 *
 * <p>Why: a split of multiprocessors does not split memory bandwidth. On the H200 a bf16 trainer
 * beside a memory-bound Triton loop kept 0.42 of its rate alone on half the device, Triton 0.61;
 * native time slicing gave them about 0.58 and 0.44, and the trainer missed its goal (0.72 of
 * native sharing). No model of a process's width curve alone tells that; its rate beside the
 * other does. Rates are counted in each process's own commands, so processes of any kind compare
 * by the fraction of their own rate alone they keep.
 *
 * <p>Pure and single-threaded: the node's core ({@link XqCore}) calls {@link #step} in its
 * decisions, one instance per device.
 */
final class BestEffortBalance {

    /**
     * The times it keeps, in nanoseconds (the constants below by default; tests shorten them).
     *
     * @param probe {@link #PROBE_NANOS}
     * @param probeWait {@link #PROBE_WAIT_NANOS}
     * @param probePeriod {@link #PROBE_PERIOD_NANOS}
     * @param firstProbe {@link #FIRST_PROBE_NANOS}
     * @param settle {@link #SETTLE_NANOS}
     * @param period {@link #PERIOD_NANOS}
     */
    record Times(long probe, long probeWait, long probePeriod, long firstProbe, long settle, long period) {
        static final Times DEFAULT = new Times(PROBE_NANOS, PROBE_WAIT_NANOS, PROBE_PERIOD_NANOS, FIRST_PROBE_NANOS,
                SETTLE_NANOS, PERIOD_NANOS);
    }

    /** How long each process runs alone in a spell of measuring, once the others' work has ended. */
    static final long PROBE_NANOS = 150_000_000L;
    /** How long a spell waits for the others' work in flight to end before that process is skipped. */
    static final long PROBE_WAIT_NANOS = 100_000_000L;
    /** How often the rates alone are measured again (rates move: a trainer's phases, a new input). */
    static final long PROBE_PERIOD_NANOS = 8_000_000_000L;
    /**
     * A round whose rates alone are each within {@link #STEADY} of the last round's, the cut not
     * moved since, doubles the time to the next round, up to this many periods; any other round,
     * a move of the cut, or new processes bring it back to one period. A spell holds the others,
     * 150 ms or more for each process measured; on an H100 a process's rate alone moved by 0-19 %
     * from one round to the next (a GEMM's, at 26-48 commands a second, more).
     */
    static final int MAX_PERIODS = 8;
    /** How close two rounds' rates alone are to count as the same (the larger over the smaller, minus one). */
    static final double STEADY = 0.15;
    /** How long the processes share the device before the first spell (their start-up is not their rate). */
    static final long FIRST_PROBE_NANOS = 500_000_000L;
    /** After a spell or a new cut, how long before a rate on the parts is counted (kernels of the last one end). */
    static final long SETTLE_NANOS = 150_000_000L;
    /** How long a rate on the parts is counted before the cut is weighed again. */
    static final long PERIOD_NANOS = 1_000_000_000L;
    /** Slowdowns closer than this (the larger over the smaller, minus one) leave the cut as it is. */
    static final double DEADBAND = 0.12;
    /**
     * A spell ends, past {@link #PROBE_NANOS}, once the process's completed count has been seen to
     * change this often (its rate is taken between the first change and the latest), or at
     * {@link #MAX_PROBE_FACTOR} times the spell (then from the spell's start).
     */
    static final int MIN_CHANGES = 3;
    static final int MAX_PROBE_FACTOR = 4;
    /**
     * How long, in periods of spells ({@link #PROBE_PERIOD_NANOS}), a cut just left is not gone back
     * to where the shares kept differ less on the current one: 32 s. Then a move back is taken and
     * measured again (one weighing, about a second, on the farther from equal), so that one noisy
     * reading does not hold a cut for good.
     */
    static final int BACK_PERIODS = 4;
    /**
     * With {@link #quick}: the largest move of one process's part in one weighing, in sixteenths.
     * An fp32 trainer beside Triton on an H100 kept 0.36 of its rate alone at seven sixteenths and
     * Triton 0.79 at nine; the cut where both kept about the same was five and eleven (session 104).
     */
    static final int MAX_JUMP = 4;
    /**
     * With {@link #quick}: a weighing counts at least half of {@link Times#period}, and past it
     * until every process has completed this many commands on its part (at most the whole period,
     * which fits between the paired reading's stops): a GEMM process completes 10-37 commands a
     * second, a trainer or Triton thousands.
     */
    static final int MIN_PART_COMMANDS = 16;
    /**
     * With {@link #longCommands}: a process whose rate on its part is taken between whole batches
     * over at least this many gaps between them counts as enough for a weighing, however few
     * commands it completed: a GEMM process's commands each take 27-83 ms (37 a second alone on an
     * H100, 12 on half of it), of one length, so two gaps between them time its rate as closely as
     * sixteen commands counted in a window do.
     */
    static final int MIN_PART_GAPS = MIN_CHANGES - 1;
    /** A process's part is never less than this many sixteenths. */
    static final int MIN_UNITS = 1;
    /**
     * With {@link #memory}: how long a rate alone is kept for a process that left the set (stopped,
     * idle past the node's linger) and came back, as the longest time between two rounds.
     */
    static final long KEEP_NANOS = MAX_PERIODS * PROBE_PERIOD_NANOS;
    /**
     * With {@link #memory}: a process in its spell alone held this long by another rule (the wide
     * beats' hold while a wide tenant's beat is learnt: 650-850 ms on an H100, session 102) has its
     * spell begun again once it is let go; a latency-critical tenant's request holds it for less
     * (an eager batch's 5-20 ms) and is part of its rate as of every process's.
     */
    static final long HELD_RESTART_NANOS = 50_000_000L;
    /** With {@link #memory}: a spell begun again this often times {@link #PROBE_NANOS} or more ends without a rate. */
    static final int HELD_GIVE_UP_FACTOR = 8;
    /** With {@link #memory}: how many sets of processes' cuts are kept. */
    static final int KEPT_CUTS = 16;
    /**
     * With {@link #memory}: a share kept on the parts above this is no share (a process does not do
     * more on part of the device than alone on all of it): its rate alone was taken low (a spell
     * it spent partly idle) and the processes are measured alone again at once. On an H100 an fp32
     * trainer's first spell beside Triton found it busy 0.31 of the time and read 5,807 commands a
     * second, 19,382 eight seconds later; meanwhile it "kept" 1.12 and 0.88 of the first and the cut
     * moved away from it twice (session 102).
     */
    static final double OUTRUN = 1.10;

    /** What a decision does on the device. */
    record Step(int[] widths, int turn, boolean holdOthers, long wakeNanos) {
        /** Parts: {@code widths} in sixteenths, in the processes' order. */
        static Step cut(int[] widths, long wake) {
            return new Step(widths, -1, false, wake);
        }

        /** A spell alone: process {@code turn} on all of it (-1: nobody yet, every one held), the others held. */
        boolean probing() {
            return widths == null;
        }
    }

    private final Times t;
    private List<Long> pids = List.of();
    private int[] widths;
    private long pidsSince;
    /** Per pid: its rate alone (commands a second) and when it was measured. */
    private final Map<Long, double[]> alone = new HashMap<>();
    /**
     * Per pid: the device time its commands took in its latest spell over the spell's length (its
     * queues' together, so over 1 where they overlap): how busy it keeps the device alone. Traced
     * only: native time slicing does not charge a process for its gaps, and whether a cut should
     * is to be measured first.
     */
    private final Map<Long, Double> busyAlone = new HashMap<>();
    /** The device time of the process in a spell at its start (-1: not known). */
    private long startRun = -1;
    /** The spell's process's waits on the device at its start (-1: not known) */
    private long startWaits = -1;
    /** Each process's waits on the device so far, as the last decision gave them (null: not known) */
    private long[] waits;
    /** With {@link #sliceNanos}: each process's device time between its waits, in its latest spell alone (ns) */
    private final Map<Long, Double> workPerWait = new HashMap<>();
    /** The GPU's own time slice the cut reckons with (ns), 0: none ({@link #sliceNanos(long)}) */
    private long sliceNanos;
    private long lastProbeEnd;
    /** Periods until the next round ({@link #MAX_PERIODS}). */
    private int periods = 1;
    /** Whether the cut moved since the last round. */
    private boolean movedSince;
    /** In a round: whether every rate alone so far came out as the last round's, within {@link #STEADY}. */
    private boolean roundSteady;
    /** In a round: whether every rate alone so far came out as the last round's, within {@link #STEADY}, the cut moved or not. */
    private boolean aloneKept;
    /** Whether a round of spells has ended for these processes (a new set: not yet). */
    private boolean probedSet;
    /** The process in a spell alone (-1: none), whether it waits for the others' work to end, since when. */
    private int probing = -1;
    private boolean waiting;
    private long since;
    private long startCount;
    /** In a spell: how often the process's completed count was seen to change, the first and latest change's time and count. */
    private int changes;
    private long firstAt;
    private long firstCount;
    private long lastAt;
    private long lastCount;
    private long seenCount;
    /** The rate on the parts: counted from (nanoTime; 0: not yet), and each process's completions then. */
    private long countFrom;
    private long countStart;
    private long[] counts;
    /** In a period on the parts, per process: the count last seen, how often it changed, the first and latest change (time, count). */
    private long[] partSeen;
    private int[] partChanges;
    private long[][] partFirst;
    private long[][] partLast;
    private String last = "";
    private boolean paused;
    /**
     * The cut before the last move (null: none to go back to) and the spread ({@link #spread}) of
     * the shares kept measured there. A move straight back is taken only where the shares kept
     * differ more on the cut it leaves: on an H100, fp32 and bf16 trainers beside Triton kept
     * 0.47 and 0.63 of their rates alone at 11/5 (a spread of 1.34), 0.56 and 0.49 at 12/4 (1.14),
     * and the cut went from one to the other every 1.15 s through every run (session 97).
     */
    private int[] backFrom;
    /** With {@link #quick}: per cut weighed lately (this set of processes), the spread of the shares kept there and when. */
    private final Map<List<Integer>, double[]> visited = new HashMap<>();
    private double backSpread;
    /** When {@link #backFrom} was left (nanoTime); it holds for {@link #BACK_PERIODS} periods of spells. */
    private long backAt;

    /**
     * Whether it keeps what it measured across changes of the set of processes and corrects itself
     * sooner ({@link #memory(boolean)}).
     */
    private boolean memory = true;
    /** Whether the cut jumps where the shares kept would come out equal and a weighing counts half as long ({@link #quick(boolean)}). */
    private boolean quick = true;
    /** Whether a round of spells is followed at once by a weighing of what was counted on the parts before it ({@link #early(boolean)}). */
    private boolean early = true;
    /** Whether a count on the parts that a pause ends (a stop) goes on after it, on the same cut ({@link #carry(boolean)}). */
    private boolean carry = true;
    /** Whether a process's long commands count as enough for a weighing by the gaps between them ({@link #longCommands(boolean)}). */
    private boolean longCommands = true;
    /**
     * With {@link #carry}: what the stretches of a count before a pause added, per process: commands
     * completed ({@code done}), and the commands and nanoseconds its rate is taken over ({@code num},
     * {@code den}, as in {@link #partRates}); their length together, how many, when the last ended,
     * and the set and cut they were counted on.
     */
    record Carried(long[] done, long[] num, long[] den, long[] gaps, long span, int stretches, long at, List<Long> pids, int[] widths) {
    }

    /** With {@link #carry}: what the count under way carries from before a pause (null: nothing). */
    private Carried carried;
    /**
     * With {@link #carry}: per set of processes, a count a change of the set ended (the processes
     * found stopped one at a time, 50-200 ms apart, make sets of fewer before none), taken up again
     * where that set comes back on the same cut within {@link Times#probePeriod}.
     */
    private final Map<List<Long>, Carried> parked = new HashMap<>();
    /** The time of the last decision that counted on the parts ({@link #seen}). */
    private long seenAt;
    /** With {@link #early}: the rates on the parts counted before the round of spells under way, and the cut they were counted on (null: none). */
    private double[] earlyRates;
    private int[] earlyWidths;
    /**
     * Whether the latest round was started for {@link #OUTRUN}: one such a round at most between
     * two due ones (a process that does more on its part again is not measured again and again).
     */
    private boolean rechecked;
    /** In a spell: when it first began measuring, since when its process has been seen held by another rule (-1: not), and whether it begins again when let go. */
    private long spellBegan;
    private long heldFrom = -1;
    private boolean restartWhenFree;
    /** Per process, at the current decision: held by another rule than this one (null: not known). */
    private boolean[] heldElse;
    /** With {@link #memory}: the last cut of each set of processes seen lately, the latest last. */
    private final Map<List<Long>, int[]> cuts = new java.util.LinkedHashMap<>(KEPT_CUTS, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Long>, int[]> eldest) {
            return size() > KEPT_CUTS;
        }
    };

    BestEffortBalance(Times times) {
        this.t = times;
    }

    /**
     * On (the default): a process that leaves the set of those with work (stopped, idle past the
     * node's linger) and comes back keeps its rate alone for {@link #KEEP_NANOS}, and a set seen
     * before gets back the cut it had, measured alone only when a round is due; a weighing where a
     * process kept more than {@link #OUTRUN} of its rate alone measures them alone again at once;
     * the cut moves by up to three sixteenths where the shares kept are far apart ({@link
     * #weighStepped}); and a spell whose process another rule holds for {@link #HELD_RESTART_NANOS}
     * begins again once it is let go. Off: as before session 102, a new set starts again from the node's cut with
     * a round of spells, and a sixteenth a weighing. With three processes beside a latency-critical
     * one, whose paired reading stops them 1.5 s of every 3, they came back one at a time, each
     * coming a new set: their rates alone were measured again every 3 s and no weighing ever ended
     * (H100, session 102: Triton at 2.27 of native sharing, a bf16 trainer 0.77, GEMMs 0.67).
     */
    void memory(boolean on) {
        memory = on;
    }

    /**
     * On (the default since session 104): a weighing moves the cut at once to where the shares of
     * their rates alone the processes keep would come out equal if each one's rate went with its
     * width ({@link #weighProportional}, up to {@link #MAX_JUMP} sixteenths a process), and counts
     * half a period, longer (up to the whole) until each has completed {@link #MIN_PART_COMMANDS} commands;
     * a jump to a cut weighed lately (32 s) where the shares kept were farther apart than here is
     * not taken (a sixteenth toward it instead, where that one was not farther apart too). The
     * paired reading stops best-effort processes 1.5 s of every 3, so a weighing of a whole second
     * came once a stop, and a fp32 trainer beside Triton on an H100 took three (9 s of a 10 s
     * run) to get from seven sixteenths to eleven: 0.79 of native sharing, Triton 1.89 (session
     * 104). Off: {@link #weighStepped} (with {@link #memory}) over a whole period.
     */
    void quick(boolean on) {
        quick = on;
    }

    /**
     * On (the default since session 105), with {@link #quick}: where the processes had shared the
     * device a quarter of a period or more (after {@link Times#settle}) when a round of spells
     * begins, each having completed {@link #MIN_PART_COMMANDS} commands on its part, what they did
     * then is weighed against the rates alone the round measured as soon as it ends, and the cut
     * moves then. Off: the count on the parts begins after the round, and the first weighing comes
     * one settle and half a period later. A new set of processes shares the device {@link
     * #FIRST_PROBE_NANOS} before its first round: on an H100 a bf16 trainer beside Triton and an
     * eager decoder kept 0.34 of its rate alone on half the device for the 0.65 s after the round
     * until the first jump (to 11/5, where it kept 0.52), and its first 1.45 s ran at 0.68 of
     * native sharing against 0.9-1.07 in each later stretch between the paired reading's stops
     * (session 105). A count that took in a process's start-up (a share kept above {@link #OUTRUN})
     * is not used.
     */
    void early(boolean on) {
        early = on;
    }

    /**
     * On (the default since session 106), with {@link #quick}: a count on the parts that a pause
     * ends (all of them stopped, or all but one) is kept, and the count after the pause (once
     * {@link Times#settle} is past) adds to it, on the same set and cut, as long as the pause is
     * shorter than {@link Times#probePeriod}: a weighing counts the stretches together. Off: the
     * count is dropped and begins again after the pause. The paired reading stops best-effort
     * processes 1.5 s of every 3, and a weighing waits up to a second for a GEMM process's
     * {@link #MIN_PART_COMMANDS} commands (8-15 a second on its part): beside one, each stop
     * dropped the count begun before it, one weighing came every 3 s, and the first ended only in
     * the third stretch, the node's first cut (a bf16 trainer at four sixteenths of sixteen,
     * keeping 0.22 of its rate alone) holding the run's first 3 s (H100, session 105: the
     * trainer at 0.59 and 0.63 of native sharing in its first two stretches, 0.95 and 0.88 after).
     */
    void carry(boolean on) {
        carry = on;
    }

    /**
     * On (the default since session 107), with {@link #quick}: a weighing, and the weighing of what
     * was counted before a round ({@link #early}), take a process whose rate on its part is timed
     * between whole batches over {@link #MIN_PART_GAPS} gaps or more as counted enough, beside
     * those that completed {@link #MIN_PART_COMMANDS} commands. Off: every process must complete
     * that many. A GEMM process beside Triton on an H100 completed about 4 commands on its half of
     * the device (12 a second, 37 alone) in the quarter second before the first round of spells,
     * so the weighing of it never applied, and the first weighing waited for 16 of them: the GEMMs
     * kept 0.33 of their rate alone on the node's first cut (8/8) for the first 2.7-2.8 s after
     * the round, against 0.65 at 12/4 where the weighing took them (the run's first two stretches
     * at 0.62-0.67 of native sharing, 0.86-1.00 after; session 106).
     */
    void longCommands(boolean on) {
        longCommands = on;
    }

    /**
     * The GPU's own time slice the cut reckons with, 0 for none (the default). Under native time
     * slicing a process that waits on the device (a synchronize) after s of work gives the device
     * up at each wait and gets it back only after each other busy process's slice: per round it
     * runs min(s, slice) where one that seldom waits runs a whole slice. On the H100's recorded
     * runs Triton's loop (a synchronize every 16 steps, 2.5-3 ms of its work alone) kept 0.62 of
     * the share of its rate alone that a trainer beside it kept, and that one figure put it at
     * 0.24 in the trios (four of five read 0.24, 0.24, 0.24, 0.31; one 0.17). With a slice, the shares kept are weighed
     * each over min(s, slice) / slice, s its device time over its waits in its spell alone (where
     * it waited {@link #MIN_WAITS} times or more there; else it counts as one that seldom waits):
     * the cut aims where native sharing would leave each, not at equal shares. An experiment, for
     * the GPU to say whether the model holds (docs/processes.md, "A model of native's split, to
     * be tested").
     */
    void sliceNanos(long ns) {
        sliceNanos = Math.max(0, ns);
    }

    /** A process that waited fewer times than this in its spell alone counts as one that seldom waits. */
    static final int MIN_WAITS = 3;
    /** The smallest weight a process's waits give its share: one that waits after every tiny kernel is not aimed at nothing. */
    static final double MIN_WAIT_WEIGHT = 0.1;

    /** Per pid, the share of the device its rate alone was measured on, where less than all of it. */
    private final Map<Long, Double> regionWeight = new HashMap<>();

    /**
     * The region each process's rate alone was measured on, as a share of the device (in (0, 1];
     * null: all of it for every one): its share kept is weighed times that before the weighing, so
     * that the cut aims at equal shares of each one's rate on the whole device, which native time
     * slicing gives it in its turns. A GEMM process narrowed by a reserve of half the device in
     * its spells alone keeps, on a part, twice the share of that rate alone that it keeps of its
     * rate on the whole device.
     */
    void regionWeights(List<Long> order, double[] weights) {
        regionWeight.clear();
        if (weights == null) {
            return;
        }
        for (int i = 0; i < order.size() && i < weights.length; i++) {
            double w = weights[i];
            if (w > 0 && w < 1) {
                regionWeight.put(order.get(i), w);
            }
        }
    }

    /** Per pid, the most sixteenths its part can use, where fewer than all ({@link #regionCaps}). */
    private final Map<Long, Integer> regionCap = new HashMap<>();

    /**
     * The most sixteenths each process's part can use (null: all for every one): with the cut read
     * in sixteenths of the device, a process narrowed by a reserve gets at most its region, so a
     * weighing never grows its part past that (what it would take gives it nothing and the others
     * lose it, and once the reserve is gone it would have all of it at once). A part already past
     * its cap is left where it is.
     */
    void regionCaps(List<Long> order, int[] caps) {
        regionCap.clear();
        if (caps == null) {
            return;
        }
        for (int i = 0; i < order.size() && i < caps.length; i++) {
            if (caps[i] >= MIN_UNITS && caps[i] < BestEffortSplit.UNITS) {
                regionCap.put(order.get(i), caps[i]);
            }
        }
    }

    /**
     * A weighing's cut with no part grown past its cap: what a part would take past it (past where
     * it stood, if that was more) goes back to the parts that gave, the one that gave the most first.
     */
    static int[] capped(int[] widths, int[] moved, int[] caps) {
        int[] out = moved.clone();
        int back = 0;
        for (int i = 0; i < out.length; i++) {
            int most = Math.max(caps[i], widths[i]);
            if (out[i] > widths[i] && out[i] > most) {
                back += out[i] - most;
                out[i] = most;
            }
        }
        while (back > 0) {
            int pick = -1;
            for (int i = 0; i < out.length; i++) {
                if (out[i] < widths[i] && (pick < 0 || widths[i] - out[i] > widths[pick] - out[pick])) {
                    pick = i;
                }
            }
            if (pick < 0) {
                break;
            }
            out[pick]++;
            back--;
        }
        return out;
    }

    /** @return the share of the device process {@code pid}'s rate alone was measured on (1: all of it) */
    double regionWeight(long pid) {
        return regionWeight.getOrDefault(pid, 1.0);
    }

    /** With {@link #sliceNanos}: what process {@code pid}'s share kept is weighed over, in (0, 1]. */
    double waitWeight(long pid) {
        Double s = workPerWait.get(pid);
        if (sliceNanos <= 0 || s == null) {
            return 1;
        }
        return Math.max(MIN_WAIT_WEIGHT, Math.min(1, s / sliceNanos));
    }

    /**
     * Fewer than two of them have work (stopped, idle): any spell ends, and what was counted on the
     * parts is dropped ({@link #carry}: kept for the count after it); the cut and the rates alone stay
     * for their return (the paired reading's stops, 1.5 s of every 3, would otherwise start it again
     * from the beginning each time).
     */
    void pause() {
        if (carry && quick && !paused && probing < 0 && counts != null && seenAt - countStart > 0) {
            // what the last decision before the pause saw (the processes stopped since do nothing)
            fold(seenAt, partSeen);
            counts = null;
        }
        paused = true;
    }

    /** The processes and cut this instance follows; a new set of processes starts again from {@code initial}. */
    List<Long> pids() {
        return pids;
    }

    /** The line a trace prints of the last weighing (empty: none since the last read). */
    String trace() {
        String s = last;
        last = "";
        return s;
    }

    /**
     * One decision.
     *
     * @param now nanoTime
     * @param order the processes with work on the device, in the order their parts are laid out
     * @param completed per process: commands completed so far (its queues on the device together)
     * @param inFlight per process: whether any of its work is launched and not ended
     * @param initial the cut to start from where the processes are new to it (the node's weighed one)
     * @return the parts, or a spell alone
     */
    Step step(long now, List<Long> order, long[] completed, boolean[] inFlight, int[] initial) {
        return step(now, order, completed, null, inFlight, initial);
    }

    /**
     * One decision, with each process's device time so far ({@code run}, ns, its queues' completed
     * commands together; null: not known), which a spell traces as how busy the process kept the
     * device alone.
     */
    Step step(long now, List<Long> order, long[] completed, long[] run, boolean[] inFlight, int[] initial) {
        return step(now, order, completed, run, inFlight, null, initial);
    }

    /**
     * One decision, with whether each process is held now by another rule than this one's spells
     * ({@code held}: the wide beats, a preferred tenant's request; null: not known). With {@link
     * #memory}, a spell whose process is held {@link #HELD_RESTART_NANOS} or longer begins again
     * once it is let go: it measures the process alone, not held.
     */
    Step step(long now, List<Long> order, long[] completed, long[] run, boolean[] inFlight, boolean[] held, int[] initial) {
        return step(now, order, completed, run, null, inFlight, held, initial);
    }

    /**
     * One decision, with each process's waits on the device so far ({@code waits}, -1 each or null:
     * not known), which a spell alone turns into its device time between waits ({@link #sliceNanos}).
     */
    Step step(long now, List<Long> order, long[] completed, long[] run, long[] waits, boolean[] inFlight, boolean[] held,
              int[] initial) {
        this.waits = waits != null && waits.length == order.size() ? waits : null;
        heldElse = held != null && held.length == order.size() ? held : null;
        int n = order.size();
        if (!order.equals(pids) || widths == null || widths.length != n) {
            if (memory && widths != null && widths.length == pids.size()) {
                cuts.put(pids, widths.clone());
            }
            if (carry && quick && !paused && probing < 0 && counts != null && seenAt - countStart > 0) {
                fold(seenAt, partSeen);
            }
            parked.values().removeIf(c -> now - c.at() > t.probePeriod());
            if (carried != null && parked.size() < KEPT_CUTS) {
                parked.put(carried.pids(), carried);
            }
            pids = List.copyOf(order);
            int[] kept = memory ? cuts.get(pids) : null;
            widths = kept != null && kept.length == n ? kept.clone() : initial.clone();
            pidsSince = now;
            probing = -1;
            countFrom = now + t.settle();
            dropCount();
            Carried back = parked.remove(pids);
            if (carry && quick && back != null && Arrays.equals(back.widths(), widths) && now - back.at() <= t.probePeriod()) {
                carried = back; // back on the cut it was counted on: its count goes on
            }
            earlyRates = null;
            backFrom = null;
            visited.clear();
            if (memory) {
                alone.values().removeIf(a -> now - (long) a[1] > KEEP_NANOS);
                busyAlone.keySet().retainAll(alone.keySet());
                workPerWait.keySet().retainAll(alone.keySet());
                boolean known = true;
                for (Long p : pids) {
                    known &= alone.containsKey(p);
                }
                // all of them measured alone lately: the next round when it is due, not at once
                probedSet = known;
                periods = kept != null ? periods : 1;
            } else {
                probedSet = false;
                periods = 1;
                alone.keySet().retainAll(pids);
                busyAlone.keySet().retainAll(pids);
                workPerWait.keySet().retainAll(pids);
            }
        }
        if (paused) {
            paused = false;
            probing = -1;
            earlyRates = null;
            countFrom = now + t.settle();
            counts = null;
            pidsSince = now;
        }
        if (probing >= 0) {
            return probe(now, completed, run, inFlight);
        }
        boolean unknown = false;
        for (Long p : pids) {
            unknown |= !alone.containsKey(p);
        }
        // a round that left one unmeasured (its company never drained, it had nothing to do) is
        // tried again a period later, like any: at once, the spells followed each other, the
        // processes held more than they ran
        boolean first = unknown && !probedSet;
        long every = t.probePeriod() * periods;
        if ((first && now - pidsSince >= t.firstProbe()) || (!first && now - lastProbeEnd >= every)) {
            keepEarly(now, completed);
            probing = 0;
            waiting = true;
            since = now;
            rechecked = false;
            roundSteady = probedSet && !movedSince;
            aloneKept = probedSet;
            return probe(now, completed, run, inFlight);
        }
        long wake = first ? pidsSince + t.firstProbe() : lastProbeEnd + every;
        if (now - countFrom < 0) {
            return Step.cut(widths.clone(), Math.min(wake, countFrom));
        }
        if (counts == null) {
            if (carried != null && (!carry || !carried.pids().equals(pids) || !Arrays.equals(carried.widths(), widths)
                    || now - carried.at() > t.probePeriod())) {
                dropCount(); // a long pause (what was counted before it is stale), or another cut
            }
            startCounting(now, completed);
            long left = Math.max(t.period() - span(), 1_000_000L);
            return Step.cut(widths.clone(), Math.min(wake, now + (quick ? Math.min(left, t.period()) : t.period())));
        }
        seen(now, completed);
        long counted = now - countStart + (quick ? span() : 0);
        if (quick) {
            long half = t.period() / 2;
            boolean enough = true;
            for (int i = 0; i < n; i++) {
                enough &= enough(i, completed);
            }
            if (counted < half || (!enough && counted < t.period())) {
                long next = counted < half ? now + (half - counted) : now + Math.max(1_000_000L, half / 8);
                return Step.cut(widths.clone(), Math.min(wake, next));
            }
        } else if (counted < t.period()) {
            return Step.cut(widths.clone(), Math.min(wake, countStart + t.period()));
        }
        double[] onParts = partRates(now, completed);
        double[] kept = kept(onParts);
        long[] rates = new long[n];
        for (int i = 0; i < n; i++) {
            rates[i] = Math.round(onParts[i]);
        }
        double most = 0;
        int outran = -1;
        for (int i = 0; i < n; i++) {
            if (kept[i] > most) {
                most = kept[i];
                outran = i;
            }
        }
        if (memory && most > OUTRUN && !rechecked) {
            // a rate alone taken low: measured alone again now, the cut as it is until then
            last = "rates kept alone " + Arrays.toString(Arrays.stream(kept).map(BestEffortBalance::round2).toArray())
                    + ", on the parts (commands a second) " + Arrays.toString(rates) + ", sixteenths " + Arrays.toString(widths)
                    + ", pid " + pids.get(outran) + " did more on its part than alone: measured alone again";
            rechecked = true;
            earlyRates = null;
            dropCount();
            probing = 0;
            waiting = true;
            since = now;
            periods = 1;
            roundSteady = false;
            aloneKept = false;
            return probe(now, completed, run, inFlight);
        }
        String across = carried != null ? ", counted in " + (carried.stretches() + 1) + " stretches between pauses over "
                + (span() + now - countStart) / 1_000_000 + " ms" : "";
        boolean movedNow = move(now, kept, rates);
        last += across;
        dropCount();
        if (movedNow) {
            return Step.cut(widths.clone(), Math.min(wake, countFrom));
        }
        startCounting(now, completed);
        return Step.cut(widths.clone(), Math.min(wake, now + t.period()));
    }

    /**
     * Weighs the cut on the shares kept ({@code rates}: on the parts, for the trace) and moves it
     * where the weighing says; {@link #last} says what was weighed. Returns whether it moved (then
     * the count on the new parts begins after {@link Times#settle}).
     */
    private boolean move(long now, double[] keptAlone, long[] rates) {
        // with a slice: each share kept over what native time slicing leaves the process (its waits)
        double[] kept = keptAlone.clone();
        boolean byWaits = false;
        boolean byRegions = false;
        for (int i = 0; i < kept.length; i++) {
            double w = waitWeight(pids.get(i));
            double r = regionWeight(pids.get(i));
            kept[i] = keptAlone[i] / w * r;
            byWaits |= w < 1;
            byRegions |= r < 1;
        }
        boolean weighed = byWaits || byRegions;
        String aimed = weighed ? ", over their " + (byWaits && byRegions ? "waits' and regions'" : byWaits ? "waits'" : "regions'") + " weights " + Arrays.toString(Arrays.stream(kept).map(BestEffortBalance::round2).toArray()) : "";
        int[] moved = quick ? weighProportional(widths, kept) : memory ? weighStepped(widths, kept) : weigh(widths, kept);
        String cap = "";
        if (!regionCap.isEmpty() && !Arrays.equals(moved, widths)) {
            int[] caps = new int[widths.length];
            for (int i = 0; i < caps.length; i++) {
                caps[i] = regionCap.getOrDefault(pids.get(i), BestEffortSplit.UNITS);
            }
            int[] within = capped(widths, moved, caps);
            if (!Arrays.equals(within, moved)) {
                cap = ", capped at the regions' sixteenths " + Arrays.toString(caps) + ": " + Arrays.toString(moved) + " -> " + Arrays.toString(within);
                moved = within;
            }
        }
        double spread = spread(kept);
        String stays = "";
        if (quick) {
            // the cuts weighed lately, each with how far apart the shares kept there were: a jump to
            // one where they were farther apart than here is not taken; a sixteenth toward it
            // instead, unless that one was farther apart too (the width curves are not straight:
            // 12/4, 10/6 and 11/5 went round and round)
            visited.values().removeIf(v -> now - (long) v[1] >= BACK_PERIODS * t.probePeriod());
            if (Double.isFinite(spread)) {
                visited.put(Arrays.stream(widths).boxed().toList(), new double[] {spread, now});
            }
            if (!Arrays.equals(moved, widths)) {
                double[] there = visited.get(Arrays.stream(moved).boxed().toList());
                if (there != null && spread <= there[0]) {
                    int[] once = weigh(widths, kept);
                    double[] near = visited.get(Arrays.stream(once).boxed().toList());
                    if (!Arrays.equals(once, moved) && !Arrays.equals(once, widths) && (near == null || spread > near[0])) {
                        moved = once;
                    } else {
                        stays = ", stays: at " + Arrays.toString(Arrays.equals(once, widths) ? moved : once) + " they differed by "
                                + round2(near != null && !Arrays.equals(once, moved) ? near[0] : there[0]) + ", here by " + round2(spread);
                        moved = widths.clone();
                    }
                }
            }
        } else if (backFrom != null && now - backAt < BACK_PERIODS * t.probePeriod() && !Arrays.equals(moved, widths)
                && Arrays.equals(moved, backFrom) && spread <= backSpread) {
            // the move would undo the last one, and the shares kept differ less here than they did
            // there: between two neighbouring cuts, the nearer to equal stands
            stays = ", stays: at " + Arrays.toString(backFrom) + " they differed by " + round2(backSpread) + ", here by " + round2(spread);
            moved = widths.clone();
        }
        last = "rates kept alone " + Arrays.toString(Arrays.stream(keptAlone).map(BestEffortBalance::round2).toArray()) + aimed
                + ", on the parts (commands a second) " + Arrays.toString(rates)
                + ", sixteenths " + Arrays.toString(widths) + (Arrays.equals(moved, widths) ? "" : " -> " + Arrays.toString(moved)) + stays + cap;
        if (!Arrays.equals(moved, widths)) {
            // a spread of nothing done (or not known) is no reading to hold a cut by
            backFrom = Double.isFinite(spread) ? widths.clone() : null;
            backSpread = spread;
            backAt = now;
            widths = moved;
            movedSince = true;
            periods = 1; // rates alone as fresh as a period while the cut moves
            countFrom = now + t.settle();
            counts = null;
            return true;
        }
        return false;
    }

    /**
     * With {@link #early} and {@link #quick}: at a round's start, what was counted on the parts so
     * far, where it is a quarter of a period or more and each process completed {@link
     * #MIN_PART_COMMANDS} commands (null otherwise).
     */
    private void keepEarly(long now, long[] completed) {
        earlyRates = null;
        earlyWidths = null;
        if (!early || !quick || counts == null || counts.length != completed.length
                || now - countStart + span() < t.period() / 4) {
            return;
        }
        seen(now, completed);
        for (int i = 0; i < completed.length; i++) {
            if (!enough(i, completed)) {
                return;
            }
        }
        earlyRates = partRates(now, completed);
        earlyWidths = widths.clone();
    }

    /**
     * At a round's end: the count kept by {@link #keepEarly} weighed against the rates alone just
     * measured, where it was counted on the cut still in force and no process kept more than
     * {@link #OUTRUN}; {@code round} is the round's trace line, which {@link #last} begins with.
     */
    private void weighEarly(long now, String round) {
        double[] onParts = earlyRates;
        int[] on = earlyWidths;
        earlyRates = null;
        earlyWidths = null;
        if (onParts == null || !Arrays.equals(on, widths) || onParts.length != pids.size()) {
            return;
        }
        double[] kept = kept(onParts);
        for (double k : kept) {
            if (!(k >= 0) || k > OUTRUN) {
                return; // not measured alone, or did more on its part than alone: its start-up, not its share
            }
        }
        long[] rates = new long[kept.length];
        for (int i = 0; i < kept.length; i++) {
            rates[i] = Math.round(onParts[i]);
        }
        move(now, kept, rates);
        last = round + "; counted before the spells: " + last;
    }

    /** Each process's rate on its part (commands a second) since the count began: as in a spell, between whole batches where they were seen often enough. */
    private double[] partRates(long now, long[] completed) {
        int n = completed.length;
        double[] out = new double[n];
        Carried c = carried != null && carried.num().length == n ? carried : null;
        for (int i = 0; i < n; i++) {
            long[] r = stretch(i, now, completed);
            long num = r[0] + (c != null ? c.num()[i] : 0);
            long den = r[1] + (c != null ? c.den()[i] : 0);
            out[i] = den > 0 ? num / (den / 1e9) : 0;
        }
        return out;
    }

    /**
     * Process {@code i}'s count in the stretch under way: the commands and nanoseconds its rate is
     * taken over, between whole batches where they were seen often enough, else from the count's
     * start to {@code now}.
     */
    private long[] stretch(int i, long now, long[] completed) {
        return partChanges[i] >= MIN_CHANGES && partLast[i][0] > partFirst[i][0]
                ? new long[] {partLast[i][1] - partFirst[i][1], partLast[i][0] - partFirst[i][0]}
                : new long[] {completed[i] - counts[i], Math.max(0, now - countStart)};
    }

    /** Process {@code i}'s commands completed on its part in the count (the stretches carried over a pause with it). */
    private long done(int i, long[] completed) {
        return completed[i] - counts[i] + (carried != null && carried.done().length == completed.length ? carried.done()[i] : 0);
    }

    /**
     * Whether process {@code i} has been counted enough for a weighing: {@link #MIN_PART_COMMANDS}
     * commands, or (with {@link #longCommands}) its rate timed over {@link #MIN_PART_GAPS} gaps between
     * whole batches, the stretches carried with the count included.
     */
    private boolean enough(int i, long[] completed) {
        return done(i, completed) >= MIN_PART_COMMANDS || (longCommands && gaps(i) >= MIN_PART_GAPS);
    }

    /** Process {@code i}'s gaps between whole batches its rate is timed over in the count (0 in a stretch whose rate is not taken so). */
    private long gaps(int i) {
        long here = partChanges[i] >= MIN_CHANGES && partLast[i][0] > partFirst[i][0] ? partChanges[i] - 1 : 0;
        return here + (carried != null && carried.gaps().length == partChanges.length ? carried.gaps()[i] : 0);
    }

    /** With {@link #carry}: the length of the stretches carried (0: none). */
    private long span() {
        return carried == null ? 0 : carried.span();
    }

    /** With {@link #carry}: the stretch under way (to {@code at}, its counts {@code seen}) added to what is carried. */
    private void fold(long at, long[] seen) {
        int n = counts.length;
        if (seen == null || seen.length != n || widths == null || pids.size() != n) {
            return;
        }
        Carried c = carried != null && carried.done().length == n ? carried : null;
        long[] done = new long[n];
        long[] num = new long[n];
        long[] den = new long[n];
        long[] gaps = new long[n];
        for (int i = 0; i < n; i++) {
            long[] r = stretch(i, at, seen);
            done[i] = seen[i] - counts[i] + (c != null ? c.done()[i] : 0);
            num[i] = r[0] + (c != null ? c.num()[i] : 0);
            den[i] = r[1] + (c != null ? c.den()[i] : 0);
            gaps[i] = gaps(i);
        }
        carried = new Carried(done, num, den, gaps, at - countStart + (c != null ? c.span() : 0), c != null ? c.stretches() + 1 : 1, at,
                pids, widths.clone());
    }

    /** The count on the parts ends: begun afresh after the next settle, nothing carried. */
    private void dropCount() {
        counts = null;
        carried = null;
    }

    /** Each process's rate on its part over its rate alone (NaN: not measured alone). */
    private double[] kept(double[] onParts) {
        double[] out = new double[onParts.length];
        for (int i = 0; i < onParts.length; i++) {
            double[] a = alone.get(pids.get(i));
            out[i] = a == null || a[0] <= 0 ? Double.NaN : onParts[i] / a[0];
        }
        return out;
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }

    /**
     * How far apart the shares kept are: the largest over the smallest (infinite where the smallest
     * is nothing, NaN where one is not known).
     */
    static double spread(double[] kept) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = 0;
        for (double k : kept) {
            if (Double.isNaN(k)) {
                return Double.NaN;
            }
            lo = Math.min(lo, k);
            hi = Math.max(hi, k);
        }
        return lo <= 0 ? Double.POSITIVE_INFINITY : hi / lo;
    }

    /** A period's count on the parts begins: each process's count now, no change seen yet. */
    private void startCounting(long now, long[] completed) {
        int n = completed.length;
        counts = completed.clone();
        countStart = now;
        partSeen = completed.clone();
        partChanges = new int[n];
        partFirst = new long[n][2];
        partLast = new long[n][2];
    }

    /** Notes each process whose completed count changed since the last decision (time, count). */
    private void seen(long now, long[] completed) {
        seenAt = now;
        for (int i = 0; i < completed.length; i++) {
            if (completed[i] != partSeen[i]) {
                partSeen[i] = completed[i];
                if (partChanges[i]++ == 0) {
                    partFirst[i] = new long[] {now, completed[i]};
                }
                partLast[i] = new long[] {now, completed[i]};
            }
        }
    }

    /**
     * The cut after one weighing: a sixteenth from the process that keeps the largest share of its
     * rate alone to the one that keeps the smallest, where they differ by more than {@link
     * #DEADBAND}; unchanged where a share is not known (NaN) or the giver is at {@link #MIN_UNITS}.
     */
    static int[] weigh(int[] widths, double[] kept) {
        int lo = -1;
        int hi = -1;
        for (int i = 0; i < kept.length; i++) {
            if (Double.isNaN(kept[i])) {
                return widths.clone();
            }
            if (lo < 0 || kept[i] < kept[lo]) {
                lo = i;
            }
            if (widths[i] > MIN_UNITS && (hi < 0 || kept[i] > kept[hi])) {
                hi = i;
            }
        }
        int[] out = widths.clone();
        if (hi < 0 || hi == lo || kept[hi] <= 0 || kept[hi] <= kept[lo] * (1 + DEADBAND)) {
            return out;
        }
        out[hi]--;
        out[lo]++;
        return out;
    }

    /**
     * {@link #weigh}, moving more than a sixteenth where the shares kept are far apart: two where
     * the largest is more than 1.5 times the smallest, three past 2.25 (never below {@link
     * #MIN_UNITS}). A fp32 trainer beside Triton kept 0.26 of its rate alone on half an H100, Triton
     * 0.71 (session 102); a sixteenth a weighing took six weighings, and with the paired reading's
     * stops (a weighing in each 1.5 s the processes run) longer than a run of the mix scenario.
     */
    static int[] weighStepped(int[] widths, double[] kept) {
        int[] once = weigh(widths, kept);
        if (Arrays.equals(once, widths)) {
            return once;
        }
        int lo = -1;
        int hi = -1;
        for (int i = 0; i < widths.length; i++) {
            if (once[i] > widths[i]) {
                lo = i;
            } else if (once[i] < widths[i]) {
                hi = i;
            }
        }
        double r = kept[lo] > 0 ? kept[hi] / kept[lo] : Double.POSITIVE_INFINITY;
        int step = r > 2.25 ? 3 : r > 1.5 ? 2 : 1;
        step = Math.min(step, widths[hi] - MIN_UNITS);
        int[] out = widths.clone();
        out[hi] -= step;
        out[lo] += step;
        return out;
    }

    /**
     * The cut where the shares kept would come out equal if each process's rate went with its width
     * (each part in proportion to its width over the share it keeps, in sixteenths by largest
     * remainder), no part grown by more than {@link #MAX_JUMP} nor shrunk below {@link #least};
     * unchanged where {@link #weigh} would leave it (within {@link #DEADBAND}, a share not known),
     * and at least {@link #weigh}'s move where rounding would leave it. From nine sixteenths and
     * seven with 0.79 and 0.36 kept: six and ten (one weighing, where a sixteenth at a time took three).
     * With {@link #MIN_UNITS} one sixteenth and {@link #MAX_JUMP} four.
     */
    static int[] weighProportional(int[] widths, double[] kept) {
        int[] once = weigh(widths, kept);
        if (Arrays.equals(once, widths)) {
            return once;
        }
        int n = widths.length;
        double[] want = new double[n];
        double total = 0;
        for (int i = 0; i < n; i++) {
            // one that kept nothing: as if it kept a tenth of the least any other kept
            double k = kept[i] > 0 ? kept[i] : Double.NaN;
            want[i] = k;
        }
        double least = Double.POSITIVE_INFINITY;
        for (double k : want) {
            if (!Double.isNaN(k)) {
                least = Math.min(least, k);
            }
        }
        if (!Double.isFinite(least)) {
            return once;
        }
        for (int i = 0; i < n; i++) {
            double k = Double.isNaN(want[i]) ? least / 10 : want[i];
            want[i] = widths[i] / k;
            total += want[i];
        }
        int units = 0;
        for (int w : widths) {
            units += w;
        }
        int[] out = new int[n];
        double[] rest = new double[n];
        int left = units;
        for (int i = 0; i < n; i++) {
            double exact = units * want[i] / total;
            int w = Math.max(least(widths[i]), Math.min(widths[i] + MAX_JUMP, (int) Math.floor(exact)));
            out[i] = w;
            rest[i] = exact - w;
            left -= w;
        }
        // what rounding and the limits left over (or took too much): by largest remainder, within the limits
        while (left != 0) {
            int pick = -1;
            for (int i = 0; i < n; i++) {
                boolean can = left > 0 ? out[i] < widths[i] + MAX_JUMP : out[i] > least(widths[i]);
                if (can && (pick < 0 || (left > 0 ? rest[i] > rest[pick] : rest[i] < rest[pick]))) {
                    pick = i;
                }
            }
            if (pick < 0) {
                return once;
            }
            out[pick] += left > 0 ? 1 : -1;
            rest[pick] -= left > 0 ? 1 : -1;
            left += left > 0 ? -1 : 1;
        }
        // at least the one-sixteenth move the deadband asked for, in its direction
        int lo = -1;
        int hi = -1;
        for (int i = 0; i < n; i++) {
            if (once[i] > widths[i]) {
                lo = i;
            } else if (once[i] < widths[i]) {
                hi = i;
            }
        }
        if (out[lo] <= widths[lo] || out[hi] >= widths[hi]) {
            return once;
        }
        return out;
    }

    /**
     * The narrowest part a jump leaves a process of {@code width} sixteenths: {@link #MAX_JUMP}
     * fewer, never less than half of it (rounded up) nor {@link #MIN_UNITS}. Rates fall off
     * steeply on a few sixteenths even where they hardly moved above: on an H100 a jump from
     * 5/6/5 to 6/8/2 left Triton 0.19 of its rate alone on two, where it kept 0.69 on five (session 104).
     */
    static int least(int width) {
        return Math.max(MIN_UNITS, Math.max(width - MAX_JUMP, (width + 1) / 2));
    }

    private Step probe(long now, long[] completed, long[] run, boolean[] inFlight) {
        int n = pids.size();
        while (probing < n) {
            if (waiting) {
                boolean others = false;
                for (int i = 0; i < n; i++) {
                    others |= i != probing && inFlight[i];
                }
                if (!others) {
                    waiting = false;
                    since = now;
                    spellBegan = now;
                    heldFrom = -1;
                    restartWhenFree = false;
                    startCount = completed[probing];
                    startRun = run == null ? -1 : run[probing];
                    startWaits = waits == null ? -1 : waits[probing];
                    seenCount = startCount;
                    changes = 0;
                    return new Step(null, probing, false, now + t.probe());
                }
                if (now - since < t.probeWait()) {
                    return new Step(null, -1, true, since + t.probeWait());
                }
                last = "pid " + pids.get(probing) + " not measured alone: the others' work did not end in "
                        + t.probeWait() / 1_000_000 + " ms";
                roundSteady = false;
                aloneKept = false;
            } else {
                long c = completed[probing];
                boolean giveUp = false;
                if (memory && heldElse != null) {
                    if (heldElse[probing]) {
                        if (heldFrom < 0) {
                            heldFrom = now;
                        }
                        restartWhenFree |= now - heldFrom >= HELD_RESTART_NANOS;
                    } else {
                        heldFrom = -1;
                        if (restartWhenFree) {
                            // let go after a long hold by another rule: the spell begins again
                            restartWhenFree = false;
                            since = now;
                            startCount = c;
                            startRun = run == null ? -1 : run[probing];
                            startWaits = waits == null ? -1 : waits[probing];
                            seenCount = c;
                            changes = 0;
                        }
                    }
                    giveUp = now - spellBegan >= HELD_GIVE_UP_FACTOR * t.probe() && (restartWhenFree || heldFrom >= 0);
                    if ((restartWhenFree || heldFrom >= 0) && !giveUp) {
                        return new Step(null, probing, false, now + HELD_RESTART_NANOS / 2);
                    }
                }
                if (c != seenCount && !giveUp) {
                    seenCount = c;
                    if (changes++ == 0) {
                        firstAt = now;
                        firstCount = c;
                    }
                    lastAt = now;
                    lastCount = c;
                }
                // a process whose completions are seen in batches (a trainer's, at each step's
                // synchronize: 30-110 ms apart) is measured from its first batch to its latest, over
                // MIN_CHANGES - 1 whole intervals at least; counted from the spell's start to its end,
                // a 150 ms spell held two or three of its 66 ms steps, a third apart
                if (giveUp) {
                    last = "pid " + pids.get(probing) + " not measured alone: held by another rule through its spell ("
                            + (now - spellBegan) / 1_000_000 + " ms)";
                    roundSteady = false;
                    aloneKept = false;
                    probing++;
                    waiting = true;
                    since = now;
                    if (probing < n) {
                        return new Step(null, -1, true, now);
                    }
                    continue;
                }
                if (now - since < t.probe() || (changes < MIN_CHANGES && now - since < MAX_PROBE_FACTOR * t.probe())) {
                    long wake = now - since < t.probe() ? since + t.probe() : since + MAX_PROBE_FACTOR * t.probe();
                    return new Step(null, probing, false, wake);
                }
                double rate = changes >= MIN_CHANGES && lastAt > firstAt
                        ? (lastCount - firstCount) / ((lastAt - firstAt) / 1e9)
                        : (c - startCount) / ((now - since) / 1e9);
                double[] before = alone.get(pids.get(probing));
                boolean same = rate > 0 && before != null && before[0] > 0
                        && Math.max(rate, before[0]) <= Math.min(rate, before[0]) * (1 + STEADY);
                roundSteady &= same;
                aloneKept &= same;
                if (rate > 0) {
                    // a process with nothing to do in its spell keeps the rate it had
                    alone.put(pids.get(probing), new double[] {rate, now});
                }
                if (startRun >= 0 && run != null && now > since) {
                    busyAlone.put(pids.get(probing), Math.max(0, run[probing] - startRun) / (double) (now - since));
                }
                if (startRun >= 0 && run != null && startWaits >= 0 && waits != null && waits[probing] >= startWaits) {
                    long dw = waits[probing] - startWaits;
                    long dr = Math.max(0, run[probing] - startRun);
                    if (dw >= MIN_WAITS && dr > 0) {
                        workPerWait.put(pids.get(probing), dr / (double) dw);
                    } else {
                        workPerWait.remove(pids.get(probing)); // it seldom waits: a whole slice each round
                    }
                }
            }
            probing++;
            waiting = true;
            since = now;
            if (probing < n) {
                return new Step(null, -1, true, now);
            }
        }
        probing = -1;
        lastProbeEnd = now;
        probedSet = true;
        periods = roundSteady ? Math.min(2 * periods, MAX_PERIODS) : 1;
        if (!aloneKept) {
            backFrom = null; // rates alone that moved: the spread measured at the last cut no longer compares
        }
        movedSince = false;
        countFrom = now + t.settle();
        dropCount();
        StringBuilder b = new StringBuilder("rates alone (commands a second)");
        for (Long p : pids) {
            double[] a = alone.get(p);
            b.append(' ').append(p).append('=').append(a == null ? "?" : String.valueOf(Math.round(a[0])));
            Double busy = busyAlone.get(p);
            Double work = sliceNanos > 0 ? workPerWait.get(p) : null;
            List<String> notes = new java.util.ArrayList<>();
            if (busy != null) {
                notes.add("busy " + round2(busy));
            }
            if (work != null) {
                notes.add(round2(work / 1e6) + " ms a wait, weight " + round2(waitWeight(p)));
            }
            if (!notes.isEmpty()) {
                b.append(" (").append(String.join(", ", notes)).append(')');
            }
        }
        b.append(", next in ").append(periods * (t.probePeriod() / 1_000_000_000.0)).append(" s");
        last = b.toString();
        weighEarly(now, last);
        return Step.cut(widths.clone(), countFrom);
    }
}
