package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.function.IntToDoubleFunction;
import org.junit.jupiter.api.Test;

class BestEffortBalanceTest {

    private static final long MS = 1_000_000L;
    /** Where a round's trace line goes on with the weighing of what was counted before it. */
    private static final String EARLY = "; counted before the spells: ";

    @Test
    void aSixteenthMovesFromTheOneThatKeepsMostToTheOneThatKeepsLeast() {
        assertArrayEquals(new int[] {9, 7}, BestEffortBalance.weigh(new int[] {8, 8}, new double[] {0.42, 0.61}));
        assertArrayEquals(new int[] {7, 9}, BestEffortBalance.weigh(new int[] {8, 8}, new double[] {0.61, 0.42}));
        assertArrayEquals(new int[] {5, 5, 6}, BestEffortBalance.weigh(new int[] {6, 4, 6}, new double[] {0.4, 0.2, 0.3}),
                "three: from the first (0.4) to the second (0.2)");
    }

    @Test
    void closeSharesUnknownOnesAndTheSmallestPartLeaveTheCut() {
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weigh(new int[] {8, 8}, new double[] {0.50, 0.55}), "within 12 %");
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weigh(new int[] {8, 8}, new double[] {Double.NaN, 0.9}), "one not measured alone");
        assertArrayEquals(new int[] {15, 1}, BestEffortBalance.weigh(new int[] {15, 1}, new double[] {0.1, 0.9}), "one sixteenth at least");
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weigh(new int[] {8, 8}, new double[] {0, 0}), "nothing done by either");
    }

    /**
     * Two processes on a device model: a compute-bound one that keeps its width's share of its rate
     * alone (less 16 % for the other's use of memory), a memory-bound one that keeps 0.61 on half and
     * the square root of its width's share otherwise (the H200's bf16 trainer and Triton loop at 8/8).
     * From 8/8 the node measures each alone in spells, the other held, then moves toward equal
     * shares: about 10/6, where the first keeps 0.52 and the second 0.53.
     */
    @Test
    void measuredAloneAndOnTheirPartsTwoProcessesEndNearEqualShares() {
        IntToDoubleFunction trainer = w -> 0.84 * w / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        Sim sim = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {trainer, triton});
        int[] w = sim.run(20_000);
        assertTrue(w[0] == 10 || w[0] == 11, "about 10/6: " + java.util.Arrays.toString(w));
        assertTrue(sim.probes >= 2, "measured alone again every 8 s: " + sim.probes);
        assertTrue(sim.heldWhileAlone, "the other held in each spell");
        assertFalse(sim.bothOnTurn, "never two on their turn at once");
    }

    /**
     * With the GPU's time slice reckoned with (4 ms): the same trainer, which never waits on the
     * device in its spell, and the same Triton loop, which waits after every 2.5 ms of its work.
     * Native time slicing would leave the loop 0.62 of the share the trainer keeps, so the cut
     * aims there: 12 or 13 sixteenths for the trainer instead of 10 or 11, and the round's trace
     * gives each one's work between waits and its weight. Without the slice, or without waits
     * given, the same processes end where equal shares put them.
     */
    @Test
    void withATimeSliceAProcessThatWaitsOftenIsAimedAtWhatNativeSlicingLeavesIt() {
        IntToDoubleFunction trainer = w -> 0.84 * w / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        Sim sliced = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {trainer, triton});
        sliced.sliceNanos = 4 * MS;
        sliced.waitEveryMs = new double[] {0, 2.5};
        int[] w = sliced.run(20_000);
        assertTrue(w[0] == 12 || w[0] == 13, "about 12/4: " + java.util.Arrays.toString(w) + "; " + sliced.weighings);
        String round = sliced.rounds.get(0);
        assertTrue(round.contains("12=8000 (busy 1.0, 2.5 ms a wait, weight 0.63)") && round.contains("11=1000 (busy 1.0) 12="), round);
        assertTrue(sliced.weighings.stream().anyMatch(l -> l.contains("over their waits' weights")), sliced.weighings.toString());
        for (boolean slice : new boolean[] {false, true}) {
            Sim plain = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {trainer, triton});
            plain.sliceNanos = slice ? 4 * MS : 0;
            plain.waitEveryMs = slice ? null : new double[] {0, 2.5};
            int[] p = plain.run(20_000);
            assertTrue(p[0] == 10 || p[0] == 11, (slice ? "no waits given" : "no slice") + ": about 10/6: " + java.util.Arrays.toString(p));
        }
    }

    /**
     * A process of long commands measured alone on half the device (narrowed by a wide tenant's
     * reserve) against one whose rate alone is on all of it: with the regions weighed, the cut aims
     * at equal shares of each one's rate on the whole device, and the long-command process (its
     * rate linear in its width) gets 13 or 14 sixteenths instead of the 10 or 11 where equal shares
     * of the rates as measured put it; the weighing says over what it weighed.
     */
    @Test
    void aRateAloneMeasuredOnHalfTheDeviceIsWeighedByThatHalf() {
        IntToDoubleFunction gemm = w -> 0.84 * w / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        Sim weighed = new Sim(new double[] {30, 8000}, new IntToDoubleFunction[] {gemm, triton});
        weighed.region = new double[] {0.5, 1.0};
        int[] w = weighed.run(20_000);
        assertTrue(w[0] == 13 || w[0] == 14, "about 13/3: " + java.util.Arrays.toString(w) + "; " + weighed.weighings);
        assertTrue(weighed.weighings.stream().anyMatch(l -> l.contains("over their regions' weights")),
                weighed.weighings.toString());
        Sim plain = new Sim(new double[] {30, 8000}, new IntToDoubleFunction[] {gemm, triton});
        plain.region = new double[] {1.0, 1.0};
        int[] p = plain.run(20_000);
        assertTrue(p[0] == 10 || p[0] == 11, "regions of the whole device weigh nothing: about 10/6: " + java.util.Arrays.toString(p));
        assertTrue(plain.weighings.stream().noneMatch(l -> l.contains("regions' weights")), plain.weighings.toString());
    }

    /**
     * Beside an eager decoder both a GEMM process and a trainer are narrowed by its reserve (104 of
     * 132 multiprocessors); session 118 weighed the GEMM alone by that region and the cut moved
     * toward it. Weighed alike, as the time each spent narrowed says since session 119
     * ({@link NarrowedTime}), the weights cancel: the cut is the one no weighing gives.
     */
    @Test
    void regionsWeighedAlikeCancelAndTheGemmAloneWeighedTakesTheTrainersShare() {
        IntToDoubleFunction gemm = w -> 0.84 * w / 16.0;
        IntToDoubleFunction trainer = w -> Math.min(1, 0.25 + 0.75 * w / 16.0);
        double region = 104 / 132.0;
        Sim plain = new Sim(new double[] {30, 40}, new IntToDoubleFunction[] {gemm, trainer});
        int[] p = plain.run(20_000);
        Sim alike = new Sim(new double[] {30, 40}, new IntToDoubleFunction[] {gemm, trainer});
        alike.region = new double[] {region, region};
        int[] a = alike.run(20_000);
        Sim gemmOnly = new Sim(new double[] {30, 40}, new IntToDoubleFunction[] {gemm, trainer});
        gemmOnly.region = new double[] {region, 1.0};
        int[] g = gemmOnly.run(20_000);
        assertArrayEquals(p, a, "weighed alike = not weighed: " + java.util.Arrays.toString(p) + " " + java.util.Arrays.toString(a)
                + "; " + alike.weighings);
        assertTrue(g[0] > p[0], "the GEMM alone weighed takes more than the plain cut gives it: " + java.util.Arrays.toString(g)
                + " against " + java.util.Arrays.toString(p) + "; " + gemmOnly.weighings);
    }

    /**
     * With the cut read in the device's sixteenths (bestEffortDeviceFrame) a GEMM narrowed to half
     * the device can use at most 8: weighed by its region it would take 13 or 14, which give it
     * nothing more and would give it nearly all of the device once the reserve is gone. Capped, the
     * cut stops at 8/8, and the node says why.
     */
    @Test
    void aPartNeverGrowsPastItsRegionsCap() {
        IntToDoubleFunction gemm = w -> 0.84 * Math.min(w, 8) / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        Sim sim = new Sim(new double[] {30, 8000}, new IntToDoubleFunction[] {gemm, triton});
        sim.region = new double[] {0.5, 1.0};
        sim.caps = new int[] {8, 16};
        int[] w = sim.run(20_000);
        assertArrayEquals(new int[] {8, 8}, w, "at its cap: " + sim.weighings);
        assertTrue(sim.weighings.stream().anyMatch(l -> l.contains("capped at the regions' sixteenths [8, 16]")), sim.weighings.toString());
        Sim free = new Sim(new double[] {30, 8000}, new IntToDoubleFunction[] {gemm, triton});
        free.region = new double[] {0.5, 1.0};
        assertTrue(free.run(20_000)[0] > 8, "uncapped it goes past 8");
    }

    /** {@link BestEffortBalance#capped}: what a part would take past its cap goes back to those that gave, the largest giver first. */
    @Test
    void cappedGivesBackToTheGivers() {
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.capped(new int[] {8, 8}, new int[] {10, 6}, new int[] {8, 16}));
        assertArrayEquals(new int[] {9, 4, 3}, BestEffortBalance.capped(new int[] {7, 5, 4}, new int[] {11, 3, 2}, new int[] {9, 16, 16}));
        assertArrayEquals(new int[] {10, 6}, BestEffortBalance.capped(new int[] {10, 6}, new int[] {11, 5}, new int[] {8, 16}),
                "past its cap already: left where it stood, no further");
        assertArrayEquals(new int[] {6, 10}, BestEffortBalance.capped(new int[] {8, 8}, new int[] {6, 10}, new int[] {8, 16}),
                "shrinking is never capped");
    }

    /**
     * Rates alone that stay as they were and a cut that stays put: each round doubles the time to
     * the next, up to 64 s (7 rounds in 200 s instead of 25); a new phase (the trainer at twice its
     * rate alone) brings the next round back to 8 s after the one that found it, and the cut moves.
     */
    @Test
    void steadyRoundsComeLessOftenAndAChangeBringsThemBack() {
        IntToDoubleFunction trainer = w -> 0.84 * w / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        Sim steady = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {trainer, triton});
        int[] w = steady.run(200_000);
        assertTrue(w[0] == 10 || w[0] == 11, "about 10/6: " + java.util.Arrays.toString(w));
        assertTrue(steady.probes >= 5 && steady.probes <= 9, "rounds: " + steady.probes + " " + steady.rounds);
        assertTrue(steady.rounds.getLast().endsWith("next in 64.0 s"), "at most 8 periods: " + steady.rounds);

        Sim phase = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {trainer, triton});
        phase.changeAt = 130_000;
        phase.aloneAfter = new double[] {2000, 8000};
        phase.run(200_000);
        String found = phase.rounds.stream().filter(r -> Integer.parseInt(r.split(" ")[0]) > 130_000).findFirst().orElse("");
        assertTrue(found.endsWith("next in 8.0 s") && found.contains("11=2"), "the round after the change: " + phase.rounds);
        long after = phase.rounds.stream().filter(r -> Integer.parseInt(r.split(" ")[0]) > 130_000).count();
        assertTrue(after >= 3, "rounds after it come every 8 s again while the cut settles: " + phase.rounds);
    }

    /**
     * The H100's fp32 trainer beside Triton as the node saw them (session 97): at 11/5 they kept 0.47
     * and 0.63 of their rates alone, at 12/4 0.56 and 0.49. Each pair is more than 12 % apart, and
     * the cut went from one to the other every period; now the nearer to equal (12/4, 1.14 against
     * 1.34) stands, and the node says why.
     */
    @Test
    void betweenTwoNeighbouringCutsTheNearerToEqualStands() {
        double[] trainer = {0, .06, .12, .18, .24, .28, .29, .30, .32, .38, .40, .47, .56, .62, .66, .70, .72};
        double[] triton = {0, .20, .30, .38, .49, .63, .70, .74, .75, .76, .77, .78, .79, .80, .80, .80, .80};
        Sim sim = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {w -> trainer[w], w -> triton[w]});
        int[] w = sim.run(60_000);
        assertArrayEquals(new int[] {12, 4}, w, "the nearer to equal: " + sim.weighings);
        long late = sim.weighings.stream().filter(l -> Integer.parseInt(l.split(" ")[0]) > 20_000 && l.contains(" -> ")).count();
        // the cut left is tried again once its 32 s are up (there and straight back): two moves in
        // the last 40 s, where taking every move back made 28
        assertTrue(late <= 2, "at most the one try after 32 s in the last 40 s: " + late + " " + sim.weighings);
        long stays = sim.weighings.stream().filter(l -> l.contains(", stays: ")).count();
        assertTrue(stays >= 40, "12/4 stands nearly throughout: " + stays + " " + sim.weighings);
        assertTrue(sim.weighings.stream().anyMatch(l -> l.contains("[12, 4], stays: at [11, 5] they differed by 1.3")), "the reason: " + sim.weighings);
        assertTrue(BestEffortBalance.spread(new double[] {0.56, 0.49}) < BestEffortBalance.spread(new double[] {0.47, 0.63}));
        assertTrue(Double.isNaN(BestEffortBalance.spread(new double[] {Double.NaN, 0.5})));
        assertEquals(Double.POSITIVE_INFINITY, BestEffortBalance.spread(new double[] {0, 0.5}));
    }

    /**
     * A move straight back is still taken where the cut it left is the nearer to equal now: a
     * process whose share kept on the part it was given fell (its phase changed) goes back. And a
     * reading of nothing done is no reading to hold a cut by.
     */
    @Test
    void aMoveBackIsTakenWhereTheCutItLeftIsNowTheNearerToEqual() {
        double[] trainer = {0, .06, .12, .18, .24, .28, .29, .30, .32, .38, .40, .47, .56, .62, .66, .70, .72};
        double[] triton = {0, .20, .30, .38, .49, .63, .70, .74, .75, .76, .77, .78, .79, .80, .80, .80, .80};
        double[] later = triton.clone();
        later[4] = 0.30; // at 4 sixteenths Triton now keeps 0.30: 0.56 / 0.30 = 1.87, worse than 1.34 at 11/5
        boolean[] changed = new boolean[1];
        Sim sim = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {w -> trainer[w], w -> (changed[0] ? later : triton)[w]});
        sim.onTick = t -> changed[0] = t >= 30_000;
        sim.quick = false;
        sim.run(60_000);
        assertTrue(sim.weighings.stream().anyMatch(l -> Integer.parseInt(l.split(" ")[0]) > 30_000 && l.contains("[12, 4] -> [11, 5]")),
                "back to 11/5 once 12/4 is the farther from equal: " + sim.weighings);
        // quick: the jump from 12/4 goes past 11/5 to 10/6 (0.56 against 0.30), whose jump back to
        // 12/4, farther apart, is a sixteenth to 11/5 instead, which then stands
        changed[0] = false;
        Sim quick = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {w -> trainer[w], w -> (changed[0] ? later : triton)[w]});
        quick.onTick = t -> changed[0] = t >= 30_000;
        int[] end = quick.run(60_000);
        assertArrayEquals(new int[] {11, 5}, end, "11/5 once 12/4 is the farther from equal: " + quick.weighings);
        long moves = quick.weighings.stream().filter(l -> Integer.parseInt(l.split(" ")[0]) > 30_000 && l.contains(" -> ")).count();
        assertTrue(moves <= 3, "there in a few moves, not round and round: " + moves + " " + quick.weighings);
        assertTrue(quick.weighings.stream().anyMatch(l -> l.contains("[11, 5], stays: at [12, 4] they differed by 1.86")), "the reason: " + quick.weighings);

        // the trainer does nothing at 11/5 (kept 0: an infinite spread there); from 12/4 the move
        // back is taken each time, not held off by that reading
        double[] stalled = trainer.clone();
        stalled[11] = 0;
        Sim zero = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {w -> stalled[w], w -> triton[w]});
        zero.run(30_000);
        long backs = zero.weighings.stream().filter(l -> l.contains("[12, 4] -> [11, 5]")).count();
        assertTrue(backs >= 3, "moves back from 12/4: " + backs + " " + zero.weighings);
    }

    /**
     * A trainer whose completions are seen only at each step's synchronize (850 commands every 66
     * ms), its spell beginning at any point of a step: its rate alone is measured between whole
     * steps, within 2 % of 12,879 a second at every phase; counted from the spell's start to 150 ms,
     * it read two or three steps (11,333 or 17,000). On its part, at half that rate, the share it
     * keeps is read between whole steps as well.
     */
    @Test
    void aProcessSeenInBatchesIsMeasuredBetweenWholeBatches() {
        for (int phase = 0; phase < 66; phase += 7) {
            BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
            List<Long> pids = List.of(11L, 12L);
            boolean[] idle = {false, false};
            long now = 0;
            long[] done = {0, 0};
            b.step(now, pids, done, idle, new int[] {8, 8});
            now += BestEffortBalance.FIRST_PROBE_NANOS;
            BestEffortBalance.Step s = b.step(now, pids, done, idle, new int[] {8, 8});
            assertTrue(s.probing() && s.turn() == 0, "nothing else in flight: the trainer alone at once");
            long start = now;
            String line = "";
            for (int k = 0; k < 3_000 && line.isEmpty(); k++) {
                now += MS;
                long ms = (now - start) / MS;
                if (s.probing() && s.turn() == 0) {
                    done[0] = 850L * ((ms + phase) / 66);
                } else if (s.probing() && s.turn() == 1) {
                    done[1] += 8; // 8,000 a second, seen every millisecond
                }
                s = b.step(now, pids, done, idle, new int[] {8, 8});
                String t = b.trace();
                if (t.startsWith("rates alone")) {
                    line = t;
                }
            }
            assertTrue(line.contains("11="), "the round ended: " + line);
            long rate = Long.parseLong(line.replaceAll(".* 11=(\\d+).*", "$1"));
            assertTrue(Math.abs(rate - 12_879) < 12_879 * 0.02, "phase " + phase + " ms: " + line);
            long other = Long.parseLong(line.replaceAll(".* 12=(\\d+).*", "$1"));
            assertTrue(Math.abs(other - 8_000) < 8_000 * 0.02, "the continuous one: " + line);
            // on their parts at half their rates alone: the trainer's steps 132 ms apart; its share
            // kept is read between whole steps too (from a period's start to its end, seven or
            // eight steps in a second: 0.46 or 0.53)
            long partsFrom = now;
            long base = done[0];
            String kept = "";
            for (int k = 0; k < 3_000 && kept.isEmpty(); k++) {
                now += MS;
                long ms = (now - partsFrom) / MS;
                done[0] = base + 850L * ((ms + phase) / 132);
                done[1] += k % 2 == 0 ? 8 : 0;
                s = b.step(now, pids, done, idle, new int[] {8, 8});
                String t = b.trace();
                if (t.startsWith("rates kept alone")) {
                    kept = t;
                }
            }
            double share = Double.parseDouble(kept.replaceAll("rates kept alone \\[([0-9.]+),.*", "$1"));
            assertTrue(Math.abs(share - 0.5) < 0.5 * 0.03, "phase " + phase + " ms: " + kept);
        }
    }

    /**
     * A round's trace says how busy each process kept the device in its spell alone: its device
     * time over the spell (a trainer waiting for its host 40 % of the time, a loop never), and
     * nothing where the device time is not given.
     */
    @Test
    void aRoundTracesHowBusyEachKeptTheDeviceAlone() {
        for (boolean known : new boolean[] {true, false}) {
            BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
            List<Long> pids = List.of(11L, 12L);
            boolean[] idle = {false, false};
            long now = 0;
            long[] done = {0, 0};
            long[] run = {0, 0};
            b.step(now, pids, done, known ? run : null, idle, new int[] {8, 8});
            now += BestEffortBalance.FIRST_PROBE_NANOS;
            BestEffortBalance.Step s = b.step(now, pids, done, known ? run : null, idle, new int[] {8, 8});
            String line = "";
            for (int k = 0; k < 3_000 && line.isEmpty(); k++) {
                now += MS;
                if (s.probing() && s.turn() == 0) {
                    done[0] += 1;
                    run[0] += 6 * MS / 10; // busy 0.6 ms of each
                } else if (s.probing() && s.turn() == 1) {
                    done[1] += 1;
                    run[1] += MS;
                }
                s = b.step(now, pids, done, known ? run : null, idle, new int[] {8, 8});
                String t = b.trace();
                if (t.startsWith("rates alone")) {
                    line = t;
                }
            }
            assertTrue(line.contains("11="), "the round ended: " + line);
            if (known) {
                double first = Double.parseDouble(line.replaceAll(".* 11=\\d+ \\(busy ([0-9.]+)\\).*", "$1"));
                double second = Double.parseDouble(line.replaceAll(".* 12=\\d+ \\(busy ([0-9.]+)\\).*", "$1"));
                assertEquals(0.6, first, 0.02, line);
                assertEquals(1.0, second, 0.02, line);
            } else {
                assertFalse(line.contains("busy"), line);
            }
        }
    }

    @Test
    void aProcessWhoseCompanyNeverDrainsIsNotMeasuredAloneAndTheCutStands() {
        BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
        List<Long> pids = List.of(11L, 12L);
        long now = 0;
        long[] done = {0, 0};
        BestEffortBalance.Step s = b.step(now, pids, done, new boolean[] {true, true}, new int[] {8, 8});
        assertArrayEquals(new int[] {8, 8}, s.widths());
        now += BestEffortBalance.FIRST_PROBE_NANOS;
        s = b.step(now, pids, done, new boolean[] {true, true}, new int[] {8, 8});
        assertTrue(s.probing() && s.holdOthers() && s.turn() == -1, "a spell begins: all held until the others' work ends");
        now += BestEffortBalance.PROBE_WAIT_NANOS + MS;
        s = b.step(now, pids, done, new boolean[] {true, true}, new int[] {8, 8});
        assertTrue(s.probing() && s.turn() == -1, "the first skipped, the second's wait begins");
        assertTrue(b.trace().contains("not measured alone"), "said");
        now += BestEffortBalance.PROBE_WAIT_NANOS + MS;
        s = b.step(now, pids, done, new boolean[] {true, true}, new int[] {8, 8});
        assertFalse(s.probing(), "spell over");
        assertArrayEquals(new int[] {8, 8}, s.widths(), "no rate alone: the cut stands");
        for (int k = 0; k < 5; k++) {
            now += BestEffortBalance.PERIOD_NANOS;
            done[0] += 100;
            done[1] += 9000;
            s = b.step(now, pids, done, new boolean[] {true, true}, new int[] {8, 8});
            if (!s.probing()) {
                assertArrayEquals(new int[] {8, 8}, s.widths(), "still: nothing to weigh by");
            }
        }
    }

    @Test
    void newProcessesStartAgainFromTheGivenCut() {
        BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
        BestEffortBalance.Step s = b.step(0, List.of(1L, 2L), new long[2], new boolean[2], new int[] {9, 7});
        assertArrayEquals(new int[] {9, 7}, s.widths());
        s = b.step(MS, List.of(1L, 2L, 3L), new long[3], new boolean[3], new int[] {6, 5, 5});
        assertArrayEquals(new int[] {6, 5, 5}, s.widths());
        assertEquals(List.of(1L, 2L, 3L), b.pids());
        assertNull(b.step(MS + BestEffortBalance.FIRST_PROBE_NANOS, List.of(1L, 2L, 3L), new long[3], new boolean[3],
                new int[] {6, 5, 5}).widths(), "a spell alone once they have shared the device a while");
    }

    /**
     * Stopped for a while (the paired reading's stops), a spell under way ends without a rate and
     * nothing counted before the stop is weighed with what comes after; the cut and the rates alone
     * stay.
     */
    @Test
    void aPauseDropsTheSpellAndTheCountButKeepsTheCut() {
        BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
        List<Long> pids = List.of(1L, 2L);
        boolean[] idle = new boolean[2];
        b.step(0, pids, new long[] {0, 0}, idle, new int[] {10, 6});
        BestEffortBalance.Step s = b.step(BestEffortBalance.FIRST_PROBE_NANOS, pids, new long[] {0, 0}, idle, new int[] {10, 6});
        assertEquals(0, s.turn(), "the first one's spell, the other drained");
        b.pause();
        long back = 5_000_000_000L;
        s = b.step(back, pids, new long[] {500, 900}, idle, new int[] {8, 8});
        assertArrayEquals(new int[] {10, 6}, s.widths(), "back: the cut it had, no spell of 4.5 s counted");
        assertEquals("", b.trace(), "no rate alone taken from the spell cut short");
        s = b.step(back + BestEffortBalance.FIRST_PROBE_NANOS, pids, new long[] {600, 1000}, idle, new int[] {8, 8});
        assertTrue(s.probing(), "measured alone again once they have shared the device a while");
    }

    /**
     * Far apart, the cut moves by more than a sixteenth (with {@code memory}, the default): two where
     * one keeps more than 1.5 times the other's share, three past 2.25, never below one sixteenth;
     * close ones, unknown ones and the deadband as {@link BestEffortBalance#weigh}.
     */
    @Test
    void farApartSharesMoveUpToThreeSixteenths() {
        assertArrayEquals(new int[] {9, 7}, BestEffortBalance.weighStepped(new int[] {8, 8}, new double[] {0.42, 0.61}), "1.45: one");
        assertArrayEquals(new int[] {10, 6}, BestEffortBalance.weighStepped(new int[] {8, 8}, new double[] {0.35, 0.61}), "1.74: two");
        assertArrayEquals(new int[] {11, 5}, BestEffortBalance.weighStepped(new int[] {8, 8}, new double[] {0.26, 0.71}), "2.73: three");
        assertArrayEquals(new int[] {3, 7, 6}, BestEffortBalance.weighStepped(new int[] {6, 4, 6}, new double[] {0.5, 0.1, 0.3}),
                "three processes: from the one that keeps most to the one that keeps least");
        assertArrayEquals(new int[] {15, 1}, BestEffortBalance.weighStepped(new int[] {12, 4}, new double[] {0.1, 0.9}), "2.25 and more: three");
        assertArrayEquals(new int[] {15, 1}, BestEffortBalance.weighStepped(new int[] {14, 2}, new double[] {0.1, 0.9}), "one sixteenth at least");
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weighStepped(new int[] {8, 8}, new double[] {0.50, 0.55}), "within 12 %");
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weighStepped(new int[] {8, 8}, new double[] {Double.NaN, 0.1}), "one not known");
        assertArrayEquals(new int[] {9, 7}, BestEffortBalance.weighStepped(new int[] {6, 10}, new double[] {0, 0.5}), "nothing done on its part: three");
    }

    /**
     * Quick (the default): the cut jumps to where the shares kept would come out equal if each
     * process's rate went with its width, at most four sixteenths a process, never below one, at
     * least the sixteenth the deadband asks for, and not at all within it or with a share unknown.
     * The H100's fp32 trainer beside Triton (session 104): from nine and seven with 0.79 and 0.36
     * kept to six and ten at once.
     */
    @Test
    void aQuickWeighingJumpsToWhereTheSharesKeptComeOutEqual() {
        assertArrayEquals(new int[] {6, 10}, BestEffortBalance.weighProportional(new int[] {9, 7}, new double[] {0.79, 0.36}), "the H100's pair");
        assertArrayEquals(new int[] {5, 11}, BestEffortBalance.weighProportional(new int[] {6, 10}, new double[] {0.61, 0.53}),
                "0.61 against 0.53: 15 % apart, past the deadband: a sixteenth at least");
        assertArrayEquals(new int[] {12, 4}, BestEffortBalance.weighProportional(new int[] {8, 8}, new double[] {0.1, 0.9}), "four at most");
        assertArrayEquals(new int[] {5, 8, 3}, BestEffortBalance.weighProportional(new int[] {4, 6, 6}, new double[] {0.23, 0.24, 0.73}),
                "three processes: the H100's bf16 trainer, GEMMs and Triton beside a decoder");
        assertArrayEquals(new int[] {6, 7, 3}, BestEffortBalance.weighProportional(new int[] {5, 6, 5}, new double[] {0.25, 0.23, 0.69}),
                "never below half its part at once: 6/8/2 left Triton 0.19 on two sixteenths (H100, session 104)");
        assertEquals(3, BestEffortBalance.least(5));
        assertEquals(4, BestEffortBalance.least(8));
        assertEquals(8, BestEffortBalance.least(12), "four at most");
        assertEquals(1, BestEffortBalance.least(1));
        assertArrayEquals(new int[] {15, 1}, BestEffortBalance.weighProportional(new int[] {14, 2}, new double[] {0.05, 0.9}), "never below one");
        assertArrayEquals(new int[] {14, 2}, BestEffortBalance.weighProportional(new int[] {13, 3}, new double[] {0.05, 0.9}),
                "nor below half at once (rounded up)");
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weighProportional(new int[] {8, 8}, new double[] {0.50, 0.55}), "within 12 %");
        assertArrayEquals(new int[] {8, 8}, BestEffortBalance.weighProportional(new int[] {8, 8}, new double[] {Double.NaN, 0.1}), "one not known");
        assertArrayEquals(new int[] {12, 4}, BestEffortBalance.weighProportional(new int[] {8, 8}, new double[] {0, 0.5}),
                "nothing done on its part: four");
        int[] w = {1, 15};
        int[] moved = BestEffortBalance.weighProportional(w, new double[] {0.2, 0.6});
        assertEquals(16, moved[0] + moved[1], "the sixteenths add up");
        assertArrayEquals(new int[] {3, 13}, moved, "1/0.2 against 15/0.6: five and twenty-five parts of thirty");
    }

    /**
     * Early (the default): a new set shares the device half a second before its first round of
     * spells; what the processes did on their parts then is weighed as soon as the round ends, and
     * the cut jumps at the round's end, not a settle and half a period after it (H100, session 105:
     * a bf16 trainer kept 0.34 of its rate alone on half the device beside Triton for those 0.65 s).
     * Both ways the cut comes to the same place.
     */
    @Test
    void theFirstRoundIsFollowedAtOnceByAWeighingOfWhatWasCountedBeforeIt() {
        IntToDoubleFunction trainer = w -> 0.84 * w / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        int[] firstMove = new int[2];
        int[][] ends = new int[2][];
        for (boolean early : new boolean[] {true, false}) {
            Sim sim = new Sim(new double[] {1000, 8000}, new IntToDoubleFunction[] {trainer, triton});
            sim.early = early;
            ends[early ? 0 : 1] = sim.run(6_000);
            int roundEnd = Integer.parseInt(sim.rounds.getFirst().split(" ")[0]);
            String moved = sim.weighings.stream().filter(w -> w.contains("->")).findFirst().orElse("");
            assertFalse(moved.isEmpty(), "the cut moved, early " + early + ": " + sim.weighings);
            int at = Integer.parseInt(moved.split(" ")[0]);
            assertTrue(moved.contains("sixteenths [8, 8] -> "), "the first move from the even cut: " + moved);
            firstMove[early ? 0 : 1] = at - roundEnd;
        }
        assertEquals(0, firstMove[0], "early: the first move at the round's end");
        assertTrue(firstMove[1] >= 650, "otherwise a settle (150 ms) and half a period (500 ms) after it: " + firstMove[1]);
        assertArrayEquals(ends[1], ends[0], "the same cut in the end");
    }

    /**
     * What was counted before a round is not weighed where a process did more on its part than alone
     * then (its start-up, or a rate alone taken low): the round's end moves nothing, and the next
     * weighing counts from it.
     */
    @Test
    void aCountBeforeTheRoundWhereOneOutranItsRateAloneIsNotWeighed() {
        double[] alone = {1000, 8000};
        // before the first round (the first 800 ms) the trainer runs as fast as it later does alone
        int[] tick = {0};
        IntToDoubleFunction trainer = w -> tick[0] < 800 ? 1.2 : 0.84 * w / 16.0;
        IntToDoubleFunction triton = w -> 0.61 * Math.sqrt(w / 8.0);
        Sim sim = new Sim(alone, new IntToDoubleFunction[] {trainer, triton});
        sim.onTick = t -> tick[0] = t;
        sim.run(3_000);
        String first = sim.rounds.getFirst();
        int roundEnd = Integer.parseInt(first.split(" ")[0]);
        assertTrue(sim.weighings.stream().noneMatch(w -> Integer.parseInt(w.split(" ")[0]) == roundEnd),
                "nothing weighed at the round's end: " + sim.weighings);
        assertTrue(sim.weighings.stream().anyMatch(w -> Integer.parseInt(w.split(" ")[0]) >= roundEnd + 650),
                "the next weighing counts from the round: " + sim.weighings);
    }

    /**
     * Quick: a weighing counts half a period where every process completed 16 commands in it, and
     * waits on past it (up to the whole period) for one that completes fewer (GEMMs: 10-37 a second).
     */
    @Test
    void aQuickWeighingCountsHalfAPeriodUnlessAProcessCompletedTooFew() {
        int[] weighed = new int[2];
        for (boolean slow : new boolean[] {false, true}) {
            BestEffortBalance.Times t = new BestEffortBalance.Times(100_000_000L, 60_000_000L, 60_000_000_000L, 100_000_000L,
                    10_000_000L, 1_000_000_000L);
            BestEffortBalance b = new BestEffortBalance(t);
            b.longCommands(false); // the sixteen commands' rule alone (the gaps' rule: aProcessOfLongCommandsIsWeighedByTheGapsBetweenThem)
            List<Long> pids = List.of(1L, 2L);
            long[] done = {0, 0};
            long now = 1_000_000_000L;
            int[] initial = {8, 8};
            String weighedAt = null;
            // rates alone: 1000 and 100 (or 10) a second
            long rate2 = slow ? 10 : 100;
            for (int ms = 0; ms < 4000 && weighedAt == null; ms++) {
                BestEffortBalance.Step st = b.step(now, pids, done, new boolean[] {false, false}, initial);
                String tr = b.trace();
                if (tr.startsWith("rates kept alone")) {
                    weighedAt = ms + " " + tr;
                }
                now += 1_000_000L;
                if (st.probing()) {
                    if (st.turn() == 0) {
                        done[0] += 1;
                    } else if (st.turn() == 1 && ms % (1000 / rate2) == 0) {
                        done[1] += 1;
                    }
                } else {
                    // on the parts: the first keeps a fifth of its rate, the second all of it
                    if (ms % 5 == 0) {
                        done[0] += 1;
                    }
                    if (ms % (1000 / rate2) == 0) {
                        done[1] += 1;
                    }
                }
            }
            assertNotNull(weighedAt, "weighed, slow " + slow);
            int at = Integer.parseInt(weighedAt.split(" ")[0]);
            assertTrue(weighedAt.contains("[8, 8] -> [12, 4]"), "a fifth kept against all of it: four sixteenths at once: " + weighedAt);
            weighed[slow ? 1 : 0] = at;
        }
        // the spells alone take longer with the slow one (three of its completions seen): from the
        // spells' end, 100 a second weighs after half a second, 10 a second after the whole one
        assertTrue(weighed[1] - weighed[0] >= 700, "10 a second weighed later by the spell and half a second: " + Arrays.toString(weighed));
        assertTrue(weighed[1] - weighed[0] <= 1000, "but no later than the whole period: " + Arrays.toString(weighed));
    }

    /**
     * Three processes stopped 1.5 s of every 3 (a paired reading's stops) that come back one at a
     * time, 20 ms apart: each return is a new set. With memory (the default) each set keeps its
     * rates alone and its cut, the rounds come when due, and the cut moves toward the one that keeps
     * least; without, every return measured them alone again and no weighing ever ended (session 102).
     */
    @Test
    void processesThatComeBackOneAtATimeKeepTheirRatesAloneAndTheirCut() {
        for (boolean memory : new boolean[] {true, false}) {
            BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
            b.memory(memory);
            b.longCommands(memory); // off: as before session 102
            double[] alone = {30_000, 40, 5_000};
            // kept on a part of w sixteenths: the trainer and the GEMM by width, Triton nearly whole on any
            IntToDoubleFunction[] kept = {w -> 0.8 * w / 16.0, w -> 0.8 * w / 16.0, w -> Math.min(0.95, 0.5 + w / 32.0)};
            double[] done = new double[3];
            int[] widths = {6, 5, 5};
            int rounds = 0;
            int weighings = 0;
            for (int t = 0; t < 30_000; t++) {
                long now = t * MS;
                int inCycle = t % 3_000;
                List<Long> order = new java.util.ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    if (inCycle >= 20 * i && inCycle < 1_500) {
                        order.add(11L + i);
                    }
                }
                if (order.size() < 2) {
                    b.pause();
                    continue;
                }
                long[] counts = new long[order.size()];
                boolean[] inFlight = new boolean[order.size()];
                for (int k = 0; k < order.size(); k++) {
                    counts[k] = (long) done[(int) (order.get(k) - 11)];
                }
                int[] initial = order.size() == 3 ? new int[] {6, 5, 5} : new int[] {8, 8};
                BestEffortBalance.Step s = b.step(now, order, counts, inFlight, initial);
                String line = b.trace();
                rounds += line.startsWith("rates alone") ? 1 : 0;
                weighings += line.startsWith("rates kept alone") && order.size() == 3 ? 1 : 0;
                for (int k = 0; k < order.size(); k++) {
                    int i = (int) (order.get(k) - 11);
                    if (s.probing()) {
                        done[i] += k == s.turn() ? alone[i] / 1000.0 : 0;
                    } else {
                        done[i] += alone[i] * kept[i].applyAsDouble(s.widths()[k]) / 1000.0;
                        if (order.size() == 3) {
                            widths = s.widths();
                        }
                    }
                }
            }
            if (memory) {
                assertTrue(weighings >= 5, "weighed in most of the 10 returns: " + weighings);
                assertTrue(rounds <= 4, "rounds when due, not at each return: " + rounds);
                assertTrue(widths[2] < 5 && widths[0] > 6, "toward the trainer and away from Triton: " + java.util.Arrays.toString(widths));
            } else {
                assertEquals(0, weighings, "before: a new set at every return, measured alone again, never weighed");
                assertArrayEquals(new int[] {6, 5, 5}, widths, "the node's cut throughout");
            }
        }
    }

    /**
     * A trainer, a GEMM process and Triton stopped 1.5 s of every 3 (the paired reading's stops),
     * found stopped and back one at a time, 20 ms apart, each change a new set. With the count
     * carried across the stops (the default) a weighing that a stop cuts short goes on after it:
     * the first one comes sooner, more come in the same time, and the trace says over how many
     * stretches it was counted; without, each stop dropped the count (session 105: one weighing
     * every 3 s beside a GEMM process).
     */
    @Test
    void aCountAStopCutsShortGoesOnAfterIt() {
        int[] first = new int[2];
        int[] weighings = new int[2];
        for (boolean carry : new boolean[] {true, false}) {
            BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
            b.carry(carry);
            b.longCommands(false); // a GEMM process's sixteen commands, as when carry was measured (session 106)
            double[] alone = {30_000, 40, 5_000};
            IntToDoubleFunction[] kept = {w -> 0.8 * w / 16.0, w -> 0.8 * w / 16.0, w -> Math.min(0.95, 0.5 + w / 32.0)};
            double[] done = new double[3];
            int firstAt = -1;
            int n3 = 0;
            boolean across = false;
            for (int t = 0; t < 30_000; t++) {
                long now = t * MS;
                int inCycle = t % 3_000;
                List<Long> order = new java.util.ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    if (inCycle >= 20 * i && inCycle < 1_500 + 20 * i) {
                        order.add(11L + i);
                    }
                }
                if (order.size() < 2) {
                    b.pause();
                    continue;
                }
                long[] counts = new long[order.size()];
                for (int k = 0; k < order.size(); k++) {
                    counts[k] = (long) done[(int) (order.get(k) - 11)];
                }
                int[] initial = order.size() == 3 ? new int[] {4, 6, 6} : new int[] {8, 8};
                BestEffortBalance.Step s = b.step(now, order, counts, new boolean[order.size()], initial);
                String line = b.trace();
                if (line.contains("rates kept alone") && order.size() == 3) {
                    n3++;
                    firstAt = firstAt < 0 ? t : firstAt;
                    across |= line.contains("stretches between pauses");
                }
                for (int k = 0; k < order.size(); k++) {
                    int i = (int) (order.get(k) - 11);
                    if (s.probing()) {
                        done[i] += k == s.turn() ? alone[i] / 1000.0 : 0;
                    } else {
                        done[i] += alone[i] * kept[i].applyAsDouble(s.widths()[k]) / 1000.0;
                    }
                }
            }
            first[carry ? 0 : 1] = firstAt;
            weighings[carry ? 0 : 1] = n3;
            assertEquals(carry, across, "the trace says when a weighing was counted across a stop, carry " + carry);
        }
        assertTrue(first[0] >= 0 && first[1] >= 0, "weighed either way: " + Arrays.toString(first));
        assertTrue(first[0] < first[1], "the first weighing sooner with the count carried: " + Arrays.toString(first));
        assertTrue(weighings[0] > weighings[1], "more weighings with the count carried: " + Arrays.toString(weighings));
    }

    /**
     * A GEMM process (37 commands a second alone, about 11 on half the device) beside Triton, as on
     * an H100 in session 106: by the gaps between its long commands it is weighed before the first
     * round of spells and half a period after one, and the cut leaves the node's 8/8 for it sooner,
     * where counting sixteen of its commands let the first weighing wait seconds.
     */
    @Test
    void aProcessOfLongCommandsIsWeighedByTheGapsBetweenThem() {
        long[] firstAt = new long[2];
        double[] gemmEarly = new double[2];
        String[] early = new String[2];
        for (boolean on : new boolean[] {true, false}) {
            BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
            b.longCommands(on);
            List<Long> pids = List.of(21L, 22L);
            double[] alone = {37, 5_200};
            IntToDoubleFunction[] kept = {w -> Math.min(1, 1.15 * (w / 16.0) * (w / 16.0)), w -> Math.min(0.95, 0.3 + 0.07 * w)};
            double[] done = new double[2];
            long first = -1;
            String before = "";
            for (int t = 0; t < 6_000; t++) {
                long now = t * MS;
                long[] counts = {(long) done[0], (long) done[1]};
                BestEffortBalance.Step s = b.step(now, pids, counts, new boolean[2], new int[] {8, 8});
                String line = b.trace();
                if (line.contains("rates kept alone") && first < 0) {
                    first = t;
                }
                if (line.contains("counted before the spells")) {
                    before = line;
                }
                for (int i = 0; i < 2; i++) {
                    double d = s.probing() ? (i == s.turn() ? alone[i] / 1000.0 : 0) : alone[i] * kept[i].applyAsDouble(s.widths()[i]) / 1000.0;
                    done[i] += d;
                    if (t < 3_000 && i == 0) {
                        gemmEarly[on ? 0 : 1] += d;
                    }
                }
            }
            firstAt[on ? 0 : 1] = first;
            early[on ? 0 : 1] = before;
        }
        assertTrue(firstAt[0] >= 0 && firstAt[1] >= 0, "weighed either way: " + Arrays.toString(firstAt));
        assertTrue(firstAt[0] < firstAt[1], "the first weighing sooner by the gaps: " + Arrays.toString(firstAt));
        assertTrue(early[0].contains("-> ["), "what the GEMMs did before the round is weighed and moves the cut: " + early[0]);
        assertEquals("", early[1], "with sixteen commands needed, nothing before the round is weighed");
        assertTrue(gemmEarly[0] > 1.1 * gemmEarly[1], "the GEMMs' first 3 s: " + Arrays.toString(gemmEarly));
    }

    /**
     * A process idle for most of its first spell (its rate alone read at a third) then does more on
     * its part than that: measured alone again at once, not 8 s later, and the cut moves toward it
     * from there.
     */
    @Test
    void aRateAloneTakenLowIsMeasuredAgainAtOnce() {
        BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
        List<Long> pids = List.of(11L, 12L);
        double[] alone = {19_000, 5_400};
        IntToDoubleFunction[] kept = {w -> 0.9 * w / 16.0, w -> Math.min(0.95, 0.5 + w / 32.0)};
        double[] done = new double[2];
        boolean firstSpell = true;
        String again = "";
        long againAt = -1;
        String nextRound = "";
        int[] widths = {8, 8};
        for (int t = 0; t < 8_000; t++) {
            long now = t * MS;
            long[] counts = {(long) done[0], (long) done[1]};
            BestEffortBalance.Step s = b.step(now, pids, counts, new boolean[2], new int[] {8, 8});
            String line = b.trace();
            if (line.contains("measured alone again") && again.isEmpty()) {
                again = line;
                againAt = t;
            } else if (line.startsWith("rates alone") && !again.isEmpty() && nextRound.isEmpty()) {
                nextRound = line;
            }
            if (line.startsWith("rates alone")) {
                firstSpell = false;
            }
            for (int i = 0; i < 2; i++) {
                if (s.probing()) {
                    // the first spell: the trainer does a third of its rate
                    double r = i == 0 && firstSpell ? alone[i] / 3 : alone[i];
                    done[i] += i == s.turn() ? r / 1000.0 : 0;
                } else {
                    done[i] += alone[i] * kept[i].applyAsDouble(s.widths()[i]) / 1000.0;
                    widths = s.widths();
                }
            }
        }
        assertTrue(again.contains("pid 11 did more on its part than alone"), "found at the first weighing: " + again);
        assertTrue(againAt < 3_000, "within the first weighing, not 8 s on: " + againAt);
        long rate = Long.parseLong(nextRound.replaceAll(".* 11=(\\d+).*", "$1"));
        assertTrue(Math.abs(rate - 19_000) < 19_000 * 0.05, "its true rate alone the second time: " + nextRound);
        assertTrue(widths[0] >= 10, "then toward it: " + java.util.Arrays.toString(widths));

        // without memory, the low rate stands until the next round, 8 s on
        BestEffortBalance old = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
        old.memory(false);
        java.util.Arrays.fill(done, 0);
        firstSpell = true;
        boolean said = false;
        for (int t = 0; t < 8_000; t++) {
            long now = t * MS;
            BestEffortBalance.Step s = old.step(now, pids, new long[] {(long) done[0], (long) done[1]}, new boolean[2], new int[] {8, 8});
            String line = old.trace();
            said |= line.contains("measured alone again");
            firstSpell &= !line.startsWith("rates alone");
            for (int i = 0; i < 2; i++) {
                if (s.probing()) {
                    double r = i == 0 && firstSpell ? alone[i] / 3 : alone[i];
                    done[i] += i == s.turn() ? r / 1000.0 : 0;
                } else {
                    done[i] += alone[i] * kept[i].applyAsDouble(s.widths()[i]) / 1000.0;
                }
            }
        }
        assertFalse(said, "before: no second look");
    }

    /**
     * The first process's spell alone meets a hold by another rule (the wide beats while a wide
     * tenant's beat is learnt) from its 40th ms for 60 ms: with memory its spell begins again once
     * it is let go and reads its true rate; without, the hold is counted in its rate. Held through
     * 1.2 s of spells, it is not measured and the round goes on to the next; held for 20 ms (a
     * preferred tenant's request), the hold is part of its rate, as of every process's.
     */
    @Test
    void aSpellHeldByAnotherRuleBeginsAgainOnceLetGo() {
        for (boolean memory : new boolean[] {true, false}) {
            String round = firstRound(memory, 40, 60);
            long rate = Long.parseLong(roundLine(round).replaceAll(".* 11=(\\d+).*", "$1"));
            if (memory) {
                assertTrue(Math.abs(rate - 10_000) < 10_000 * 0.05, "its rate let go: " + round);
            } else {
                assertTrue(rate < 10_000 * 0.8, "before: the hold counted in: " + round);
            }
            long other = Long.parseLong(roundLine(round).replaceAll(".* 12=(\\d+).*", "$1"));
            assertTrue(Math.abs(other - 4_000) < 4_000 * 0.05, "the other, never held: " + round);
        }
        String skipped = firstRound(true, 20, 5_000);
        assertTrue(skipped.contains("pid 11 not measured alone: held by another rule through its spell"), skipped);
        assertTrue(skipped.contains("12=4"), "the round went on to the next: " + skipped);
        // a latency-critical tenant's request (20 ms) does not begin a spell again
        String shortHold = firstRound(true, 40, 20);
        long rate = Long.parseLong(roundLine(shortHold).replaceAll(".* 11=(\\d+).*", "$1"));
        assertTrue(rate < 10_000 && rate > 10_000 * 0.8, "a short hold counted in, as for every process: " + shortHold);
    }

    private static String roundLine(String lines) {
        return lines.lines().filter(l -> l.startsWith("rates alone")).findFirst().orElse("");
    }

    /** The trace lines up to and with the first round's, process 11 held from its spell's fromMs-th ms for holdMs. */
    private static String firstRound(boolean memory, int fromMs, int holdMs) {
        BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
        b.memory(memory);
        List<Long> pids = List.of(11L, 12L);
        double[] alone = {10_000, 4_000};
        double[] done = new double[2];
        long spellFrom = -1;
        StringBuilder lines = new StringBuilder();
        for (int t = 0; t < 10_000; t++) {
            long now = t * MS;
            long[] counts = {(long) done[0], (long) done[1]};
            boolean held = spellFrom >= 0 && t - spellFrom >= fromMs && t - spellFrom < fromMs + holdMs;
            BestEffortBalance.Step s = b.step(now, pids, counts, null, new boolean[2], new boolean[] {held, false}, new int[] {8, 8});
            String line = b.trace();
            if (!line.isEmpty()) {
                lines.append(line).append('\n');
            }
            if (line.startsWith("rates alone")) {
                return lines.toString();
            }
            if (s.probing() && s.turn() == 0 && spellFrom < 0) {
                spellFrom = t;
            }
            for (int i = 0; i < 2; i++) {
                boolean on = s.probing() ? i == s.turn() : true;
                if (on && !(i == 0 && held)) {
                    done[i] += alone[i] * (s.probing() ? 1 : 0.5) / 1000.0;
                }
            }
        }
        return lines.toString();
    }

    /** A device of two or more processes in 1 ms ticks: rates alone and kept on a part, work in flight drains in a tick. */
    private static final class Sim {
        final double[] alone;
        final IntToDoubleFunction[] kept;
        /** From this tick on, the rates alone are {@link #aloneAfter} (a new phase); -1: never. */
        int changeAt = -1;
        double[] aloneAfter;
        /** Each round's trace line, with its tick. */
        final List<String> rounds = new java.util.ArrayList<>();
        /** Each weighing's trace line on the parts, with its tick. */
        final List<String> weighings = new java.util.ArrayList<>();
        /** Called at each tick before the step (a test's change of phase). */
        java.util.function.IntConsumer onTick = t -> { };
        int probes;
        boolean heldWhileAlone = true;
        boolean bothOnTurn;
        /** {@link BestEffortBalance#quick(boolean)}: on, as by default. */
        boolean quick = true;
        /** {@link BestEffortBalance#early(boolean)}: on, as by default. */
        boolean early = true;

        /** {@link BestEffortBalance#sliceNanos(long)}: none, as by default. */
        long sliceNanos;
        /** Each process's device time between its waits on the device (ms; 0: it never waits); null: no device time nor waits given. */
        double[] waitEveryMs;
        /** {@link BestEffortBalance#regionWeights}: the share of the device each one's rate alone is measured on; null: all. */
        double[] region;
        /** {@link BestEffortBalance#regionCaps}: the most sixteenths each one's part can use; null: all. */
        int[] caps;

        Sim(double[] alone, IntToDoubleFunction[] kept) {
            this.alone = alone;
            this.kept = kept;
        }

        int[] run(int ticks) {
            int n = alone.length;
            BestEffortBalance b = new BestEffortBalance(BestEffortBalance.Times.DEFAULT);
            b.quick(quick);
            b.early(early);
            b.sliceNanos(sliceNanos);
            List<Long> pids = n == 2 ? List.of(11L, 12L) : List.of(11L, 12L, 13L);
            double[] done = new double[n];
            double[] deviceMs = new double[n];
            boolean[] inFlight = new boolean[n];
            int[] widths = {8, 8};
            BestEffortBalance.Step last = null;
            for (int t = 0; t < ticks; t++) {
                long now = t * MS;
                long[] counts = new long[n];
                for (int i = 0; i < n; i++) {
                    counts[i] = (long) done[i];
                }
                onTick.accept(t);
                if (t == changeAt) {
                    System.arraycopy(aloneAfter, 0, alone, 0, n);
                }
                long[] run = null;
                long[] waits = null;
                if (waitEveryMs != null) {
                    run = new long[n];
                    waits = new long[n];
                    for (int i = 0; i < n; i++) {
                        run[i] = (long) (deviceMs[i] * MS);
                        waits[i] = waitEveryMs[i] > 0 ? (long) (deviceMs[i] / waitEveryMs[i]) : 0;
                    }
                }
                b.regionWeights(pids, region);
                b.regionCaps(pids, caps);
                BestEffortBalance.Step s = b.step(now, pids, counts, run, waits, inFlight, null, new int[] {8, 8});
                String line = b.trace();
                if (line.startsWith("rates alone")) {
                    // a round's line, and what was counted before it weighed at its end (early)
                    int k = line.indexOf(EARLY);
                    rounds.add(t + " " + (k < 0 ? line : line.substring(0, k)));
                    if (k >= 0) {
                        weighings.add(t + " " + line.substring(k + EARLY.length()));
                    }
                } else if (line.startsWith("rates kept alone")) {
                    weighings.add(t + " " + line);
                }
                if (s.probing() && (last == null || !last.probing())) {
                    probes++;
                }
                last = s;
                if (s.probing()) {
                    for (int i = 0; i < n; i++) {
                        boolean on = i == s.turn();
                        done[i] += on ? alone[i] / 1000.0 : 0;
                        deviceMs[i] += on ? 1 : 0;
                        inFlight[i] = on;
                    }
                    if (s.turn() >= 0) {
                        for (int i = 0; i < n; i++) {
                            heldWhileAlone &= i == s.turn() || !inFlight[i];
                        }
                    }
                } else {
                    widths = s.widths();
                    for (int i = 0; i < n; i++) {
                        done[i] += alone[i] * kept[i].applyAsDouble(widths[i]) / 1000.0;
                        deviceMs[i] += kept[i].applyAsDouble(widths[i]);
                        inFlight[i] = true;
                    }
                }
                int on = 0;
                for (int i = 0; i < n; i++) {
                    on += s.probing() && i == s.turn() ? 1 : 0;
                }
                bothOnTurn |= on > 1;
            }
            return widths;
        }
    }
}
