package dev.xq.policy.fixedpriority;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RandomViews;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class FixedPriorityPropertiesTest {

    @Provide
    Arbitrary<SchedulerView> views() {
        return RandomViews.views();
    }

    @Provide
    Arbitrary<AgingSettings> settings() {
        return Combinators.combine(Arbitraries.longs().between(0, 3_000_000), Arbitraries.doubles().between(0.001, 100).ofScale(4),
                Arbitraries.longs().between(1, 3_000_000)).as(AgingSettings::of);
    }

    @Provide
    Arbitrary<MlfqSettings> mlfqSettings() {
        return Combinators.combine(Arbitraries.integers().between(1, 6), Arbitraries.longs().between(100, 50_000),
                Arbitraries.integers().between(1, 4), Arbitraries.longs().between(1, 2_000_000),
                Arbitraries.of(MlfqSettings.BoostScope.class))
                .as((levels, slice, growth, extra, scope) -> MlfqSettings.of(levels, slice, growth, slice + extra, scope));
    }

    /** A process's CPU priority, or null for one whose /proc entry cannot be read. */
    @Provide
    Arbitrary<CpuPriority> cpu() {
        return Combinators.combine(Arbitraries.integers().between(-20, 19), Arbitraries.of(0, 1, 2, 3, 5, 6), Arbitraries.integers().between(1, 99))
                .as((nice, policy, rt) -> new CpuPriority(nice, policy, policy == 1 || policy == 2 ? rt : 0)).injectNull(0.2);
    }

    @Provide
    Arbitrary<ChpfSettings> chpfSettings() {
        return Arbitraries.longs().between(ChpfSettings.MIN_REFRESH_MICROS, 5_000_000).map(ChpfSettings::of);
    }

    /** The random view with groups A and B as processes 101 and 102 ({@code <pid>:<name>}); C stays a tenant. */
    private static SchedulerView asProcesses(SchedulerView view) {
        List<QueueView> qs = new ArrayList<>();
        for (QueueView q : view.queues()) {
            String g = switch (q.group()) {
                case "A" -> "101:A";
                case "B" -> "102:B";
                default -> q.group();
            };
            qs.add(new QueueView(q.handle(), q.name(), q.device(), g, q.ready(), q.suspended(), q.suspendedByApp(), q.readySinceNanos(),
                    q.runNanos(), q.lastResumedNanos(), q.pending(), q.inFlight(), q.completed(), q.estimatedCommandNanos(), q.hints(), q.level()));
        }
        return new SchedulerView(view.nowNanos(), qs, view.devices());
    }

    /** Per device, exactly the queues whose rank is at least the top rank of the device's runnable queues run. */
    private static void runsExactlyTheTopRank(SchedulerView view, RecordingActions actions, java.util.function.ToIntFunction<QueueView> rank) {
        for (QueueView q : view.queues()) {
            int top = view.queuesOn(q.device()).stream().filter(QueueView::runnable).mapToInt(rank).max().orElse(Integer.MIN_VALUE);
            assertEquals(rank.applyAsInt(q) >= top, actions.runs(q.handle()), "queue " + q.handle() + " of " + q.group() + " at rank "
                    + rank.applyAsInt(q) + ", top " + top + " on " + q.device());
        }
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
    void hpfIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view) {
        safeAndSwapSafe(HighestPriorityFirst::new, view);
    }

    @Property(tries = 300)
    void agingIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view, @ForAll("settings") AgingSettings s) {
        safeAndSwapSafe(() -> new AgingHighestPriorityFirst(s, new RecordingLogger().logger), view);
    }

    @Property(tries = 300)
    void agingOnlyAddsQueuesToWhatHpfRuns(@ForAll("views") SchedulerView view, @ForAll("settings") AgingSettings s) {
        RecordingActions hpf = decide(new HighestPriorityFirst(), view);
        RecordingActions aging = decide(new AgingHighestPriorityFirst(s, new RecordingLogger().logger), view);
        for (QueueView q : view.queues()) {
            if (hpf.runs(q.handle())) {
                assertTrue(aging.runs(q.handle()), "hpf-aging suspended queue " + q.handle() + " that hpf runs");
            }
        }
    }

    /**
     * mlfq keeps levels, so a fresh instance may decide differently from one with a history;
     * but a decision is safe, deciding again on the same view changes nothing, and exactly the
     * ready queues on the device's highest occupied level run.
     */
    @Property(tries = 300)
    void mlfqIsSafeRepeatableAndRunsTheHighestOccupiedLevel(@ForAll("views") SchedulerView view, @ForAll("views") SchedulerView earlier,
                                                            @ForAll("mlfqSettings") MlfqSettings s) {
        MultiLevelFeedback p = new MultiLevelFeedback(s, new RecordingLogger().logger);
        // An earlier view (same handles, other states and run times) gives the queues levels.
        decide(p, new SchedulerView(view.nowNanos() - 1_000_000, earlier.queues(), earlier.devices()));
        RecordingActions first = decide(p, view);
        PolicyChecks.assertSafe(view, first);
        assertEquals(first.log, decide(p, view).log, "same view, same actions");
        for (QueueView q : view.queues()) {
            if (!q.runnable()) {
                continue;
            }
            int best = view.queuesOn(q.device()).stream().filter(QueueView::runnable).mapToInt(o -> p.level(o.handle())).min().orElseThrow();
            assertEquals(p.level(q.handle()) == best, first.runs(q.handle()), "queue " + q.handle() + " on level " + p.level(q.handle()) + ", best " + best);
            assertTrue(p.level(q.handle()) >= 0 && p.level(q.handle()) < s.levels());
        }
    }

    @Property(tries = 300)
    void chpfRanksProcessQueuesByCpuPriorityReadsEachProcessOnceAndIsRepeatable(
            @ForAll("views") SchedulerView random, @ForAll("cpu") CpuPriority p101, @ForAll("cpu") CpuPriority p102,
            @ForAll("chpfSettings") ChpfSettings s) {
        SchedulerView view = asProcesses(random);
        Map<Integer, CpuPriority> procs = new HashMap<>();
        procs.put(101, p101);
        procs.put(102, p102);
        Map<Integer, Integer> reads = new HashMap<>();
        ProcessPriorities reader = pid -> {
            reads.merge(pid, 1, Integer::sum);
            CpuPriority c = procs.get(pid);
            if (c == null) {
                throw new NoSuchFileException("/proc/" + pid + "/stat");
            }
            return c;
        };
        Supplier<Policy> fresh = () -> new CpuHighestPriorityFirst(s, reader, new RecordingLogger().logger);
        Policy p = fresh.get();
        RecordingActions first = decide(p, view);
        PolicyChecks.assertSafe(view, first);
        runsExactlyTheTopRank(view, first, q -> {
            int pid = CpuHighestPriorityFirst.pidOf(q.group());
            return pid > 0 && procs.get(pid) != null ? procs.get(pid).rank() : q.priority();
        });
        for (int n : reads.values()) {
            assertEquals(1, n, "each process read once: " + reads);
        }
        assertEquals(first.log, decide(p, view).log, "same view, same actions");
        assertEquals(first.log, decide(p, new SchedulerView(view.nowNanos() + s.refreshNanos() - 1, view.queues(), view.devices())).log,
                "within the refresh period, the same actions (no timer has passed)");
        for (int n : reads.values()) {
            assertEquals(1, n, "no read within the refresh period: " + reads);
        }
        assertEquals(first.log, decide(fresh.get(), view).log, "a freshly swapped-in instance decides the same");
        if (first.wake != null) {
            assertEquals(view.nowNanos() + s.refreshNanos(), first.wake.longValue(), "the only timer is the refresh");
        }
    }

    @Property(tries = 300)
    void hhpfRanksByGroupAcrossDevicesAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view, @ForAll boolean readyOnly) {
        HhpfSettings s = new HhpfSettings(readyOnly);
        safeAndSwapSafe(() -> new HeterogeneousHighestPriorityFirst(s, new RecordingLogger().logger), view);
        RecordingActions a = decide(new HeterogeneousHighestPriorityFirst(s, new RecordingLogger().logger), view);
        // The reference: a group's priority is the highest hint of its (ready) queues anywhere.
        Map<String, Integer> group = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (!readyOnly || q.runnable()) {
                group.merge(q.group(), q.priority(), Math::max);
            }
        }
        runsExactlyTheTopRank(view, a, q -> Math.max(q.priority(), group.getOrDefault(q.group(), Integer.MIN_VALUE)));
        // One order across devices: a group's ready queues on a device go together, and if X runs
        // while Y waits on one device, Y never runs while X waits on another.
        Map<String, Boolean> runs = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (q.runnable()) {
                Boolean was = runs.put(q.group() + "@" + q.device(), a.runs(q.handle()));
                assertTrue(was == null || was == a.runs(q.handle()), "group " + q.group() + " split on " + q.device());
            }
        }
        for (String x : List.of("A", "B", "C")) {
            for (String y : List.of("A", "B", "C")) {
                for (String d : List.of("d0", "d1", "d2")) {
                    for (String e : List.of("d0", "d1", "d2")) {
                        boolean xOverY = Boolean.TRUE.equals(runs.get(x + "@" + d)) && Boolean.FALSE.equals(runs.get(y + "@" + d));
                        boolean yOverX = Boolean.TRUE.equals(runs.get(y + "@" + e)) && Boolean.FALSE.equals(runs.get(x + "@" + e));
                        assertFalse(xOverY && yOverX, x + " above " + y + " on " + d + " but below on " + e);
                    }
                }
            }
        }
    }
}
