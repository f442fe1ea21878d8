package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SchedulerTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private ManualDevice device;

    /** Highest priority first, per device; written here so the runtime's tests need no policy bundle. */
    static final class Highest implements Policy {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public String description() {
            return "test: highest priority first";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            calls.incrementAndGet();
            int top = view.queues().stream().filter(QueueView::ready).mapToInt(QueueView::priority).max().orElse(0);
            for (QueueView q : view.queues()) {
                if (q.ready() && q.priority() < top) {
                    actions.suspend(q.handle());
                } else {
                    actions.resume(q.handle());
                }
            }
        }
    }

    @BeforeEach
    void start() {
        device = new ManualDevice("m0", PreemptionLevel.BLOCK, false);
        core.addDriver(device);
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    private static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within 5 s: " + what);
            }
            Thread.sleep(2);
        }
    }

    @Test
    void selectedPolicySuspendsLowerPriorityQueues() throws Exception {
        core.scheduler().register("hi", new Highest(), "test", 1);
        core.selectPolicy("hi");
        XQueue lo = core.create(QueueOptions.on("m0").with(new Hint.Priority(1)).with(QueueConfig.xsched(1, 1)));
        XQueue hi = core.create(QueueOptions.on("m0").with(new Hint.Priority(5)).with(QueueConfig.xsched(1, 1)));
        lo.submit(Command.spin(10));
        lo.submit(Command.spin(10));
        hi.submit(Command.spin(10));
        eventually(() -> lo.status().suspendedByScheduler(), "low-priority queue suspended");
        assertEquals("hi", core.activePolicy());
        assertFalse(hi.status().suspendedByScheduler());
        // the high one finishes: low runs again
        device.opened.get(1).completeNext(10);
        eventually(() -> !lo.status().suspendedByScheduler(), "low-priority queue resumed once high is idle");
    }

    @Test
    void unknownPolicyIsRefusedWithTheKnownNamesAndNothingChanges() {
        core.scheduler().register("hi", new Highest(), "test", 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> core.selectPolicy("fifo"));
        assertTrue(e.getMessage().contains("'fifo'") && e.getMessage().contains("native, hi"), e.getMessage());
        assertEquals(SchedulerControl.NATIVE, core.selectedPolicy());
    }

    @Test
    void throwingPolicyIsSetAsideAndTheFallbackResumesEveryQueue() throws Exception {
        core.scheduler().register("hi", new Highest(), "test", 1);
        core.selectPolicy("hi");
        XQueue lo = core.create(QueueOptions.on("m0").with(new Hint.Priority(1)).with(QueueConfig.xsched(1, 1)));
        XQueue hi = core.create(QueueOptions.on("m0").with(new Hint.Priority(5)).with(QueueConfig.xsched(1, 1)));
        lo.submit(Command.spin(10));
        hi.submit(Command.spin(10));
        eventually(() -> lo.status().suspendedByScheduler(), "low suspended by hi");
        core.scheduler().register("boom", new Policy() {
            @Override
            public String description() {
                return "throws";
            }

            @Override
            public void schedule(SchedulerView view, SchedulerActions actions) {
                throw new IllegalStateException("bug in policy (test)");
            }
        }, "test", 2);
        core.selectPolicy("boom");
        eventually(() -> core.stats().watchdogTrips() == 1, "one watchdog trip");
        eventually(() -> !lo.status().suspendedByScheduler(), "fallback resumed the low queue");
        assertEquals(SchedulerControl.NATIVE, core.activePolicy());
        SchedulerControl.PolicyInfo boom = core.policies().stream().filter(p -> p.name().equals("boom")).findFirst().orElseThrow();
        assertTrue(boom.setAside().contains("bug in policy"), boom.setAside());
        assertEquals("boom", core.selectedPolicy(), "the selection stays; the policy is set aside");
    }

    @Test
    void loopingPolicyIsSetAsideAtItsDeadlineAndSchedulingGoesOn() throws Exception {
        core.scheduler().deadline(20_000_000L);
        AtomicInteger entered = new AtomicInteger();
        core.scheduler().register("spin", new Policy() {
            @Override
            public String description() {
                return "never returns";
            }

            @Override
            public void schedule(SchedulerView view, SchedulerActions actions) {
                entered.incrementAndGet();
                while (!Thread.currentThread().isInterrupted()) {
                    Thread.onSpinWait();
                }
                actions.suspend(view.queues().getFirst().handle()); // must never be applied
            }
        }, "test", 3);
        XQueue q = core.create(QueueOptions.on("m0").with(QueueConfig.xsched(1, 1)));
        q.submit(Command.spin(10));
        core.selectPolicy("spin");
        eventually(() -> core.stats().watchdogTrips() == 1, "watchdog trip for the looping policy");
        assertEquals(3, entered.get(), "one trial decision at registration and one at selection (both cut off), one real one");
        Highest hi = new Highest();
        core.scheduler().register("hi", hi, "test", 4);
        core.selectPolicy("hi");
        // hi's trial calls (registration, selection) count too: wait for the loop's own decision.
        eventually(() -> "hi".equals(core.activePolicy()), "a fresh loop keeps deciding");
        assertFalse(q.status().suspendedByScheduler(), "the stuck decision was thrown away");
    }

    @Test
    void unregisteringTheActivePolicyFallsBackAndResumesEverything() throws Exception {
        core.scheduler().register("hi", new Highest(), "test", 7);
        core.selectPolicy("hi");
        XQueue lo = core.create(QueueOptions.on("m0").with(new Hint.Priority(1)).with(QueueConfig.xsched(1, 1)));
        XQueue hi = core.create(QueueOptions.on("m0").with(new Hint.Priority(5)).with(QueueConfig.xsched(1, 1)));
        lo.submit(Command.spin(10));
        hi.submit(Command.spin(10));
        eventually(() -> lo.status().suspendedByScheduler(), "low suspended");
        core.scheduler().unregister(7);
        eventually(() -> !lo.status().suspendedByScheduler(), "native resumed it");
        assertEquals(SchedulerControl.NATIVE, core.activePolicy());
        assertEquals("hi", core.selectedPolicy());
        core.scheduler().register("hi", new Highest(), "test", 8);
        eventually(() -> lo.status().suspendedByScheduler(), "the policy is back and decides again");
    }

    @Test
    void policyThatBlocksIsSetAsideAfterTenDeadlinesOfWallTime() throws Exception {
        core.scheduler().deadline(5_000_000L);
        core.scheduler().register("sleepy", new Policy() {
            @Override
            public String description() {
                return "waits on something that never comes";
            }

            @Override
            public void schedule(SchedulerView view, SchedulerActions actions) {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "test", 9);
        core.selectPolicy("sleepy");
        eventually(() -> core.stats().watchdogTrips() == 1, "watchdog trip for the blocked policy");
        SchedulerControl.PolicyInfo p = core.policies().stream().filter(i -> i.name().equals("sleepy")).findFirst().orElseThrow();
        assertTrue(p.setAside().contains("did not return within 50000 us"), p.setAside());
    }
}
