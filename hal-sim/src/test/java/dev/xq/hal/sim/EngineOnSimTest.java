package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The runtime's engine on the simulated device: what suspend does at each level, end to end. */
class EngineOnSimTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private SimDevice device;

    @AfterEach
    void stop() {
        core.stop();
        device.shutdown("test over");
    }

    private void sim(Map<String, Object> props) {
        device = new SimDevice(SimSettings.from(props, "simt"));
        core.addDriver(new SimDriver(device));
        core.start();
    }

    private static List<Submission> submit(XQueue q, int n, long micros) {
        List<Submission> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add(q.submit(Command.spin(micros)));
        }
        return l;
    }

    @Test
    void level2FlushRelaunchesEveryCommandOnceInOrder() throws Exception {
        sim(Map.of("maxLevel", 2, "lv2Mode", "flush"));
        XQueue q = core.create(QueueOptions.on("simt").with(QueueConfig.xsched(8, 4).withLevel(PreemptionLevel.DEACTIVATE)));
        List<Submission> subs = submit(q, 30, 1000);
        Thread.sleep(5);
        for (int round = 0; round < 5; round++) {
            q.suspend();
            Thread.sleep(3);
            q.resume();
            Thread.sleep(2);
        }
        long lastEnd = 0;
        for (Submission s : subs) {
            CommandResult r = s.await(Duration.ofSeconds(20));
            assertTrue(r.startNanos() >= lastEnd, "in order, one at a time");
            assertEquals(1_000_000, r.deviceNanos(), "ran exactly once, for exactly its duration");
            lastEnd = r.endNanos();
        }
        assertEquals(30, q.status().completed());
        assertEquals(0, q.status().failed() + q.status().cancelled());
    }

    @Test
    void level3SuspendStopsTheRunningCommandAndResumeKeepsItsProgress() throws Exception {
        sim(Map.of("saveCostMicros", 50, "restoreCostMicros", 70));
        XQueue bg = core.create(QueueOptions.on("simt").named("bg"));
        XQueue fg = core.create(QueueOptions.on("simt").named("fg"));
        Submission long1 = bg.submit(Command.spin(30_000));
        Thread.sleep(5);
        bg.suspend();
        long before = System.nanoTime();
        CommandResult quick = fg.submit(Command.spin(200)).await(Duration.ofSeconds(5));
        assertTrue(quick.startNanos() - before < 5_000_000L, "fg ran while bg's long command was interrupted");
        bg.resume();
        CommandResult r = long1.await(Duration.ofSeconds(5));
        assertEquals(30_000 + 70, r.deviceNanos() / 1000, "progress kept: duration plus the restore cost");
        assertTrue(r.endNanos() > quick.endNanos());
    }

    @Test
    void level1SuspendLetsTheWorkInFlightFinish() throws Exception {
        sim(Map.of("maxLevel", 1));
        XQueue q = core.create(QueueOptions.on("simt").with(QueueConfig.xsched(4, 2).withLevel(PreemptionLevel.BLOCK)));
        List<Submission> subs = submit(q, 10, 2000);
        Thread.sleep(3);
        q.suspend();
        int inFlight = q.status().inFlight();
        int pending = q.status().pending();
        assertTrue(inFlight >= 1 && inFlight <= 4, "in flight " + inFlight);
        Thread.sleep(15);
        assertEquals(pending, q.status().pending(), "nothing more launched while suspended");
        assertEquals(0, q.status().inFlight(), "the work in flight ran out");
        q.resume();
        for (Submission s : subs) {
            s.await(Duration.ofSeconds(5));
        }
        assertEquals(10, q.status().completed());
    }
}
