package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.shell.XqCommands;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The on-top rule (docs/runtime.md): a queue the policy keeps on top of every other queue of its
 * device keeps more work in flight, as if alone, until the policy holds it for another queue once.
 */
class OnTopRuleTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private final ManualDevice device = new ManualDevice("m0", PreemptionLevel.BLOCK, false);
    private static final QueueConfig WINDOWED = new QueueConfig(PreemptionLevel.BLOCK, 16, 8, 300);

    @BeforeEach
    void start() {
        core.addDriver(device);
        core.start();
        core.scheduler().register("hi", new SchedulerTest.Highest(), "test", 1);
        core.scheduler().select("hi", true);
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    private XQueueImpl impl(XQueue q) {
        return core.queueImpls().stream().filter(i -> i.handle() == q.handle()).findFirst().orElseThrow();
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

    private static void submit(XQueue q, int n) {
        for (int i = 0; i < n; i++) {
            q.submit(Command.spin(100));
        }
    }

    @Test
    void theQueueTheOthersYieldToKeepsTheAloneWindowUntilItYieldsOnce() throws Exception {
        XQueue bg = core.create(QueueOptions.on("m0").inGroup("bg").with(WINDOWED).with(new Hint.Priority(1)));
        XQueue fg = core.create(QueueOptions.on("m0").inGroup("fg").with(WINDOWED).with(new Hint.Priority(2)));
        submit(bg, 40);
        ManualDevice.ManualQueue bgHw = device.opened.get(0);
        assertTrue(eventually(() -> bgHw.onDeviceCount() > 0));
        bgHw.completeNext(200); // bg's estimate: 200 us a command
        assertTrue(eventually(() -> bgHw.onDeviceCount() == 2), "bg has company: its 300 us window holds 2");
        assertTrue(impl(fg).contended() && impl(bg).contended(), "nobody is on top before anyone yielded");

        submit(fg, 40); // bg is held for fg: fg is on top
        ManualDevice.ManualQueue fgHw = device.opened.get(1);
        assertTrue(eventually(() -> core.scheduler().topQueues().contains(fg.handle())), "fg on top: " + core.scheduler().topQueues());
        assertTrue(eventually(() -> !impl(fg).contended()), "fg's limits widened");
        assertTrue(impl(bg).contended(), "bg keeps its limits");
        assertTrue(eventually(() -> fgHw.onDeviceCount() > 0));
        fgHw.completeNext(200);
        assertTrue(eventually(() -> fgHw.onDeviceCount() == 10), "on top: 2000 us in flight (10 x 200 us), not 300 us (2): "
                + fgHw.onDeviceCount());
        assertEquals(2, bgHw.onDeviceCount(), "held bg launched nothing more");
        assertEquals(XQueueStatus.Limits.ON_TOP, fg.status().limits());
        assertEquals(XQueueStatus.Limits.CONFIGURED, bg.status().limits());
        String table = new XqCommands(core, core).queues();
        assertTrue(table.lines().anyMatch(l -> l.contains(" fg ") && l.contains("on top")) && table.lines().noneMatch(
                l -> l.contains(" bg ") && l.contains("on top")), table);
        assertTrue(table.lines().findFirst().orElseThrow().contains("LIMITS"), table);

        // the operator puts bg above fg: fg is held for bg once, and is never on top again
        core.find(bg.handle()).orElseThrow().hint(new Hint.Priority(3));
        assertTrue(eventually(() -> fg.status().suspendedByScheduler()), "fg held for bg");
        assertTrue(eventually(() -> impl(fg).contended()), "fg yielded: its limits apply again");
        core.find(bg.handle()).orElseThrow().hint(new Hint.Priority(1));
        assertTrue(eventually(() -> bg.status().suspendedByScheduler()), "bg held for fg again: " + bg.status());
        assertEquals(Set.of(), core.scheduler().topQueues(), "fg yielded once: not on top again");
        Thread.sleep(50);
        assertTrue(impl(fg).contended(), "fg keeps its limits");
        assertEquals(XQueueStatus.Limits.CONFIGURED, fg.status().limits());
        for (int i = 0; i < 8; i++) {
            fgHw.completeNext(200);
        }
        assertTrue(eventually(() -> fgHw.onDeviceCount() == 2), "fg is back to its 300 us window: " + fgHw.onDeviceCount());
        assertTrue(impl(fg).contended());
    }

    @Test
    void aTopProcessHasItsWindowWidenedToTheAloneWindowNotLifted() throws Exception {
        ExternalQueueTest.Owner lo = new ExternalQueueTest.Owner();
        ExternalQueueTest.Owner hi = new ExternalQueueTest.Owner();
        QueueConfig cfg = new QueueConfig(PreemptionLevel.BLOCK, 8, 4, 200);
        ExternalQueue qlo = core.open(new ExternalQueueSpec("train/default", "cuda0", "11:train", 11, List.of(new Hint.Priority(1)), cfg), lo);
        ExternalQueue qhi = core.open(new ExternalQueueSpec("serve/default", "cuda0", "12:serve", 12, List.of(new Hint.Priority(2)), cfg), hi);
        assertEquals(200, hi.config.windowMicros(), "company: limits apply");
        lo.counters = new ExternalCounters(1, 4, 10, 9, 0, 9_000_000, 1_000_000, System.nanoTime());
        qlo.changed();
        hi.counters = new ExternalCounters(0, 1, 10, 9, 0, 9_000_000, 1_000_000, System.nanoTime());
        qhi.changed();
        assertTrue(eventually(lo::holding), "lp held while hp has work: " + lo.held);
        assertTrue(eventually(() -> hi.config.windowMicros() == XqCore.DEFAULT_ALONE_WINDOW_MICROS), "hp on top: " + hi.config);
        assertEquals(QueueConfig.MAX_THRESHOLD, hi.config.threshold());
        assertEquals(200, lo.config.windowMicros(), "lp keeps its limits");
        assertEquals(XQueueStatus.Limits.ON_TOP, core.find(qhi.handle()).orElseThrow().status().limits());
        assertEquals(XQueueStatus.Limits.CONFIGURED, core.find(qlo.handle()).orElseThrow().status().limits());
        core.onTop(false);
        assertTrue(eventually(() -> hi.config.windowMicros() == 200), "the on-top rule off: limits apply: " + hi.config);
        core.onTop(true);
        assertTrue(eventually(() -> hi.config.windowMicros() == XqCore.DEFAULT_ALONE_WINDOW_MICROS), "on again: " + hi.config);
        core.find(qlo.handle()).orElseThrow().close();
        assertTrue(eventually(() -> hi.config.windowMicros() == 0), "alone: unthrottled: " + hi.config);
        assertEquals(XQueueStatus.Limits.ALONE, core.find(qhi.handle()).orElseThrow().status().limits());
        assertFalse(hi.holding());
    }
}
