package dev.xq.policy.drf;

import static dev.xq.policy.testkit.Views.GB;
import static dev.xq.policy.testkit.Views.queue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Views;
import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DominantResourceFairnessTest {

    static final long MS = 1_000_000;

    record Config(String drf_weights, int drf_default_engines) implements DrfConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return DrfConfig.class;
        }
    }

    private final RecordingLogger log = new RecordingLogger();

    private RecordingActions decide(DrfSettings s, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        new DominantResourceFairness(s, log.logger).schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    private static long count(RecordingActions a, List<QueueView> queues, String group) {
        return queues.stream().filter(q -> q.group().equals(group) && a.runs(q.handle())).count();
    }

    /** Ghodsi et al. §4.1: <9 CPUs, 18 GB>, A's tasks <1, 4 GB>, B's <3, 1 GB>, both with plenty of work. */
    private static List<QueueView> paperQueues(boolean running) {
        List<QueueView> qs = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            Views.Q a = queue(i).group("A").hint(new Hint.Demand(1, 4 * GB)).readySince(i * MS);
            Views.Q b = queue(10 + i).group("B").hint(new Hint.Demand(3, 1 * GB)).readySince(i * MS);
            qs.add((running ? a : a.suspended()).build());
            qs.add((running ? b : b.suspended()).build());
        }
        return qs;
    }

    @Test
    void paperExampleGivesAThreeTasksAndBTwo() {
        for (boolean running : new boolean[] {false, true}) {
            List<QueueView> qs = paperQueues(running);
            SchedulerView view = new SchedulerView(100 * MS, qs, List.of(new DeviceView("d0", "sim", 9, 18 * GB)));
            RecordingActions a = decide(DrfSettings.DEFAULTS, view);
            assertEquals(3, count(a, qs, "A"), a.log.toString());
            assertEquals(2, count(a, qs, "B"), a.log.toString());
            // Dominant shares: A 3 x 4 GB / 18 GB = 2/3 memory; B 2 x 3 / 9 = 2/3 engines.
            assertEquals(2.0 / 3, 3 * 4.0 / 18, 1e-12);
            assertEquals(2.0 / 3, 2 * 3.0 / 9, 1e-12);
            assertTrue(a.runs(1) && a.runs(2) && a.runs(3), "A's oldest tasks run");
            assertTrue(a.runs(11) && a.runs(12), "B's oldest tasks run");
            assertNull(a.wake);
        }
    }

    @Test
    void weightsScaleTheShare() {
        List<QueueView> qs = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            qs.add(queue(i).group("A").hint(new Hint.Demand(1, 0)).readySince(i).suspended().build());
            qs.add(queue(100 + i).group("B").hint(new Hint.Demand(1, 0)).readySince(i).suspended().build());
        }
        SchedulerView view = new SchedulerView(100 * MS, qs, List.of(new DeviceView("d0", "sim", 10, 0)));
        RecordingActions a = decide(DrfSettings.of("A=1, B=3", 1), view);
        assertEquals(3, count(a, qs, "A"));
        assertEquals(7, count(a, qs, "B"));
        RecordingActions even = decide(DrfSettings.DEFAULTS, view);
        assertEquals(5, count(even, qs, "A"));
        assertEquals(5, count(even, qs, "B"));
    }

    @Test
    void tiesGoToTheTenantThatUsedLessDeviceTimeOnAllDevices() {
        List<DeviceView> devices = List.of(new DeviceView("d0", "sim", 1, 0), new DeviceView("d1", "sim", 4, 0));
        SchedulerView view = new SchedulerView(100 * MS, List.of(
                queue(1).group("A").readySince(1).build(),
                queue(2).group("B").readySince(1).suspended().build(),
                queue(3).group("A").device("d1").ran(5_000 * MS).build(),
                queue(4).group("B").device("d1").ran(1_000 * MS).build()), devices);
        RecordingActions a = decide(DrfSettings.DEFAULTS, view);
        assertTrue(a.runs(2), "B used 1 s in total, A 5 s (on d1): B gets d0's one engine");
        assertFalse(a.runs(1));
        RecordingActions weighted = decide(DrfSettings.of("A=10", 1), view);
        assertTrue(weighted.runs(1), "A's 5 s weigh 0.5 s at weight 10");
    }

    @Test
    void tasksLargerThanTheDeviceRunAloneOnlyWhenNothingElseFits() {
        List<DeviceView> devices = List.of(new DeviceView("d0", "sim", 9, 18 * GB));
        RecordingActions alone = decide(DrfSettings.DEFAULTS, new SchedulerView(100, List.of(
                queue(1).group("A").hint(new Hint.Demand(20, GB)).readySince(1).build(),
                queue(2).group("B").hint(new Hint.Demand(1, GB)).build()), devices));
        assertTrue(alone.runs(1), "a device with work is never left idle");
        assertFalse(alone.runs(2), "nothing starts beside the oversized task");

        RecordingActions shared = decide(DrfSettings.DEFAULTS, new SchedulerView(100, List.of(
                queue(1).group("A").hint(new Hint.Demand(20, GB)).readySince(1).build(),
                queue(2).group("B").hint(new Hint.Demand(1, GB)).readySince(5).build()), devices));
        assertFalse(shared.runs(1));
        assertTrue(shared.runs(2));
    }

    @Test
    void idleQueuesStartAtOnceOnlyIfTheyFitWhatIsLeft() {
        RecordingActions a = decide(DrfSettings.DEFAULTS, new SchedulerView(100, List.of(
                queue(1).group("A").hint(new Hint.Demand(6, GB)).readySince(1).build(),
                queue(2).group("B").hint(new Hint.Demand(3, GB)).build(),
                queue(3).group("B").hint(new Hint.Demand(4, GB)).build(),
                queue(4).group("C").build()), List.of(new DeviceView("d0", "sim", 9, 18 * GB))));
        assertTrue(a.runs(1));
        assertTrue(a.runs(2), "3 engines are left");
        assertFalse(a.runs(3));
        assertTrue(a.runs(4), "no demand hint: 1 engine");
    }

    @Test
    void unknownCapacitiesDoNotLimit() {
        RecordingActions a = decide(DrfSettings.DEFAULTS, new SchedulerView(100, List.of(
                queue(1).group("A").hint(new Hint.Demand(600, 900 * GB)).readySince(1).suspended().build(),
                queue(2).group("B").hint(new Hint.Demand(600, 900 * GB)).readySince(1).suspended().build(),
                queue(3).group("B").device("elsewhere").readySince(1).suspended().build()),
                List.of(new DeviceView("d0", "sim", 0, 0))));
        assertTrue(a.runs(1) && a.runs(2) && a.runs(3));
    }

    @Test
    void defaultEnginesApplyToQueuesWithoutDemand() {
        List<QueueView> qs = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            qs.add(queue(i).group("A").readySince(i).build());
        }
        SchedulerView view = new SchedulerView(100, qs, List.of(new DeviceView("d0", "sim", 4, 0)));
        assertEquals(2, count(decide(DrfSettings.of("", 2), view), qs, "A"));
        assertEquals(4, count(decide(DrfSettings.of("", 0), view), qs, "A"));
    }

    @Test
    void badWeightsAreRejectedNamingTheEntry() {
        assertEquals("drf.weights entry 'A' is not name=weight (expected e.g. A=1,B=2)",
                assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A", 1)).getMessage());
        assertEquals("drf.weights entry '=2' has no tenant name (expected e.g. A=1,B=2)",
                assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=1,=2", 1)).getMessage());
        assertEquals("drf.weights weight 'x' of tenant B is not a number",
                assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=1,B=x", 1)).getMessage());
        assertEquals("drf.weights weight 0 of tenant A is out of range (0, 1000000]",
                assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=0", 1)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=NaN", 1));
        assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=Infinity", 1));
        assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=1,", 1));
        assertEquals("drf.weights names tenant A twice",
                assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("A=1,A=2", 1)).getMessage());
        assertEquals("drf.default.engines -1 is out of range [0, 1000000]",
                assertThrows(IllegalArgumentException.class, () -> DrfSettings.of("", -1)).getMessage());
        assertEquals(Map.of("A", 1.0, "B", 2.5), DrfSettings.of(" A = 1 , B=2.5 ", 1).weights());
    }

    @Test
    void badUpdateChangesNothing() {
        DominantResourceFairness drf = new DominantResourceFairness(DrfSettings.of("A=2", 1), log.logger);
        DrfSettings before = drf.settings();
        drf.modified(new Config("A=2,B=-1", 1), java.util.Map.of());
        assertSame(before, drf.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("weight -1 of tenant B"), log.all());
        drf.modified(new Config("B=4", 3), java.util.Map.of());
        assertEquals(DrfSettings.of("B=4", 3), drf.settings());
        assertThrows(IllegalArgumentException.class, () -> drf.activate(new Config("oops", 1), java.util.Map.of()));
        assertEquals(DrfSettings.DEFAULTS, new DominantResourceFairness().settings());
    }
}
