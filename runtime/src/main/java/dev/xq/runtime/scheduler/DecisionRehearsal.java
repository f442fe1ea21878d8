package dev.xq.runtime.scheduler;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.QueueView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A rehearsal of the decision's bookkeeping (the arrival guards, the queues on top, the arrival
 * reactions), run once when the scheduler starts, on throwaway instances with their traces off
 * and a clock of their own: a wide latency-critical queue's warm-up, a quiet
 * spell, its requests on a beat (some in fragments), then at random, then one that never ends,
 * beside a narrowable queue of long commands, a narrow one and a process that stops and goes.
 * Nothing of it reaches the node's own guards or any queue.
 *
 * <p>Why: the code a decision runs the first time costs far more than later (classes loaded and
 * linked, the interpreter, no compiled code), and the guards have paths a node first meets long
 * after its tenants' warm-ups, in the decision that ends a wide queue's spell of learning or
 * finds a queue starved. On the H200 one such decision was applied 6 ms after the arrival it
 * answered, and a GEMM launched inside a batch's request (28.5 ms against 8). Rehearsed, those
 * paths are loaded and compiled before any tenant arrives.
 */
final class DecisionRehearsal {

    static final long MS = 1_000_000L;
    /** Rounds of the scenario: enough calls for the JIT to compile the guards' hot paths. */
    static final int ROUNDS = 12;

    private static final long A = 1; // wide, latency-critical
    private static final long B = 2; // long commands, narrowable, behind A
    private static final long C = 3; // narrow, latency-critical, on a beat of its own
    private static final long D = 4; // another best-effort process, stops and goes

    private static final java.util.concurrent.atomic.AtomicBoolean DONE = new java.util.concurrent.atomic.AtomicBoolean();

    private DecisionRehearsal() {
    }

    /**
     * Rehearses once in this JVM (what it warms is the JVM's: loaded classes, compiled code); a
     * failure is logged and harms nothing else.
     */
    static void once(dev.xq.runtime.log.RuntimeLog log) {
        if (!DONE.compareAndSet(false, true)) {
            return;
        }
        try {
            run();
        } catch (RuntimeException | Error e) {
            log.error("rehearsing the arrival guards failed (the node decides all the same; its first decisions may be slow)", e);
        }
    }

    /** What a rehearsal went through: each count must be above 0 for the path to have been run. */
    static final class Tally {
        long decisions;
        long guardsGiven;
        long guardsLifted;
        long held;
        long narrowed;
        long unnarrowed;
        long gapsTold;
        long renarrowed;
        long topChanges;

        @Override
        public String toString() {
            return "decisions " + decisions + ", guards given " + guardsGiven + ", lifted " + guardsLifted + ", held " + held + ", narrowed " + narrowed
                    + ", let out of a narrowing " + unnarrowed + ", gaps told " + gapsTold + ", narrowed anew " + renarrowed + ", changes on top "
                    + topChanges;
        }
    }

    /** The space a decision of the rehearsal placed the queues in: B (and D) narrowed to leave 64 of 132. */
    private static final class Placed implements ArrivalGuards.Space {
        final Map<Long, Integer> narrowed = new HashMap<>();
        final Tally tally;
        final World world;

        Placed(Tally tally, World world) {
            this.tally = tally;
            this.world = world;
            narrowed.put(B, 64);
            narrowed.put(D, 64);
        }

        @Override
        public int narrowed(long handle) {
            Integer n = narrowed.get(handle);
            return n == null ? 0 : n;
        }

        @Override
        public QueueSpace space(long handle) {
            if (handle == A) {
                return new QueueSpace(false, 132, 132);
            }
            if (handle == C) {
                return new QueueSpace(false, 16, 132);
            }
            return new QueueSpace(true, 8, 132);
        }

        @Override
        public int parts(long handle) {
            return 2;
        }

        @Override
        public boolean offTurn(long handle) {
            return world.offTurn && handle == D;
        }

        @Override
        public boolean stopped(long handle) {
            return world.stopped && handle == D;
        }

        @Override
        public void gap(long handle, long availNanos, long now) {
            tally.gapsTold++;
        }

        @Override
        public void unnarrow(long handle, boolean hold) {
            narrowed.remove(handle);
            tally.unnarrowed++;
        }

        @Override
        public void renarrow(long handle, int leaveSms) {
            narrowed.put(handle, leaveSms);
            tally.renarrowed++;
        }
    }

    /** Runs {@link #ROUNDS} rounds, each on fresh guards. */
    static Tally run() {
        return run(ROUNDS);
    }

    static Tally run(int rounds) {
        Tally tally = new Tally();
        for (int r = 0; r < rounds; r++) {
            round(new Round(new ArrivalGuards(false), new TopQueues(), new ArrivalReactions(false)), tally, 1_000_000 * MS * (r + 1));
        }
        return tally;
    }

    /** One round's throwaway instances. */
    private record Round(ArrivalGuards guards, TopQueues tops, ArrivalReactions reactions) {
    }

    /** The queues' state at one decision. */
    private static final class World {
        long aSince;
        long cSince;
        long dSince;
        boolean bReady = true;
        boolean bThere = true;
        boolean dThere;
        long bCompleted;
        long dCompleted;
        boolean offTurn;
        boolean stopped;
        /** Whether C arrives between A's requests. */
        boolean cBeside;
        /** Decisions in this round. */
        int decisions;
    }

    private static void round(Round guards, Tally tally, long t0) {
        World w = new World();
        long t = t0;
        // B's own first commands, alone
        decide(guards, tally, t, w, false);
        t += 100 * MS;
        // A's warm-up: requests of 8 ms back to back
        for (int i = 0; i < 10; i++) {
            t = request(guards, tally, t, 8 * MS, 9 * MS, w);
        }
        // quiet: B alone
        for (int i = 0; i < 6; i++) {
            t += 50 * MS;
            w.bCompleted++;
            decide(guards, tally, t, w, false);
        }
        // A on a beat of 25 ms, busy 2 ms, every fourth request in two fragments; C now and then
        // between its requests; D (5 ms commands) behind A with work throughout
        w.dThere = true;
        w.dSince = t - 10 * MS;
        for (int i = 0; i < 48; i++) {
            w.cBeside = i % 3 == 0;
            if (i % 4 == 3) {
                long start = t;
                request(guards, tally, t, 1 * MS, 0, w);
                t = request(guards, tally, start + 1_200_000, 800_000, 25 * MS, w);
            } else {
                t = request(guards, tally, t, 2 * MS, 25 * MS, w);
            }
            w.bCompleted++;
        }
        // A at random: gaps of 5-60 ms (a fixed sequence), another best-effort process coming and going
        long x = 0x9E3779B97F4A7C15L;
        w.cBeside = false;
        for (int i = 0; i < 40; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            long gap = 5 * MS + Math.floorMod(x, 55 * MS);
            w.dSince = i % 5 == 0 ? t : i % 5 == 1 ? 0 : w.dSince;
            t = request(guards, tally, t, 2 * MS, gap, w);
            if (i % 7 == 0) {
                w.bCompleted++;
                w.dCompleted++;
            }
        }
        // A never idle for 1.5 s: B completes nothing under its guard (starved), D stopped and on another's turn
        w.aSince = t;
        for (int i = 0; i < 300; i++) {
            t += 5 * MS;
            w.stopped = i > 150;
            w.offTurn = i % 10 == 0;
            decide(guards, tally, t, w, i % 50 == 0);
        }
        w.aSince = 0;
        w.stopped = false;
        w.offTurn = false;
        decide(guards, tally, t + MS, w, false);
        // B closes, D goes: the guards forget them
        w.bThere = false;
        w.dThere = false;
        for (int i = 0; i < 1030; i++) {
            t += 3 * MS;
            decide(guards, tally, t, w, false);
        }
        guards.guards().lingerWake();
        guards.guards().firstHeld();
        guards.guards().given();
        guards.guards().clear();
        guards.reactions().summary(); // what the trace prints
    }

    /** A request of A: arrives at {@code t}, busy {@code busy}; @return when the next may arrive ({@code t + interval}). */
    private static long request(Round guards, Tally tally, long t, long busy, long interval, World w) {
        w.aSince = t;
        decide(guards, tally, t, w, false);
        w.aSince = 0;
        decide(guards, tally, t + busy, w, false);
        if (interval > busy + 4 * MS) {
            long mid = t + busy + (interval - busy) / 2;
            if (w.cBeside) {
                w.cSince = mid;
                decide(guards, tally, mid, w, false);
                w.cSince = 0;
                decide(guards, tally, mid + MS, w, false);
            } else {
                decide(guards, tally, mid, w, false);
            }
        }
        return t + Math.max(interval, busy);
    }

    private static void decide(Round round, Tally tally, long now, World w, boolean nothingPlaced) {
        List<QueueView> views = new ArrayList<>(4);
        Map<Long, Boolean> decided = new HashMap<>();
        views.add(view(A, 2, w.aSince, 0, 0));
        if (w.bThere) {
            views.add(view(B, 1, w.bReady ? now - 30 * MS : 0, 21 * MS, w.bCompleted));
            decided.put(B, w.aSince != 0);
        }
        // C, between its own arrivals, has work while A works and yields to it: A on top
        views.add(view(C, 3, w.cSince != 0 ? w.cSince : w.aSince, 0, 0));
        decided.put(C, w.aSince != 0 && w.cSince == 0);
        if (w.dThere) {
            views.add(view(D, 1, w.dSince, 5 * MS, w.dCompleted));
            decided.put(D, w.aSince != 0);
        }
        Placed space = new Placed(tally, w);
        String policy = ++w.decisions % 500 == 0 ? "fixed-priority" : "hpf";
        Map<Long, ArrivalGuards.Guard> changes = nothingPlaced
                ? round.guards().update(policy, now, views, decided, ArrivalGuards.Space.widths(space::space))
                : round.guards().update(policy, now, views, decided, space);
        int suspends = 0;
        for (Boolean h : decided.values()) {
            suspends += Boolean.TRUE.equals(h) ? 1 : 0;
        }
        round.reactions().decided(views, decided, suspends, now + 200_000, (h, since) -> since + 50_000);
        round.reactions().tailNanos();
        if (round.tops().update(policy, views, decided) != null) {
            tally.topChanges++;
        }
        tally.decisions++;
        for (ArrivalGuards.Guard g : changes.values()) {
            if (g.equals(ArrivalGuards.Guard.NONE)) {
                tally.guardsLifted++;
            } else {
                tally.guardsGiven++;
            }
        }
        for (Boolean h : decided.values()) {
            if (Boolean.TRUE.equals(h)) {
                tally.held++;
            }
        }
        tally.narrowed += space.narrowed.size();
    }

    private static QueueView view(long handle, int priority, long readySince, long command, long completed) {
        boolean ready = readySince != 0;
        return new QueueView(handle, "rehearsal-" + handle, "d0", "g" + handle, ready, false, false, readySince, 0, 0, ready ? 1 : 0, 0, completed,
                command, List.of(new Hint.Priority(priority)), PreemptionLevel.BLOCK);
    }
}
