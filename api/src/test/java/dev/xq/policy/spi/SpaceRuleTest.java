package dev.xq.policy.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SpaceRuleTest {

    private static final long SHORT = 200_000;
    private static final long LONG = 21_000_000;

    @Test
    void withNothingPreferredAHoldStaysAHoldAndARunGetsTheWholeDevice() {
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(132, -1, -1, SHORT, true, true));
        assertEquals(0, SpaceRule.leave(132, -1, -1, LONG, false, true));
    }

    @Test
    void heldBehindANarrowTenantTheQueueLeavesItsWidthInSteps() {
        assertEquals(24, SpaceRule.leave(132, 21, 21, SHORT, true, true), "21 rounded up to 24");
        assertEquals(8, SpaceRule.leave(132, 0, 0, SHORT, true, true), "at least one step");
        assertEquals(24, SpaceRule.leave(132, 24, -1, SHORT, true, true), "an idle preferred queue's width is reserved too");
    }

    @Test
    void behindABusyTenantWiderThanHalfShortCommandsAreHeldLongOnesLeaveHalf() {
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(132, 132, 132, SHORT, true, true));
        assertEquals(64, SpaceRule.leave(132, 132, 132, SHORT, true, false), "holdBehindWide off: half, in steps");
        assertEquals(64, SpaceRule.leave(132, 132, 132, LONG, true, true), "a hold cannot cut a 21 ms kernel");
        assertEquals(64, SpaceRule.leave(132, 132, 24, SHORT, true, true), "the wide one idle: narrowed, leaving it half");
        assertEquals(64, SpaceRule.leave(132, 64, 64, SHORT, true, true), "exactly half is not wider than half");
    }

    @Test
    void aRunningQueueOfLongCommandsStaysNarrowedWhileAPreferredQueueIsOpen() {
        assertEquals(40, SpaceRule.leave(132, 40, -1, LONG, false, true));
        assertEquals(0, SpaceRule.leave(132, 40, -1, SHORT, false, true));
        assertEquals(64, SpaceRule.cap(0), "an unknown device counts as 128");
        assertEquals(8, SpaceRule.cap(10));
    }

    @Test
    void behindPreferredQueuesInContextsOfTheirOwnAQueueIsHeldBehindAWideBusyOneOrRunsWhole() {
        // widestShared -1: every preferred queue is time-sliced against this one by the GPU
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(132, 132, 132, -1, SHORT, true, true), "a busy graph: held");
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(132, 132, 132, -1, LONG, true, true), "long commands too: narrowing leaves it nothing");
        assertEquals(0, SpaceRule.leave(132, 132, 132, -1, LONG, true, false), "holdBehindWide off: runs whole");
        assertEquals(0, SpaceRule.leave(132, 24, 24, -1, SHORT, true, true), "a busy narrow decoder: runs whole, not narrowed");
        assertEquals(0, SpaceRule.leave(132, 132, -1, -1, LONG, false, true), "an idle graph: long commands run whole");
        assertEquals(0, SpaceRule.leave(132, 132, 24, -1, LONG, true, true), "the wide one idle, a narrow one busy");
        // one in the shared space beside one of its own: narrowed for the shared one only
        assertEquals(24, SpaceRule.leave(132, 132, 24, 24, LONG, true, true));
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(132, 132, 132, 24, SHORT, true, true));
        // the old rule is the same rule with every preferred queue shared
        assertEquals(SpaceRule.leave(132, 40, -1, 40, LONG, false, true), SpaceRule.leave(132, 40, -1, LONG, false, true));
    }

    @Test
    void aboveTellsTheWidestSharedApartFromOwnContexts() {
        QueueView decode = q(1, 3, true, 20_000);
        QueueView graph = q(2, 2, false, 800_000);
        QueueView be = q(3, 1, true, LONG);
        SchedulerView v = new SchedulerView(0, List.of(decode, graph, be), List.of(),
                Map.of(1L, new QueueSpace(false, 16, 132, false), 2L, new QueueSpace(false, 132, 132, true), 3L,
                        new QueueSpace(true, 132, 132)));
        SpaceRule.Above above = new SpaceRule.Above(v, v.queues());
        assertEquals(132, above.widest(1));
        assertEquals(16, above.widestShared(1), "the graph has its own context");
        assertEquals(16, above.widestBusy(1));
        assertEquals(16, SpaceRule.leave(v, above, be, true, true), "narrowed for the decoder in its space, not for the graph");
        assertEquals(-1, above.widestShared(3));
        SchedulerView alone = new SchedulerView(0, List.of(graph, be), List.of(),
                Map.of(2L, new QueueSpace(false, 132, 132, true), 3L, new QueueSpace(true, 132, 132)));
        SpaceRule.Above a2 = new SpaceRule.Above(alone, alone.queues());
        assertEquals(-1, a2.widestShared(1));
        assertEquals(0, SpaceRule.leave(alone, a2, be, false, true), "an idle own-context graph: the whole device");
        assertEquals(0, SpaceRule.leave(alone, a2, be, true, true), "held by the policy but the graph is idle: runs whole");
    }

    private static QueueView q(long handle, int priority, boolean ready, long commandNanos) {
        return new QueueView(handle, "q" + handle, "cuda0", "g" + handle, ready, false, false, ready ? 1 : 0, 0, 0, ready ? 1 : 0, 0,
                0, commandNanos, List.of(new Hint.Priority(priority)), PreemptionLevel.BLOCK);
    }

    @Test
    void behindABusyTenantWhoseCurrentStretchIsNarrowAQueueIsNarrowedByItsWidest() {
        QueueView chat = q(1, 2, true, 300_000);
        QueueView be = q(3, 1, true, SHORT);
        SchedulerView v = new SchedulerView(0, List.of(chat, be), List.of(),
                Map.of(1L, new QueueSpace(false, 132, 132, false, 24), 3L, new QueueSpace(true, 132, 132)));
        SpaceRule.Above above = new SpaceRule.Above(v, v.queues());
        assertEquals(132, above.widest(1), "reserved for its widest");
        assertEquals(24, above.widestBusy(1), "held behind by its current stretch");
        assertEquals(64, SpaceRule.leave(v, above, be, true, true), "narrowed to what half the device leaves, not held");
        SchedulerView wide = new SchedulerView(0, List.of(chat, be), List.of(),
                Map.of(1L, new QueueSpace(false, 132, 132, false, 132), 3L, new QueueSpace(true, 132, 132)));
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(wide, new SpaceRule.Above(wide, wide.queues()), be, true, true));
        SchedulerView unknown = new SchedulerView(0, List.of(chat, be), List.of(),
                Map.of(1L, new QueueSpace(false, 132, 132, false, 0), 3L, new QueueSpace(true, 132, 132)));
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(unknown, new SpaceRule.Above(unknown, unknown.queues()), be, true, true),
                "a stretch not known counts as the widest");
        assertEquals(132, new QueueSpace(false, 132, 132, true).stretchWidthSms(), "the older constructors: the stretch is the widest");
        assertThrows(IllegalArgumentException.class, () -> new QueueSpace(false, 132, 132, false, -1));
    }

    @Test
    void aboveTellsTheWidestOfHigherPrioritiesAndOfThoseWithWork() {
        QueueView lc = q(1, 3, false, 50_000);
        QueueView graph = q(2, 2, true, 800_000);
        QueueView be = q(3, 1, true, SHORT);
        QueueView node = q(4, 5, false, 10_000); // the node's own queue: width not known
        SchedulerView v = new SchedulerView(0, List.of(lc, graph, be, node), List.of(),
                Map.of(1L, new QueueSpace(false, 24, 132), 2L, new QueueSpace(false, 132, 132), 3L, new QueueSpace(true, 132, 132)));
        SpaceRule.Above above = new SpaceRule.Above(v, v.queues());
        assertEquals(132, above.deviceSms());
        assertEquals(-1, above.widest(5), "nothing above the top");
        assertEquals(66, above.widest(3), "the node's queue counts as half");
        assertEquals(-1, above.widestBusy(3), "neither is busy");
        assertEquals(132, above.widest(1));
        assertEquals(132, above.widestBusy(1), "graph has work");
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(v, above, be, true, true));
        assertEquals(64, SpaceRule.leave(v, above, be, true, false));
        assertEquals(SpaceRule.HOLD, SpaceRule.leave(v, above, graph, true, false), "not narrowable: time only");
        Decision d = new Decision(v);
        assertEquals(64, SpaceRule.decide(d, v, above, be, true, false));
        StringBuilder log = new StringBuilder();
        d.applyTo(v, new SchedulerActions() {
            @Override
            public void suspend(long handle) {
                log.append("suspend ").append(handle).append(';');
            }

            @Override
            public void resume(long handle) {
                log.append("resume ").append(handle).append(';');
            }

            @Override
            public void narrow(long handle, int leaveSms) {
                log.append("narrow ").append(handle).append(' ').append(leaveSms).append(';');
            }

            @Override
            public void wakeAt(long nanos) {
            }
        });
        assertEquals("narrow 3 64;", log.toString());
    }

    @Test
    void narrowingToNothingIsRefusedByNameAndAnActionsDefaultIsAHold() {
        QueueView be = q(3, 1, true, SHORT);
        SchedulerView v = new SchedulerView(0, List.of(be), List.of());
        var e = assertThrows(IllegalArgumentException.class, () -> new Decision(v).narrow(be, 0));
        assertEquals("leaveSms 0 must be at least 1 (run the queue instead)", e.getMessage());
        StringBuilder log = new StringBuilder();
        SchedulerActions timeOnly = new SchedulerActions() {
            @Override
            public void suspend(long handle) {
                log.append("suspend ").append(handle);
            }

            @Override
            public void resume(long handle) {
            }

            @Override
            public void wakeAt(long nanos) {
            }
        };
        timeOnly.narrow(3, 16);
        assertEquals("suspend 3", log.toString());
        assertEquals(QueueSpace.NONE, v.space(3));
        assertThrows(IllegalArgumentException.class, () -> new QueueSpace(true, -1, 132));
    }
}
