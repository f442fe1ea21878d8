package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.QueueView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which queues the policy puts on top of their device, learnt from its decisions. */
class TopQueuesTest {

    private final TopQueues tops = new TopQueues();

    private static QueueView q(long handle, String device, String group, int priority, boolean ready, boolean suspended) {
        return new QueueView(handle, "q" + handle, device, group, ready, suspended, false, ready ? 1 : 0, 0, 0, ready ? 1 : 0, 0, 0, 0,
                List.of(new Hint.Priority(priority)), PreemptionLevel.BLOCK);
    }

    /** A decision: handle to true (suspend) or false (resume), as the ActionRecorder keeps it. */
    private static Map<Long, Boolean> held(long... handles) {
        Map<Long, Boolean> m = new HashMap<>();
        for (long h : handles) {
            m.put(h, Boolean.TRUE);
        }
        return m;
    }

    private static Map<Long, Boolean> runs(Map<Long, Boolean> m, long... handles) {
        for (long h : handles) {
            m.put(h, Boolean.FALSE);
        }
        return m;
    }

    @Test
    void theQueueTheOthersYieldToIsOnTopUntilItYieldsItself() {
        // bg alone with work: it runs, nobody yields
        assertNull(tops.update("hpf", List.of(q(1, "d0", "fg", 2, false, false), q(2, "d0", "bg", 1, true, false)), runs(new HashMap<>(), 2)));
        assertEquals(Set.of(), tops.top());
        // fg arrives: it runs, bg is held for it
        assertEquals(Set.of(1L), tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "bg", 1, true, false)),
                runs(held(2), 1)));
        // fg idle again, bg runs: fg stays on top (the relation is kept between its tasks)
        assertNull(tops.update("hpf", List.of(q(1, "d0", "fg", 2, false, false), q(2, "d0", "bg", 1, true, true)), runs(new HashMap<>(), 2)));
        assertEquals(Set.of(1L), tops.top());
        // the policy holds fg for bg once (it takes turns, or changed its mind): never on top again
        assertEquals(Set.of(), tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "bg", 1, true, false)),
                runs(held(1), 2)));
        assertNull(tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "bg", 1, true, false)), runs(held(2), 1)));
        assertEquals(Set.of(), tops.top());
    }

    @Test
    void everyQueueOfOtherGroupsMustHaveYieldedAndPeersDoNotCount() {
        List<QueueView> three = List.of(q(1, "d0", "fg", 3, true, false), q(2, "d0", "mid", 2, true, false), q(3, "d0", "bg", 1, false, false),
                q(4, "d0", "fg", 3, true, false), q(5, "d1", "other", 1, true, false));
        // 2 yields to 1 and 4 (fg's peer); bg (3) has yielded to nobody yet; d1's queue is not company
        assertNull(tops.update("hpf", three, runs(held(2), 1, 4, 5)));
        assertEquals(Set.of(), tops.top(), "bg has not yielded to fg yet");
        List<QueueView> bgToo = List.of(q(1, "d0", "fg", 3, true, false), q(2, "d0", "mid", 2, true, true), q(3, "d0", "bg", 1, true, false),
                q(4, "d0", "fg", 3, true, false), q(5, "d1", "other", 1, true, false));
        assertEquals(Set.of(1L, 4L), tops.update("hpf", bgToo, runs(held(2, 3), 1, 4, 5)), "both fg queues: peers are no company");
        // a newcomer of another group opens on d0: it has yielded to nobody, so fg is no longer on top
        List<QueueView> newcomer = List.of(q(1, "d0", "fg", 3, false, false), q(2, "d0", "mid", 2, false, false),
                q(3, "d0", "bg", 1, false, false), q(4, "d0", "fg", 3, false, false), q(5, "d1", "other", 1, true, false),
                q(6, "d0", "new", 0, false, false));
        assertEquals(Set.of(), tops.update("hpf", newcomer, new HashMap<>()));
        // it closes: fg is on top again
        assertEquals(Set.of(1L, 4L), tops.update("hpf", newcomer.subList(0, 5), new HashMap<>()));
    }

    @Test
    void aPeerHeldForItStandsInForNoQueueOfAnotherGroup() {
        // fg's peer (same group and priority) is held while fg runs; bg, of another group, has not yielded
        assertNull(tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "fg", 2, true, false),
                q(3, "d0", "bg", 1, false, false)), runs(held(2), 1)));
        assertEquals(Set.of(), tops.top(), "bg has not yielded to fg: a peer's yield does not count for it");
        assertEquals(Set.of(1L), tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "fg", 2, true, true),
                q(3, "d0", "bg", 1, true, false)), runs(held(2, 3), 1)), "once bg has yielded too; the held peer yielded, so it is not");
    }

    @Test
    void aPriorityChangeOrAPolicySwapForgetsWhatWasLearnt() {
        List<QueueView> v = List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "bg", 1, true, false));
        assertEquals(Set.of(1L), tops.update("hpf", v, runs(held(2), 1)));
        // bg's priority changes: its yields so far were to another order
        assertEquals(Set.of(), tops.update("hpf", List.of(q(1, "d0", "fg", 2, false, false), q(2, "d0", "bg", 0, true, true)), new HashMap<>()));
        assertEquals(Set.of(1L), tops.update("hpf", v, runs(held(2), 1)));
        assertEquals(Set.of(), tops.update("edf", List.of(q(1, "d0", "fg", 2, false, false), q(2, "d0", "bg", 1, true, true)), new HashMap<>()),
                "another policy: nothing it did is known");
    }

    @Test
    void anIdleQueueHeldWhileAnotherRunsYieldsToo() {
        // bg is idle (a trainer between steps, a service between requests) and hpf holds it while fg
        // runs: it would not run if its work came now, so fg is on top at once
        assertEquals(Set.of(1L), tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "bg", 1, false, false)),
                runs(held(2), 1)));
        // bg falls asleep and wakes (out of one decision, back in the next): it has yielded to
        // nobody since; fg's next run with bg held and idle puts fg on top again
        assertEquals(Set.of(), tops.update("hpf", List.of(q(1, "d0", "fg", 2, false, false)), new HashMap<>()),
                "alone: no company to be on top of");
        assertNull(tops.update("hpf", List.of(q(1, "d0", "fg", 2, false, false), q(2, "d0", "bg", 1, false, false)),
                runs(new HashMap<>(), 1, 2)));
        assertEquals(Set.of(), tops.top(), "bg woke: it has not yielded since");
        assertEquals(Set.of(1L), tops.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), q(2, "d0", "bg", 1, false, true)),
                new HashMap<>()), "still held from before (no action), idle, while fg runs");
        // an idle queue held while nobody runs yields to nobody; nor one its application holds
        TopQueues other = new TopQueues();
        assertNull(other.update("hpf", List.of(q(1, "d0", "fg", 2, false, false), q(2, "d0", "bg", 1, false, false)), held(2)));
        QueueView appHeld = new QueueView(2, "q2", "d0", "bg", false, true, true, 0, 0, 0, 0, 0, 0, 0, List.of(new Hint.Priority(1)),
                PreemptionLevel.BLOCK);
        assertNull(other.update("hpf", List.of(q(1, "d0", "fg", 2, true, false), appHeld), runs(held(2), 1)));
        assertEquals(Set.of(), other.top());
    }

    @Test
    void queuesThatRunTogetherOrAreHeldByTheirAppDoNotYield() {
        // equal priorities of two groups: the policy runs both, nobody yields, nobody is on top
        assertNull(tops.update("hpf", List.of(q(1, "d0", "a", 1, true, false), q(2, "d0", "b", 1, true, false)), runs(new HashMap<>(), 1, 2)));
        assertEquals(Set.of(), tops.top());
        // a queue its application holds is not held for anyone
        QueueView appHeld = new QueueView(2, "q2", "d0", "b", true, true, true, 1, 0, 0, 1, 0, 0, 0, List.of(new Hint.Priority(1)),
                PreemptionLevel.BLOCK);
        assertNull(tops.update("hpf", List.of(q(1, "d0", "a", 1, true, false), appHeld), runs(held(2), 1)));
        assertEquals(Set.of(), tops.top());
        // a queue held while nobody on its device runs yields to nobody
        assertNull(tops.update("hpf", List.of(q(1, "d0", "a", 1, false, false), q(2, "d0", "b", 1, true, false)), held(2)));
        assertEquals(Set.of(), tops.top());
    }
}
