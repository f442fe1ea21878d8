package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.QueueView;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The arrival guards as the scheduler drives them: decisions in which a periodic queue A
 * arrives and takes the device from B (as a priority policy would decide), and what B is told.
 */
class ArrivalGuardsTest {

    static final long MS = 1_000_000L;
    static final long A = 1;
    static final long B = 2;
    final ArrivalGuards g = new ArrivalGuards();
    boolean bHeld;

    /**
     * B's completions in the views below: one more each time it is seen (it runs between A's
     * requests); a B that completes nothing while it waits under a guard loses the guard for a
     * while (aGuardThatRefusesEveryCommandOfAQueueIsDroppedForAWhile).
     */
    static final AtomicLong B_DONE = new AtomicLong();

    static QueueView view(long handle, boolean ready, boolean suspended, long readySince) {
        return new QueueView(handle, "q" + handle, "d0", "g" + handle, ready, suspended, false, ready ? readySince : 0, 0, 0,
                ready ? 1 : 0, 0, handle == B ? B_DONE.incrementAndGet() : 0, 0, List.of(), PreemptionLevel.BLOCK);
    }

    /** A arrives at t (B busy, held by the decision), then goes idle at t + busy (B resumed). */
    Map<Long, ArrivalGuards.Guard> cycle(long t, long busy, boolean aWins) {
        g.update("hpf", t, List.of(view(A, true, false, t), view(B, true, bHeld, 5)),
                aWins ? Map.of(B, true) : Map.of(A, true));
        bHeld = aWins;
        Map<Long, ArrivalGuards.Guard> atIdle = g.update("hpf", t + busy, List.of(view(A, false, false, 0), view(B, true, bHeld, 5)),
                Map.of(B, false));
        bHeld = false;
        return atIdle;
    }

    /**
     * B yields to two queues on beats, A every 50 ms and C every 25 ms (12.5 ms after A's). Its
     * guard is the nearer one's; when A does not come, A's guard lapses, and the node decides again
     * just past the lapse (the wake it returns), which gives B C's guard for C's next arrival. Before,
     * B ran free until the next decision, and its commands met C's request: an fp32 trainer, its
     * guard for an eager decoder's next token after the request's last, ran into three of a CUDA
     * graph's five slowest requests (H200, session 73).
     */
    @Test
    void aGuardThatLapsesIsFollowedByTheNextQueuesGuard() {
        ArrivalGuards guards = new ArrivalGuards();
        long c = 3;
        long t0 = 1000 * MS;
        // events: A busy [50k, 50k + 5], C busy [12.5 + 25k, 12.5 + 25k + 2], for 1 s; B ready throughout
        java.util.TreeMap<Long, long[]> events = new java.util.TreeMap<>();
        for (long k = 0; k < 20; k++) {
            events.put(t0 + k * 50 * MS, new long[] {A, 1});
            events.put(t0 + k * 50 * MS + 5 * MS, new long[] {A, 0});
        }
        for (long k = 0; k < 40; k++) {
            events.put(t0 + k * 25 * MS + 12_500_000L, new long[] {c, 1});
            events.put(t0 + k * 25 * MS + 14_500_000L, new long[] {c, 0});
        }
        boolean aUp = false;
        boolean cUp = false;
        long aSince = 0;
        long cSince = 0;
        for (Map.Entry<Long, long[]> e : events.entrySet()) {
            long now = e.getKey();
            if (e.getValue()[0] == A) {
                aUp = e.getValue()[1] == 1;
                aSince = aUp ? now : 0;
            } else {
                cUp = e.getValue()[1] == 1;
                cSince = cUp ? now : 0;
            }
            boolean held = aUp || cUp;
            guards.update("hpf", now, List.of(view(A, aUp, false, aSince), view(c, cUp, false, cSince), view(B, true, held, 5)), Map.of(B, held));
        }
        // the last event: C idle at t0 + 975 + 14.5 ms; A's next (t0 + 1000) is foreseen before C's (t0 + 1012.5)
        long last = events.lastKey();
        ArrivalGuards.Guard before = guards.given().get(B);
        assertTrue(before != null && Math.abs(before.horizonNanos() - (t0 + 1000 * MS)) < 2 * MS, "B guarded against A's arrival first: " + before);
        long wake = guards.lapseWake();
        assertTrue(wake > last && wake <= before.untilNanos() + ArrivalGuards.LAPSE_MARGIN_NANOS,
                "decided again just past the lapse: wake " + (wake - last) / 1000 + " us after the last decision, the guard until "
                        + (before.untilNanos() - last) / 1000);
        // A does not come: at the wake, B gets C's guard
        Map<Long, ArrivalGuards.Guard> changes = guards.update("hpf", wake,
                List.of(view(A, false, false, 0), view(c, false, false, 0), view(B, true, false, 5)), Map.of(B, false));
        ArrivalGuards.Guard after = changes.get(B);
        assertTrue(after != null && Math.abs(after.horizonNanos() - (t0 + 1012_500_000L)) < 2 * MS, "then guarded against C's arrival: " + after);
    }

    /**
     * The grace after a foreseen arrival covers the node's own reaction: the configured one on a
     * long beat, at most a quarter of the period on a short one.
     */
    @Test
    void theGraceIsTheConfiguredOneAndAtMostAQuarterOfThePeriod() {
        g.graceNanos(300_000);
        long t = 1000 * MS;
        Map<Long, ArrivalGuards.Guard> last = Map.of();
        for (int i = 0; i <= 8; i++) {
            last = cycle(t + i * 25 * MS, 2 * MS, true);
        }
        assertEquals(t + 9 * 25 * MS + 300_000, last.get(B).untilNanos(), "the configured grace: " + last);
        ArrivalGuards shortBeat = new ArrivalGuards();
        long p = 2 * MS;
        Map<Long, ArrivalGuards.Guard> got = Map.of();
        for (int i = 0; i <= 8; i++) {
            long at = t + i * p;
            shortBeat.update("hpf", at, List.of(view(A, true, false, at), view(B, true, false, 5)), Map.of(B, true));
            got = shortBeat.update("hpf", at + p / 4, List.of(view(A, false, false, 0), view(B, true, true, 5)), Map.of(B, false));
        }
        assertEquals(t + 9 * p + p / 4, got.get(B).untilNanos(), "default grace (" + ArrivalGuards.DEFAULT_GRACE_NANOS
                + " ns) cut to a quarter of a 2 ms period: " + got);
        assertThrows(IllegalArgumentException.class, () -> g.graceNanos(-1));
    }

    /**
     * The node's reaction to arrivals (its P99, told by the scheduler) lengthens the grace where
     * it is longer than the configured one: 2.5 ms of reaction on a 25 ms beat holds B 2.5 ms past
     * the foreseen arrival; a reaction past {@link ArrivalGuards#MAX_REACTION_GRACE_NANOS} (the cap's
     * default) counts as that much, past a cap set lower as that, none with a cap of 0; a shorter
     * one leaves the configured grace; a grace configured to 0 stays 0.
     */
    @Test
    void theGraceCoversTheNodesReactionWhereItIsLonger() {
        long t = 1000 * MS;
        long[][] cases = { // reaction, configured grace, want grace[, cap]
            {2_500_000, ArrivalGuards.DEFAULT_GRACE_NANOS, 2_500_000},
            {40 * MS, ArrivalGuards.DEFAULT_GRACE_NANOS, ArrivalGuards.MAX_REACTION_GRACE_NANOS},
            {300_000, ArrivalGuards.DEFAULT_GRACE_NANOS, ArrivalGuards.DEFAULT_GRACE_NANOS},
            {0, 700_000, 700_000},
            {2_500_000, 0, 0},
            {2_500_000, ArrivalGuards.DEFAULT_GRACE_NANOS, 1_500_000, 1_500_000}, // a cap of 1.5 ms
            {2_500_000, ArrivalGuards.DEFAULT_GRACE_NANOS, ArrivalGuards.DEFAULT_GRACE_NANOS, 0}, // cap 0: off
        };
        for (long[] c : cases) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.graceNanos(c[1]);
            guards.reactionNanos(c[0]);
            if (c.length > 3) {
                guards.reactionCapNanos(c[3]);
            }
            assertEquals(c[2], guards.grace(), "grace in use for reaction " + c[0] + ", configured " + c[1]);
            Map<Long, ArrivalGuards.Guard> got = Map.of();
            for (int i = 0; i <= 8; i++) {
                long at = t + i * 25 * MS;
                guards.update("hpf", at, List.of(view(A, true, false, at), view(B, true, false, 5)), Map.of(B, true));
                got = guards.update("hpf", at + 2 * MS, List.of(view(A, false, false, 0), view(B, true, true, 5)), Map.of(B, false));
            }
            ArrivalGuards.Guard guard = got.get(B);
            assertNotNull(guard, "B guarded: " + got);
            assertEquals(t + 9 * 25 * MS + c[2], guard.untilNanos(), "until, reaction " + c[0] + ", configured " + c[1] + ": " + got);
        }
        // on a 4 ms beat a quarter period (1 ms) bounds it still
        ArrivalGuards shortBeat = new ArrivalGuards();
        shortBeat.reactionNanos(3 * MS);
        long p = 4 * MS;
        Map<Long, ArrivalGuards.Guard> got = Map.of();
        for (int i = 0; i <= 8; i++) {
            long at = t + i * p;
            shortBeat.update("hpf", at, List.of(view(A, true, false, at), view(B, true, false, 5)), Map.of(B, true));
            got = shortBeat.update("hpf", at + p / 4, List.of(view(A, false, false, 0), view(B, true, true, 5)), Map.of(B, false));
        }
        assertEquals(t + 9 * p + p / 4, got.get(B).untilNanos(), "a quarter of a 4 ms period: " + got);
    }

    /**
     * A tenant's warm-up (requests back to back, 1.7 ms apart), a pause until it is told to go,
     * then requests every 25 ms: a rhythm just begun, so its guards come after two intervals of
     * the new beat (requests 1-4 were the slowest of six H200 runs while it took four), not once
     * the warm-up has left the history (15 requests later).
     */
    @Test
    void aNewBeatIsFollowedAfterTwoIntervalsWhateverCameBefore() {
        long t = 1000 * MS;
        for (int i = 0; i < 20; i++) {
            cycle(t + i * 1_700_000L, 1_600_000L, true);
        }
        long go = t + 20 * 1_700_000L + 400 * MS;
        cycle(go, 2 * MS, true);
        cycle(go + 25 * MS + 100_000, 2 * MS, true);
        Map<Long, ArrivalGuards.Guard> last = cycle(go + 50 * MS, 2 * MS, true);
        ArrivalGuards.Guard guard = last.get(B);
        assertNotNull(guard, "after two intervals of the new beat B is guarded: " + last);
        assertEquals(go + 75 * MS - 100_000 - ArrivalGuards.EARLY_MARGIN_NANOS, guard.horizonNanos(),
                "on the new beat (25.1 ms, the larger of the two), early by their spread");
    }

    /**
     * A new rhythm whose two intervals differ by more than a just-begun beat allows (0.8 ms in
     * 25, within the eighth a longer history may have) waits for {@link ArrivalGuards#MIN_INTERVALS}.
     */
    @Test
    void aNewBeatWithMoreSpreadWaitsForEnoughIntervals() {
        long t = 1000 * MS;
        Map<Long, ArrivalGuards.Guard> last = Map.of();
        long at = t;
        for (int i = 0; i <= ArrivalGuards.MIN_INTERVALS; i++) {
            last = cycle(at, 2 * MS, true);
            boolean guarded = last.containsKey(B) && last.get(B) != ArrivalGuards.Guard.NONE;
            assertEquals(i == ArrivalGuards.MIN_INTERVALS, guarded, "guarded only after " + ArrivalGuards.MIN_INTERVALS
                    + " intervals: " + last + " at " + i);
            at += 25 * MS + (i % 2 == 0 ? 0 : 800_000);
        }
    }

    @Test
    void aQueueOnABeatGuardsTheQueueItTakesTheDeviceFrom() {
        long t = 1000 * MS;
        Map<Long, ArrivalGuards.Guard> last = Map.of();
        int k = 2; // its first arrivals: a rhythm just begun
        for (int i = 0; i < k; i++) {
            last = cycle(t + i * 25 * MS, 2 * MS, true);
            assertTrue(last.isEmpty(), "no guard before " + k + " intervals: " + last + " at " + i);
        }
        last = cycle(t + k * 25 * MS, 2 * MS, true);
        ArrivalGuards.Guard guard = last.get(B);
        assertNotNull(guard, "after " + k + " intervals B is guarded: " + last);
        long next = t + (k + 1) * 25 * MS;
        assertEquals(next - ArrivalGuards.EARLY_MARGIN_NANOS, guard.horizonNanos(), "exact beat: no jitter");
        assertEquals(next + ArrivalGuards.DEFAULT_GRACE_NANOS, guard.untilNanos());
        assertFalse(last.containsKey(A), "A itself is not guarded");
        // A arrives: B is held by the policy, the guard is lifted
        Map<Long, ArrivalGuards.Guard> atArrival = g.update("hpf", next, List.of(view(A, true, false, next), view(B, true, false, 5)),
                Map.of(B, true));
        assertEquals(ArrivalGuards.Guard.NONE, atArrival.get(B));
        assertTrue(g.given().isEmpty());
    }

    @Test
    void aQueueWhoseCommandsNeverFitBetweenArrivalsIsNotGuardedAndStarved() {
        for (long command : new long[] {20 * MS, 23 * MS}) {
            ArrivalGuards guards = new ArrivalGuards();
            long t = 1000 * MS;
            Map<Long, ArrivalGuards.Guard> last = Map.of();
            for (int i = 0; i <= ArrivalGuards.MIN_INTERVALS; i++) {
                long at = t + i * 25 * MS;
                guards.update("hpf", at, List.of(view(A, true, false, at), viewB(command, true)), Map.of(B, true));
                last = guards.update("hpf", at + 2 * MS, List.of(view(A, false, false, 0), viewB(command, true)), Map.of(B, false));
            }
            // A on a 25 ms beat, busy 2 ms: 23 ms less the margins between its requests
            if (command == 20 * MS) {
                assertNotNull(last.get(B), "a 20 ms command fits in the gap: guarded");
            } else {
                assertTrue(last.isEmpty() && guards.given().isEmpty(), "a 23 ms command never fits: no guard, got " + last);
            }
        }
    }

    /**
     * A guard the queue's own process reckons tighter than the node does (a GEMM narrowed to half
     * the device, 41 ms a command there, where the node reckoned 21.8 ms at the whole device
     * against a graph's 23 ms gaps: 0.03 of native sharing, H200, session 47) refuses every
     * command: B waits to launch, nothing of it on the device, and completes nothing. After four
     * of A's periods and one of B's commands the guard is dropped (B runs between A's requests
     * and is held during them, as a command that never fits) until B has completed a command, or
     * for the starving's time where it completes none; then B is guarded again. A B that completes
     * commands keeps its guard throughout.
     */
    @Test
    void aGuardThatRefusesEveryCommandOfAQueueIsDroppedUntilItCompletesOne() {
        long command = 20 * MS;
        long limit = 4 * 25 * MS + command;
        for (String kind : new String[] {"progresses", "starves", "starves, then completes one"}) {
            ArrivalGuards guards = new ArrivalGuards();
            long t = 1000 * MS;
            long done = 7;
            long firstGuard = 0;
            long dropped = 0;
            long again = 0;
            for (int i = 0; i < 40; i++) {
                long at = t + i * 25 * MS;
                if (kind.equals("progresses") || (kind.startsWith("starves, then") && dropped != 0 && done == 7)) {
                    done++; // one command ends (the one run unguarded)
                }
                // waiting to launch: one launch held in its process, nothing in flight
                QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, done, command, List.of(),
                        PreemptionLevel.BLOCK);
                guards.update("hpf", at, List.of(view(A, true, false, at), b), Map.of(B, true));
                guards.update("hpf", at + 2 * MS, List.of(view(A, false, false, 0), b), Map.of(B, false));
                boolean has = guards.given().containsKey(B);
                if (has && firstGuard == 0) {
                    firstGuard = at;
                } else if (!has && firstGuard != 0 && dropped == 0) {
                    dropped = at;
                } else if (has && dropped != 0 && again == 0) {
                    again = at;
                }
            }
            assertTrue(firstGuard != 0, kind + ": B is guarded once A's beat is known");
            if (kind.equals("progresses")) {
                assertEquals(0, dropped, "a B that completes commands keeps its guard");
                assertEquals(0, guards.starvedGuards());
                continue;
            }
            assertTrue(dropped != 0, kind + ": a B that completes nothing under its guard loses it");
            assertTrue(dropped - firstGuard > limit - 25 * MS && dropped - firstGuard <= limit + 50 * MS,
                    kind + ": dropped " + (dropped - firstGuard) / MS + " ms after the first guard; limit " + limit / MS + " ms");
            assertTrue(again != 0, kind + ": guarded again");
            if (kind.equals("starves")) {
                assertTrue(again - dropped >= ArrivalGuards.STARVED_FIRST_OFF_NANOS - 25 * MS
                        && again - dropped <= ArrivalGuards.STARVED_FIRST_OFF_NANOS + 50 * MS,
                        "with nothing completed, guarded again " + (again - dropped) / MS + " ms after it was dropped");
                // and dropped once more, four periods and a command after it was guarded again (within the 1 s run)
                assertEquals(2, guards.starvedGuards());
            } else {
                assertEquals(25 * MS, again - dropped, "guarded again at the look after its command ended");
                // then it starves again (nothing more completes): dropped again after the same wait, and so on
                assertTrue(guards.starvedGuards() >= 2, "starved again: " + guards.starvedGuards());
            }
        }
    }

    /**
     * A graph on a 25 ms beat and a 21.5 ms GEMM that ran into its requests (launched before the
     * beat was known): the requests it ran into took 15 ms. By all its busy periods the graph's
     * gap left no room for the GEMM, so it went unguarded and ran into the next requests, for the
     * whole run (the graph at 14 x its standalone P99, H200, session 45). The gap is the one its
     * requests leave alone (as the wide beats weigh it, that let the GEMM run between them): the
     * GEMM stays guarded.
     */
    @Test
    void requestsTheGuardedQueueRanIntoDoNotTakeItsGuardAway() {
        long command = 21_500_000L;
        for (int aloneFirst : new int[] {6, 24}) {
            ArrivalGuards guards = new ArrivalGuards();
            long t = 1000 * MS;
            Map<Long, ArrivalGuards.Guard> last = Map.of();
            for (int i = 0; i < 24; i++) {
                long at = t + i * 25 * MS;
                // alone: the GEMM held at the arrival, nothing of it in flight; or its kernel ran into it
                boolean alone = i < aloneFirst;
                boolean quick = alone;
                QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, alone ? 0 : 1, B_DONE.incrementAndGet(), command,
                        List.of(), PreemptionLevel.BLOCK);
                guards.update("hpf", at, List.of(view(A, true, false, at), b), Map.of(B, true));
                // (B still held as A's busy period is seen to end)
                guards.update("hpf", at + (quick ? 1_700_000L : 15 * MS), List.of(view(A, false, false, 0), viewB(command, true)),
                        Map.of(B, true));
                last = guards.update("hpf", at + (quick ? 1_800_000L : 15_100_000L), List.of(view(A, false, false, 0), viewB(command, true)),
                        Map.of(B, false));
            }
            ArrivalGuards.Guard guard = last.get(B) != null ? last.get(B) : guards.given().get(B);
            assertNotNull(guard, "guarded after " + aloneFirst + " requests alone, then " + (24 - aloneFirst) + " it ran into: "
                    + last + " " + guards.given());
            assertEquals(t + 24 * 25 * MS - ArrivalGuards.EARLY_MARGIN_NANOS, guard.horizonNanos(), "before the next arrival");
        }
    }

    static QueueView viewB(long commandNanos, boolean ready) {
        return new QueueView(B, "q" + B, "d0", "g" + B, ready, false, false, ready ? 5 : 0, 0, 0, ready ? 1 : 0, 0, B_DONE.incrementAndGet(), commandNanos,
                List.of(), PreemptionLevel.BLOCK);
    }

    @Test
    void jitterWidensTheGuardAndTooMuchOfItMeansNoBeat() {
        long t = 1000 * MS;
        Random r = new Random(7);
        Map<Long, ArrivalGuards.Guard> last = Map.of();
        long at = t;
        for (int i = 0; i < 12; i++) {
            last = cycle(at, MS, true);
            at += 20 * MS + r.nextInt(200_000); // up to 0.2 ms late
        }
        ArrivalGuards.Beat beat = g.beat(A, at - 19 * MS);
        assertNotNull(beat);
        assertTrue(beat.jitterNanos() > 0 && beat.jitterNanos() <= 200_000, "jitter " + beat);
        ArrivalGuards.Guard guard = last.get(B);
        assertNotNull(guard);
        assertEquals(beat.nextNanos() - beat.jitterNanos() - ArrivalGuards.EARLY_MARGIN_NANOS, guard.horizonNanos());

        // arrivals at random (2 ms + exponential gaps of 20 ms on average): a guard now and then,
        // when two gaps happen to agree within a just-begun beat's spread, never for long
        ArrivalGuards irregular = new ArrivalGuards();
        long u = t;
        int guardsGiven = 0;
        int arrivals = 2_000;
        for (int i = 0; i < arrivals; i++) {
            irregular.update("hpf", u, List.of(view(A, true, false, u), view(B, true, false, 5)), Map.of(B, true));
            Map<Long, ArrivalGuards.Guard> m = irregular.update("hpf", u + MS, List.of(view(A, false, false, 0), view(B, true, true, 5)),
                    Map.of(B, false));
            if (m.containsKey(B) && m.get(B) != ArrivalGuards.Guard.NONE) {
                guardsGiven++;
            }
            u += 2 * MS + (long) (-Math.log(1 - r.nextDouble()) * 20 * MS);
        }
        assertTrue(guardsGiven <= arrivals / 50, "random arrivals: guards after at most 2 % of them, got "
                + guardsGiven + " of " + arrivals);

        ArrivalGuards loose = new ArrivalGuards();
        long v = t;
        for (int i = 0; i < 20; i++) {
            loose.update("hpf", v, List.of(view(A, true, false, v), view(B, true, false, 5)), Map.of(B, true));
            loose.update("hpf", v + MS, List.of(view(A, false, false, 0), view(B, true, true, 5)), Map.of(B, false));
            v += 40 * MS + (i % 2 == 0 ? 0 : 3 * MS); // 3 ms of spread in a 40 ms beat: under an eighth, over the cap
        }
        assertNull(loose.beat(A, v - 39 * MS), "a spread over " + ArrivalGuards.MAX_JITTER_NANOS + " ns is no beat");
    }

    @Test
    void withoutAPreferenceThereIsNoGuard() {
        long t = 1000 * MS;
        for (int i = 0; i < 12; i++) {
            long a = t + i * 25 * MS;
            // a policy that lets both run (native): nothing is held, nobody yields to A
            g.update("native", a, List.of(view(A, true, false, a), view(B, true, false, 5)), Map.of());
            Map<Long, ArrivalGuards.Guard> m = g.update("native", a + MS, List.of(view(A, false, false, 0), view(B, true, false, 5)),
                    Map.of());
            assertTrue(m.isEmpty(), "no guard: " + m);
        }
        assertNotNull(g.beat(A, t + 11 * 25 * MS + MS), "the beat is learnt all the same");
    }

    @Test
    void theLatestDecisionBetweenTwoQueuesWinsAndAPolicySwapForgets() {
        long t = 1000 * MS;
        for (int i = 0; i < 10; i++) {
            cycle(t + i * 25 * MS, MS, true);
        }
        assertTrue(g.given().containsKey(B));
        // B now preferred over A (say an operator raised B): at A's next arrival A is held
        long a = t + 10 * 25 * MS;
        g.update("hpf", a, List.of(view(A, true, false, a), view(B, true, false, 5)), Map.of(A, true));
        // B arrives again later while A waits: B runs, A held: B is preferred over A
        g.update("hpf", a + 100_000, List.of(view(A, true, true, a), view(B, true, false, a + 100_000)), Map.of(A, true));
        Map<Long, ArrivalGuards.Guard> m = g.update("hpf", a + MS, List.of(view(A, true, true, a), view(B, false, false, 0)),
                Map.of(A, false));
        assertFalse(g.given().containsKey(B), "B is not guarded against a queue it is preferred over: " + m);

        ArrivalGuards h = new ArrivalGuards();
        for (int i = 0; i < 10; i++) {
            long x = t + i * 25 * MS;
            h.update("hpf", x, List.of(view(A, true, false, x), view(B, true, false, 5)), Map.of(B, true));
            h.update("hpf", x + MS, List.of(view(A, false, false, 0), view(B, true, true, 5)), Map.of(B, false));
        }
        assertTrue(h.given().containsKey(B));
        long x = t + 10 * 25 * MS;
        Map<Long, ArrivalGuards.Guard> swapped = h.update("edf", x - 5 * MS, List.of(view(A, false, false, 0), view(B, true, false, 5)),
                Map.of());
        assertEquals(ArrivalGuards.Guard.NONE, swapped.get(B), "another policy: what hpf decided no longer counts");
    }

    @Test
    void aBeatThatStopsLapses() {
        long t = 1000 * MS;
        for (int i = 0; i < 10; i++) {
            cycle(t + i * 25 * MS, MS, true);
        }
        long lastArrival = t + 9 * 25 * MS;
        assertNotNull(g.beat(A, lastArrival + 30 * MS), "one arrival missed: the beat may go on");
        assertNull(g.beat(A, lastArrival + 60 * MS), "two missed: no beat");
        Map<Long, ArrivalGuards.Guard> m = g.update("hpf", lastArrival + 60 * MS,
                List.of(view(A, false, false, 0), view(B, true, false, 5)), Map.of());
        assertEquals(ArrivalGuards.Guard.NONE, m.get(B));
    }
    /** Ten cycles of A (a 2 ms busy period every 25 ms, taking the device from B): the beat and the busy period are learnt. */
    long learnt() {
        long t = 1000 * MS;
        for (int i = 0; i < 10; i++) {
            cycle(t + i * 25 * MS, 2 * MS, true);
        }
        return t + 10 * 25 * MS;
    }

    static Map<Long, Boolean> resumeB() {
        return new java.util.HashMap<>(Map.of(B, false));
    }

    @Test
    void aQueueIdleEarlyInItsBusyPeriodKeepsTheOthersHeldUntilItIsBack() {
        long t = learnt();
        g.update("hpf", t, List.of(view(A, true, false, t), view(B, true, false, 5)), new java.util.HashMap<>(Map.of(B, true)));
        // A's owner is late with its second command: A goes idle 0.2 ms into a 2 ms busy period
        Map<Long, Boolean> decided = resumeB();
        g.update("hpf", t + MS / 5, List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
        assertEquals(Boolean.TRUE, decided.get(B), "B stays held while A lingers");
        assertEquals(t + MS / 5 + ArrivalGuards.DEFAULT_LINGER_NANOS, g.lingerWake(), "the deciding thread is woken at the linger's end");
        // a decision for something else meanwhile: still held
        decided = resumeB();
        g.update("hpf", t + MS / 4, List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
        assertEquals(Boolean.TRUE, decided.get(B));
        // A is back (its next submit): the same busy period goes on, no new arrival in the beat
        long back = t + MS / 3;
        g.update("hpf", back, List.of(view(A, true, false, back), view(B, true, true, 5)), new java.util.HashMap<>(Map.of(B, true)));
        assertEquals(Long.MAX_VALUE, g.lingerWake(), "no linger while A runs");
        assertEquals(t + 25 * MS, g.beat(A, back).nextNanos(), "the beat still counts from the arrival at t");
        // A's real end, 2 ms after its arrival: not early, B resumes
        decided = resumeB();
        g.update("hpf", t + 2 * MS, List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
        assertEquals(Boolean.FALSE, decided.get(B), "B resumes at A's real end");
        assertEquals(Long.MAX_VALUE, g.lingerWake());
    }

    @Test
    void aLingerThatRunsOutLetsTheOthersGoAndLingersThatKeepRunningOutStop() {
        long t = learnt();
        for (int k = 0; k < 4; k++) {
            long a = t + k * 25 * MS;
            g.update("hpf", a, List.of(view(A, true, false, a), view(B, true, false, 5)), new java.util.HashMap<>(Map.of(B, true)));
            Map<Long, Boolean> decided = resumeB();
            g.update("hpf", a + MS / 5, List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
            if (k < 3) {
                assertEquals(Boolean.TRUE, decided.get(B), "linger " + k);
                // the wake-up at its end: A had really finished, B resumes
                decided = resumeB();
                g.update("hpf", g.lingerWake(), List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
                assertEquals(Boolean.FALSE, decided.get(B), "the linger ran out: B resumes (" + k + ")");
                assertEquals(Long.MAX_VALUE, g.lingerWake());
            } else {
                assertEquals(Boolean.FALSE, decided.get(B), "three misses and no hit: no more lingers");
            }
        }
    }

    @Test
    void noLingerWhenOffOrWithoutALearntBusyPeriod() {
        long t = 1000 * MS;
        g.update("hpf", t, List.of(view(A, true, false, t), view(B, true, false, 5)), new java.util.HashMap<>(Map.of(B, true)));
        Map<Long, Boolean> decided = resumeB();
        g.update("hpf", t + MS / 5, List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
        assertEquals(Boolean.FALSE, decided.get(B), "nothing learnt yet");

        ArrivalGuards off = new ArrivalGuards();
        off.lingerNanos(0);
        for (int i = 0; i < 10; i++) {
            long a = t + i * 25 * MS;
            off.update("hpf", a, List.of(view(A, true, false, a), view(B, true, false, 5)), new java.util.HashMap<>(Map.of(B, true)));
            off.update("hpf", a + 2 * MS, List.of(view(A, false, false, 0), view(B, true, true, 5)), resumeB());
        }
        long a = t + 10 * 25 * MS;
        off.update("hpf", a, List.of(view(A, true, false, a), view(B, true, false, 5)), new java.util.HashMap<>(Map.of(B, true)));
        decided = resumeB();
        off.update("hpf", a + MS / 5, List.of(view(A, false, false, 0), view(B, true, true, 5)), decided);
        assertEquals(Boolean.FALSE, decided.get(B), "linger 0: off");
        assertEquals(Long.MAX_VALUE, off.lingerWake());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> off.lingerNanos(-1));
    }

    /** The beat as found before one sort served every window (each window sorted twice): the oracle of {@link #theBeatIsFoundAsBeforeWithOneSort}. */
    static long[] rhythmAsBefore(long[] d, int n) {
        long period = 0;
        long jitter = -1;
        for (int m = n; m >= ArrivalGuards.MIN_INTERVALS && jitter < 0; m--) {
            long[] sorted = java.util.Arrays.copyOfRange(d, n - m, n);
            java.util.Arrays.sort(sorted);
            long p = sorted[m / 2];
            if (p < ArrivalGuards.MIN_PERIOD_NANOS || p > ArrivalGuards.MAX_PERIOD_NANOS) {
                continue;
            }
            long[] dev = new long[m];
            for (int i = 0; i < m; i++) {
                dev[i] = Math.abs(d[n - m + i] - p);
            }
            java.util.Arrays.sort(dev);
            long j = dev[Math.max(0, (int) Math.ceil(m * 7 / 8.0) - 1)];
            if (j <= p / 8 && j <= ArrivalGuards.MAX_JITTER_NANOS) {
                period = p;
                jitter = j;
            }
        }
        if (jitter < 0 && n >= 2) {
            long a = d[n - 2];
            long b = d[n - 1];
            long p = Math.max(a, b);
            long j = Math.abs(a - b);
            int run = 2;
            while (run < n && Math.abs(d[n - 1 - run] - b) <= Math.min(p / 16, ArrivalGuards.NEW_BEAT_MAX_JITTER_NANOS)) {
                j = Math.max(j, Math.abs(d[n - 1 - run] - b));
                run++;
            }
            boolean begun = run >= 3 || run == n || d[n - 1 - run] < p / 2 || d[n - 1 - run] > 2 * p;
            if (begun && p >= ArrivalGuards.MIN_PERIOD_NANOS && p <= ArrivalGuards.MAX_PERIOD_NANOS && j <= p / 16
                    && j <= ArrivalGuards.NEW_BEAT_MAX_JITTER_NANOS) {
                period = p;
                jitter = j;
            }
        }
        return new long[] {period, jitter};
    }

    /**
     * The beat found with one sort of the intervals (the windows' medians kept by taking the oldest
     * out, the deviations counted, not sorted, until one is a beat) is the one found before: on
     * beats with noise, late and missed arrivals, runs of equal intervals, rhythms just begun and
     * arrivals at random, 2 to 15 intervals.
     */
    @Test
    void theBeatIsFoundAsBeforeWithOneSort() {
        java.util.Random r = new java.util.Random(40);
        int beats = 0;
        for (int trial = 0; trial < 200_000; trial++) {
            int n = 2 + r.nextInt(14);
            long[] d = new long[n];
            long period = (1 + r.nextInt(r.nextBoolean() ? 40 : 200)) * MS / (r.nextBoolean() ? 1 : 3);
            int kind = r.nextInt(5);
            for (int i = 0; i < n; i++) {
                d[i] = switch (kind) {
                    case 0 -> period + (long) (r.nextGaussian() * period / (4 + r.nextInt(60))); // a beat with noise
                    case 1 -> r.nextInt(8) == 0 ? period * (1 + r.nextInt(3)) : period + r.nextInt(200_000) - 100_000; // late, missed
                    case 2 -> r.nextInt(4) == 0 ? period / 2 : period; // runs of equal intervals
                    case 3 -> i < n / 2 ? period / 5 + r.nextInt(1000) : period + r.nextInt(50_000); // a rhythm just begun
                    default -> (long) (-Math.log(1 - r.nextDouble()) * period) + 1; // at random
                };
                d[i] = Math.max(1, d[i]);
            }
            long[] want = rhythmAsBefore(d, n);
            long[] got = ArrivalGuards.rhythmOf(d.clone(), n);
            assertEquals(want[0], got[0], "period for " + java.util.Arrays.toString(d));
            assertEquals(want[1], got[1], "jitter for " + java.util.Arrays.toString(d));
            if (got[1] >= 0) {
                beats++;
            }
        }
        assertTrue(beats > 40_000 && beats < 160_000, "beats and no beats both tried: " + beats + " beats of 200000");
    }

    // ------------------------------------------------------------------ wide beats

    /** Space as a test decision placed the queues: the narrowings, the widths, the parts. */
    static final class TestSpace implements ArrivalGuards.Space {
        final Map<Long, Integer> narrowed = new java.util.HashMap<>();
        final Map<Long, dev.xq.policy.spi.QueueSpace> spaces = new java.util.HashMap<>();
        final Map<Long, Long> gaps = new java.util.HashMap<>();
        int parts = 1;
        boolean offTurn;
        final java.util.Set<Long> stopped = new java.util.HashSet<>();
        final java.util.Set<Long> spaceOnly = new java.util.HashSet<>();

        @Override
        public boolean spaceOnly(long handle) {
            return spaceOnly.contains(handle);
        }

        @Override
        public boolean offTurn(long handle) {
            return offTurn && handle == B;
        }

        @Override
        public boolean stopped(long handle) {
            return stopped.contains(handle);
        }

        @Override
        public void gap(long handle, long availNanos, long now) {
            gaps.put(handle, availNanos);
        }

        @Override
        public int narrowed(long handle) {
            return narrowed.getOrDefault(handle, 0);
        }

        @Override
        public dev.xq.policy.spi.QueueSpace space(long handle) {
            return spaces.getOrDefault(handle, dev.xq.policy.spi.QueueSpace.NONE);
        }

        @Override
        public int parts(long handle) {
            return parts;
        }

        @Override
        public void unnarrow(long handle, boolean hold) {
            narrowed.remove(handle);
        }

        @Override
        public void renarrow(long handle, int leaveSms) {
            narrowed.computeIfPresent(handle, (h, was) -> leaveSms);
        }

        final Map<Long, long[]> lags = new java.util.HashMap<>();

        @Override
        public long[] lags(long handle) {
            long[] l = lags.get(handle);
            return l == null ? new long[2] : l.clone();
        }
    }

    /** B at priority 1 with work, commands of {@code commandNanos}, completing one a millisecond (so never starved). */
    static QueueView behind(long commandNanos, long now) {
        return new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, now / MS, commandNanos,
                List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
    }

    static QueueView prioritized(long handle, int priority, boolean ready, long readySince, long commandNanos) {
        return new QueueView(handle, "q" + handle, "d0", "g" + handle, ready, false, false, ready ? readySince : 0, 0, 0,
                ready ? 1 : 0, 0, 0, commandNanos, List.of(new dev.xq.api.Hint.Priority(priority)), PreemptionLevel.BLOCK);
    }

    /**
     * Runs A (priority 2, width aWidth of 132) on a 25 ms beat, busy 2 ms, beside B (priority 1,
     * narrowable, commands of bCommand at the whole device), the policy narrowing B to leave 64
     * at each decision (as hpf does for long commands while A is open); extra: more views.
     * @return B's last decision at A's idle and at A's arrival, its narrowing after each, and its guard
     */
    record WideRun(Boolean atIdle, boolean narrowedAtIdle, Boolean atArrival, boolean narrowedAtArrival, ArrivalGuards.Guard guard, long gap,
                   boolean everNarrowedAtIdle) {
    }

    /** Arrivals in a {@link #wideRun}: past the first spell of learning. */
    static final int WIDE_RUN_ARRIVALS = (int) (ArrivalGuards.LEARN_NANOS / (25 * MS)) + 4;

    WideRun wideRun(ArrivalGuards guards, int aWidth, long bCommand, int parts, List<QueueView> extra) {
        return wideRun(guards, aWidth, bCommand, parts, extra, false);
    }

    /** As {@link #wideRun(ArrivalGuards, int, long, int, List)}, B's process on another's turn ({@code offTurn}) or not. */
    WideRun wideRun(ArrivalGuards guards, int aWidth, long bCommand, int parts, List<QueueView> extra, boolean offTurn) {
        return wideRun(guards, aWidth, bCommand, parts, extra, offTurn, true);
    }

    /** As above; {@code completes} false: B completes nothing (its count stays). */
    WideRun wideRun(ArrivalGuards guards, int aWidth, long bCommand, int parts, List<QueueView> extra, boolean offTurn,
                    boolean completes) {
        long t = 1000 * MS;
        WideRun r = null;
        boolean ever = false;
        for (int i = 0; i < WIDE_RUN_ARRIVALS; i++) {
            long at = t + i * 25 * MS;
            TestSpace sp = space(aWidth, parts, extra);
            sp.offTurn = offTurn;
            java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
            List<QueueView> views = new java.util.ArrayList<>(List.of(prioritized(A, 2, true, at, 0), behind(bCommand, completes ? at : 0)));
            views.addAll(extra);
            guards.update("hpf", at, views, decided, sp);
            Boolean atArrival = decided.get(B);
            boolean nArrival = sp.narrowed(B) > 0;
            sp = space(aWidth, parts, extra);
            sp.offTurn = offTurn;
            decided = new java.util.HashMap<>(Map.of(B, true));
            views = new java.util.ArrayList<>(List.of(prioritized(A, 2, false, 0, 0), behind(bCommand, completes ? at + 2 * MS : 0)));
            views.addAll(extra);
            Map<Long, ArrivalGuards.Guard> changes = guards.update("hpf", at + 2 * MS, views, decided, sp);
            ever |= sp.narrowed(B) > 0;
            r = new WideRun(decided.get(B), sp.narrowed(B) > 0, atArrival, nArrival, guards.given().get(B), sp.gaps.getOrDefault(B, 0L), ever);
            assertTrue(changes.isEmpty() || changes.containsKey(B), "only B is guarded: " + changes);
        }
        return r;
    }

    static TestSpace space(int aWidth, int parts, List<QueueView> extra) {
        TestSpace sp = new TestSpace();
        sp.narrowed.put(B, 64);
        sp.spaces.put(A, new dev.xq.policy.spi.QueueSpace(false, aWidth, 132));
        sp.spaces.put(B, new dev.xq.policy.spi.QueueSpace(true, 8, 132));
        for (QueueView v : extra) {
            sp.spaces.put(v.handle(), new dev.xq.policy.spi.QueueSpace(false, 8, 132));
        }
        sp.parts = parts;
        return sp;
    }

    /**
     * Behind a queue wider than half the device on a beat, a narrowed queue whose commands fit
     * the gaps at the width it would run at is held while that queue works and runs on the whole
     * device between its requests, under its guard (21 ms GEMMs beside a 25 ms graph beat: narrowed,
     * both halve).
     */
    @Test
    void behindAWideQueueOnABeatANarrowedQueueRunsWholeBetweenItsRequestsAndIsHeldDuringThem() {
        WideRun r = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of());
        assertEquals(Boolean.FALSE, r.atIdle(), "runs between A's requests");
        assertFalse(r.narrowedAtIdle(), "on the whole device");
        assertNotNull(r.guard(), "under A's guard");
        // a request late by more than the configured grace (1 ms) still finds it held: a quarter of
        // its command (5.25 ms) past the due time, beyond the 50 us margin before it
        assertEquals(21 * MS / 4 + ArrivalGuards.EARLY_MARGIN_NANOS, r.guard().untilNanos() - r.guard().horizonNanos(), "waits for a late arrival");
        ArrivalGuards noGrace = new ArrivalGuards();
        noGrace.graceNanos(0);
        WideRun r0 = wideRun(noGrace, 132, 21 * MS, 1, List.of());
        assertEquals(ArrivalGuards.EARLY_MARGIN_NANOS, r0.guard().untilNanos() - r0.guard().horizonNanos(), "a grace configured to 0 stays 0");
        assertEquals(Boolean.TRUE, r.atArrival(), "held while A works");
        assertFalse(r.narrowedAtArrival(), "held, not narrowed");
        // a quiet queue above it (a side stream of the same process, used at start-up only) does not keep it narrowed
        WideRun quiet = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of(prioritized(3, 2, false, 0, 0)));
        assertEquals(Boolean.FALSE, quiet.atIdle(), "a quiet side queue: " + quiet);
        assertFalse(quiet.narrowedAtIdle());
    }

    /**
     * Best-effort processes taking turns on the gaps (one process a gap on the whole of what they
     * may use): on another's turn, the queue is held between the wide queue's requests too, not
     * narrowed (it would run beside the one whose turn it is), and gets no guard.
     */
    @Test
    void onAnotherProcesssTurnItIsHeldBetweenTheRequestsToo() {
        WideRun r = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of(), true);
        assertEquals(Boolean.TRUE, r.atIdle(), "held between A's requests: " + r);
        assertFalse(r.narrowedAtIdle(), "held, not narrowed");
        assertEquals(Boolean.TRUE, r.atArrival(), "and while A works");
        assertTrue(r.gap() > 0, "the gap is still told (the turns are weighed by it)");
        WideRun mine = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of(), false);
        assertEquals(Boolean.FALSE, mine.atIdle(), "on its own turn it runs between them");
        // completing nothing for the whole run (28 beats of 25 ms): on another's turn that is no starving
        WideRun waiting = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of(), true, false);
        assertEquals(Boolean.TRUE, waiting.atIdle(), "still held, not narrowed as starving: " + waiting);
        assertFalse(waiting.everNarrowedAtIdle(), "never narrowed: " + waiting);
        WideRun starving = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of(), false, false);
        assertTrue(starving.everNarrowedAtIdle(), "let go on its own turn and completing nothing: narrowed as starving: " + starving);
        // beside an eager decoder's reserve, where its command does not fit the gaps at that width
        // (it stays narrowed on its own turn), it is held on another's turn all the same
        List<QueueView> decoder = List.of(prioritized(3, 3, true, 7, 0));
        WideRun besideOwn = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, decoder, false);
        assertTrue(besideOwn.narrowedAtIdle(), "its own turn beside a decoder: narrowed as decided: " + besideOwn);
        WideRun beside = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, decoder, true);
        assertEquals(Boolean.TRUE, beside.atIdle(), "another's turn beside a decoder: held: " + beside);
        assertFalse(beside.narrowedAtIdle() || beside.narrowedAtArrival(), "held, not narrowed: " + beside);
    }

    /**
     * On another process's turn a queue of short commands, which the policy lets run on the whole
     * device between the wide queue's requests (not narrowed: hpf narrows long commands only), is
     * held too; on its own turn it is left as the policy placed it. Either way the wide queue's
     * gap is told for it (the turns are weighed by every process's gap).
     */
    @Test
    void onAnotherProcesssTurnAQueueThePolicyLetRunIsHeldToo() {
        ArrivalGuards guards = new ArrivalGuards();
        WideRun learnt = wideRun(guards, 132, MS / 2, 1, List.of());
        assertTrue(learnt.gap() > 15 * MS, "A's beat learnt: " + learnt);
        long t = 1000 * MS + (WIDE_RUN_ARRIVALS - 1) * 25 * MS + 2 * MS; // A's last request just ended
        for (boolean offTurn : new boolean[] {true, false, true}) {
            t += MS;
            TestSpace sp = space(132, 1, List.of());
            sp.narrowed.remove(B);
            sp.offTurn = offTurn;
            Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, false));
            guards.update("hpf", t, List.of(prioritized(A, 2, false, 0, 0), behind(MS / 2, t)), decided, sp);
            assertEquals(offTurn, decided.get(B), offTurn ? "held on another's turn" : "let run on its own turn");
            assertFalse(sp.narrowed(B) > 0, "never narrowed by it");
            assertTrue(sp.gaps.getOrDefault(B, 0L) > 15 * MS, "A's gap told, B not narrowed: " + sp.gaps);
        }
    }

    /**
     * Busy periods alone taken early (a graph's first requests, slow, while the queues behind it
     * were held through its spell of learning) and none since (a GEMM narrowed beside every later
     * request): the gap is reckoned from its busy periods of late, where those are shorter. Kept,
     * the gap was too short for the GEMM's command, which stayed narrowed, and no request ran alone
     * again to put it right (H200). Longer of late (slowed by what runs beside them), those alone stand.
     */
    @Test
    void busyPeriodsAloneOlderAndLongerThanTheRestDoNotShortenTheGap() {
        long period = 25 * MS;
        long slow = gapTold(3200_000L, 3200_000L, period);
        long fast = gapTold(1800_000L, 1800_000L, period);
        long early = gapTold(3200_000L, 1800_000L, period);
        long slowedBeside = gapTold(1800_000L, 3200_000L, period);
        assertEquals(period - 3200_000L - ArrivalGuards.EARLY_MARGIN_NANOS - ArrivalGuards.WIDE_REACTION_NANOS, slow, "slow all along");
        assertEquals(period - 1800_000L - ArrivalGuards.EARLY_MARGIN_NANOS - ArrivalGuards.WIDE_REACTION_NANOS, fast, "fast all along");
        assertEquals(fast, early, "slow alone early only: from its busy periods of late");
        assertEquals(fast, slowedBeside, "slower beside B later: from those alone");
    }

    /**
     * A (priority 2, 132 wide) on a beat: through its first spell of learning and a little after
     * (B held, A alone) busy {@code early} a request, then {@code later} with B narrowed beside it
     * (two best-effort parts: B's 21 ms command, 42 on half the device, fits no gap); a decision at
     * each arrival, at each idle and a millisecond after it. @return the gap last told for B
     */
    long gapTold(long early, long later, long period) {
        ArrivalGuards guards = new ArrivalGuards();
        long told = 0;
        for (int i = 0; i < 3 * WIDE_RUN_ARRIVALS; i++) {
            long at = 1000 * MS + i * period;
            long busy = i < WIDE_RUN_ARRIVALS - 4 ? early : later;
            for (long now : new long[] {at, at + busy, at + busy + MS}) {
                TestSpace sp = space(132, 2, List.of());
                java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                guards.update("hpf", now, new java.util.ArrayList<>(List.of(prioritized(A, 2, now == at, at, 0), behind(21 * MS, now))), decided, sp);
                told = sp.gaps.getOrDefault(B, told);
            }
        }
        return told;
    }

    /** Where it would not fit, not wide, not alone above it, or turned off: it stays narrowed. */
    @Test
    void otherwiseTheNarrowingStays() {
        // two best-effort processes split the device: 21 ms at the whole device is 42 on half of it
        WideRun parts = wideRun(new ArrivalGuards(), 132, 21 * MS, 2, List.of());
        assertTrue(parts.narrowedAtIdle() && parts.narrowedAtArrival(), "42 ms does not fit 23: " + parts);
        assertNull(parts.guard(), "and no guard that would refuse it for good");
        // the gap is told all the same (what a split weighed by what fits uses): the 25 ms beat less
        // A's 2 ms, its jitter, the margin and the node's reaction
        assertTrue(parts.gap() > 15 * MS && parts.gap() < 23 * MS, "the gap told: " + parts.gap());
        // behind a narrow tenant narrowing is what serves both
        WideRun narrow = wideRun(new ArrivalGuards(), 16, 21 * MS, 1, List.of());
        assertTrue(narrow.narrowedAtIdle() && narrow.narrowedAtArrival(), "behind a narrow queue: " + narrow);
        assertEquals(0, narrow.gap(), "no gap told behind a narrow queue");
        // another preferred queue without a beat (an eager decoder, 8 wide here) keeps its reserve:
        // on the 124 multiprocessors it leaves, 21 ms take 22.4, more than the 25 ms beat leaves
        WideRun decoder = wideRun(new ArrivalGuards(), 132, 21 * MS, 1, List.of(prioritized(3, 3, true, 7, 0)));
        assertTrue(decoder.narrowedAtIdle() && decoder.narrowedAtArrival(), "a decoder above too: " + decoder);
        assertNull(decoder.guard(), "narrowed as the decision had it: no guard");
        ArrivalGuards off = new ArrivalGuards();
        off.wideBeats(false);
        WideRun offRun = wideRun(off, 132, 21 * MS, 1, List.of());
        assertTrue(offRun.narrowedAtIdle() && offRun.narrowedAtArrival(), "off: " + offRun);
        assertTrue(off.given().isEmpty() || offRun.guard() == null, "a narrowed queue counts as held: no guard");
    }

    /**
     * A queue on a beat that goes idle inside its request and comes back (its owner stalled for
     * longer than the linger) has not arrived again: its beat holds (counted as an arrival, the
     * interval broke the beat for the next four).
     */
    @Test
    void aReturnWithinItsUsualBusyPeriodIsNotANewArrival() {
        g.lingerNanos(0); // no linger: the return is seen as such
        long t = learnt(); // A's arrival due at t
        g.update("hpf", t, List.of(view(A, true, false, t), view(B, true, false, 5)), Map.of(B, true));
        g.update("hpf", t + MS / 2, List.of(view(A, false, false, 0), view(B, true, true, 5)), resumeB());
        long back = t + MS;
        g.update("hpf", back, List.of(view(A, true, false, back), view(B, true, false, 5)), Map.of(B, true));
        g.update("hpf", t + 2 * MS, List.of(view(A, false, false, 0), view(B, true, true, 5)), resumeB());
        ArrivalGuards.Beat beat = g.beat(A, t + 3 * MS);
        assertNotNull(beat, "the beat holds");
        assertEquals(t + 25 * MS, beat.nextNanos(), "the next arrival foreseen from the request's start");
        for (int i = 1; i <= 4; i++) {
            cycle(t + i * 25 * MS, 2 * MS, true);
            assertNotNull(g.beat(A, t + i * 25 * MS + 3 * MS), "still on the beat after " + i);
        }
    }

    /**
     * Wide beats: a queue idle early in its request (within its usual busy period) still counts as
     * working: the queue behind it stays held, and the decision is to be taken again once the
     * request's usual end has passed.
     */
    @Test
    void behindAWideQueueIdleEarlyInItsRequestTheOtherStaysHeldUntilItsUsualEnd() {
        ArrivalGuards guards = new ArrivalGuards();
        guards.lingerNanos(0);
        wideRun(guards, 132, 21 * MS, 1, List.of()); // the beat (2 ms busy periods every 25 ms) learnt
        long t = 1000 * MS + WIDE_RUN_ARRIVALS * 25 * MS;
        TestSpace sp = space(132, 1, List.of());
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        guards.update("hpf", t, List.of(prioritized(A, 2, true, t, 0), behind(21 * MS, t)), decided, sp);
        assertEquals(Boolean.TRUE, decided.get(B), "held while A works");
        sp = space(132, 1, List.of());
        decided = new java.util.HashMap<>(Map.of(B, true));
        guards.update("hpf", t + MS / 2, List.of(prioritized(A, 2, false, 0, 0), behind(21 * MS, t + MS / 2)), decided, sp);
        assertEquals(Boolean.TRUE, decided.get(B), "A idle 0.5 ms into a request that usually takes 2: B stays held");
        assertFalse(sp.narrowed(B) > 0, "held, not narrowed");
        assertEquals(t + 2 * MS, guards.lingerWake(), "decided again at the request's usual end");
        sp = space(132, 1, List.of());
        decided = new java.util.HashMap<>(Map.of(B, true));
        guards.update("hpf", t + 2 * MS, List.of(prioritized(A, 2, false, 0, 0), behind(21 * MS, t + 2 * MS)), decided, sp);
        assertEquals(Boolean.FALSE, decided.get(B), "then B runs on the whole device");
        assertNotNull(guards.given().get(B), "under A's guard");
    }

    /**
     * Wide beats never starve the queue they let run: one that completes nothing for four periods
     * of the beat plus one of its commands (its commands never fit what the guard leaves) is left
     * narrowed, where it makes progress, for half a second; then it runs whole between the
     * requests again, and starving again soon after, it is left narrowed twice as long.
     */
    @Test
    void aQueueThatCompletesNothingUnderAWideBeatIsNarrowedAgain() {
        ArrivalGuards guards = new ArrivalGuards();
        long t = 1000 * MS;
        Boolean lastAtIdle = null;
        List<int[]> spells = new java.util.ArrayList<>(); // [first, last] period narrowed
        for (int i = 0; i < 160; i++) {
            long at = t + i * 25 * MS;
            QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, 7 /* never moves */, 15 * MS,
                    List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
            TestSpace sp = space(132, 1, List.of());
            java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
            guards.update("hpf", at, List.of(prioritized(A, 2, true, at, 0), b), decided, sp);
            sp = space(132, 1, List.of());
            decided = new java.util.HashMap<>(Map.of(B, true));
            guards.update("hpf", at + 2 * MS, List.of(prioritized(A, 2, false, 0, 0), b), decided, sp);
            lastAtIdle = decided.get(B);
            if (i > 3 && sp.narrowed(B) > 0) {
                if (spells.isEmpty() || spells.getLast()[1] != i - 1) {
                    spells.add(new int[] {i, i});
                } else {
                    spells.getLast()[1] = i;
                }
            }
            if (i == 4) {
                assertEquals(Boolean.FALSE, lastAtIdle, "first it runs on the whole device between A's requests");
            }
        }
        String seen = spells.stream().map(s -> s[0] + "-" + s[1]).toList().toString();
        assertTrue(spells.size() >= 3, "narrowed, let go, narrowed again: " + seen);
        assertTrue(spells.get(0)[0] > 4 && spells.get(0)[0] <= 4 + 6, "narrowed once it starved, at " + seen);
        int first = spells.get(0)[1] - spells.get(0)[0] + 1;
        int second = spells.get(1)[1] - spells.get(1)[0] + 1;
        assertTrue(first >= 19 && first <= 21, "half a second (20 periods) the first time: " + seen);
        assertTrue(second >= 39 && second <= 41, "twice as long the second: " + seen);
        assertTrue(spells.get(1)[0] - spells.get(0)[1] <= 8, "starving again soon after it was let go: " + seen);
    }

    /**
     * A queue starving whole between a 25 ms beat's requests (A, busy 2 ms) is left narrowed, and
     * still held through the requests of a second wide queue (C, priority 3, a 100 ms beat, busy
     * 8 ms) whose gaps its command at that width fits (15 ms whole, 29 ms on 68 multiprocessors),
     * under C's guard between them; A's gaps it does not fit narrowed, so beside A alone it runs
     * narrowed. With narrowed guards off, it runs narrowed through both, unguarded, as before
     * (a graph's requests that came with a batch's took 8.7-9.6 ms beside a GEMM so starving
     * against 5-6 without it, H200 session 72).
     */
    @Test
    void aStarvingQueueIsStillHeldThroughTheRequestsOfAWideBeatItFitsNarrowed() {
        for (boolean on : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.narrowedGuards(on);
            long t = 1000 * MS;
            int starvingWithC = 0;
            int heldWithC = 0;
            int starvingAlone = 0;
            int guardedAlone = 0;
            for (int i = 0; i < 240; i++) {
                long at = t + i * 25 * MS;
                boolean c = i % 4 == 0;
                for (long dt : new long[] {0, 2 * MS}) {
                    long now = at + dt;
                    TestSpace sp = space(132, 1, List.of());
                    sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 132, 132));
                    java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                    QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, 7 /* never moves */, 15 * MS,
                            List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
                    guards.update("hpf", now, List.of(prioritized(A, 2, dt == 0, at, 0), prioritized(3, 3, c, at, 0), b), decided, sp);
                    if (dt == 0 || i < 40) {
                        continue;
                    }
                    boolean starving = guards.leftForStarving(B, now);
                    if (starving && c) {
                        starvingWithC++;
                        heldWithC += sp.narrowed(B) == 0 && Boolean.TRUE.equals(decided.get(B)) ? 1 : 0;
                    } else if (starving && i % 4 == 2) {
                        starvingAlone++;
                        guardedAlone += sp.narrowed(B) > 0 && guards.given().get(B) != null ? 1 : 0;
                        assertEquals(64, sp.narrowed(B), "narrowed beside A alone, as decided");
                    }
                }
            }
            assertTrue(starvingWithC >= 5 && starvingAlone >= 5, "it starved: " + starvingWithC + ", " + starvingAlone);
            if (on) {
                assertEquals(starvingWithC, heldWithC, "held through C's requests while starving");
                assertEquals(starvingAlone, guardedAlone, "narrowed under C's guard between them");
                assertTrue(guards.starvingGuarded() > 0);
            } else {
                assertEquals(0, heldWithC, "off: narrowed through C's requests");
                assertEquals(0, guardedAlone, "off: unguarded");
                assertEquals(0, guards.starvingGuarded());
            }
        }
    }

    /**
     * A wait under wide-beat rules that alternate (whole in a 25 ms graph's gaps while an eager
     * decoder is quiet, narrowed under a 100 ms batch's guard while it works) is starving only past
     * the longest limit among them (four periods and a command: 444 ms here, not the graph's
     * 121 ms, which let the GEMM run narrowed and unguarded for 0.5-2 s at a time on the H200); once
     * the queue completes something, the limit is the rule's in force again.
     */
    @Test
    void aWaitUnderAlternatingRulesStarvesOnlyPastTheLongestLimit() {
        ArrivalGuards guards = new ArrivalGuards();
        TestSpace sp = new TestSpace();
        long t = 1000 * MS;
        QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, 7, 21 * MS,
                List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
        guards.progress(b, t, 100 * MS, 44 * MS);
        guards.progress(b, t + 10 * MS, 25 * MS, 21 * MS);
        assertFalse(guards.starved(b, t + 200 * MS, sp), "past the graph's limit only");
        assertTrue(guards.starved(b, t + 450 * MS, sp), "past the batch's");
        ArrivalGuards again = new ArrivalGuards();
        again.progress(b, t, 100 * MS, 44 * MS);
        QueueView moved = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, 8, 21 * MS,
                List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
        again.progress(moved, t + 300 * MS, 25 * MS, 21 * MS);
        assertTrue(again.starved(moved, t + 300 * MS + 130 * MS, sp), "after progress, the rule in force: 121 ms");
    }

    /**
     * A queue whose process is stopped (SIGSTOP: the paired reading stops best-effort processes
     * 1.5 s of every 3) completes nothing because nothing of it runs: not starving. On the H200 a
     * stopped GEMM process was taken as starving four times in 12 s and left narrowed for 0.5, 1, 2
     * and 4 s (0.56 of native sharing, session 56). Its wait begins again at each look while it is
     * stopped; back and still completing nothing, it is taken as starving after the usual limit.
     */
    @Test
    void aStoppedProcessUnderAWideBeatIsNotTakenAsStarving() {
        ArrivalGuards guards = new ArrivalGuards();
        long t = 1000 * MS;
        int firstNarrowed = -1;
        for (int i = 0; i < 100; i++) {
            long at = t + i * 25 * MS;
            QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, 7 /* never moves */, 15 * MS,
                    List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
            for (int half = 0; half < 2; half++) {
                TestSpace sp = space(132, 1, List.of());
                if (i < 60) {
                    sp.stopped.add(B); // stopped for the first 1.5 s
                }
                java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                guards.update("hpf", at + half * 2 * MS, List.of(prioritized(A, 2, half == 0, half == 0 ? at : 0, 0), b), decided, sp);
                if (half == 1 && i > 3 && sp.narrowed(B) > 0 && firstNarrowed < 0) {
                    firstNarrowed = i;
                }
            }
        }
        assertTrue(guards.stoppedNotStarving() > 0, "taken for stopped, not starving: " + guards.stoppedNotStarving());
        // back at period 60; four periods and a command (115 ms) without a completion after that: starving
        assertTrue(firstNarrowed >= 60 + 4 && firstNarrowed <= 60 + 8,
                "never narrowed for starving while stopped; after it is back, once the limit has passed: at period " + firstNarrowed);
    }

    /**
     * The same under an arrival guard: a process stopped with a launch held (nothing of it on the
     * device) waits because it cannot launch, and keeps its guard.
     */
    @Test
    void aStoppedProcessKeepsItsGuard() {
        long command = 20 * MS;
        ArrivalGuards guards = new ArrivalGuards();
        long t = 1000 * MS;
        boolean everGuarded = false;
        for (int i = 0; i < 40; i++) {
            long at = t + i * 25 * MS;
            QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, 7, command, List.of(),
                    PreemptionLevel.BLOCK);
            TestSpace sp = new TestSpace();
            sp.stopped.add(B);
            guards.update("hpf", at, List.of(view(A, true, false, at), b), Map.of(B, true), sp);
            guards.update("hpf", at + 2 * MS, List.of(view(A, false, false, 0), b), Map.of(B, false), sp);
            everGuarded |= guards.given().containsKey(B);
            if (everGuarded) {
                assertTrue(guards.given().containsKey(B), "guarded throughout once guarded, at period " + i);
            }
        }
        assertTrue(everGuarded, "B is guarded once A's beat is known");
        assertEquals(0, guards.starvedGuards(), "never dropped for starving while stopped");
        assertTrue(guards.stoppedNotStarving() > 0);
    }

    /**
     * The starving limit is reckoned on the wide tenants' beats: a narrow decoder above the queue
     * too (a 3 ms token beat that the queue's short commands fit) does not shorten it to four
     * tokens, so a hold through a wide batch's 12 ms request is not starving (Triton beside a
     * decoder and a batch was narrowed for five seconds after 12.9 ms without a completion, H200).
     */
    @Test
    void aHoldThroughAWideRequestIsNoStarvingBesideANarrowBeat() {
        for (boolean keep : new boolean[] {false, true}) {
            long[] withDecoder = starvesBesideADecoder(true, keep);
            assertEquals(0, withDecoder[0], "a narrow decoder's beat beside the batch's: not starved (narrow beats keep a reserve: " + keep + ")");
            assertTrue(withDecoder[1] > 500, "let go between the requests (and the tokens): " + withDecoder[1] + " ms of 1600 (keep " + keep + ")");
            long[] alone = starvesBesideADecoder(false, keep);
            assertEquals(0, alone[0], "the batch's beat alone: not starved either (keep " + keep + ")");
            assertTrue(alone[1] > 900, "let go between the requests: " + alone[1] + " ms of 1600 (keep " + keep + ")");
        }
        // the decoder keeping its reserve, the queue runs beside it between the batch's requests,
        // not only between the tokens: most of the time outside the batch's 12 ms in 100
        long[] kept = starvesBesideADecoder(true, true);
        long[] heldForTokens = starvesBesideADecoder(true, false);
        assertTrue(kept[1] > heldForTokens[1] && kept[1] > 1200,
                "beside the decoder's reserve " + kept[1] + " ms of 1600, held through its tokens " + heldForTokens[1]);
    }

    /**
     * A (132 wide) arrives every 100 ms, busy 12 ms; with {@code decoder}, D (handle 3, 8 wide,
     * priority 3) every 3 ms, busy 1 ms; B (250 us commands) completes one a millisecond while let
     * go, none while held. @return {1 if B was ever left narrowed between A's requests once A's
     * beat was known (starved) else 0, the milliseconds B was let go}.
     */
    /**
     * B's completions: it completes a command each millisecond it runs, on the whole device or
     * beside the decoder's reserve (its width, 8: narrowed by that much and no more); narrowed
     * further (left for starving, 64) counts as held.
     */
    static long[] starvesBesideADecoder(boolean decoder, boolean keepReserve) {
        ArrivalGuards guards = new ArrivalGuards();
        guards.narrowBeatsKeepReserve(keepReserve);
        long t0 = 1000 * MS;
        long completed = 0;
        boolean lastHeld = true;
        boolean starved = false;
        long aSince = 0;
        long dSince = 0;
        for (int ms = 0; ms < 1600; ms++) {
            long now = t0 + ms * MS;
            boolean aReady = ms % 100 < 12;
            boolean dReady = decoder && ms % 3 == 0;
            if (aReady && aSince == 0) {
                aSince = now;
            } else if (!aReady) {
                aSince = 0;
            }
            if (dReady) {
                dSince = now;
            }
            if (!lastHeld) {
                completed++;
            }
            QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, completed, 250_000L,
                    List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
            List<QueueView> views = new java.util.ArrayList<>(List.of(prioritized(A, 2, aReady, aSince, 0), b));
            if (decoder) {
                views.add(prioritized(3, 3, dReady, dSince, 0));
            }
            TestSpace sp = space(132, 1, decoder ? List.of(prioritized(3, 3, false, 0, 0)) : List.of());
            java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
            guards.update("hpf", now, views, decided, sp);
            boolean besideReserve = decoder && sp.narrowed(B) == 8;
            lastHeld = !besideReserve && (!Boolean.FALSE.equals(decided.get(B)) || sp.narrowed(B) > 0);
            if (ms > 600 && !aReady && !dReady && ms % 100 > 30 && ms % 100 < 80 && sp.narrowed(B) > 0 && !besideReserve) {
                starved = true;
            }
        }
        return new long[] {starved ? 1 : 0, completed};
    }

    /** One decision: A (priority 2, aWidth of 132) ready since {@code aSince} or idle, B narrowed with 21 ms commands. */
    static boolean[] step(ArrivalGuards guards, long now, int aWidth, boolean aReady, long aSince) {
        TestSpace sp = space(aWidth, 1, List.of());
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        guards.update("hpf", now, List.of(prioritized(A, 2, aReady, aSince, 0), behind(21 * MS, now)), decided, sp);
        return new boolean[] {Boolean.TRUE.equals(decided.get(B)), sp.narrowed(B) > 0};
    }

    /** A warm-up of {@code n} back-to-back requests of 8 ms from {@code t}; @return its end. */
    static long warmUp(ArrivalGuards guards, long t, int aWidth, int n) {
        for (int i = 0; i < n; i++) {
            long at = t + i * 9 * MS;
            step(guards, at, aWidth, true, at);
            step(guards, at + 8 * MS, aWidth, false, 0);
        }
        return t + n * 9 * MS;
    }

    /**
     * A wide queue back after a quiet spell (a service's first requests after its warm-up) has no
     * beat yet: the long commands behind it are held throughout, not narrowed beside it, until its
     * beat is known; then they run on the whole device between its requests.
     */
    @Test
    void whileAWideQueueLearnsItsBeatTheLongCommandsBehindItAreHeld() {
        ArrivalGuards guards = new ArrivalGuards();
        long go = warmUp(guards, 1000 * MS, 132, 10) + 3000 * MS;
        long wakeSeen = 0;
        for (int i = 0; i < 6; i++) {
            long at = go + i * 100 * MS;
            boolean[] arrival = step(guards, at, 132, true, at);
            assertTrue(arrival[0] && !arrival[1], "held, not narrowed, at arrival " + (i + 1));
            boolean[] idle = step(guards, at + 8 * MS, 132, false, 0);
            if (i < 2) {
                assertTrue(idle[0] && !idle[1], "held between requests before the beat is known, after arrival " + (i + 1));
                wakeSeen = guards.lingerWake();
            } else {
                assertFalse(idle[0] || idle[1], "whole between requests once the beat is known, after arrival " + (i + 1));
            }
        }
        // after the second arrival: when the spell ends unless it arrives again (quiet 250 ms after it, within the 600)
        assertEquals(go + 100 * MS + ArrivalGuards.QUIET_NANOS, wakeSeen, "decided again when the spell of learning ends");
        // the first request sooner than 250 ms after the warm-up, but after four of its intervals
        // (the service was the last to be ready): a spell too
        ArrivalGuards soon = new ArrivalGuards();
        long go4 = warmUp(soon, 1000 * MS, 132, 70) + 100 * MS; // a warm-up of 630 ms: its own spell is over
        boolean[] soonFirst = step(soon, go4, 132, true, go4);
        step(soon, go4 + 8 * MS, 132, false, 0);
        boolean[] soonSecond = step(soon, go4 + 100 * MS, 132, true, go4 + 100 * MS);
        assertTrue(soonFirst[0] && !soonFirst[1] && soonSecond[0] && !soonSecond[1], "held through the first requests after a short pause");
        // behind a narrow queue there is nothing to learn: narrowed from its first request
        ArrivalGuards narrow = new ArrivalGuards();
        long go2 = warmUp(narrow, 1000 * MS, 16, 10) + 3000 * MS;
        boolean[] first = step(narrow, go2, 16, true, go2);
        assertTrue(first[1], "narrowed behind a narrow queue");
        // turned off: narrowed
        ArrivalGuards off = new ArrivalGuards();
        off.wideBeats(false);
        long go3 = warmUp(off, 1000 * MS, 132, 10) + 3000 * MS;
        assertTrue(step(off, go3, 132, true, go3)[1], "off: narrowed");
    }

    /** A warm-up whose first request is {@code firstMs} long, then 5 of 8 ms back to back, then 3 s quiet; @return the first arrival after. */
    /** {@link #step}, B ready or idle as given (it comes back when its readiness begins). */
    static boolean[] stepBoth(ArrivalGuards guards, long now, boolean aReady, long aSince, boolean bReady, long bSince) {
        return stepBoth(guards, now, aReady, aSince, bReady, bSince, 21 * MS);
    }

    /** {@link #stepBoth}, B's commands {@code command} ns long. */
    static boolean[] stepBoth(ArrivalGuards guards, long now, boolean aReady, long aSince, boolean bReady, long bSince, long command) {
        TestSpace sp = space(132, 1, List.of());
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, bReady, false, false, bReady ? bSince : 0, 0, 0, bReady ? 1 : 0, 0, now / MS,
                command, List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
        guards.update("hpf", now, List.of(prioritized(A, 2, aReady, aSince, 0), b), decided, sp);
        return new boolean[] {Boolean.TRUE.equals(decided.get(B)), sp.narrowed(B) > 0};
    }

    /**
     * A queue behind a wide one on a known beat whose gaps its commands do not fit (a GEMM of
     * n=16384, 334 ms a kernel, beside a batch of 128 every 150 ms) begins no spell of learning
     * when it comes back: the beat is known, there is nothing to learn, and each such spell held
     * the GEMM for 747 ms (H200, session 73: three of them a 12 s run, the GEMM at 0.39 of native
     * sharing) while the batch's P99 was set beside the narrowed GEMM anyway. With
     * {@code fruitlessSpells} on (the old way) it does.
     */
    @Test
    void aQueueBackBehindAKnownBeatItDoesNotFitBeginsNoSpell() {
        for (boolean on : new boolean[] {false, true}) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.fruitlessSpells(on);
            long command = 334 * MS;
            long t = 1000 * MS;
            stepBoth(guards, t, false, 0, true, t, command); // B's warm-up, long before
            stepBoth(guards, t + 100 * MS, false, 0, false, 0, command);
            t += 4000 * MS;
            long start = t;
            long away = start + 2000 * MS;
            long back = away + 1500 * MS;
            int held = 0;
            int narrowed = 0;
            for (int i = 0; i < 40; i++, t += 150 * MS) {
                boolean up = t < away || t >= back;
                long since = t < away ? start : back;
                if (t >= back && t - back < 150 * MS) {
                    stepBoth(guards, back, false, 0, true, back, command); // a decision as B comes back, A idle
                }
                boolean[] arrival = stepBoth(guards, t, true, t, up, since, command);
                boolean[] idle = stepBoth(guards, t + 12 * MS, false, 0, up, since, command);
                if (t >= back && t < back + 700 * MS) {
                    held += arrival[0] && !arrival[1] ? 1 : 0;
                    held += idle[0] && !idle[1] ? 1 : 0;
                    narrowed += arrival[1] ? 1 : 0;
                }
            }
            assertNotNull(guards.beat(A, t), "the batch's beat is known");
            if (on) {
                assertTrue(held >= 4, "fruitlessSpells on: held through a spell after coming back: " + held + " held, " + narrowed + " narrowed");
            } else {
                assertTrue(held == 0 && narrowed >= 4, "no spell after coming back behind a known beat: " + held + " held, " + narrowed + " narrowed");
            }
        }
    }

    /**
     * A queue behind a wide one coming back after a quiet spell begins a spell of learning for
     * it when it works without a beat and its own spell has run out: a service's warm-up of
     * fragments (an eager batch's launches with its owner's stalls between) began a spell that
     * lasted 600 ms, the first request for real followed it at once, 700 ms after it began (the
     * service the last of its node to be ready), and the GEMMs that began with it are held, not
     * narrowed, until its beat is known (narrowed, they ran beside its first three requests:
     * 36-50 ms against 8, the batch's P99 at 3.4-4.6 x its standalone, H200).
     */
    @Test
    void aQueueBehindThatComesBackBeginsASpellOfLearning() {
        ArrivalGuards guards = new ArrivalGuards();
        long t = 1000 * MS;
        stepBoth(guards, t, false, 0, true, t); // B's own warm-up, long before
        stepBoth(guards, t + 100 * MS, false, 0, false, 0);
        t += 4000 * MS;
        for (int i = 0; i < 34; i++) { // A's warm-up: fragments of 2 ms, 8 and 28 ms apart, no beat
            stepBoth(guards, t, true, t, false, 0);
            stepBoth(guards, t + 2 * MS, false, 0, false, 0);
            t += (i % 2 == 0 ? 10 : 30) * MS;
        }
        long go = t + 10 * MS; // 690 ms after the warm-up began
        assertFalse(guards.beat(A, go) != null && guards.beat(A, go).periodNanos() > 25 * MS, "no beat the GEMMs fit before the requests");
        for (int i = 0; i < 5; i++) {
            long at = go + i * 100 * MS;
            boolean[] arrival = stepBoth(guards, at, true, at, true, go);
            assertTrue(arrival[0] && !arrival[1], "held, not narrowed, at request " + (i + 1));
            stepBoth(guards, at + 8 * MS, false, 0, true, go);
            boolean[] idle = stepBoth(guards, at + 30 * MS, false, 0, true, go);
            if (i < 2) {
                assertTrue(idle[0] && !idle[1], "held between requests before the beat is known, after request " + (i + 1));
            } else {
                assertFalse(idle[0] || idle[1], "whole between requests once the beat is known, after request " + (i + 1));
            }
        }
        // without B's return, the same A leaves B narrowed beside it (no spell, no beat)
        ArrivalGuards still = new ArrivalGuards();
        long s0 = 1000 * MS;
        stepBoth(still, s0, false, 0, true, s0);
        s0 += 4000 * MS;
        long bBack = s0 - 10 * MS; // B back before A's warm-up: its return long past at A's requests
        for (int i = 0; i < 34; i++) {
            stepBoth(still, s0, true, s0, true, bBack);
            stepBoth(still, s0 + 2 * MS, false, 0, true, bBack);
            s0 += (i % 2 == 0 ? 10 : 30) * MS;
        }
        boolean[] first = stepBoth(still, s0 + 10 * MS, true, s0 + 10 * MS, true, bBack);
        assertTrue(first[1], "narrowed beside A's first request when nothing came back");
        // B back in the middle of A's spell (held by it) begins another as that one ends: held
        // through A's warm-up going on past its end, narrowed once the second is over, and no
        // third for the same return (a GEMM job back 60 ms before a batch's warm-up spell ran out
        // was narrowed beside its first four requests: its P99 3.15 x standalone, H200)
        ArrivalGuards mid = new ArrivalGuards();
        long m0 = 1000 * MS;
        stepBoth(mid, m0, false, 0, true, m0);
        stepBoth(mid, m0 + 100 * MS, false, 0, false, 0);
        m0 += 4000 * MS;
        long spell = m0;
        long bSince = spell + 540 * MS;
        boolean[] late = null;
        int heldAfterFirst = 0;
        int narrowedAfterSecond = 0;
        for (int i = 0; i < 90; i++) {
            boolean bUp = m0 - bSince >= 0;
            stepBoth(mid, m0, true, m0, bUp, bSince);
            late = stepBoth(mid, m0 + 2 * MS, false, 0, bUp, bSince);
            long into = m0 - spell;
            if (bUp && into < 1100 * MS) {
                assertTrue(late[0] && !late[1], "held within A's spell and the one begun as it ended, " + into / MS + " ms into the first");
                if (into > 620 * MS) {
                    heldAfterFirst++;
                }
            }
            if (into > 1300 * MS && late[1]) {
                narrowedAfterSecond++;
            }
            m0 += (i % 2 == 0 ? 10 : 30) * MS;
        }
        assertTrue(heldAfterFirst > 10, "held after the first spell: " + heldAfterFirst);
        assertTrue(late[1] && narrowedAfterSecond > 5, "narrowed after the second spell, no third: " + narrowedAfterSecond);
    }

    /**
     * A wide queue whose requests come at random (25 ms apart on average, a graph service's,
     * {@code graphp}) has no beat to learn: once a spell ran out without one and it went on
     * arriving without one for another spell's length, the GEMM behind it coming back (after a
     * pause of its own) begins no new spell and runs narrowed beside it, as before the pause;
     * with {@code fruitlessSpells} on it is held for a spell again (600 ms of its time for
     * nothing: two or three such spells in each 12 s run, a fifth of the GEMM's running time,
     * H200 session 73). After a quiet spell of the wide queue a spell begins as ever where its
     * earlier returns are not all off any beat ({@code randomReturns} off); with it on (the
     * default), a queue whose returns (its gaps of 250 ms, or four spurious periods) kept finding
     * no beat begins none after this one either.
     */
    @Test
    void aWideQueueOffAnyBeatBeginsNoSpellOnceOneRanOutWithoutABeat() {
        for (boolean[] config : new boolean[][] {{false, true}, {true, true}, {false, false}}) {
            boolean on = config[0];
            ArrivalGuards guards = new ArrivalGuards();
            guards.fruitlessSpells(on);
            guards.randomReturns(config[1]);
            java.util.Random random = new java.util.Random(73);
            long t = 1000 * MS;
            stepBoth(guards, t, false, 0, true, t); // B's warm-up, long before
            stepBoth(guards, t + 100 * MS, false, 0, false, 0);
            t += 4000 * MS;
            long start = t;
            long away = t + 3500 * MS;
            long back = away + 1500 * MS;
            int heldFirst = 0;
            int heldLater = 0;
            int narrowedLater = 0;
            boolean returned = false;
            while (t < start + 12_000 * MS) {
                if (t >= back && !returned) {
                    stepBoth(guards, back, false, 0, true, back); // a decision as B comes back, A idle
                    returned = true;
                }
                boolean up = t < away || t >= back;
                long since = t < away ? start : back;
                boolean[] arrival = stepBoth(guards, t, true, t, up, since);
                stepBoth(guards, t + 1_500_000L, false, 0, up, since);
                boolean held = up && arrival[0] && !arrival[1];
                if (t - start < 600 * MS) {
                    heldFirst += held ? 1 : 0;
                } else if (t - start > 1300 * MS && up) {
                    heldLater += held ? 1 : 0;
                    narrowedLater += arrival[1] ? 1 : 0;
                }
                t += Math.max(3 * MS, (long) (-Math.log(1 - random.nextDouble()) * 25 * MS));
            }
            assertNull(guards.beat(A, t), "requests at random: no beat");
            assertTrue(heldFirst > 5, "held through the first spell, which finds no beat: " + heldFirst);
            // (a decision or two may hold B for reasons of their own: not a spell's 600 ms)
            if (on) {
                assertTrue(heldLater > 10, "fruitlessSpells on: held through later spells: " + heldLater + " held, " + narrowedLater + " narrowed");
            } else {
                assertTrue(heldLater <= 2 && narrowedLater > 100, "no spell once it is known to be off any beat, coming back included: " + heldLater
                        + " held, " + narrowedLater + " narrowed");
            }
            // quiet for 400 ms, then arriving again: a spell, as after any pause, unless its returns
            // are known to find no beat
            t += 400 * MS;
            boolean[] first = stepBoth(guards, t, true, t, true, back);
            boolean spell = on || !config[1];
            assertEquals(spell, first[0] && !first[1], "held at the first arrival after a quiet spell (fruitlessSpells " + on
                    + ", randomReturns " + config[1] + ")");
        }
    }

    /** One decision: A (main stream) and S (a side stream of the same width) ready or idle as given, B narrowed with 21 ms commands. */
    static boolean[] stepSide(ArrivalGuards guards, long now, boolean aReady, long aSince, boolean sReady, long sSince) {
        TestSpace sp = space(132, 1, List.of());
        sp.spaces.put(SIDE, new dev.xq.policy.spi.QueueSpace(false, 132, 132));
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        guards.update("hpf", now, List.of(prioritized(A, 2, aReady, aSince, 0), prioritized(SIDE, 2, sReady, sSince, 0), behind(21 * MS, now)),
                decided, sp);
        return new boolean[] {Boolean.TRUE.equals(decided.get(B)), sp.narrowed(B) > 0};
    }

    static final long SIDE = 5;

    /**
     * A CUDA graph service's capture stream (S) works without a beat for 460 ms, then falls silent;
     * its main stream (A) begins its requests on a 25 ms beat 20 ms after. S's spell of learning
     * would run out at 600 ms while S still counts as arrived lately (until 250 ms after its last
     * arrival): the GEMM behind was then narrowed beside A's requests 5-9 (2.3-2.4 ms against 1.65,
     * enough to set the graph's P99 at 1.23-1.33 x its standalone, H200 session 58). A spell whose
     * queue falls silent before it runs out lasts until that queue goes quiet: B is held, never
     * narrowed, from A's first request on, and runs whole between A's requests once S is quiet.
     */
    @Test
    void aSideStreamFallenSilentBeforeItsSpellRanOutHoldsUntilItIsQuiet() {
        ArrivalGuards guards = new ArrivalGuards();
        long t0 = 1000 * MS;
        // A's warm-up, long before (its width seen), then quiet
        for (int i = 0; i < 5; i++) {
            long at = t0 + i * 9 * MS;
            stepSide(guards, at, true, at, false, 0);
            stepSide(guards, at + 8 * MS, false, 0, false, 0);
        }
        long s0 = t0 + 2000 * MS;
        // S's arrivals as the capture stream's were on the H200 (bursts 130-150 ms apart, never twice
        // its longest idle after eight: no change of rhythm that would begin a spell again)
        long[] sAt = {0, 9, 22, 49, 52, 71, 76, 210, 211, 216, 238, 241, 245, 246, 399, 416, 428, 437, 438, 458};
        for (long off : sAt) {
            long at = s0 + off * MS;
            stepSide(guards, at, false, 0, true, at);
            stepSide(guards, at + MS, false, 0, false, 0);
        }
        long go = s0 + 480 * MS;
        List<Long> narrowedAt = new java.util.ArrayList<>();
        int wholeBetween = 0;
        for (int i = 0; i < 40; i++) {
            long at = go + i * 25 * MS;
            boolean[] arrival = stepSide(guards, at, true, at, false, 0);
            boolean[] idle = stepSide(guards, at + 2 * MS, false, 0, false, 0);
            boolean[] between = stepSide(guards, at + 12 * MS, false, 0, false, 0);
            for (boolean[] d : new boolean[][] {arrival, idle, between}) {
                if (d[1]) {
                    narrowedAt.add((at - go) / MS);
                }
            }
            if (!between[0] && !between[1] && at - s0 > 458 * MS + ArrivalGuards.QUIET_NANOS) {
                wholeBetween++;
            }
        }
        assertTrue(narrowedAt.isEmpty(), "B narrowed beside A's requests at (ms after the first) " + narrowedAt);
        assertTrue(wholeBetween > 20, "B whole between A's requests once S is quiet: " + wholeBetween + " of 40");
    }

    /**
     * While a wide queue learns its beat the queue behind is held throughout, whatever else is
     * above it: a side stream whose width the node does not know (or without a beat) that arrived
     * lately kept it narrowed beside the wide queue's first requests, and only where that stream
     * came first among the views did the wide queue's spell even get looked at. Both orders.
     */
    @Test
    void whileAWideQueueLearnsItsBeatAQueueWithoutOneDoesNotLeaveTheQueueBehindNarrowed() {
        for (boolean sideFirst : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            long t0 = 1000 * MS;
            for (int i = 0; i < 5; i++) { // A's warm-up, long before, then quiet
                long at = t0 + i * 9 * MS;
                stepOrdered(guards, at, true, at, false, 0, sideFirst);
                stepOrdered(guards, at + 8 * MS, false, 0, false, 0, sideFirst);
            }
            long go = t0 + 3000 * MS;
            stepOrdered(guards, go - 10 * MS, false, 0, true, go - 10 * MS, sideFirst); // S: one launch
            stepOrdered(guards, go - 9 * MS, false, 0, false, 0, sideFirst);
            for (int i = 0; i < 2; i++) {
                long at = go + i * 100 * MS;
                boolean[] arrival = stepOrdered(guards, at, true, at, false, 0, sideFirst);
                boolean[] between = stepOrdered(guards, at + 30 * MS, false, 0, false, 0, sideFirst);
                assertTrue(arrival[0] && !arrival[1], "held, not narrowed, at A's request " + (i + 1) + " (the side stream "
                        + (sideFirst ? "first" : "last") + ")");
                assertTrue(between[0] && !between[1], "held between A's requests while its beat is learnt, after request " + (i + 1)
                        + " (the side stream " + (sideFirst ? "first" : "last") + ")");
            }
        }
    }

    /** {@link #stepSide} with S of unknown width, listed before A or after it. */
    static boolean[] stepOrdered(ArrivalGuards guards, long now, boolean aReady, long aSince, boolean sReady, long sSince, boolean sideFirst) {
        TestSpace sp = space(132, 1, List.of());
        sp.spaces.put(SIDE, new dev.xq.policy.spi.QueueSpace(false, 0, 0));
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        QueueView a = prioritized(A, 2, aReady, aSince, 0);
        QueueView side = prioritized(SIDE, 2, sReady, sSince, 0);
        guards.update("hpf", now, sideFirst ? List.of(side, a, behind(21 * MS, now)) : List.of(a, side, behind(21 * MS, now)), decided, sp);
        return new boolean[] {Boolean.TRUE.equals(decided.get(B)), sp.narrowed(B) > 0};
    }

    /**
     * One decision as hpf makes it for a queue of short commands (B, 200 us) behind A, held in
     * time: held while A works, let run while it is idle; the node's space tells only widths (it
     * narrowed nothing), or nothing at all ({@code widths} false).
     * @return {B held, B's guard or null}
     */
    static Object[] stepShort(ArrivalGuards guards, long now, boolean aReady, long aSince, boolean widths) {
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, aReady));
        ArrivalGuards.Space sp = widths ? ArrivalGuards.Space.widths(h -> h == A ? new dev.xq.policy.spi.QueueSpace(false, 132, 132)
                : h == B ? new dev.xq.policy.spi.QueueSpace(true, 8, 132) : dev.xq.policy.spi.QueueSpace.NONE) : ArrivalGuards.Space.NONE;
        guards.update("hpf", now, List.of(prioritized(A, 2, aReady, aSince, 0), behind(200_000L, now)), decided, sp);
        return new Object[] {Boolean.TRUE.equals(decided.get(B)), guards.given().get(B)};
    }

    /**
     * A wide queue's first requests after a quiet spell, before its beat is known: a queue of short
     * commands held in time behind it (a trainer beside a CUDA graph service) is held between them
     * too, not let run into the next one unguarded (the graph's requests 2-4 at 2.0-3.8 ms against
     * 1.6-1.9 in 15 of 16 such runs on the H200); once the beat is known it runs between them under
     * its guard. A wide queue without a beat holds it through its first four intervals or 250 ms
     * from its return, whichever is longer, only; with
     * no widths to tell a wide queue (nothing of the node's in space), nothing changes.
     */
    @Test
    void aWideQueuesFirstRequestsHoldTheShortCommandsBehindItUntilItsBeatIsKnown() {
        for (boolean widths : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            long t0 = 1000 * MS;
            for (int i = 0; i < 5; i++) { // A's warm-up, long before (its width seen), then quiet
                long at = t0 + i * 9 * MS;
                stepShort(guards, at, true, at, widths);
                stepShort(guards, at + 8 * MS, false, 0, widths);
            }
            long go = t0 + 3000 * MS;
            for (int i = 0; i < 8; i++) {
                long at = go + i * 25 * MS;
                stepShort(guards, at, true, at, widths);
                Object[] idle = stepShort(guards, at + 2 * MS, false, 0, widths);
                Object[] later = stepShort(guards, at + 12 * MS, false, 0, widths);
                if (!widths) {
                    assertFalse((Boolean) idle[0] || (Boolean) later[0], "no widths: let run between A's requests as before, after request " + (i + 1));
                } else if (i < 2) {
                    assertTrue((Boolean) idle[0] && (Boolean) later[0], "held between A's first requests, before its beat, after request " + (i + 1));
                } else if (i >= 3) {
                    assertFalse((Boolean) later[0], "let run between A's requests once its beat is known, after request " + (i + 1));
                    assertNotNull(later[1], "under A's guard, after request " + (i + 1));
                }
            }
            if (widths) {
                assertTrue(guards.firstHeld() > 0, "counted");
            }
        }
        // a wide queue without a beat: held through its first four intervals, then let run
        ArrivalGuards irregular = new ArrivalGuards();
        long t0 = 1000 * MS;
        for (int i = 0; i < 5; i++) {
            long at = t0 + i * 9 * MS;
            stepShort(irregular, at, true, at, true);
            stepShort(irregular, at + 8 * MS, false, 0, true);
        }
        long go = t0 + 3000 * MS;
        long[] offsets = {0, 31, 52, 97, 120, 170, 185, 240, 262, 330};
        for (int i = 0; i < offsets.length; i++) {
            long at = go + offsets[i] * MS;
            stepShort(irregular, at, true, at, true);
            Object[] idle = stepShort(irregular, at + 2 * MS, false, 0, true);
            if (i < 4 || offsets[i] < 240) {
                assertTrue((Boolean) idle[0], "held after arrival " + (i + 1) + " of a wide queue without a beat");
            } else if (offsets[i] > 250) {
                assertFalse((Boolean) idle[0], "let run after arrival " + (i + 1) + ": its first four intervals and 250 ms are over");
            }
        }
    }

    /**
     * A wide queue whose requests come at random (a batch service at exponential gaps of 100 ms on
     * average, 8 ms each) has a gap of 250 ms or more about once in twelve requests, and each such
     * return began "first arrivals" holding the short commands behind it through its next four
     * requests while a beat was learnt that never came (a bf16 trainer beside such a batch spent
     * 45 % of an H200 run in those holds, 0.71 of native sharing, session 82). Once two returns
     * in a row found no beat, the returns hold nothing; off ({@code randomReturns} false) they
     * hold as before. A service on a beat that pauses now and then keeps its first arrivals' holds
     * at every return (each finds the beat again).
     */
    @Test
    void aWideQueueWhoseReturnsFindNoBeatHoldsNothingThroughItsFirstRequests() {
        int[] heldLate = new int[2];
        int[] looks = new int[2];
        for (int k = 0; k < 2; k++) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.randomReturns(k == 0);
            java.util.Random rng = new java.util.Random(82);
            long start = 1000 * MS;
            long at = start;
            for (int i = 0; i < 600; i++) {
                stepShort(guards, at, true, at, true);
                stepShort(guards, at + 8 * MS, false, 0, true);
                long gap = Math.max(12 * MS, (long) (-Math.log(1 - rng.nextDouble()) * 100 * MS));
                // B's look between two requests, 6 ms after one ended; past the first 10 s only
                Object[] between = stepShort(guards, at + 14 * MS, false, 0, true);
                if (gap > 20 * MS && at - start > 10_000 * MS) {
                    looks[k]++;
                    heldLate[k] += (Boolean) between[0] ? 1 : 0;
                }
                at += gap;
            }
        }
        assertTrue(looks[0] > 300 && looks[0] == looks[1], "the same looks both ways: " + looks[0] + ", " + looks[1]);
        assertTrue(heldLate[1] * 10 > looks[1], "off: held between the requests after its returns, " + heldLate[1] + " of " + looks[1]);
        assertTrue(heldLate[0] * 100 <= looks[0], "on: held between the requests at most once in a hundred, " + heldLate[0] + " of " + looks[0]);

        // on a beat, with pauses of a second now and then and a warm-up of requests back to back
        // before the first: every decision as with the rule off (each return finds the beat)
        List<List<Boolean>> seen = new java.util.ArrayList<>();
        for (boolean on : new boolean[] {true, false}) {
            ArrivalGuards beat = new ArrivalGuards();
            beat.randomReturns(on);
            List<Boolean> held = new java.util.ArrayList<>();
            long at = 1000 * MS;
            for (int i = 0; i < 5; i++) {
                stepShort(beat, at + i * 9 * MS, true, at + i * 9 * MS, true);
                stepShort(beat, at + i * 9 * MS + 8 * MS, false, 0, true);
            }
            at += 3000 * MS;
            for (int burst = 0; burst < 6; burst++) {
                for (int i = 0; i < 40; i++) {
                    held.add((Boolean) stepShort(beat, at, true, at, true)[0]);
                    held.add((Boolean) stepShort(beat, at + 2 * MS, false, 0, true)[0]);
                    held.add((Boolean) stepShort(beat, at + 12 * MS, false, 0, true)[0]);
                    at += 25 * MS;
                }
                at += (burst % 2 == 0 ? 1000 : 300) * MS;
            }
            seen.add(held);
        }
        assertEquals(seen.get(1), seen.get(0), "a service on a beat: the same decisions with the rule on and off");
        assertTrue(seen.get(0).contains(Boolean.TRUE) && seen.get(0).contains(Boolean.FALSE), "held and let run: " + seen.get(0));
    }

    /**
     * {@link #stepShort} (with widths) where A has priority {@code aPriority} (none: null) and B
     * priority 1 or none ({@code bHint} false); B is held while A works, as a decision holding it
     * for any reason would.
     * @return {B held, B's guard or null}
     */
    static Object[] stepShortRanked(ArrivalGuards guards, long now, boolean aReady, long aSince, Integer aPriority, boolean bHint) {
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, aReady));
        ArrivalGuards.Space sp = ArrivalGuards.Space.widths(h -> h == A ? new dev.xq.policy.spi.QueueSpace(false, 132, 132)
                : h == B ? new dev.xq.policy.spi.QueueSpace(true, 8, 132) : dev.xq.policy.spi.QueueSpace.NONE);
        QueueView a = new QueueView(A, "q" + A, "d0", "g" + A, aReady, false, false, aReady ? aSince : 0, 0, 0, aReady ? 1 : 0, 0, 0, 0,
                aPriority == null ? List.of() : List.of(new dev.xq.api.Hint.Priority(aPriority)), PreemptionLevel.BLOCK);
        QueueView b = new QueueView(B, "q" + B, "d0", "g" + B, true, false, false, 5, 0, 0, 1, 0, now / MS, 200_000L,
                bHint ? List.of(new dev.xq.api.Hint.Priority(1)) : List.of(), PreemptionLevel.BLOCK);
        guards.update("hpf", now, List.of(a, b), decided, sp);
        return new Object[] {Boolean.TRUE.equals(decided.get(B)), guards.given().get(B)};
    }

    /**
     * A wide queue of B's own priority that arrives while B is held for another reason (on its
     * turn, behind a third queue) is not one B yields to: B is not held through its first
     * requests nor guarded against its beat (a Triton loop's steps held a GEMM process up to
     * 100 ms at a time on the H200, session 67). One of a higher priority still holds B (the
     * control), and where either has no priority (a policy of deadlines) the decisions' word
     * stands, as before.
     */
    @Test
    void aQueueOfTheSamePriorityIsNotOneToYieldTo() {
        record Case(Integer aPriority, boolean bHint, boolean yields) {
        }
        for (Case c : List.of(new Case(1, true, false), new Case(0, true, false), new Case(2, true, true), new Case(null, true, true),
                new Case(1, false, true))) {
            ArrivalGuards guards = new ArrivalGuards();
            long t0 = 1000 * MS;
            for (int i = 0; i < 5; i++) { // A's warm-up, long before (its width seen), then quiet
                long at = t0 + i * 9 * MS;
                stepShortRanked(guards, at, true, at, c.aPriority(), c.bHint());
                stepShortRanked(guards, at + 8 * MS, false, 0, c.aPriority(), c.bHint());
            }
            long go = t0 + 3000 * MS;
            boolean heldBetween = false;
            boolean guarded = false;
            for (int i = 0; i < 8; i++) {
                long at = go + i * 25 * MS;
                stepShortRanked(guards, at, true, at, c.aPriority(), c.bHint());
                Object[] idle = stepShortRanked(guards, at + 2 * MS, false, 0, c.aPriority(), c.bHint());
                Object[] later = stepShortRanked(guards, at + 12 * MS, false, 0, c.aPriority(), c.bHint());
                heldBetween |= (Boolean) idle[0] || (Boolean) later[0];
                guarded |= later[1] != null;
            }
            assertEquals(c.yields(), heldBetween, "held between A's first requests: " + c);
            assertEquals(c.yields(), guarded, "guarded against A's beat: " + c);
            assertEquals(c.yields(), guards.firstHeld() > 0, "counted as held through A's first arrivals: " + c);
        }
    }

    /** {@link #step} with A's completed commands given; gap[0]: what the wide beats gave B's owner of the gap (-1: nothing). */
    static boolean[] stepCounted(ArrivalGuards guards, long now, boolean aReady, long aSince, long aCompleted, long[] gap) {
        TestSpace sp = space(132, 1, List.of());
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        QueueView a = new QueueView(A, "q" + A, "d0", "g" + A, aReady, false, false, aReady ? aSince : 0, 0, 0, aReady ? 1 : 0, 0,
                aCompleted, 0, List.of(new dev.xq.api.Hint.Priority(2)), PreemptionLevel.BLOCK);
        guards.update("hpf", now, List.of(a, behind(21 * MS, now)), decided, sp);
        gap[0] = sp.gaps.getOrDefault(B, -1L);
        return new boolean[] {Boolean.TRUE.equals(decided.get(B)), sp.narrowed(B) > 0};
    }

    /**
     * Requests that all have the same number of commands (an inference service of fixed shapes)
     * end at an idle that has completed that many since the arrival: the long commands behind are
     * let go then, not held for the longest busy period, and the gap they are given is the whole
     * time to the next arrival. Requests whose counts differ keep the hold.
     */
    @Test
    void requestsOfOneCommandCountEndWhenTheirCommandsAreDone() {
        for (boolean same : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.lingerNanos(0);
            long go = longWarmUp(guards, 12);
            long completed = 0;
            long[] gap = new long[1];
            long gapBefore = 0;
            for (int i = 0; i < 14; i++) {
                long at = go + i * 100 * MS;
                stepCounted(guards, at, true, at, completed, gap);
                completed += same ? 300 : 300 + i % 3;
                long busy = i == 1 ? 13 : 8; // one slow request: the hold is 13 ms
                boolean[] idle = stepCounted(guards, at + busy * MS, false, 0, completed, gap);
                if (i == 6) {
                    gapBefore = gap[0];
                }
                if (i >= 4 && i < 8) {
                    assertTrue(idle[0] && !idle[1], "held 8 ms into a request while its commands' count is learnt, request " + (i + 1));
                } else if (i >= 8) {
                    if (same) {
                        assertFalse(idle[0] || idle[1], "let go once its request's commands are done, request " + (i + 1));
                    } else {
                        assertTrue(idle[0] && !idle[1], "held: requests whose counts differ, request " + (i + 1));
                    }
                }
            }
            if (same) {
                assertEquals(gapBefore + 5 * MS, gap[0], "the gap from the request's usual end, not from the hold's");
            } else {
                assertEquals(gapBefore, gap[0], "the gap from the hold's end");
            }
        }
    }

    /**
     * Where its requests' commands are known, a stall inside a request longer than the hold
     * keeps the long commands behind held until the request has done its commands, and the
     * work after the stall is the same request, not an arrival: the beat stays where it was
     * (counted as an arrival, an eager batch's beat moved by 28 ms and a GEMM launched whole
     * 2 ms before its next request, which took 62 ms, H200). Without known counts the hold
     * lets the long commands go in the stall and the return moves the beat.
     */
    @Test
    void aStallInsideARequestOfKnownCommandsKeepsItsBeat() {
        for (boolean same : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.lingerNanos(0);
            long go = longWarmUp(guards, 12);
            long completed = 0;
            long[] gap = new long[1];
            for (int i = 0; i < 12; i++) {
                long at = go + i * 100 * MS;
                stepCounted(guards, at, true, at, completed, gap);
                completed += same ? 300 : 300 + i % 3;
                stepCounted(guards, at + (i == 1 ? 13 : 8) * MS, false, 0, completed, gap);
            }
            long at = go + 1200 * MS;
            stepCounted(guards, at, true, at, completed, gap);
            boolean[] stall = stepCounted(guards, at + 5 * MS, false, 0, completed + 200, gap);
            assertTrue(stall[0] && !stall[1], "held in a stall within the hold");
            boolean[] late = stepCounted(guards, at + 20 * MS, false, 0, completed + 200, gap);
            if (same) {
                assertTrue(late[0] && !late[1], "still held past the hold: a third of the request's commands to do");
            } else {
                assertFalse(late[0] || late[1], "let go past the hold where the counts are not known");
            }
            stepCounted(guards, at + 35 * MS, true, at + 35 * MS, completed + 200, gap);
            boolean[] end = stepCounted(guards, at + 40 * MS, false, 0, completed + 300, gap);
            ArrivalGuards.Beat beat = guards.beat(A, at + 41 * MS);
            if (same) {
                assertFalse(end[0] || end[1], "let go once the request's commands are done");
                assertNotNull(beat, "the beat kept");
                assertEquals(at + 100 * MS, beat.nextNanos(), "the next arrival foreseen from the request's start");
                // a request that stops short of its commands holds them for half the period at most
                long next = at + 100 * MS;
                stepCounted(guards, next, true, next, completed + 300, gap);
                boolean[] short1 = stepCounted(guards, next + 45 * MS, false, 0, completed + 400, gap);
                boolean[] short2 = stepCounted(guards, next + 55 * MS, false, 0, completed + 400, gap);
                assertTrue(short1[0] && !short1[1], "held within half the period");
                assertFalse(short2[0] || short2[1], "let go half the period after the arrival");
            } else {
                assertTrue(beat == null || beat.nextNanos() != at + 100 * MS, "the return counted as an arrival without known counts");
            }
        }
    }

    static long longWarmUp(ArrivalGuards guards, long firstMs) {
        long t0 = 1000 * MS;
        step(guards, t0, 132, true, t0);
        step(guards, t0 + firstMs * MS, 132, false, 0);
        return warmUp(guards, t0 + (firstMs + 10) * MS, 132, 5) + 3000 * MS;
    }

    /**
     * The hold behind a wide queue idle early in its request lasts its longest busy period since
     * its latest quiet spell, once four have ended: a warm-up's long first request (every lazy
     * cost in it) does not hold the long commands behind 8 ms requests for a quarter of the
     * period after each arrival; a long request after the spell does.
     */
    @Test
    void afterFourRequestsTheHoldIsTheirsNotTheWarmUps() {
        ArrivalGuards guards = new ArrivalGuards();
        guards.lingerNanos(0);
        long go = longWarmUp(guards, 60);
        for (int i = 0; i < 7; i++) {
            long at = go + i * 100 * MS;
            step(guards, at, 132, true, at);
            boolean[] idle = step(guards, at + 9 * MS, 132, false, 0); // done after 9 ms
            if (i == 2 || i == 3) {
                assertTrue(idle[0] && !idle[1], "held: fewer than four requests since the quiet, arrival " + (i + 1));
                assertEquals(at + 25 * MS, guards.lingerWake(), "until a quarter of the period (the warm-up's request, capped)");
            } else if (i >= 4) {
                assertFalse(idle[0] || idle[1], "whole once its request is over, arrival " + (i + 1));
            }
        }
        // one request of 20 ms in this phase: an idle 9 ms into the next is early again
        long at = go + 700 * MS;
        step(guards, at, 132, true, at);
        step(guards, at + 20 * MS, 132, false, 0);
        at += 100 * MS;
        step(guards, at, 132, true, at);
        boolean[] early = step(guards, at + 9 * MS, 132, false, 0);
        assertTrue(early[0] && !early[1], "held: 9 ms into a request where one took 20");
        assertEquals(at + 20 * MS, guards.lingerWake(), "until this phase's longest request has passed");
        // sixteen requests of 9 ms since the quiet spell, none with a stall: the slow one was a
        // slow request, not a stall, and no longer holds (kept for the whole phase, it held the
        // GEMMs behind an eager batch after each of its requests: 0.67-0.70 of native sharing
        // against 0.88-0.97, H200; kept for sixteen busy periods, a graph's one slow request left
        // a GEMM that fitted its gaps none of them)
        for (int i = 1; i <= 9; i++) {
            at += 100 * MS;
            step(guards, at, 132, true, at);
            boolean[] idle = step(guards, at + 9 * MS, 132, false, 0);
            if (i < 7) {
                assertTrue(idle[0] && !idle[1], "still held: fewer than sixteen requests told whole, request " + i);
            } else {
                assertFalse(idle[0] || idle[1], "whole once sixteen requests in a row had no stall, request " + i);
            }
        }
        // an idle before its usual length is still early
        at += 100 * MS;
        step(guards, at, 132, true, at);
        boolean[] soon = step(guards, at + 4 * MS, 132, false, 0);
        assertTrue(soon[0] && !soon[1], "held: idle 4 ms into requests of 9");
        assertEquals(at + 9 * MS, guards.lingerWake(), "until its usual length");
    }

    /**
     * Where a queue's requests stall (an idle inside one, then its work again), the hold is the
     * longest of those that stalled, not a slow request that did not: an eager batch's requests
     * of 3 + 2 (stall) + 4 ms keep the queue behind held through the stall, and one slow request of
     * 20 ms without a stall does not hold it longer after the next ones.
     */
    @Test
    void theHoldIsTheLongestRequestThatStalled() {
        ArrivalGuards guards = new ArrivalGuards();
        guards.lingerNanos(0);
        long go = longWarmUp(guards, 60);
        long at = go;
        for (int i = 0; i < 24; i++) {
            at = go + i * 100 * MS;
            step(guards, at, 132, true, at);
            boolean[] stall = step(guards, at + 3 * MS, 132, false, 0);
            step(guards, at + 5 * MS, 132, true, at + 5 * MS);
            boolean[] end = step(guards, at + 9 * MS, 132, false, 0);
            if (i >= 6) {
                assertTrue(stall[0] && !stall[1], "held through the stall, request " + (i + 1));
                assertFalse(end[0] || end[1], "whole at its end, request " + (i + 1));
            }
        }
        at += 100 * MS;
        step(guards, at, 132, true, at);
        step(guards, at + 20 * MS, 132, false, 0); // slow, no stall
        at += 100 * MS;
        step(guards, at, 132, true, at);
        boolean[] stall = step(guards, at + 3 * MS, 132, false, 0);
        assertTrue(stall[0] && !stall[1], "held through the next one's stall");
        assertEquals(at + 9 * MS, guards.lingerWake(), "until the longest request that stalled, not the slow one");
        step(guards, at + 5 * MS, 132, true, at + 5 * MS);
        boolean[] end = step(guards, at + 9 * MS, 132, false, 0);
        assertFalse(end[0] || end[1], "whole at its end");
    }

    /**
     * The busy periods from before a quiet spell still tell a return from an arrival: a stall
     * inside a request after the spell, longer than any request since but within the warm-up's,
     * is the same request and keeps the beat (forgotten, the fragments of an eager batch's
     * requests counted as arrivals, no beat was found and the GEMMs behind it ran narrowed
     * through its requests: 2.7-7.5 x its standalone P99 on the H200).
     */
    @Test
    void theWarmUpsBusyPeriodsStillTellAReturnFromAnArrival() {
        ArrivalGuards guards = new ArrivalGuards();
        guards.lingerNanos(0);
        long go = longWarmUp(guards, 20);
        for (int i = 0; i < 6; i++) {
            long at = go + i * 100 * MS;
            step(guards, at, 132, true, at);
            step(guards, at + 8 * MS, 132, false, 0);
        }
        long at = go + 600 * MS;
        assertNotNull(guards.beat(A, at - MS), "the beat known");
        step(guards, at, 132, true, at);
        step(guards, at + 3 * MS, 132, false, 0);
        long back = at + 12 * MS; // past this phase's 8 ms, within the warm-up's 20
        step(guards, back, 132, true, back);
        step(guards, at + 15 * MS, 132, false, 0);
        ArrivalGuards.Beat beat = guards.beat(A, at + 16 * MS);
        assertNotNull(beat, "the beat holds");
        assertEquals(at + 100 * MS, beat.nextNanos(), "the next arrival foreseen from the request's start");
    }

    /**
     * A wide queue that never shows a beat (arrivals at random) holds the queue behind it for a
     * spell of learning only: {@value ArrivalGuards#LEARN_NANOS} ns after its first arrival it is narrowed
     * again, and spells that come back every time it is quiet stop holding anything once they
     * have cost the queue behind it more than one spell's time, until that debt has fallen.
     */
    @Test
    void learningEndsAndComesBackOnlyOnceInAWhile() {
        ArrivalGuards guards = new ArrivalGuards();
        long t = warmUp(guards, 1000 * MS, 132, 10) + 3000 * MS;
        long[] gaps = {90, 130, 70, 150, 110, 120, 95, 140}; // arrivals at 0, 90, 220, 290, 440, 550, 670, 765 ms
        int heldUntil = -1;
        for (int i = 0; i < gaps.length; i++) {
            boolean[] arrival = step(guards, t, 132, true, t);
            boolean[] idle = step(guards, t + 8 * MS, 132, false, 0);
            if (arrival[0] && !arrival[1] && idle[0] && !idle[1]) {
                heldUntil = i;
            } else {
                assertTrue(arrival[1] && idle[1], "narrowed once learning is over, arrival " + (i + 1));
            }
            t += gaps[i] * MS;
        }
        assertEquals(5, heldUntil, "held for the spell's 600 ms only");
        // a burst of three requests, then quiet: the spell ends with the burst, not 600 ms after its start
        ArrivalGuards burst = new ArrivalGuards();
        long b0 = warmUp(burst, 1000 * MS, 132, 10) + 3000 * MS;
        for (long at : new long[] {b0, b0 + 90 * MS, b0 + 220 * MS}) {
            boolean[] held = step(burst, at, 132, true, at);
            assertTrue(held[0] && !held[1], "held during the burst");
            step(burst, at + 8 * MS, 132, false, 0);
        }
        assertEquals(b0 + 220 * MS + ArrivalGuards.QUIET_NANOS, burst.lingerWake(), "decided again when the burst has gone quiet");
        boolean[] after = step(burst, b0 + 480 * MS, 132, false, 0);
        assertFalse(after[0] && !after[1], "not held once the burst has gone quiet, 480 ms into the spell");
        // quiet, then a request, again and again: a spell each time, while their debt allows
        int spells = 0;
        long[] quiet = {300, 420, 280, 510, 350, 460, 270, 390, 330, 480}; // no beat
        for (int i = 0; i < 10; i++) {
            t += quiet[i] * MS;
            boolean[] a = step(guards, t, 132, true, t);
            step(guards, t + 8 * MS, 132, false, 0);
            if (a[0] && !a[1]) {
                spells++;
            }
        }
        assertTrue(spells >= 1 && spells <= 4, "spells paid for: " + spells + " of 10");
        // after a long quiet the debt has fallen: it learns again
        t += ArrivalGuards.LEARN_DECAY * 2 * ArrivalGuards.LEARN_NANOS;
        boolean[] later = step(guards, t, 132, true, t);
        assertTrue(later[0] && !later[1], "a spell again after a while");
    }

    /**
     * An eager batch's busy periods as the interposer's timeline recorded them on the H200 (session
     * 42, call 4, bulk+gemm: 0.2 ms idle or more between two of them), in us after its first request
     * for real: its warm-up (back to back, from -171 ms), then requests every 100 ms, several of them
     * in two pieces (its owner's stalls: 204.2 after 200.3, 403.5 after 400.3, 508.6 after 500.3).
     * Up to 510 ms: after it a GEMM ran narrowed beside the batch and its requests took 19-51 ms.
     */
    static final long[][] EAGER_BATCH_US = {{-170624, -168200}, {-127092, -125246}, {-116336, -115530}, {-114867, -113464},
        {-112329, -107821}, {-107545, -105834}, {-105524, -104021}, {-103062, -100313}, {-99985, -96524}, {-95957, -94251},
        {-93039, -90915}, {-90459, -82260}, {-81305, -77774}, {-77276, -74696}, {-74343, -72875}, {-71141, -63530},
        {-63301, -61240}, {-60362, -54659}, {-54345, -48605}, {-46188, -39063}, {-38332, -37104}, {-36316, -30648},
        {-30159, -22398}, {-3791, -1121}, {206, 2050}, {2729, 9077}, {100277, 109824}, {200294, 203857}, {204214, 210157},
        {300282, 309580}, {400303, 402277}, {403503, 410525}, {500290, 506409}, {508622, 510000}};

    /**
     * The recorded batch beside a GEMM (21 ms commands): its beat is found inside its own requests'
     * fragments, by its fourth request for real, within the spell of learning its warm-up began,
     * and the GEMM runs whole between its requests from there, foreseen at the request's start
     * plus the period (not at its latest fragment's). With every busy period an arrival until a
     * beat is known, none was by then: the GEMM ran narrowed beside requests 5-9 (20-52 ms against
     * 8-11).
     */
    @Test
    void anEagerBatchsBeatIsFoundThroughTheFragmentsOfItsRequests() {
        ArrivalGuards guards = new ArrivalGuards();
        long base = 10_000 * MS;
        long wholeFrom = Long.MAX_VALUE;
        boolean narrowedBeside = false;
        for (long[] busy : EAGER_BATCH_US) {
            long at = base + busy[0] * 1000;
            boolean[] arrival = step(guards, at, 132, true, at);
            boolean[] idle = step(guards, base + busy[1] * 1000, 132, false, 0);
            narrowedBeside |= arrival[1] || idle[1];
            if (!idle[0] && !idle[1] && wholeFrom == Long.MAX_VALUE) {
                wholeFrom = busy[0];
            }
        }
        assertFalse(narrowedBeside, "never narrowed beside it");
        // the spell began with the warm-up's first arrival: it ends 429.4 ms after the first request
        assertEquals(403_503, wholeFrom, "whole between its requests from the end of its fourth (its second piece): from " + wholeFrom + " us");
        ArrivalGuards.Beat beat = guards.beat(A, base + 510 * MS);
        assertEquals(base + 500_290_000L + beat.periodNanos(), beat.nextNanos(), "foreseen at the fifth request's start plus the period: " + beat);
        assertEquals(100 * MS, beat.periodNanos(), 100_000, "the requests' period");
    }

    /**
     * The requests' beat through their fragments: the period of the requests, the next one
     * foreseen from the latest request's start, not from its fragment; nothing where the arrivals
     * after a request's start run past a quarter of the period (a token loop's generations) or
     * come at random.
     */
    @Test
    void theBeatOfRequestsInFragments() {
        long[] d = {2_523_000, 97_548_000, 100_017_000, 3_920_000, 96_068_000, 100_021_000, 3_200_000};
        assertEquals(-1, ArrivalGuards.rhythmOf(d, d.length)[1], "no beat of the arrivals themselves");
        long[] found = ArrivalGuards.requestRhythmOf(d, d.length);
        assertNotNull(found, "the requests' beat");
        assertEquals(100_021_000, found[0], 100_000, "period");
        assertTrue(found[1] >= 0 && found[1] <= ArrivalGuards.MAX_JITTER_NANOS, "jitter " + found[1]);
        assertEquals(3_200_000, found[2], "the latest request began one fragment before the latest arrival");
        // a token loop: 20 tokens 3 ms apart, a pause of 153 ms, again
        long[] tokens = new long[16];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = i % 8 == 7 ? 153 * MS : 3 * MS;
        }
        assertNull(ArrivalGuards.requestRhythmOf(tokens, tokens.length), "its generations are no requests of a beat");
        // at random: exponential intervals of 20 ms with fragments of 0.3-3 ms after a third of them
        java.util.Random r = new java.util.Random(42);
        int beats = 0;
        int arrivalBeats = 0;
        int trials = 100_000;
        for (int trial = 0; trial < trials; trial++) {
            long[] x = new long[16];
            for (int i = 0; i < x.length; i++) {
                x[i] = r.nextInt(3) == 0 ? 300_000 + r.nextInt(2_700_000) : (long) (-Math.log(1 - r.nextDouble()) * 20 * MS) + 1;
            }
            if (ArrivalGuards.rhythmOf(x, x.length)[1] >= 0) {
                arrivalBeats++;
            } else if (ArrivalGuards.requestRhythmOf(x, x.length) != null) {
                beats++;
            }
        }
        System.out.println("beats at random: of arrivals " + arrivalBeats + ", of requests " + beats + " of " + trials);
        assertTrue(beats < trials / 1000, "a requests' beat at random in " + beats + " of " + trials);
    }

    /**
     * One decision of {@link #aGapMeasuredBesideTheQueueBehindIsNotTheGapItWouldLeave}: A (a graph
     * tenant, one command a request) ready since {@code aSince} or idle with {@code completed}
     * done, B with commands of {@code command} (null: B has no work). @return {held, narrowed}
     */
    static boolean[] stepGraph(ArrivalGuards guards, long now, boolean aReady, long aSince, long completed, Long command) {
        TestSpace sp = space(132, 1, List.of());
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        QueueView a = new QueueView(A, "q" + A, "d0", "g" + A, aReady, false, false, aReady ? aSince : 0, 0, 0, aReady ? 1 : 0, 0,
                completed, 0, List.of(new dev.xq.api.Hint.Priority(2)), PreemptionLevel.BLOCK);
        QueueView b = command == null
                ? new QueueView(B, "q" + B, "d0", "g" + B, false, false, false, 0, 0, 0, 0, 0, 0, 0, List.of(new dev.xq.api.Hint.Priority(1)),
                        PreemptionLevel.BLOCK)
                : behind(command, now);
        guards.update("hpf", now, List.of(a, b), decided, sp);
        return new boolean[] {Boolean.TRUE.equals(decided.get(B)), sp.narrowed(B) > 0};
    }

    /**
     * A graph tenant on a 25 ms beat whose requests take 2.3 ms alone and 3.2 ms beside a GEMM
     * narrowed next to it: the GEMM's first estimates are too long for the gap (30 ms), so it runs
     * narrowed beside the requests for a while; once its estimate is 21.1 ms it fits the gap the
     * tenant leaves when it runs alone (25 - 2.3 - the node's reaction), and runs whole between
     * the requests, held during them. Reckoned from the busy periods measured beside the narrowed
     * GEMM, the gap was 21.7 ms and the GEMM stayed narrowed for good (0.47 of native sharing,
     * the graph at 1.56-1.58 x its standalone P99, four runs of four, H200).
     */
    @Test
    void aGapMeasuredBesideTheQueueBehindIsNotTheGapItWouldLeave() {
        ArrivalGuards guards = new ArrivalGuards();
        guards.lingerNanos(0);
        long t = 10_000 * MS;
        long completed = 0;
        boolean[] between = null;
        boolean[] atArrival = null;
        boolean narrowedBeside = false;
        for (int i = 0; i < 120; i++) {
            long at = t + i * 25 * MS;
            Long command = i < 30 ? null : i < 60 ? Long.valueOf(30 * MS) : Long.valueOf(21_100_000L);
            atArrival = stepGraph(guards, at, true, at, completed, command);
            boolean beside = command != null && atArrival[1];
            narrowedBeside |= i >= 30 && i < 60 && beside;
            completed++;
            long end = at + (beside ? 3_200_000L : 2_300_000L);
            stepGraph(guards, end, false, 0, completed, command);
            between = stepGraph(guards, end + 5 * MS, false, 0, completed, command);
        }
        assertTrue(narrowedBeside, "narrowed beside the requests while its commands did not fit");
        assertFalse(between[0] || between[1], "whole between the requests once its commands fit the gap left alone");
        assertTrue(atArrival[0] && !atArrival[1], "held during them");
    }

    /**
     * Behind a wide tenant on a 100 ms beat (8 ms requests) and an eager decoder without a beat
     * (working throughout, {@code decoderWidth} wide), a GEMM process (21 ms commands) narrowed
     * by the decision to leave half the device. @return at A's idle: {held, what B leaves}, at its
     * arrival: {held, what B leaves}, and B's guard at A's idle
     */
    static Object[] besideADecoder(int decoderWidth) {
        return besideADecoder(decoderWidth, false);
    }

    static Object[] besideADecoder(int decoderWidth, boolean narrowedGuards) {
        ArrivalGuards guards = new ArrivalGuards();
        guards.narrowedGuards(narrowedGuards);
        long t = 10_000 * MS;
        Object[] r = null;
        for (int i = 0; i < 30; i++) {
            long at = t + i * 100 * MS;
            Object[] arrival = stepDecoder(guards, at, true, at, decoderWidth);
            Object[] idle = stepDecoder(guards, at + 8 * MS, false, 0, decoderWidth);
            r = new Object[] {idle[0], idle[1], arrival[0], arrival[1], guards.given().get(B)};
        }
        return r;
    }

    static Object[] stepDecoder(ArrivalGuards guards, long now, boolean aReady, long aSince, int decoderWidth) {
        TestSpace sp = space(132, 1, List.of());
        sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, decoderWidth, 132));
        java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
        guards.update("hpf", now, List.of(prioritized(A, 2, aReady, aSince, 0), prioritized(3, 3, true, 7, 0), behind(21 * MS, now)),
                decided, sp);
        return new Object[] {decided.get(B), sp.narrowed(B)};
    }

    /**
     * Beside a wide tenant on a 100 ms beat (busy 8 ms, a large batch) and an eager decoder on a
     * 60 ms beat (requests of 18 ms, 24 of 132 multiprocessors), a trainer's short commands (100 us)
     * fit both beats' gaps. Off: held while either works, the decoder's requests
     * included. On ({@code narrowBeatsKeepReserve}, the default since session 81): while only the decoder works it runs on the
     * device less the decoder's reserve (24), and it is held while the batch works, as before.
     * (H200, session 80: the trainers at 0.70-0.77 of native sharing beside a decoder and a graph or
     * a batch, "held while they work".)
     */
    @Test
    void aNarrowTenantOnABeatKeepsItsReserveBesideAWideOneWhenAsked() {
        int[][] got = new int[2][];
        for (int k = 0; k < 2; k++) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.narrowBeatsKeepReserve(k == 1);
            long t0 = 10_000 * MS;
            int decoderOnlyHeld = 0;
            int decoderOnlyBeside = 0;
            int wideHeld = 0;
            int wideNarrowed = 0;
            for (long now = t0; now < t0 + 4_000 * MS; now += 2 * MS) {
                long inA = (now - t0) % (100 * MS);
                boolean aReady = inA < 8 * MS;
                long inD = (now - t0 - 30 * MS) % (60 * MS);
                boolean dReady = now >= t0 + 30 * MS && inD < 18 * MS;
                TestSpace sp = space(132, 1, List.of());
                sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
                java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                guards.update("hpf", now, List.of(prioritized(A, 2, aReady, now - inA, 0), prioritized(3, 3, dReady, now - inD, 0),
                        behind(100_000L, now)), decided, sp);
                if (now < t0 + 2_000 * MS) {
                    continue; // past the beats' learning
                }
                boolean held = Boolean.TRUE.equals(decided.get(B)) && sp.narrowed(B) == 0;
                if (dReady && !aReady && inA > 10 * MS) {
                    decoderOnlyHeld += held ? 1 : 0;
                    decoderOnlyBeside += sp.narrowed(B) == 24 ? 1 : 0;
                } else if (aReady) {
                    wideHeld += held ? 1 : 0;
                    wideNarrowed += sp.narrowed(B) > 0 ? 1 : 0;
                }
            }
            got[k] = new int[] {decoderOnlyHeld, decoderOnlyBeside, wideHeld, wideNarrowed};
        }
        String both = "off " + java.util.Arrays.toString(got[0]) + ", on " + java.util.Arrays.toString(got[1])
                + " (decoder alone: held, beside 24; batch working: held, narrowed)";
        assertTrue(got[0][0] > 100, "off: held while the decoder works: " + both);
        assertEquals(0, got[0][1], "off: never beside the reserve: " + both);
        assertEquals(0, got[1][0], "on: never held while only the decoder works: " + both);
        assertTrue(got[1][1] > 100, "on: beside the decoder's reserve of 24: " + both);
        assertTrue(got[1][2] > 50 && got[1][3] == 0, "on: still held while the batch works: " + both);
    }

    /**
     * Beside a wide tenant on a 25 ms beat (busy 3 ms, a CUDA graph) and an eager decoder on a 60 ms
     * beat (18 ms requests, 24 of 132 multiprocessors), a GEMM whose 19 ms command fits the graph's
     * gaps on the whole device but not beside the decoder's reserve (23 ms on 108) does not keep
     * clear of the decoder by its reserve: held while either works and whole between their requests,
     * as without narrowBeatsKeepReserve, never left narrowed to the decision's half of the device,
     * unguarded through the graph's requests (the graph's P50 2.34 ms against 1.75 alone beside such
     * a GEMM, H200 session 81). A trainer's short commands beside the same two still keep clear by
     * the reserve alone (the test above).
     */
    @Test
    void aCommandThatFitsTheWideGapsOnlyWholeIsHeldForANarrowBeatToo() {
        ArrivalGuards guards = new ArrivalGuards();
        assertTrue(guards.narrowBeatsKeepReserve(), "on by default");
        long t0 = 10_000 * MS;
        int leftNarrowed = 0;
        int besideReserve = 0;
        int heldDecoderOnly = 0;
        int decoderOnly = 0;
        int wholeInGaps = 0;
        for (long now = t0; now < t0 + 4_000 * MS; now += MS) {
            long inA = (now - t0) % (25 * MS);
            boolean aReady = inA < 3 * MS;
            long inD = (now - t0 - 7 * MS) % (60 * MS);
            boolean dReady = now >= t0 + 7 * MS && inD < 18 * MS;
            TestSpace sp = space(132, 1, List.of());
            sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
            java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
            guards.update("hpf", now, List.of(prioritized(A, 2, aReady, now - inA, 0), prioritized(3, 3, dReady, now - inD, 0),
                    behind(19 * MS, now)), decided, sp);
            if (now < t0 + 2_000 * MS) {
                continue; // past the beats' learning
            }
            int narrowed = sp.narrowed(B);
            boolean held = Boolean.TRUE.equals(decided.get(B)) && narrowed == 0;
            leftNarrowed += narrowed == 64 ? 1 : 0;
            besideReserve += narrowed == 24 ? 1 : 0;
            if (dReady && !aReady && inA > 4 * MS) {
                decoderOnly++;
                heldDecoderOnly += held ? 1 : 0;
            }
            if (!aReady && !dReady && inA > 4 * MS && inA < 6 * MS && Boolean.FALSE.equals(decided.get(B)) && narrowed == 0) {
                wholeInGaps++;
            }
        }
        String all = "left narrowed " + leftNarrowed + ", beside the reserve " + besideReserve + ", held while only the decoder works "
                + heldDecoderOnly + " of " + decoderOnly + ", whole in the gaps " + wholeInGaps;
        assertEquals(0, leftNarrowed, "never left narrowed to half the device: " + all);
        assertEquals(0, besideReserve, "never beside the decoder's reserve, where it does not fit the graph's gaps: " + all);
        assertTrue(decoderOnly > 100 && heldDecoderOnly == decoderOnly, "held through the decoder's requests: " + all);
        assertTrue(wholeInGaps > 20, "whole between the requests: " + all);
    }

    /**
     * Beside a wide tenant whose gaps it fits and an eager decoder without a beat, the GEMMs are
     * held through the wide tenant's requests and run between them on the device less the
     * decoder's reserve (its widest, in steps of 8), under the wide tenant's guard: narrowed to
     * half the device throughout instead, they ran at 0.61 of native sharing and the batch's P99
     * at 1.74 x its standalone (decoder, batch, GEMM and Triton, H200 session 42). A decoder wider
     * than half the device, or whose reserve is no narrower than the decision's, leaves them as
     * the decision had them.
     */
    @Test
    void besideAWideBeatAndANarrowDecoderTheDecodersReserveIsAllThatIsLeft() {
        Object[] r = besideADecoder(20);
        assertEquals(Boolean.TRUE, r[0], "a narrowing counts as a hold: " + java.util.Arrays.toString(r));
        assertEquals(24, r[1], "between the requests, on the device less the decoder's 20 (24 in steps of 8)");
        assertEquals(Boolean.TRUE, r[2], "held during a request");
        assertEquals(0, r[3], "held, not narrowed");
        ArrivalGuards.Guard g = (ArrivalGuards.Guard) r[4];
        assertNotNull(g, "under the wide tenant's guard");
        assertEquals(10_000 * MS + 30 * 100 * MS - ArrivalGuards.EARLY_MARGIN_NANOS, g.horizonNanos(), 1 * MS, "its next request: " + g);
        // a later decision that places nothing in space (a policy swapped for one that does not)
        // and holds B: no guard is left from the one before
        ArrivalGuards again = new ArrivalGuards();
        long t = 10_000 * MS;
        for (int i = 0; i < 30; i++) {
            long at = t + i * 100 * MS;
            stepDecoder(again, at, true, at, 20);
            stepDecoder(again, at + 8 * MS, false, 0, 20);
        }
        assertNotNull(again.given().get(B), "guarded while partly narrowed");
        long later = t + 30 * 100 * MS - 40 * MS;
        again.update("hpf", later, List.of(prioritized(A, 2, false, 0, 0), prioritized(3, 2, true, 7, 0), behind(21 * MS, later)),
                new java.util.HashMap<>(Map.of(B, true)));
        assertNull(again.given().get(B), "held, and nothing partly narrowed in this decision: no guard");
        Object[] same = besideADecoder(64);
        assertEquals(64, same[1], "a reserve of 64, no narrower than the decision's: " + java.util.Arrays.toString(same));
        assertEquals(64, same[3], "narrowed through the requests too");
        assertNull(same[4], "no guard");
        Object[] wide = besideADecoder(96);
        assertEquals(64, wide[1], "a decoder wider than half the device: " + java.util.Arrays.toString(wide));
        assertEquals(64, wide[3]);
    }

    /**
     * Beside a wide tenant on a 25 ms beat (busy 2 ms) and an eager decoder off any beat (reserve
     * 24 of 132 multiprocessors, requests at uneven intervals, tokens 5 ms apart), a 20 ms command
     * fits the wide tenant's gaps on the whole device but not beside the reserve (24 ms on 108).
     * On (an experiment, off by default): held while the decoder is within a request, run on the whole device between
     * the wide tenant's requests while it is not, and never left narrowed through a request of the
     * wide tenant. Off: left narrowed as decided, through them (a CUDA graph at 1.3-2.5 x its alone
     * P99 beside a GEMM narrowed to half of an H200, with a decoder and a trainer; session 74).
     */
    @Test
    void aCommandThatFitsTheGapsOnlyWholeIsHeldWhileTheDecoderWorksAndRunsWholeWhileItDoesNot() {
        for (boolean on : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.wholeBesideReserve(on);
            long t = 10_000 * MS;
            // the decoder's requests: start times at uneven intervals, 40 ms of tokens each
            long[] starts = new long[80];
            long at0 = t + 7 * MS;
            for (int k = 0; k < starts.length; k++) {
                starts[k] = at0;
                at0 += (k % 3 == 0 ? 90 : k % 3 == 1 ? 130 : 105) * MS;
            }
            int heldInRequest = 0;
            int wholeIdle = 0;
            int narrowedAtArrival = 0;
            int arrivals = 0;
            for (int i = 0; i < 240; i++) {
                long at = t + i * 25 * MS;
                boolean late = i >= WIDE_RUN_ARRIVALS;
                for (long now : new long[] {at, at + 2 * MS}) {
                    boolean aReady = now == at;
                    long token = -1;
                    long last = -1;
                    for (long st : starts) {
                        if (st <= now) {
                            last = Math.min(now, st + 40 * MS);
                            if (now < st + 40 * MS) {
                                token = st + (now - st) / (5 * MS) * 5 * MS;
                            }
                        }
                    }
                    boolean inRequest = token >= 0;
                    TestSpace sp = space(132, 1, List.of());
                    sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
                    java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                    guards.update("hpf", now, List.of(prioritized(A, 2, aReady, at, 0), prioritized(3, 3, inRequest, token, 0),
                            behind(20 * MS, now)), decided, sp);
                    if (!late) {
                        continue;
                    }
                    if (aReady) {
                        arrivals++;
                        narrowedAtArrival += sp.narrowed(B) > 0 ? 1 : 0;
                    } else if (inRequest) {
                        heldInRequest += Boolean.TRUE.equals(decided.get(B)) && sp.narrowed(B) == 0 ? 1 : 0;
                    } else if (now - last >= ArrivalGuards.RESERVE_REQUEST_NANOS) {
                        wholeIdle += Boolean.FALSE.equals(decided.get(B)) && sp.narrowed(B) == 0 ? 1 : 0;
                    }
                }
            }
            if (on) {
                assertEquals(0, narrowedAtArrival, "never narrowed at the wide tenant's arrivals (of " + arrivals + ")");
                assertTrue(arrivals > 200, "arrivals counted: " + arrivals);
                assertTrue(heldInRequest > 20, "held while the decoder is within a request: " + heldInRequest);
                assertTrue(wholeIdle > 10, "whole between the wide tenant's requests while the decoder is idle: " + wholeIdle);
            } else {
                assertTrue(narrowedAtArrival > arrivals / 2, "off: left narrowed through the requests: " + narrowedAtArrival + " of " + arrivals);
                assertEquals(0, wholeIdle, "off: never whole");
            }
        }
    }

    /**
     * {@code holdBesideNarrow}: B, named, beside an eager decoder (narrow, 24 of 132
     * multiprocessors, a request of 25 ms every 60 ms) and no wide tenant, is held in time while
     * the decoder is within a request and left narrowed as decided between its requests; unnamed
     * (or with nothing named) it stays narrowed throughout, as before.
     */
    @Test
    void aProcessNamedToHoldBesideANarrowTenantIsHeldThroughItsRequestsOnly() {
        for (String names : new String[] {"q2", "", "other,q9"}) {
            Scheduler.parseNames(names); // the node's own parsing of the setting
            ArrivalGuards guards = new ArrivalGuards();
            guards.holdBesideNarrow(Scheduler.parseNames(names));
            boolean named = names.equals("q2");
            long t = 10_000 * MS;
            int heldInRequest = 0;
            int narrowedInRequest = 0;
            int narrowedBetween = 0;
            int heldBetween = 0;
            for (int i = 0; i < 60 * 20; i++) {
                long now = t + i * MS;
                long st = t + (i / 60) * 60 * MS;
                boolean inRequest = now < st + 25 * MS;
                long token = inRequest ? st + (now - st) / (5 * MS) * 5 * MS : -1;
                TestSpace sp = new TestSpace();
                sp.narrowed.put(B, 24);
                sp.spaces.put(B, new dev.xq.policy.spi.QueueSpace(true, 8, 132));
                sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
                java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                guards.update("hpf", now, List.of(prioritized(3, 3, inRequest, token, 0), behind(20_000, now)), decided, sp);
                boolean held = Boolean.TRUE.equals(decided.get(B)) && sp.narrowed(B) == 0;
                if (inRequest) {
                    heldInRequest += held ? 1 : 0;
                    narrowedInRequest += sp.narrowed(B) > 0 ? 1 : 0;
                } else if (now - (st + 20 * MS) >= ArrivalGuards.RESERVE_REQUEST_NANOS) {
                    narrowedBetween += sp.narrowed(B) > 0 ? 1 : 0;
                    heldBetween += held ? 1 : 0;
                }
            }
            if (named) {
                assertEquals(0, narrowedInRequest, "named: never left narrowed within a request (held " + heldInRequest + ")");
                assertTrue(heldInRequest > 400, "named: held within the requests: " + heldInRequest);
                assertEquals(0, heldBetween, "named: not held between requests");
                assertTrue(narrowedBetween > 300, "named: narrowed between requests: " + narrowedBetween);
            } else {
                assertEquals(0, heldInRequest, "'" + names + "': never held");
                assertTrue(narrowedInRequest > 400 && narrowedBetween > 300, "'" + names + "': narrowed throughout: " + narrowedInRequest
                        + ", " + narrowedBetween);
            }
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Scheduler.parseNames("triton,train/0"));
        assertTrue(e.getMessage().contains("'train/0'") && e.getMessage().contains("allowed"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Scheduler.parseNames("triton, triton"));
        assertTrue(e.getMessage().contains("given twice"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Scheduler.parseNames("a,,b"));
    }

    /** Holds and slow requests of {@link #slowedRun}. */
    record SlowedRun(int slowRequests, int[] heldLast, int[] narrowedLast, ArrivalGuards.Slowed state, List<String> notes) {
    }

    /**
     * An eager decoder (q3: narrow, 24 of 132 multiprocessors, a request of {@code busyMs} every 60
     * ms) beside two best-effort processes narrowed on the rest (q2 and q4). Each request ends with a
     * device lag, slow where one of the {@code causes} ran beside it (was not held) at any decision
     * within it, or the last two of every {@code slowEvery} whatever ran (1: all; 0: none). Counts the slow requests, and how often each of
     * q2 and q4 was held / left narrowed within the last 20 requests.
     */
    static SlowedRun slowedRun(boolean on, java.util.Set<Long> causes, boolean alwaysSlow, int busyMs, int requests) {
        return slowedRun(on, causes, alwaysSlow ? 1 : 0, busyMs, requests, false);
    }

    static SlowedRun slowedRun(boolean on, java.util.Set<Long> causes, boolean alwaysSlow, int busyMs, int requests, boolean bestEffortLC) {
        return slowedRun(on, causes, alwaysSlow ? 1 : 0, busyMs, requests, bestEffortLC);
    }

    /** {@link #slowedRun}; {@code bestEffortLC}: q3 is held in time like any queue (not a latency-critical process). */
    static SlowedRun slowedRun(boolean on, java.util.Set<Long> causes, int slowEvery, int busyMs, int requests, boolean bestEffortLC) {
        return slowedRun(on, causes, slowEvery, busyMs, requests, bestEffortLC, java.util.Set.of());
    }

    /** {@link #slowedRun}; {@code slowAt}: requests (by number) slow whatever ran beside them. */
    static SlowedRun slowedRun(boolean on, java.util.Set<Long> causes, int slowEvery, int busyMs, int requests, boolean bestEffortLC,
            java.util.Set<Integer> slowAt) {
        ArrivalGuards guards = new ArrivalGuards();
        guards.holdBesideSlowed(on);
        List<String> notes = new java.util.ArrayList<>();
        guards.notes(notes::add);
        long c = 4;
        long t = 10_000 * MS;
        long[] lags = new long[2];
        int slow = 0;
        int[] heldLast = new int[2];
        int[] narrowedLast = new int[2];
        boolean causeRan = false;
        for (int i = 0; i < 60 * requests; i++) {
            long now = t + i * MS;
            int r = i / 60;
            long st = t + r * 60L * MS;
            boolean inRequest = now < st + busyMs * MS;
            if (i % 60 == busyMs) { // the request just ended: its lag told
                boolean isSlow = (slowEvery > 0 && r % slowEvery >= slowEvery - 2) || causeRan || slowAt.contains(r);
                lags[0]++;
                lags[1] += isSlow ? 1 : 0;
                slow += isSlow ? 1 : 0;
                causeRan = false;
            }
            long token = inRequest ? st + (now - st) / (5 * MS) * 5 * MS : -1;
            TestSpace sp = new TestSpace();
            sp.lags.put(3L, lags);
            sp.lags.put(B, new long[] {lags[0], lags[0]}); // a best-effort queue's lags (all slow) count for nothing
            if (!bestEffortLC) {
                sp.spaceOnly.add(3L);
            }
            sp.narrowed.put(B, 24);
            sp.narrowed.put(c, 24);
            sp.spaces.put(B, new dev.xq.policy.spi.QueueSpace(true, 8, 132));
            sp.spaces.put(c, new dev.xq.policy.spi.QueueSpace(true, 8, 132));
            sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
            Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true, c, true));
            QueueView other = new QueueView(c, "q" + c, "d0", "g" + c, true, false, false, 5, 0, 0, 1, 0, now / MS, 20_000,
                    List.of(new dev.xq.api.Hint.Priority(1)), PreemptionLevel.BLOCK);
            guards.update("hpf", now, List.of(prioritized(3, 3, inRequest, token, 0), behind(20_000, now), other), decided, sp);
            long[] qs = {B, c};
            for (int k = 0; k < 2; k++) {
                boolean held = Boolean.TRUE.equals(decided.get(qs[k])) && sp.narrowed(qs[k]) == 0;
                if (inRequest && !held && causes.contains(qs[k])) {
                    causeRan = true;
                }
                if (inRequest && r >= requests - 20) {
                    heldLast[k] += held ? 1 : 0;
                    narrowedLast[k] += sp.narrowed(qs[k]) > 0 ? 1 : 0;
                }
            }
        }
        return new SlowedRun(slow, heldLast, narrowedLast, guards.slowed(3), notes);
    }

    /**
     * {@code holdBesideSlowed}: the process whose company slows the decoder's kernels is found and
     * held through its requests; the other is found not to and runs beside them, whichever of the
     * two (by name) is probed first; a handful of slow requests on the way. Off: nothing is held and
     * every request beside the cause is slow.
     */
    @Test
    void theProcessThatSlowsANarrowTenantIsFoundAndHeldThroughItsRequests() {
        for (long cause : new long[] {B, 4}) {
            SlowedRun run = slowedRun(true, java.util.Set.of(cause), false, 20, 80);
            int ci = cause == B ? 0 : 1;
            int oi = 1 - ci;
            String why = "cause q" + cause + ": " + run.notes() + ", slow requests " + run.slowRequests() + ", held in the last 20 requests "
                    + java.util.Arrays.toString(run.heldLast()) + ", narrowed " + java.util.Arrays.toString(run.narrowedLast());
            assertTrue(run.state() != null && run.state().engaged && run.state().causes.equals(java.util.Set.of("q" + cause))
                    && run.state().cleared.equals(java.util.Set.of("q" + (cause == B ? 4 : B))), why);
            assertEquals(0, run.narrowedLast()[ci], "the cause never left narrowed in a request: " + why);
            assertTrue(run.heldLast()[ci] >= 20 * 19, "the cause held through the requests: " + why);
            assertTrue(run.notes().stream().anyMatch(n -> n.contains("q" + (cause == B ? 4 : B) + " does not slow it")
                    && n.contains("ms after it was found slowed")), "the other's probe told: " + why);
            assertEquals(0, run.heldLast()[oi], "the other never held: " + why);
            assertTrue(run.narrowedLast()[oi] >= 20 * 19, "the other narrowed beside the requests: " + why);
            assertTrue(run.slowRequests() >= ArrivalGuards.WARM_LAGS + 2 && run.slowRequests() <= ArrivalGuards.WARM_LAGS + 8,
                    "found within a few slow requests after its first " + ArrivalGuards.WARM_LAGS + " (its start, never counted): " + why);
        }
        SlowedRun off = slowedRun(false, java.util.Set.of(B), false, 20, 80);
        assertEquals(0, off.heldLast()[0] + off.heldLast()[1], "off: nothing held");
        assertTrue(off.slowRequests() >= 78, "off: every request slow: " + off.slowRequests());
        assertTrue(off.notes().isEmpty(), off.notes().toString());
    }

    /**
     * {@code holdBesideSlowed}: one slow request while both are held (the 6th after its start, whatever ran) does
     * not keep both held for good: the cause is still found and the other let run (the second build
     * waited for none since the change before it probed: held both through every request, session
     * 111). A burst of two slow requests that no process made names no cause:
     * both are probed, the last one too, and nothing is held for the tenant afterwards (that build
     * named the one left unprobed the cause).
     */
    @Test
    void oneSlowRequestAmongTheHeldOnesDelaysTheProbesAndABurstNamesNoCause() {
        for (long cause : new long[] {B, 4}) {
            SlowedRun run = slowedRun(true, java.util.Set.of(cause), 0, 20, 80, false, java.util.Set.of(ArrivalGuards.WARM_LAGS + 6));
            String why = "cause q" + cause + ": " + run.notes() + ", slow requests " + run.slowRequests() + ", held in the last 20 requests "
                    + java.util.Arrays.toString(run.heldLast());
            assertTrue(run.state() != null && run.state().engaged && run.state().causes.equals(java.util.Set.of("q" + cause))
                    && run.state().cleared.equals(java.util.Set.of("q" + (cause == B ? 4 : B))), why);
            assertEquals(0, run.heldLast()[cause == B ? 1 : 0], "the other never held: " + why);
        }
        SlowedRun burst = slowedRun(true, java.util.Set.of(), 0, 20, 80, false,
                java.util.Set.of(ArrivalGuards.WARM_LAGS + 2, ArrivalGuards.WARM_LAGS + 3));
        String why = burst.notes() + ", held in the last 20 requests " + java.util.Arrays.toString(burst.heldLast());
        assertEquals(0, burst.heldLast()[0] + burst.heldLast()[1], "nothing held for good: " + why);
        assertTrue(burst.state() != null && !burst.state().engaged && burst.state().causes.isEmpty(), why);
        // found slowed, each let run after its probe (one note each), then none held
        assertEquals(4, burst.notes().size(), why);
        assertTrue(burst.notes().get(1).contains("q2 does not slow it") && burst.notes().get(2).contains("q4 does not slow it")
                && burst.notes().get(3).contains("none of the processes beside it slows it"), why);
        assertEquals(2, burst.slowRequests(), why);
    }

    /**
     * {@code holdBesideSlowed}: where holding both does not help (the lag stays), nothing is held for
     * the tenant; a queue that is not a latency-critical process (held in time like the others) is
     * never held for; and a tenant busy most of its time (50 ms of every 60) is never held for.
     */
    /**
     * {@code holdBesideSlowed}: slow requests in a tenant's start (its first {@link
     * ArrivalGuards#WARM_LAGS} busy periods: weights copied in, its warm-up) hold nothing; the same
     * slow requests after it do (the second build held every process beside an H100's decoder from
     * its 6th busy period on, its device part 0.11 ms at P99 afterwards: session 111).
     */
    @Test
    void aTenantsStartIsNotCounted() {
        java.util.Set<Integer> start = java.util.Set.of(1, 2, 4, 5, 9, 10, 14);
        SlowedRun warm = slowedRun(true, java.util.Set.of(), 0, 20, 60, false, start);
        assertTrue(warm.notes().isEmpty() && !warm.state().engaged, warm.notes().toString());
        SlowedRun later = slowedRun(true, java.util.Set.of(), 0, 20, 60, false,
                java.util.Set.of(ArrivalGuards.WARM_LAGS + 1, ArrivalGuards.WARM_LAGS + 2));
        assertTrue(!later.notes().isEmpty() && later.notes().getFirst().contains("fell behind"), later.notes().toString());
    }

    @Test
    void holdingBesideASlowedTenantGivesUpWhereItDoesNotHelpAndSparesABusyOne() {
        SlowedRun stays = slowedRun(true, java.util.Set.of(), true, 20, 60);
        assertEquals(0, stays.heldLast()[0] + stays.heldLast()[1], "given up: " + stays.notes());
        assertTrue(stays.state() != null && !stays.state().engaged && stays.notes().stream().anyMatch(n -> n.contains("still slowed")),
                stays.notes().toString());
        SlowedRun notLC = slowedRun(true, java.util.Set.of(B), false, 20, 60, true);
        assertEquals(0, notLC.heldLast()[0] + notLC.heldLast()[1], "q3 not latency-critical: never held for: " + notLC.notes());
        assertTrue(notLC.state() == null && notLC.notes().isEmpty(), notLC.notes().toString());
        // slow whatever is held, once a cause was found too: given up, nothing held for good
        SlowedRun noisy = slowedRun(true, java.util.Set.of(B), true, 20, 60);
        assertEquals(0, noisy.heldLast()[0] + noisy.heldLast()[1], "given up: " + noisy.notes());
        assertTrue(noisy.state() != null && noisy.state().causes.isEmpty(), noisy.notes().toString());
        // two slow requests in every 20 whatever runs: each probe's process is found "the cause" by
        // chance, and the next two slow ones with both held give up (the first build held both for good)
        SlowedRun bursts = slowedRun(true, java.util.Set.of(), 20, 20, 120, false);
        assertEquals(0, bursts.heldLast()[0] + bursts.heldLast()[1], "not held for good: " + bursts.notes());
        assertTrue(bursts.notes().stream().anyMatch(n -> n.contains("still slowed with those it found")), bursts.notes().toString());
        SlowedRun busy = slowedRun(true, java.util.Set.of(B), false, 50, 60);
        assertEquals(0, busy.heldLast()[0] + busy.heldLast()[1], "busy 50 ms of 60: never held: " + busy.notes());
        assertTrue(busy.notes().isEmpty(), busy.notes().toString());
    }

    /**
     * With {@code wholeBesideReserve} on, beside a wide tenant on a 25 ms beat (busy 2 ms) and an
     * eager decoder whose requests come every 60 ms (25 ms of tokens 5 ms apart, off any beat
     * themselves), a 20 ms command that fits the wide gaps only whole is let onto the whole device
     * only where the decoder's next request is foreseen to start after it ends: never while one
     * would meet it, and still now and then; never narrowed at the wide tenant's arrivals.
     */
    @Test
    void aCommandLetGoWholeEndsBeforeTheDecodersNextRequest() {
        ArrivalGuards guards = new ArrivalGuards();
        guards.wholeBesideReserve(true);
        long t = 10_000 * MS;
        long first = t + 7 * MS;
        int wholeMeeting = 0;
        int whole = 0;
        int narrowedAtArrival = 0;
        int decisions = 0;
        for (int i = 0; i < 480; i++) {
            long at = t + i * 25 * MS;
            // decisions at the wide tenant's arrival and idle, halfway through its gap, and where the
            // decoder's requests begin and end (the node decides at each arrival and idle)
            java.util.TreeSet<Long> times = new java.util.TreeSet<>(List.of(at, at + 2 * MS, at + 12 * MS));
            for (long st = first; st < at + 25 * MS; st += 60 * MS) {
                for (long e : new long[] {st, st + 25 * MS}) {
                    if (e >= at && e < at + 25 * MS) {
                        times.add(e);
                    }
                }
            }
            for (long now : times) {
                boolean aReady = now == at;
                long k = (now - first) / (60 * MS);
                long st = now < first ? Long.MIN_VALUE : first + k * 60 * MS;
                boolean inRequest = st != Long.MIN_VALUE && now < st + 25 * MS;
                long token = inRequest ? st + (now - st) / (5 * MS) * 5 * MS : -1;
                long nextStart = now < first ? first : st + 60 * MS;
                TestSpace sp = space(132, 1, List.of());
                sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
                java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                guards.update("hpf", now, List.of(prioritized(A, 2, aReady, at, 0), prioritized(3, 3, inRequest, token, 0),
                        behind(20 * MS, now)), decided, sp);
                if (i < WIDE_RUN_ARRIVALS) {
                    continue;
                }
                decisions++;
                boolean letWhole = Boolean.FALSE.equals(decided.get(B)) && sp.narrowed(B) == 0;
                if (aReady) {
                    narrowedAtArrival += sp.narrowed(B) > 0 ? 1 : 0;
                }
                if (letWhole) {
                    whole++;
                    wholeMeeting += nextStart - now < 20 * MS ? 1 : 0;
                }
            }
        }
        assertEquals(0, narrowedAtArrival, "never narrowed at the wide tenant's arrivals");
        assertEquals(0, wholeMeeting, "never let onto the whole device where the decoder's next request would meet it (" + whole + " whole of "
                + decisions + ")");
        assertTrue(whole > 10, "let onto the whole device where it ends before that request: " + whole + " of " + decisions);
    }

    /**
     * With {@code wholeBesideReserve} on, a decoder that is never idle (its queue working at every
     * decision) is not waited for: B, whose command fits the wide tenant's gaps only whole, stays
     * narrowed as decided, as with the switch off, instead of being held for good.
     */
    @Test
    void aDecoderNeverIdleIsNotWaitedFor() {
        int[][] got = new int[2][];
        for (int k = 0; k < 2; k++) {
            ArrivalGuards guards = new ArrivalGuards();
            guards.wholeBesideReserve(k == 0);
            long t = 10_000 * MS;
            int narrowed = 0;
            int held = 0;
            for (int i = 0; i < 120; i++) {
                long at = t + i * 25 * MS;
                for (long now : new long[] {at, at + 2 * MS}) {
                    TestSpace sp = space(132, 1, List.of());
                    sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 24, 132));
                    java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
                    // the decoder has work at every decision (one long busy period)
                    guards.update("hpf", now, List.of(prioritized(A, 2, now == at, at, 0), prioritized(3, 3, true, 7, 0), behind(20 * MS, now)),
                            decided, sp);
                    if (i >= WIDE_RUN_ARRIVALS && now != at) {
                        narrowed += sp.narrowed(B) > 0 ? 1 : 0;
                        held += Boolean.TRUE.equals(decided.get(B)) && sp.narrowed(B) == 0 ? 1 : 0;
                    }
                }
            }
            got[k] = new int[] {narrowed, held};
        }
        assertTrue(got[0][0] > 50, "on: left narrowed between the wide tenant's requests: " + java.util.Arrays.toString(got[0]));
        assertEquals(0, got[0][1], "on: never held for a decoder that is never idle");
        assertEquals(java.util.Arrays.toString(got[1]), java.util.Arrays.toString(got[0]), "as with the switch off");
    }

    /**
     * With narrowed guards on: a queue the wide beats leave narrowed (the decoder's reserve no
     * narrower than the decision's, or a decoder wider than half the device above it) whose command
     * at its narrowed width (21 ms whole, 43 ms on the 68 multiprocessors left) fits the wide
     * tenant's gaps (100 ms, busy 8) is held through that tenant's requests and runs narrowed
     * between them, under its guard (the default). Off, it stays narrowed through
     * the requests, unguarded: beside a half-device GEMM kernel a large batch's kernels did not start
     * until it ended (H200, sessions 68-69).
     */
    @Test
    void leftNarrowedItIsStillHeldThroughTheRequestsOfAWideBeatItsNarrowedCommandFits() {
        for (int width : new int[] {64, 96}) {
            Object[] on = besideADecoder(width, true);
            assertEquals(Boolean.TRUE, on[0], "a narrowing counts as a hold: " + java.util.Arrays.toString(on));
            assertEquals(64, on[1], "narrowed between the requests as decided");
            assertEquals(Boolean.TRUE, on[2], "held during a request");
            assertEquals(0, on[3], "held, not narrowed, during a request: " + java.util.Arrays.toString(on));
            ArrivalGuards.Guard g = (ArrivalGuards.Guard) on[4];
            assertNotNull(g, "under the wide tenant's guard: " + java.util.Arrays.toString(on));
            assertEquals(10_000 * MS + 30 * 100 * MS - ArrivalGuards.EARLY_MARGIN_NANOS, g.horizonNanos(), 1 * MS, "its next request: " + g);
            Object[] off = besideADecoder(width, false);
            assertEquals(64, off[3], "off: narrowed through the requests");
            assertNull(off[4], "off: no guard");
        }
        // a command too long for the gaps even narrowed (60 ms whole: 116 ms on 68) is left as decided
        ArrivalGuards guards = new ArrivalGuards();
        guards.narrowedGuards(true);
        long t = 10_000 * MS;
        Object[] r = null;
        for (int i = 0; i < 30; i++) {
            long at = t + i * 100 * MS;
            TestSpace sp = space(132, 1, List.of());
            sp.spaces.put(3L, new dev.xq.policy.spi.QueueSpace(false, 64, 132));
            java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true));
            guards.update("hpf", at, List.of(prioritized(A, 2, true, at, 0), prioritized(3, 3, true, 7, 0), behind(60 * MS, at)), decided, sp);
            r = new Object[] {decided.get(B), sp.narrowed(B), guards.given().get(B)};
        }
        assertEquals(64, r[1], "narrowed through the request: " + java.util.Arrays.toString(r));
        assertNull(r[2], "no guard");
    }

    /**
     * A wide latency-critical queue whose hold is never applied (an MPS client with the whole
     * device, {@link ArrivalGuards.Space#spaceOnly}) that the decision "holds" at each of its
     * arrivals (a CUDA graph of a higher priority arrives with it) still takes its place over the
     * narrowed queue below it: its beat counts, and that queue is held through its requests and
     * runs between them under its guard. Counted as held, a large batch arriving with a graph every
     * 100 ms never did, and the GEMM's half-device kernels ran through its requests, unguarded
     * (its intervals exactly 100 ms, its beat toward the GEMM null; H200, session 69).
     */
    @Test
    void aQueueWhoseHoldIsNeverAppliedTakesItsPlaceOverTheQueuesBelowIt() {
        for (boolean spaceOnly : new boolean[] {true, false}) {
            ArrivalGuards guards = new ArrivalGuards();
            long t = 10_000 * MS;
            Boolean atIdle = null;
            Boolean atArrival = null;
            int narrowedAtIdle = -1;
            for (int i = 0; i < 30; i++) {
                long at = t + i * 100 * MS;
                TestSpace sp = space(132, 1, List.of());
                if (spaceOnly) {
                    sp.spaceOnly.add(A);
                }
                java.util.Map<Long, Boolean> decided = new java.util.HashMap<>(Map.of(B, true, A, true));
                guards.update("hpf", at, List.of(prioritized(A, 2, true, at, 0), behind(21 * MS, at)), decided, sp);
                atArrival = decided.get(B);
                sp = space(132, 1, List.of());
                if (spaceOnly) {
                    sp.spaceOnly.add(A);
                }
                decided = new java.util.HashMap<>(Map.of(B, true));
                guards.update("hpf", at + 8 * MS, List.of(prioritized(A, 2, false, 0, 0), behind(21 * MS, at + 8 * MS)), decided, sp);
                atIdle = decided.get(B);
                narrowedAtIdle = sp.narrowed(B);
            }
            if (spaceOnly) {
                assertEquals(Boolean.FALSE, atIdle, "runs between its requests");
                assertEquals(0, narrowedAtIdle, "on the whole device");
                assertEquals(Boolean.TRUE, atArrival, "held during them");
                assertNotNull(guards.given().get(B), "under its guard");
            } else {
                assertEquals(64, narrowedAtIdle, "a queue held on arrival, its hold applied, takes no place: B stays narrowed");
                assertNull(guards.given().get(B), "and unguarded");
            }
        }
    }

    /**
     * A GEMM ready throughout, a service warming up for 700 ms (requests back to back in pieces,
     * idle 0.3-2.3 ms between them, no beat) and then, 18.6 ms after, its first request for real
     * and one every 100 ms: the spell its warm-up began has run out, and one begins again at that
     * first request (an idle twice the longest of its latest 16), so the GEMM is held, not
     * narrowed, through the first requests until their beat is known. Without, it ran narrowed
     * beside them (a GEMM ready from the start, replayed on session 42's timelines).
     */
    @Test
    void aSpellBeginsAgainWhenTheWarmUpsRhythmEnds() {
        ArrivalGuards guards = new ArrivalGuards();
        long t = 10_000 * MS;
        long[] idles = {300_000, 1_200_000, 700_000, 2_300_000, 500_000, 1_700_000, 900_000};
        long[] busies = {2_400_000, 5_900_000, 1_300_000, 7_100_000, 3_300_000, 4_400_000};
        for (int i = 0; t < 10_700 * MS; i++) {
            step(guards, t, 132, true, t);
            t += busies[i % busies.length];
            step(guards, t, 132, false, 0);
            t += idles[i % idles.length];
        }
        long go = t - idles[0] + 18_600_000L;
        int narrowed = 0;
        boolean whole = false;
        for (int i = 0; i < 8; i++) {
            long at = go + i * 100 * MS;
            boolean[] arrival = step(guards, at, 132, true, at);
            boolean[] idle = step(guards, at + 9 * MS, 132, false, 0);
            boolean[] between = step(guards, at + 50 * MS, 132, false, 0);
            narrowed += (arrival[1] ? 1 : 0) + (idle[1] ? 1 : 0) + (between[1] ? 1 : 0);
            whole |= !between[0] && !between[1];
        }
        assertEquals(0, narrowed, "never narrowed beside its first requests");
        assertTrue(whole, "whole between them once their beat is known");
    }
}
