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
 * status ({@link XQueueStatus#smSharePercent()}) and in xq:queues' SM% column; and how often the
 * device fell behind its launches ({@link XQueueStatus#deviceLags()}, the LAG column).
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
        assertEquals(lines.getFirst().indexOf("WIDTH"), at + "SM%  ".length(), "SM% is as narrow as its head: " + table);
        for (String l : lines.subList(1, lines.size())) {
            String cell = l.substring(at, at + 3).strip();
            assertEquals(l.contains("train/default") ? "50" : "100", cell, table);
        }
        assertEquals(6, lines.size(), table);
    }

    /** An owner whose process times its device lag: {@code lags} busy periods, {@code slow} of them slow. */
    static final class LaggingOwner extends ExternalQueueTest.Owner implements ExternalQueueShare {
        volatile long lags;
        volatile long slow;
        volatile boolean fail;

        @Override
        public long lags() {
            if (fail) {
                throw new IllegalStateException("the process went away");
            }
            return lags;
        }

        @Override
        public long slowLags() {
            return slow;
        }

        @Override
        public int smSharePercent() {
            return 100;
        }

        @Override
        public boolean heldInTime() {
            return false;
        }

        @Override
        public long holdBehindMicros() {
            return 0;
        }
    }

    @Test
    void eachQueueSaysHowOftenTheDeviceFellBehindItsLaunches() {
        LaggingOwner decoder = new LaggingOwner();
        decoder.lags = 120;
        decoder.slow = 3;
        ExternalQueue lagging = open("decode", 21, decoder);
        ExternalQueue quiet = open("train", 22, new SharingOwner(50));
        XQueue own = core.create(QueueOptions.on("m0").inGroup("app"));

        assertEquals(120, status(lagging.handle()).deviceLags());
        assertEquals(3, status(lagging.handle()).slowDeviceLags());
        assertEquals(0, status(quiet.handle()).deviceLags(), "a process that times none");
        assertEquals(0, own.status().deviceLags(), "a queue of the node's own");

        String table = new XqCommands(core, core).queues();
        List<String> lines = table.lines().toList();
        int at = lines.getFirst().indexOf("LAG");
        int end = lines.getFirst().indexOf("LIMITS");
        for (String l : lines.subList(1, lines.size())) {
            assertEquals(l.contains("decode/default") ? "3/120" : "", l.substring(at, Math.min(end, l.length())).strip(), table);
        }

        decoder.slow = 500;   // more slow than timed (the two read at different moments): no more than timed
        assertEquals(120, status(lagging.handle()).slowDeviceLags());
        decoder.lags = -4;
        assertEquals(0, status(lagging.handle()).deviceLags(), "a count below 0 reads as none");
        assertEquals(0, status(lagging.handle()).slowDeviceLags());
        decoder.fail = true;
        assertEquals(0, status(lagging.handle()).deviceLags(), "an owner that fails to tell: none");
    }

    /** An owner whose process tells its widths, as the CUDA interposer does. */
    static final class WideOwner extends ExternalQueueTest.Owner implements ExternalQueueShare {
        int width = 132;
        int stretch = 24;

        @Override
        public int smSharePercent() {
            return 100;
        }

        @Override
        public boolean heldInTime() {
            return false;
        }

        @Override
        public long holdBehindMicros() {
            return 0;
        }

        @Override
        public int widthSms() {
            return width;
        }

        @Override
        public int stretchWidthSms() {
            return stretch;
        }

        @Override
        public int deviceSms() {
            return 132;
        }
    }

    @Test
    void eachQueueSaysHowWideItIsNowAndLately() {
        WideOwner chat = new WideOwner();
        ExternalQueue wide = open("chat", 31, chat);
        ExternalQueue quiet = open("train", 32, new SharingOwner(100));
        XQueue own = core.create(QueueOptions.on("m0").inGroup("app"));

        XQueueStatus s = status(wide.handle());
        assertEquals(132, s.widthSms());
        assertEquals(24, s.stretchWidthSms());
        assertEquals(132, s.deviceSms());
        assertEquals(0, status(quiet.handle()).deviceSms(), "a process that tells none");
        assertEquals(0, own.status().widthSms(), "a queue of the node's own");

        String table = new XqCommands(core, core).queues();
        List<String> lines = table.lines().toList();
        int at = lines.getFirst().indexOf("WIDTH");
        int end = lines.getFirst().indexOf("LAG");
        for (String l : lines.subList(1, lines.size())) {
            assertEquals(l.contains("chat/default") ? "24/132 of 132" : "", l.substring(at, Math.min(end, l.length())).strip(), table);
        }
        chat.stretch = 200; // told wider than its widest (the two read at different moments): no wider
        assertEquals(132, status(wide.handle()).stretchWidthSms());
        chat.width = -3;
        assertEquals(0, status(wide.handle()).widthSms(), "a count below 0 reads as none");
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
        assertEquals(0, capped.deviceLags(), "1.7-1.9's constructor: no lags timed");
        XQueueStatus lagged = new XQueueStatus(1, "q", "m0", "", 0, QueueState.IDLE, CFG, PreemptionLevel.BLOCK,
                PreemptionLevel.BLOCK, false, false, 0, 0, 0, 0, 0, 0, 0, 0, List.of(), "", null, 25, 4, 1);
        assertEquals(4, lagged.deviceLags());
        assertEquals(0, lagged.widthSms(), "1.10's constructor: no widths told");
        assertEquals(0, lagged.deviceSms());
        assertEquals(0, capped.slowDeviceLags());
    }
}
