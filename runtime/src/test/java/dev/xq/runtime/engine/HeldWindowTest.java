package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
 * The held window (docs/runtime.md): a queue with company whose launched commands a suspend
 * would hold in place keeps more work in flight, and only while its hardware says so.
 */
class HeldWindowTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private final ManualDevice device = new ManualDevice("m0", PreemptionLevel.DEACTIVATE, false);
    private static final QueueConfig WINDOWED = new QueueConfig(PreemptionLevel.DEACTIVATE, 16, 8, 300);

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

    /** bg (priority 1) with fg (2) open and idle beside it, so bg has company and runs. */
    private ManualDevice.ManualQueue bgWithCompany(QueueConfig bgConfig) throws InterruptedException {
        XQueue bg = core.create(QueueOptions.on("m0").inGroup("bg").with(bgConfig).with(new Hint.Priority(1)));
        core.create(QueueOptions.on("m0").inGroup("fg").with(WINDOWED).with(new Hint.Priority(2)));
        submit(bg, 60);
        ManualDevice.ManualQueue bgHw = device.opened.get(0);
        assertTrue(eventually(() -> bgHw.onDeviceCount() > 0));
        bgHw.completeNext(200); // estimate: 200 us a command
        assertTrue(eventually(() -> bgHw.onDeviceCount() == 2), "company: the 300 us window holds 2: " + bgHw.onDeviceCount());
        return bgHw;
    }

    @Test
    void aQueueHeldInPlaceKeepsTheHeldWindowOnlyWhileItsHardwareSaysSo() throws Exception {
        core.heldWindowMicros(2000);
        ManualDevice.ManualQueue bgHw = bgWithCompany(WINDOWED);
        Thread.sleep(20);
        assertEquals(2, bgHw.onDeviceCount(), "not held in place: the configured window");

        bgHw.holdsInPlace = true;
        bgHw.completeNext(200);
        assertTrue(eventually(() -> bgHw.onDeviceCount() == 10), "held in place: 2000 us (10 x 200 us): " + bgHw.onDeviceCount());

        bgHw.holdsInPlace = false; // the guards lapsed: what is launched stays, nothing more goes until below the window
        for (int i = 0; i < 8; i++) {
            bgHw.completeNext(200);
        }
        Thread.sleep(20);
        assertEquals(2, bgHw.onDeviceCount(), "back to the configured window");
        bgHw.completeNext(200);
        assertTrue(eventually(() -> bgHw.onDeviceCount() == 2), "and it keeps it: " + bgHw.onDeviceCount());
    }

    @Test
    void offOrAQueueThatAskedForLevelOneKeepsItsLimits() throws Exception {
        ManualDevice.ManualQueue bgHw = bgWithCompany(WINDOWED);
        bgHw.holdsInPlace = true;
        bgHw.completeNext(200);
        Thread.sleep(20);
        assertEquals(2, bgHw.onDeviceCount(), "the rule is off by default");

        core.heldWindowMicros(2000);
        assertTrue(eventually(() -> bgHw.onDeviceCount() == 10), "switched on: widened at once: " + bgHw.onDeviceCount());

        assertThrows(IllegalArgumentException.class, () -> core.heldWindowMicros(-1));
        assertEquals(2000, core.heldWindowMicros(), "a refused value changes nothing");
    }

    @Test
    void aQueueAtLevelOneIsNotWidened() throws Exception {
        core.heldWindowMicros(2000);
        ManualDevice.ManualQueue bgHw = bgWithCompany(new QueueConfig(PreemptionLevel.BLOCK, 16, 8, 300));
        bgHw.holdsInPlace = true;
        bgHw.completeNext(200);
        Thread.sleep(20);
        assertEquals(2, bgHw.onDeviceCount(), "a suspend would not deactivate it: its launched work is not held");
    }
}
