package dev.xq.policy.fixedpriority;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

class ActiveWindowFirstTest {

    record Config(String awf_order, long awf_guard_wait, long awf_guard_run) implements AwfConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return AwfConfig.class;
        }
    }

    private static final long MS = 1_000_000;

    private final RecordingLogger log = new RecordingLogger();
    private final ActiveWindowFirst awf = new ActiveWindowFirst(AwfSettings.DEFAULTS, log.logger);

    private static RecordingActions decide(Policy p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    @Test
    void oneMarkedQueueMarksItsGroupOnEveryDevice() {
        // Process 41 ("41:game") marked on one of its queues; its hint-less queue on d1 goes first there
        // too, before a background queue with a priority hint.
        SchedulerView v = view(100,
                queue(1).group("41:game").device("d0").window(0, 5).readySince(10).build(),
                queue(2).group("41:game").device("d1").readySince(10).build(),
                queue(3).group("77:train").device("d1").priority(3).readySince(10).build(),
                queue(4).group("77:train").device("d0").priority(3).readySince(10).build());
        RecordingActions a = decide(awf, v);
        assertTrue(a.runs(1) && a.runs(2), "the active window's process runs on both devices");
        assertFalse(a.runs(3) || a.runs(4), "the others wait where it has work");
        assertNull(a.wake, "no timer without the guard");
        RecordingActions hpf = decide(new HighestPriorityFirst(), v);
        assertTrue(hpf.runs(3) && !hpf.runs(2), "hpf, which reads no window hint, runs train's priority 3 first");
    }

    @Test
    void theHighestMarkOnADisplayWinsAndTheOneMarkedBeforeNeedsNoClearing() {
        var editor = queue(1).group("editor").readySince(10);
        var game = queue(2).group("game").readySince(10);
        var bg = queue(3).group("bg").readySince(10);
        RecordingActions editorFirst = decide(awf, view(100, editor.window(0, 1).build(), game.build(), bg.build()));
        assertTrue(editorFirst.runs(1) && !editorFirst.runs(2) && !editorFirst.runs(3));
        // The focus moves to the game: it is marked later (a higher mark); the editor keeps its old mark.
        RecordingActions gameFirst = decide(awf, view(200, editor.build(), game.window(0, 2).build(), bg.build()));
        assertTrue(gameFirst.runs(2), "the most recent mark owns the display's window");
        assertFalse(gameFirst.runs(1), "the editor, marked before, is no longer active");
        assertFalse(gameFirst.runs(3));
    }

    @Test
    void markZeroClearsAndTheNextHighestMarkOwnsTheWindowAgain() {
        SchedulerView v = view(100,
                queue(1).group("a").window(0, 3).readySince(10).build(),
                queue(2).group("b").window(0, 7).readySince(10).build(),
                queue(3).group("c").readySince(10).build());
        assertTrue(decide(awf, v).runs(2) && !decide(awf, v).runs(1));
        RecordingActions cleared = decide(awf, view(100,
                queue(1).group("a").window(0, 3).readySince(10).build(),
                queue(2).group("b").window(0, 0).readySince(10).build(),
                queue(3).group("c").readySince(10).build()));
        assertTrue(cleared.runs(1), "b's mark is cleared: a's earlier mark is the highest again");
        assertFalse(cleared.runs(2) || cleared.runs(3));
        RecordingActions none = decide(awf, view(100,
                queue(1).group("a").window(0, 0).readySince(10).build(),
                queue(2).group("b").window(0, 0).readySince(10).build(),
                queue(3).group("c").readySince(10).build()));
        assertTrue(none.runs(1) && none.runs(2) && none.runs(3), "no active window: all at priority 0 run together");
    }

    @Test
    void whenTheOwnersMarkedQueuesCloseThePreviousOwnerIsActiveAgain() {
        RecordingActions both = decide(awf, view(100,
                queue(1).group("a").window(0, 3).readySince(10).build(),
                queue(2).group("b").window(0, 9).build(),
                queue(3).group("b").readySince(10).build()));
        assertTrue(both.runs(3) && !both.runs(1), "b's idle marked queue makes b active; its other queue goes first");
        RecordingActions closed = decide(awf, view(200,
                queue(1).group("a").window(0, 3).readySince(10).build(),
                queue(3).group("b").readySince(10).build()));
        assertTrue(closed.runs(1) && !closed.runs(3), "b's marked queue is gone: a owns the window again");
    }

    @Test
    void eachDisplayHasItsOwnActiveGroupAndEqualMarksShare() {
        RecordingActions a = decide(awf, view(100,
                queue(1).group("a").window(0, 5).readySince(10).build(),
                queue(2).group("b").window(1, 2).readySince(10).build(),
                queue(3).group("c").window(1, 1).readySince(10).build(),
                queue(4).group("d").readySince(10).build()));
        assertTrue(a.runs(1) && a.runs(2), "a owns :0, b owns :1 (2 > 1, however it compares with :0's 5)");
        assertFalse(a.runs(3) || a.runs(4));
        RecordingActions tie = decide(awf, view(100,
                queue(1).group("a").window(0, 5).readySince(10).build(),
                queue(2).group("b").window(0, 5).readySince(10).build(),
                queue(3).group("c").readySince(10).build()));
        assertTrue(tie.runs(1) && tie.runs(2) && !tie.runs(3), "equal marks: both active");
    }

    @Test
    void queuesWithoutAGroupAreGroupsOfTheirOwn() {
        RecordingActions a = decide(awf, view(100,
                queue(1).group(null).window(0, 5).readySince(10).build(),
                queue(2).group(null).readySince(10).build(),
                queue(3).group("").readySince(10).build()));
        assertTrue(a.runs(1));
        assertFalse(a.runs(2) || a.runs(3), "a group-less marked queue marks nothing else");
    }

    @Test
    void othersFollowTheirPriorityHintsOrRunTogether() {
        SchedulerView activeIdle = view(100,
                queue(1).group("w").window(0, 1).priority(-5).build(),
                queue(2).group("x").priority(2).readySince(10).build(),
                queue(3).group("y").priority(1).readySince(10).build());
        RecordingActions byPriority = decide(awf, activeIdle);
        assertTrue(byPriority.runs(2) && !byPriority.runs(3), "the active window has no work: the others as under hpf");
        assertTrue(byPriority.runs(1), "the idle active window stays resumed, so its work launches on arrival");
        ActiveWindowFirst together = new ActiveWindowFirst(AwfSettings.of(AwfSettings.Order.TOGETHER, 0, 10_000), log.logger);
        RecordingActions all = decide(together, activeIdle);
        assertTrue(all.runs(1) && all.runs(2) && all.runs(3), "together: hints not read, the others run together");
        SchedulerView activeBusy = view(100,
                queue(1).group("w").window(0, 1).priority(-5).readySince(10).build(),
                queue(5).group("w").priority(4).readySince(10).build(),
                queue(2).group("x").priority(2).readySince(10).build());
        RecordingActions within = decide(awf, activeBusy);
        assertTrue(within.runs(5) && !within.runs(1) && !within.runs(2), "within the active group, hints order its queues");
        RecordingActions withinTogether = decide(together, activeBusy);
        assertTrue(withinTogether.runs(5) && withinTogether.runs(1) && !withinTogether.runs(2));
    }

    @Test
    void idleOthersAreHeldWhileTheActiveWindowHasWorkAndADeviceWithoutItServesThem() {
        RecordingActions a = decide(awf, view(100,
                queue(1).group("w").device("d0").window(0, 1).readySince(10).build(),
                queue(2).group("bg").device("d0").build(),
                queue(3).group("bg").device("d1").readySince(10).build(),
                queue(4).group("bg2").device("d1").suspendedByApp().readySince(10).build()));
        assertTrue(a.runs(1));
        assertFalse(a.runs(2), "an idle other queue is held, so it cannot slip work in before the next decision");
        assertTrue(a.runs(3), "d1 has no work of the active window: it serves the others (XSched would hold them)");
        assertTrue(a.runs(4), "held by its application at the top rank of d1: left resumed");
    }

    @Test
    void withoutAnyMarkAwfDecidesAsHpf() {
        SchedulerView v = view(100,
                queue(1).group("a").priority(2).readySince(10).build(),
                queue(2).group("b").priority(1).readySince(10).build(),
                queue(3).group("c").priority(1).build(),
                queue(4).group("d").device("d1").priority(-3).readySince(10).build(),
                queue(5).group("e").device("d1").priority(-3).window(0, 0).readySince(10).build());
        assertEquals(decide(new HighestPriorityFirst(), v).log, decide(awf, v).log);
    }

    @Test
    void theGuardLetsAHeldQueueRunAfterItsWaitThenHoldsItAgain() {
        ActiveWindowFirst guarded = new ActiveWindowFirst(AwfSettings.of(AwfSettings.Order.PRIORITY, 50_000, 5_000), log.logger);
        long t0 = 1_000 * MS;
        java.util.function.LongFunction<SchedulerView> at = t -> view(t,
                queue(1).group("w").window(0, 1).readySince(t0).build(),
                queue(2).group("bg").readySince(t0).build());
        RecordingActions first = decide(guarded, at.apply(t0));
        assertTrue(first.runs(1) && !first.runs(2));
        assertEquals(t0 + 50 * MS, first.wake, "a timer for the end of the hold");
        RecordingActions early = decide(guarded, at.apply(t0 + 49 * MS));
        assertFalse(early.runs(2), "49 ms < awf.guard.wait");
        assertEquals(t0 + 50 * MS, early.wake);
        RecordingActions due = decide(guarded, at.apply(t0 + 50 * MS));
        assertTrue(due.runs(1) && due.runs(2), "held 50 ms: runs beside the active window");
        assertEquals(t0 + 55 * MS, due.wake, "a timer for the end of its run");
        assertTrue(decide(guarded, at.apply(t0 + 54 * MS)).runs(2), "still within awf.guard.run");
        RecordingActions over = decide(guarded, at.apply(t0 + 55 * MS));
        assertFalse(over.runs(2), "its run is over: held again");
        assertEquals(t0 + 105 * MS, over.wake, "and a new hold begins");
        // The active window goes idle: bg runs by rank and the guard forgets it; a new hold starts afresh.
        SchedulerView idle = view(t0 + 60 * MS, queue(1).group("w").window(0, 1).build(), queue(2).group("bg").readySince(t0).build());
        assertTrue(decide(guarded, idle).runs(2));
        assertEquals(0, guarded.watched());
        RecordingActions again = decide(guarded, at.apply(t0 + 70 * MS));
        assertFalse(again.runs(2));
        assertEquals(t0 + 120 * MS, again.wake);
        assertEquals(1, guarded.watched());
    }

    @Test
    void withTheGuardNoReadyQueueWaitsLongerThanItsWaitBesideABusyActiveWindowWithoutItOneStarves() {
        long start = 10_000 * MS;
        long end = start + 2_000 * MS;
        for (boolean guard : new boolean[] {true, false}) {
            ActiveWindowFirst p = new ActiveWindowFirst(AwfSettings.of(AwfSettings.Order.PRIORITY, guard ? 100_000 : 0, 20_000), log.logger);
            Simulation sim = new Simulation(start, new DeviceView("d0", "sim", 1, 0));
            sim.add(1, "d0", "w", new Hint.WindowActive(0, 1));
            sim.add(2, "d0", "bg", new Hint.Priority(5));
            sim.add(3, "d0", "bg2");
            sim.ready(1);
            sim.ready(2);
            sim.ready(3);
            sim.decide(p);
            sim.run(p, end, 7 * MS);
            if (guard) {
                for (long h : new long[] {2, 3}) {
                    assertTrue(sim.maxWait(h) <= 100 * MS, "queue " + h + " waited " + sim.maxWait(h) / MS + " ms > awf.guard.wait 100 ms");
                    // every 120 ms a run of 20 ms shared by three queues: ~111 ms each over 2 s
                    assertTrue(sim.queue(h).runNanos >= 90 * MS, "queue " + h + " ran " + sim.queue(h).runNanos / MS + " ms");
                }
                assertTrue(sim.queue(1).runNanos > 1_400 * MS, "the active window keeps most of the device: " + sim.queue(1).runNanos / MS + " ms");
            } else {
                assertEquals(2_000 * MS, sim.maxWait(2), "no guard: bg waits the whole run beside a busy active window (XSched's rule)");
                assertEquals(0, sim.queue(3).runNanos);
            }
        }
    }

    @Test
    void trialQueuesAreForgotten() {
        ActiveWindowFirst guarded = new ActiveWindowFirst(AwfSettings.of(AwfSettings.Order.PRIORITY, 1_000, 1_000), log.logger);
        decide(guarded, view(100, queue(1).group("w").window(0, 1).readySince(10).build(), queue(-2).group("warm-up").readySince(10).build()));
        assertEquals(1, guarded.watched());
        decide(guarded, view(200, queue(1).group("w").window(0, 1).readySince(10).build()));
        assertEquals(0, guarded.watched());
    }

    @Test
    void badConfigIsRejectedNamingTheValueAndChangesNothing() {
        assertEquals("awf.order 'first' is not allowed; allowed: priority, together",
                assertThrows(IllegalArgumentException.class, () -> AwfSettings.Order.of("first")).getMessage());
        assertEquals("awf.guard.wait 99 us is out of range; allowed: 0 (no guard) or [100, 3600000000] us",
                assertThrows(IllegalArgumentException.class, () -> AwfSettings.of(AwfSettings.Order.PRIORITY, 99, 1000)).getMessage());
        assertEquals("awf.guard.wait -1 us is out of range; allowed: 0 (no guard) or [100, 3600000000] us",
                assertThrows(IllegalArgumentException.class, () -> AwfSettings.of(AwfSettings.Order.PRIORITY, -1, 1000)).getMessage());
        assertEquals("awf.guard.run 0 us is out of range [100, 3600000000] us",
                assertThrows(IllegalArgumentException.class, () -> AwfSettings.of(AwfSettings.Order.PRIORITY, 0, 0)).getMessage());
        assertEquals("awf.guard.run 3600000001 us is out of range [100, 3600000000] us",
                assertThrows(IllegalArgumentException.class, () -> AwfSettings.of(AwfSettings.Order.PRIORITY, 0, 3_600_000_001L)).getMessage());
        AwfSettings before = awf.settings();
        awf.modified(new Config("together", 50, 1000), java.util.Map.of());
        assertSame(before, awf.settings(), "a bad update keeps the running values");
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("awf.guard.wait 50 us"), log.all());
        awf.modified(new Config("together", 200_000, 30_000), java.util.Map.of());
        assertEquals(AwfSettings.of(AwfSettings.Order.TOGETHER, 200_000, 30_000), awf.settings());
        assertTrue(awf.description().contains("together") && awf.description().contains("200000 us"), awf.description());
        assertThrows(IllegalArgumentException.class, () -> new ActiveWindowFirst(AwfSettings.DEFAULTS, log.logger).activate(new Config("hpf", 0, 1000), java.util.Map.of()));
        assertEquals(AwfSettings.DEFAULTS, new ActiveWindowFirst().settings());
        assertFalse(AwfSettings.DEFAULTS.guarded(), "XSched's rule by default");
        assertEquals("awf.order=priority awf.guard.wait=0us awf.guard.run=10000us", AwfSettings.DEFAULTS.toString());
        assertTrue(new ActiveWindowFirst().description().startsWith("active window first: per display the group with the highest window-active mark"));
    }
}
