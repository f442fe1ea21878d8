package dev.xq.policy.fixedpriority;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RandomViews;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
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
                Arbitraries.integers().between(1, 4), Arbitraries.longs().between(1, 2_000_000))
                .as((levels, slice, growth, extra) -> MlfqSettings.of(levels, slice, growth, slice + extra));
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
}
