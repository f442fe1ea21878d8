package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.runtime.log.RuntimeLog;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The hold on arrival (docs/runtime.md): a queue on top of its device that becomes ready has the
 * queues it is on top of suspended before its first command is launched and before the policy
 * decides, so that at level 2 their next command cannot start while the launch call and the
 * decision run; the decision confirms it.
 */
class FirstLaunchOrderTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private final HighestRunnable policy = new HighestRunnable();
    private final ManualDevice device = new ManualDevice("m0", PreemptionLevel.DEACTIVATE, false);
    private static final QueueConfig CONFIG = new QueueConfig(PreemptionLevel.DEACTIVATE, 16, 8, 0);

    @BeforeEach
    void start() {
        core.addDriver(device);
        core.start();
        // bounded, from a trusted bundle: it decides on the posting thread, right after the submit's launch
        core.scheduler().register("hi", policy, "dev.xq.policy.fixedpriority 0.1.0", 1, true);
        core.scheduler().select("hi", true);
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    /** Highest priority first among the queues that may run (an application's suspend takes a queue out), as hpf. */
    static final class HighestRunnable implements dev.xq.policy.spi.Policy {
        /** The threads that decided since the test last cleared it (the warm-up's trials left out). */
        final java.util.Set<String> deciders = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public String description() {
            return "test: highest runnable priority first";
        }

        @Override
        public void schedule(dev.xq.policy.spi.SchedulerView view, dev.xq.policy.spi.SchedulerActions actions) {
            if (!Thread.currentThread().getName().equals("xq-policy-warmup")) {
                deciders.add(Thread.currentThread().getName());
            }
            int top = view.queues().stream().filter(dev.xq.policy.spi.QueueView::runnable).mapToInt(dev.xq.policy.spi.QueueView::priority)
                    .max().orElse(0);
            for (dev.xq.policy.spi.QueueView q : view.queues()) {
                if (q.runnable() && q.priority() < top) {
                    actions.suspend(q.handle());
                } else {
                    actions.resume(q.handle());
                }
            }
        }
    }

    private static boolean eventually(BooleanSupplier c) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    @Test
    void theQueuesANewcomerIsOnTopOfAreHeldBeforeItsFirstLaunch() throws Exception {
        XQueue bg = core.create(QueueOptions.on("m0").inGroup("bg").with(CONFIG).with(new Hint.Priority(1)));
        XQueue fg = core.create(QueueOptions.on("m0").inGroup("fg").with(CONFIG).with(new Hint.Priority(2)));
        ManualDevice.ManualQueue bgHw = device.opened.get(0);
        ManualDevice.ManualQueue fgHw = device.opened.get(1);
        for (int i = 0; i < 10; i++) {
            bg.submit(Command.spin(100));
        }
        assertTrue(eventually(() -> bgHw.onDeviceCount() > 0), "bg runs");
        // fg's first task: the policy holds bg for it, so fg is on top of the device from then on
        fg.submit(Command.spin(100));
        assertTrue(eventually(() -> fgHw.onDeviceCount() == 1), "fg's first command is launched");
        assertTrue(eventually(() -> impl(bg).isSuspendedByScheduler()), "the policy held bg for fg");
        fgHw.completeNext(100);
        assertTrue(eventually(() -> !impl(bg).isSuspendedByScheduler()), "bg resumed when fg went idle");
        assertTrue(eventually(() -> impl(fg).holdOnArrival().size() == 1), "fg is on top of bg");
        // fg's next task: bg is held before fg's command goes to the hardware
        fg.submit(Command.spin(100));
        assertTrue(eventually(() -> fgHw.onDeviceCount() == 1), "fg's second command is launched");
        long deactivated;
        long launched;
        synchronized (bgHw) {
            deactivated = bgHw.deactivateNanos;
        }
        synchronized (fgHw) {
            launched = fgHw.launchNanos.get(1);
        }
        assertTrue(deactivated - launched < 0, "bg deactivated " + (deactivated - launched) + " ns after fg's launch");
        assertTrue(eventually(() -> impl(bg).isSuspendedByScheduler()), "the policy's decision kept bg held");

        // fg held by its application: its next arrival takes the device from nobody
        fgHw.completeNext(100);
        assertTrue(eventually(() -> !impl(bg).isSuspendedByScheduler()), "bg resumed when fg went idle");
        fg.suspend();
        long before;
        synchronized (bgHw) {
            before = bgHw.deactivateNanos;
        }
        fg.submit(Command.spin(100));
        Thread.sleep(50);
        synchronized (bgHw) {
            assertEquals(before, bgHw.deactivateNanos, "bg was held for a queue its application holds");
        }
        assertTrue(!impl(bg).isSuspendedByScheduler());
        fg.resume();
    }

    /**
     * A queue on top of its device that becomes ready has nothing to take the device from (its
     * company is held on arrival), so the loop thread decides, not the submitting one, which then
     * returns to its application at once; a queue that is not on top is decided before submit returns.
     */
    @Test
    void anArrivalOnTopIsDecidedOnTheLoopAndOneNotOnTopOnThePostingThread() throws Exception {
        XQueue bg = core.create(QueueOptions.on("m0").inGroup("bg").with(CONFIG).with(new Hint.Priority(1)));
        XQueue fg = core.create(QueueOptions.on("m0").inGroup("fg").with(CONFIG).with(new Hint.Priority(2)));
        ManualDevice.ManualQueue bgHw = device.opened.get(0);
        ManualDevice.ManualQueue fgHw = device.opened.get(1);
        for (int i = 0; i < 10; i++) {
            bg.submit(Command.spin(100));
        }
        assertTrue(eventually(() -> bgHw.onDeviceCount() > 0), "bg runs");
        Thread.sleep(30); // no storm of events: an event now is decided on its poster when it must be
        String me = Thread.currentThread().getName();
        policy.deciders.clear();
        fg.submit(Command.spin(100)); // not on top yet: bg is held by this decision
        assertTrue(policy.deciders.contains(me), "fg's first arrival was decided before submit returned; deciders " + policy.deciders);
        assertTrue(eventually(() -> impl(bg).isSuspendedByScheduler()), "the policy held bg for fg");
        fgHw.completeNext(100);
        assertTrue(eventually(() -> !impl(bg).isSuspendedByScheduler()), "bg resumed when fg went idle");
        assertTrue(eventually(() -> impl(fg).holdOnArrival().size() == 1), "fg is on top of bg");
        Thread.sleep(30);
        policy.deciders.clear();
        fg.submit(Command.spin(100)); // on top: bg held on arrival, the loop decides
        assertTrue(impl(bg).isSuspendedByScheduler(), "bg held before submit returned");
        assertTrue(eventually(() -> policy.deciders.stream().anyMatch(t -> t.startsWith("xq-scheduler-"))),
                "the loop decided fg's arrival; deciders " + policy.deciders);
        assertTrue(!policy.deciders.contains(me), "fg's arrival on top was decided on the submitting thread");
        assertTrue(impl(bg).isSuspendedByScheduler(), "the loop's decision kept bg held");
        assertEquals(1, fgHw.onDeviceCount(), "fg's command is on the device");
    }

    private XQueueImpl impl(XQueue q) {
        return core.queueImpls().stream().filter(i -> i.handle() == q.handle()).findFirst().orElseThrow();
    }
}
