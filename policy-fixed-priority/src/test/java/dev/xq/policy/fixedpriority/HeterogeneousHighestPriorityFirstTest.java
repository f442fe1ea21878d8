package dev.xq.policy.fixedpriority;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

class HeterogeneousHighestPriorityFirstTest {

    record Config(String hhpf_group_priority) implements HhpfConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return HhpfConfig.class;
        }
    }

    private final RecordingLogger log = new RecordingLogger();
    private final HeterogeneousHighestPriorityFirst hhpf = new HeterogeneousHighestPriorityFirst(HhpfSettings.DEFAULTS, log.logger);
    private final HeterogeneousHighestPriorityFirst readyOnly = new HeterogeneousHighestPriorityFirst(HhpfSettings.of("ready"), log.logger);

    private static RecordingActions decide(dev.xq.policy.spi.Policy p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    /** Process P: priority 5 on d0, no hint on d1; tenant T: priority 1 on d1. */
    private static SchedulerView twoDevices(boolean pBusyOnD0) {
        var p0 = queue(1).group("P").device("d0").priority(5);
        return view(100, (pBusyOnD0 ? p0.readySince(10) : p0).build(),
                queue(2).group("P").device("d1").readySince(10).build(),
                queue(3).group("T").device("d1").priority(1).readySince(10).build(),
                queue(4).group("T").device("d0").priority(1).readySince(10).build());
    }

    @Test
    void aGroupRanksAtItsHighestPriorityOnEveryDevice() {
        SchedulerView v = twoDevices(true);
        RecordingActions per = decide(new HighestPriorityFirst(), v);
        assertTrue(per.runs(3) && !per.runs(2), "hpf orders each device on its own: T's 1 beats P's 0 on d1");
        RecordingActions a = decide(hhpf, v);
        assertTrue(a.runs(1));
        assertFalse(a.runs(4));
        assertTrue(a.runs(2), "P's queue on d1 ranks at P's 5");
        assertFalse(a.runs(3), "so T waits on d1 as on d0");
        assertNull(a.wake, "hhpf needs no timer");
        assertEquals(a.log, decide(readyOnly, v).log, "P's priority-5 queue is ready: the same under ready");
    }

    @Test
    void underAllAnIdleQueueKeepsItsGroupsRankUnderReadyItDoesNot() {
        SchedulerView v = twoDevices(false);
        RecordingActions all = decide(hhpf, v);
        assertTrue(all.runs(2) && !all.runs(3), "all: P stays at 5 while its priority-5 queue is idle");
        assertTrue(all.runs(1), "the idle queue would run on arrival");
        assertTrue(all.runs(4), "T is alone ready on d0");
        RecordingActions ready = decide(readyOnly, v);
        assertTrue(ready.runs(3) && !ready.runs(2), "ready: P has only its hint-less work, rank 0, on d1");
        assertTrue(ready.runs(1), "the idle priority-5 queue would lift P on arrival: it stays resumed");
        assertTrue(ready.runs(4));
    }

    @Test
    void groupsAtTheTopRankRunTogetherAndGrouplessQueuesUseTheirHint() {
        RecordingActions a = decide(hhpf, view(100,
                queue(1).group("A").device("d0").priority(3).build(),
                queue(2).group("A").device("d1").readySince(5).build(),
                queue(3).group("B").device("d1").priority(3).readySince(5).build(),
                queue(4).group(null).device("d1").priority(3).readySince(5).build(),
                queue(5).group(null).device("d1").priority(2).readySince(5).build(),
                queue(6).group("C").device("d1").priority(2).readySince(5).suspendedByApp().build()));
        assertTrue(a.runs(2) && a.runs(3) && a.runs(4), "rank 3 three times: all run");
        assertFalse(a.runs(5));
        assertFalse(a.runs(6), "held by its application at rank 2: not resumed");
        assertTrue(a.runs(1), "idle at rank 3");
    }

    @Test
    void anAppHeldQueueDoesNotLiftItsGroupUnderReady() {
        SchedulerView v = view(100,
                queue(1).group("P").device("d0").priority(9).readySince(5).suspendedByApp().build(),
                queue(2).group("P").device("d1").readySince(5).build(),
                queue(3).group("T").device("d1").priority(1).readySince(5).build());
        assertTrue(decide(hhpf, v).runs(2));
        RecordingActions ready = decide(readyOnly, v);
        assertTrue(ready.runs(3) && !ready.runs(2));
    }

    @Test
    void badConfigIsRejectedAndChangesNothing() {
        assertEquals("hhpf.group.priority 'busy' is not one of all, ready",
                assertThrows(IllegalArgumentException.class, () -> HhpfSettings.of("busy")).getMessage());
        assertEquals("hhpf.group.priority 'null' is not one of all, ready",
                assertThrows(IllegalArgumentException.class, () -> HhpfSettings.of(null)).getMessage());
        HhpfSettings before = hhpf.settings();
        hhpf.modified(new Config("ALL"), java.util.Map.of());
        assertSame(before, hhpf.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("'ALL'"), log.all());
        hhpf.modified(new Config("ready"), java.util.Map.of());
        assertTrue(hhpf.settings().readyOnly());
        assertThrows(IllegalArgumentException.class, () -> new HeterogeneousHighestPriorityFirst(HhpfSettings.DEFAULTS, log.logger).activate(new Config(""), java.util.Map.of()));
        assertEquals(HhpfSettings.DEFAULTS, new HeterogeneousHighestPriorityFirst().settings());
        assertFalse(HhpfSettings.DEFAULTS.readyOnly());
    }
}
