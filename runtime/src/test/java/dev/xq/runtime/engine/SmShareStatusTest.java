package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.QueueState;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueShare;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.shell.XqCommands;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Operators see the space decision: each queue's share of its device's multiprocessors is in its
 * status ({@link XQueueStatus#smSharePercent()}) and in xq:queues' SM% column.
 */
class SmShareStatusTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private static final QueueConfig CFG = new QueueConfig(PreemptionLevel.BLOCK, 8, 4, 200);

    /** An owner whose process shares the device in space (MPS) on a fixed share. */
    static final class SharingOwner extends ExternalQueueTest.Owner implements ExternalQueueShare {
        private final int percent;

        SharingOwner(int percent) {
            this.percent = percent;
        }

        @Override
        public int smSharePercent() {
            return percent;
        }

        @Override
        public boolean heldInTime() {
            return percent < 100;
        }

        @Override
        public long holdBehindMicros() {
            return 0;
        }
    }

    @BeforeEach
    void start() {
        core.addDriver(new ManualDevice("m0", PreemptionLevel.BLOCK, false));
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    private ExternalQueue open(String name, long pid, ExternalQueueTest.Owner owner) {
        return core.open(new ExternalQueueSpec(name + "/default", "cuda0", pid + ":" + name, pid, List.of(new Hint.Priority(1)), CFG),
                owner);
    }

    private XQueueStatus status(long handle) {
        return core.find(handle).orElseThrow().status();
    }

    @Test
    void eachQueueSaysItsShareOfTheMultiprocessors() {
        ExternalQueue capped = open("train", 11, new SharingOwner(50));
        ExternalQueue whole = open("serve", 12, new SharingOwner(100));
        ExternalQueue notShared = open("plain", 13, new ExternalQueueTest.Owner());
        ExternalQueue wrong = open("odd", 14, new SharingOwner(0));
        XQueue own = core.create(QueueOptions.on("m0").inGroup("app"));

        assertEquals(50, status(capped.handle()).smSharePercent());
        assertEquals(100, status(whole.handle()).smSharePercent());
        assertEquals(100, status(notShared.handle()).smSharePercent(), "not sharing in space: the whole device");
        assertEquals(100, status(wrong.handle()).smSharePercent(), "a share outside 1-100 reads as the whole device");
        assertEquals(100, own.status().smSharePercent(), "a queue of the node's own");

        String table = new XqCommands(core, core).queues();
        List<String> lines = table.lines().toList();
        int at = lines.getFirst().indexOf("SM%");
        assertEquals(lines.getFirst().indexOf("RUN_MS") + "RUN_MS  ".length(), at, table);
        assertEquals(lines.getFirst().indexOf("LIMITS"), at + "SM%  ".length(), "SM% is as narrow as its head: " + table);
        for (String l : lines.subList(1, lines.size())) {
            String cell = l.substring(at, at + 3).strip();
            assertEquals(l.contains("train/default") ? "50" : "100", cell, table);
        }
        assertEquals(6, lines.size(), table);
    }

    @Test
    void theOldConstructorsReadAsTheWholeDevice() {
        XQueueStatus s = new XQueueStatus(1, "q", "m0", "", 0, QueueState.IDLE, CFG, PreemptionLevel.BLOCK, PreemptionLevel.BLOCK,
                false, false, 0, 0, 0, 0, 0, 0, 0, 0, List.of(), "", XQueueStatus.Limits.ALONE);
        assertEquals(100, s.smSharePercent());
        assertEquals(XQueueStatus.Limits.ALONE, s.limits());
        XQueueStatus capped = new XQueueStatus(1, "q", "m0", "", 0, QueueState.IDLE, CFG, PreemptionLevel.BLOCK, PreemptionLevel.BLOCK,
                false, false, 0, 0, 0, 0, 0, 0, 0, 0, List.of(), "", null, 25);
        assertEquals(25, capped.smSharePercent());
        assertEquals(XQueueStatus.Limits.CONFIGURED, capped.limits());
        assertEquals(100, new XQueueStatus(1, "q", "m0", "", 0, QueueState.IDLE, CFG, PreemptionLevel.BLOCK, PreemptionLevel.BLOCK,
                false, false, 0, 0, 0, 0, 0, 0, 0, 0, List.of(), "", null, 101).smSharePercent());
    }
}
