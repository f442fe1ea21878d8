package dev.xq.policy.edf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RandomViews;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

class DeadlinePropertiesTest {

    @Provide
    Arbitrary<SchedulerView> views() {
        return RandomViews.views();
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
    void edfIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view) {
        safeAndSwapSafe(EarliestDeadlineFirst::new, view);
    }

    @Property(tries = 300)
    void kedfIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view, @ForAll @IntRange(min = 1, max = 8) int k) {
        safeAndSwapSafe(() -> new KEarliestDeadlineFirst(k, new RecordingLogger().logger), view);
    }

    @Property(tries = 300)
    void laxIsSafeAndDependsOnTheViewOnly(@ForAll("views") SchedulerView view) {
        safeAndSwapSafe(LeastLaxityFirst::new, view);
    }

    @Property(tries = 300)
    void kedfWithKOneIsEdf(@ForAll("views") SchedulerView view) {
        assertEquals(decide(new EarliestDeadlineFirst(), view).log, decide(new KEarliestDeadlineFirst(1, new RecordingLogger().logger), view).log);
    }

    @Property(tries = 300)
    void kedfRunsMinOfKAndReadyQueuesPerDevice(@ForAll("views") SchedulerView view, @ForAll @IntRange(min = 1, max = 8) int k) {
        RecordingActions a = decide(new KEarliestDeadlineFirst(k, new RecordingLogger().logger), view);
        Map<String, int[]> perDevice = new HashMap<>();
        for (QueueView q : view.queues()) {
            if (q.ready() && !q.suspendedByApp()) {
                int[] c = perDevice.computeIfAbsent(q.device(), d -> new int[2]);
                c[0]++;
                if (a.runs(q.handle())) {
                    c[1]++;
                }
            }
        }
        perDevice.forEach((d, c) -> assertEquals(Math.min(k, c[0]), c[1], "device " + d));
    }
}
