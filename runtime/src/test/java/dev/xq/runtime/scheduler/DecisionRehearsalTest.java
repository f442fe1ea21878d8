package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The rehearsal of the decision's bookkeeping run when the scheduler starts goes through the paths a
 * node meets late (guards given and lifted, queues held and narrowed, let out of a narrowing
 * between a wide queue's requests, the gap told), the same on every run, on guards of its own.
 */
class DecisionRehearsalTest {

    @Test
    void aRoundGoesThroughTheGuardsPaths() {
        DecisionRehearsal.Tally t = DecisionRehearsal.run(1);
        String seen = t.toString();
        assertTrue(t.decisions > 1000, "decisions: " + seen);
        assertTrue(t.guardsGiven > 0 && t.guardsLifted > 0, "guards given and lifted: " + seen);
        assertTrue(t.held > 0 && t.narrowed > 0, "held and narrowed: " + seen);
        assertTrue(t.unnarrowed > 0, "let out of a narrowing between a wide queue's requests: " + seen);
        assertTrue(t.gapsTold > 0, "the gap told: " + seen);
        assertTrue(t.renarrowed > 0, "narrowed anew beside a narrow tenant: " + seen);
        assertTrue(t.topChanges > 0, "the queues on top changed: " + seen);
    }

    @Test
    void roundsAreAlikeAndScale() {
        DecisionRehearsal.Tally one = DecisionRehearsal.run(1);
        DecisionRehearsal.Tally three = DecisionRehearsal.run(3);
        assertEquals(3 * one.decisions, three.decisions, "decisions of three rounds: " + three + " against one: " + one);
        assertEquals(3 * one.unnarrowed, three.unnarrowed, "each round on fresh guards: " + three + " against one: " + one);
    }

    @Test
    void theNodesGuardsAreUntouched() {
        ArrivalGuards nodes = new ArrivalGuards(false);
        DecisionRehearsal.run(1);
        assertTrue(nodes.given().isEmpty(), "no guard given to the node's queues: " + nodes.given());
        assertEquals(Long.MAX_VALUE, nodes.lingerWake(), "no wake asked of the node's guards");
    }
}
