package dev.xq.policy.fixedpriority;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import dev.xq.policy.testkit.Views;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Checks the waiting bound stated in {@link AgingHighestPriorityFirst}:
 * W = threshold + (p_hi - p_lo + 1) / rate ms, on a simulated clock with no in-flight work.
 */
class AgingBoundTest {

    static final long MS = 1_000_000;
    static final long THRESHOLD_US = 10_000;
    static final double RATE = 0.5;
    static final long QUANTUM_US = 5_000;

    private static long bound(int hi, int lo) {
        return THRESHOLD_US * 1000 + (long) Math.ceil((hi - lo + 1) / RATE * MS);
    }

    private static Simulation twoQueues() {
        Simulation sim = new Simulation(1_000 * MS, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "hp", new Hint.Priority(5));
        sim.add(2, "d0", "lp", new Hint.Priority(1));
        sim.ready(1);
        sim.ready(2);
        return sim;
    }

    @Test
    void lowPriorityQueueWaitsNoLongerThanTheBound() {
        Policy aging = new AgingHighestPriorityFirst(AgingSettings.of(THRESHOLD_US, RATE, QUANTUM_US), new RecordingLogger().logger);
        Simulation sim = twoQueues();
        sim.decide(aging);
        sim.run(aging, sim.now() + 2_000 * MS, 1 * MS);

        long wait = sim.maxWait(2);
        assertTrue(wait <= bound(5, 1), "lp waited " + wait + " ns, bound " + bound(5, 1));
        // It does wait out the threshold and the climb (the policy is not simply fair sharing).
        assertTrue(wait >= THRESHOLD_US * 1000 + 8 * MS, "lp waited only " + wait + " ns");
        // One run per (wait + quantum): 2 s / 23 ms is about 86 turns.
        assertTrue(sim.queue(2).waits >= 80, "lp got " + sim.queue(2).waits + " turns");
        assertEquals(0, sim.maxWait(1), "aging never suspends the top queue");
    }

    @Test
    void boundHoldsWithIrregularEventsAndThreeLevels() {
        Policy aging = new AgingHighestPriorityFirst(AgingSettings.of(THRESHOLD_US, RATE, QUANTUM_US), new RecordingLogger().logger);
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        sim.add(1, "d0", "hp", new Hint.Priority(9));
        sim.add(2, "d0", "mp", new Hint.Priority(6));
        sim.add(3, "d0", "lp", new Hint.Priority(2));
        Random random = new Random(42);
        sim.ready(1);
        sim.ready(2);
        sim.ready(3);
        sim.decide(aging);
        long end = 3_000 * MS;
        while (sim.now() < end) {
            // Completions and arrivals at random moments in between the policy's own timers.
            sim.run(aging, sim.now() + (long) (random.nextDouble() * 3 * MS) + 1, random.nextInt(2_000_000) + 1);
        }
        assertTrue(sim.maxWait(2) <= bound(9, 6), "mp waited " + sim.maxWait(2));
        assertTrue(sim.maxWait(3) <= bound(9, 2), "lp waited " + sim.maxWait(3));
        assertTrue(sim.queue(3).waits > 50 && sim.queue(2).waits > 50);
    }

    @Test
    void boundHoldsWhenTheTopQueueGoesIdleAndReadyBetweenDecisions() {
        Policy aging = new AgingHighestPriorityFirst(AgingSettings.of(THRESHOLD_US, RATE, QUANTUM_US), new RecordingLogger().logger);
        Simulation sim = twoQueues();
        sim.decide(aging);
        long end = sim.now() + 2_000 * MS;
        while (sim.now() < end) {
            sim.run(aging, sim.now() + 3 * MS, 1 * MS);
            // hp finishes a task and submits the next before the scheduler looks: only its ready-since moves.
            sim.idle(1);
            sim.ready(1);
        }
        // hp's moving ready-since looks like a new arrival, which may cut lp's quantum short: one quantum more.
        long wait = sim.maxWait(2);
        assertTrue(wait <= bound(5, 1) + QUANTUM_US * 1000, "lp waited " + wait);
        assertTrue(sim.queue(2).waits >= 80, "lp got " + sim.queue(2).waits + " turns");
        assertTrue(sim.queue(2).runNanos >= 80 * MS, "lp ran only " + sim.queue(2).runNanos + " ns");
    }

    @Test
    void withoutAgingTheLowQueueStarves() {
        Simulation sim = twoQueues();
        Policy hpf = new HighestPriorityFirst();
        sim.decide(hpf);
        sim.run(hpf, sim.now() + 2_000 * MS, 1 * MS);
        assertEquals(2_000 * MS, sim.maxWait(2));
        assertEquals(0, sim.queue(2).runNanos);
    }
}
