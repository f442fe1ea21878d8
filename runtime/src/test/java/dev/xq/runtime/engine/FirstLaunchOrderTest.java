package dev.xq.runtime.engine;

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
 * A queue that becomes ready is decided on before its first launch (docs/runtime.md): where the
 * decision runs on the submitting thread (a bounded policy), the queue the policy holds back for
 * it is deactivated before that launch, so that at level 2 the held
 * queue's next command cannot start while the launch call runs.
 */
class FirstLaunchOrderTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private final ManualDevice device = new ManualDevice("m0", PreemptionLevel.DEACTIVATE, false);
    private static final QueueConfig CONFIG = new QueueConfig(PreemptionLevel.DEACTIVATE, 16, 8, 0);

    @BeforeEach
    void start() {
        core.addDriver(device);
        core.start();
        // bounded and from a trusted bundle: it decides on the thread that posts an event
        core.scheduler().register("hi", new SchedulerTest.Highest(), "dev.xq.policy.fixedpriority 0.1.0", 1, true);
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

    @Test
    void theQueueHeldForANewcomerIsDeactivatedBeforeTheNewcomersFirstLaunch() throws Exception {
        XQueue bg = core.create(QueueOptions.on("m0").inGroup("bg").with(CONFIG).with(new Hint.Priority(1)));
        XQueue fg = core.create(QueueOptions.on("m0").inGroup("fg").with(CONFIG).with(new Hint.Priority(2)));
        ManualDevice.ManualQueue bgHw = device.opened.get(0);
        ManualDevice.ManualQueue fgHw = device.opened.get(1);
        for (int i = 0; i < 10; i++) {
            bg.submit(Command.spin(100));
        }
        assertTrue(eventually(() -> bgHw.onDeviceCount() > 0), "bg runs");
        fg.submit(Command.spin(100));
        assertTrue(eventually(() -> fgHw.onDeviceCount() == 1), "fg's command is launched");
        long deactivated;
        long launched;
        synchronized (bgHw) {
            deactivated = bgHw.deactivateNanos;
        }
        synchronized (fgHw) {
            launched = fgHw.launchNanos.getFirst();
        }
        assertTrue(deactivated != 0, "bg was deactivated for fg");
        assertTrue(deactivated - launched < 0, "bg deactivated " + (deactivated - launched) + " ns after fg's first launch");

    }
}
