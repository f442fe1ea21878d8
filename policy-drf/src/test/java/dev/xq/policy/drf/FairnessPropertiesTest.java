package dev.xq.policy.drf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RandomViews;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class FairnessPropertiesTest {

    @Provide
    Arbitrary<SchedulerView> views() {
        return RandomViews.views();
    }

    @Provide
    Arbitrary<DrfSettings> drfSettings() {
        return Arbitraries.of("", "A=1,B=2", "B=0.5", "A=3,C=0.25").flatMap(w ->
                Arbitraries.integers().between(0, 3).map(e -> DrfSettings.of(w, e)));
    }

    @Provide
    Arbitrary<BandwidthSettings> bandwidthSettings() {
        return Arbitraries.longs().between(100, 100_000).flatMap(t ->
                Arbitraries.integers().between(1, 100).map(u -> BandwidthSettings.of(t, u)));
    }

    @Provide
    Arbitrary<CfsSettings> cfsSettings() {
        return Arbitraries.longs().between(100, 100_000).flatMap(l ->
                Arbitraries.longs().between(100, l).map(g -> CfsSettings.of(l, g)));
    }

    private static RecordingActions decide(Policy p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
        return a;
    }

    private static void safeAndSwapSafe(Supplier<Policy> fresh, SchedulerView view) {
        Policy p = fresh.get();
        RecordingActions first = decide(p, view);
        PolicyChecks.assertSafe(view, first);
        assertEquals(first.log, decide(p, view).log, "same view, same actions");
        assertEquals(first.log, decide(fresh.get(), view).log, "a freshly swapped-in instance decides the same");
    }

    @Property(tries = 300)
    void drfIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view, @ForAll("drfSettings") DrfSettings s) {
        safeAndSwapSafe(() -> new DominantResourceFairness(s, new RecordingLogger().logger), view);
    }

    @Property(tries = 300)
    void bandwidthIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view, @ForAll("bandwidthSettings") BandwidthSettings s) {
        safeAndSwapSafe(() -> new BandwidthPartition(s, new RecordingLogger().logger), view);
    }

    @Property(tries = 300)
    void groupBandwidthIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view, @ForAll("bandwidthSettings") BandwidthSettings s) {
        safeAndSwapSafe(() -> new GroupBandwidthPartition(s, new RecordingLogger().logger), view);
    }

    /**
     * cfs keeps virtual runtimes, so a fresh instance may decide differently from one with a
     * history; but a decision is safe, deciding again on the same view changes nothing, and one
     * ready queue per device runs.
     */
    @Property(tries = 300)
    void cfsIsSafeRepeatableAndRunsOneReadyQueuePerDevice(@ForAll("views") SchedulerView view, @ForAll("views") SchedulerView earlier,
                                                          @ForAll("cfsSettings") CfsSettings s) {
        CompletelyFair p = new CompletelyFair(s, new RecordingLogger().logger);
        decide(p, new SchedulerView(view.nowNanos() - 2_000_000, earlier.queues(), earlier.devices()));
        RecordingActions first = decide(p, view);
        PolicyChecks.assertSafe(view, first);
        assertEquals(first.log, decide(p, view).log, "same view, same actions");
        Map<String, Integer> running = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (q.ready() && !q.suspendedByApp() && first.runs(q.handle())) {
                running.merge(q.device(), 1, Integer::sum);
            }
        }
        running.forEach((d, n) -> assertEquals(1, n, "device " + d));
    }

    /** Progressive filling stops only when no waiting task fits: no capacity is left idle that a ready task could use. */
    @Property(tries = 300)
    void drfLeavesNoFittingTaskWaiting(@ForAll("views") SchedulerView view, @ForAll("drfSettings") DrfSettings s) {
        RecordingActions a = decide(new DominantResourceFairness(s, new RecordingLogger().logger), view);
        Map<String, DeviceView> devices = new HashMap<>();
        view.devices().forEach(d -> devices.put(d.id(), d));
        Map<String, long[]> used = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (q.ready() && !q.suspendedByApp() && a.runs(q.handle())) {
                long[] u = used.computeIfAbsent(q.device(), d -> new long[2]);
                u[0] += engines(q, s);
                u[1] += memory(q);
            }
        }
        for (QueueView q : view.queues()) {
            if (q.ready() && !q.suspendedByApp() && !a.runs(q.handle())) {
                DeviceView d = devices.get(q.device());
                long[] u = used.getOrDefault(q.device(), new long[2]);
                boolean fitsEngines = d == null || d.engines() == 0 || u[0] + engines(q, s) <= d.engines();
                boolean fitsMemory = d == null || d.memoryBytes() == 0 || u[1] + memory(q) <= d.memoryBytes();
                boolean overfull = d != null && ((d.engines() > 0 && u[0] > d.engines()) || (d.memoryBytes() > 0 && u[1] > d.memoryBytes()));
                assertTrue(overfull || !(fitsEngines && fitsMemory), "queue " + q.handle() + " fits but waits: " + view + " " + a.log);
            }
        }
    }

    @Property(tries = 300)
    void bandwidthRunsOneReadyQueuePerDevice(@ForAll("views") SchedulerView view, @ForAll("bandwidthSettings") BandwidthSettings s) {
        RecordingActions a = decide(new BandwidthPartition(s, new RecordingLogger().logger), view);
        Map<String, Integer> running = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (q.ready() && !q.suspendedByApp() && a.runs(q.handle())) {
                running.merge(q.device(), 1, Integer::sum);
            }
        }
        running.forEach((d, n) -> assertEquals(1, n, "device " + d));
    }

    @Property(tries = 300)
    void groupBandwidthRunsOneGroupPerDevice(@ForAll("views") SchedulerView view, @ForAll("bandwidthSettings") BandwidthSettings s) {
        RecordingActions a = decide(new GroupBandwidthPartition(s, new RecordingLogger().logger), view);
        Map<String, Set<String>> groups = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (a.runs(q.handle()) && view.queuesOn(q.device()).stream().anyMatch(o -> o.ready() && !o.suspendedByApp())) {
                groups.computeIfAbsent(q.device(), d -> new HashSet<>()).add(q.group());
            }
        }
        groups.forEach((d, g) -> assertEquals(1, g.size(), "device " + d + " runs groups " + g));
    }

    private static long engines(QueueView q, DrfSettings s) {
        return q.hint(Hint.Demand.class).map(d -> (long) d.engines()).orElse((long) s.defaultEngines());
    }

    private static long memory(QueueView q) {
        return q.hint(Hint.Demand.class).map(Hint.Demand::memoryBytes).orElse(0L);
    }
}
