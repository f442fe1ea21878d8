package dev.xq.runtime.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.engine.XqCore;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bad input in the shell and the API: a clear message naming value and range, and no change. */
class XqCommandsTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private XqCommands shell;
    private XQueue q;

    @BeforeEach
    void setUp() {
        core.addDriver(new XpuDriver() {
            @Override
            public String platform() {
                return "idle";
            }

            @Override
            public String status() {
                return "1 device";
            }

            @Override
            public List<DeviceDescriptor> devices() {
                return List.of(new DeviceDescriptor("d0", "idle device", PreemptionLevel.DEACTIVATE, 4, 1L << 30, Set.of("spin"), Map.of()));
            }

            @Override
            public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
                return new HwQueue() {
                    @Override
                    public String platform() {
                        return "idle";
                    }

                    @Override
                    public String deviceId() {
                        return "d0";
                    }

                    @Override
                    public java.util.Optional<dev.xq.hal.spi.Preemption> preemption() {
                        return java.util.Optional.of(new dev.xq.hal.spi.Preemption() {
                            @Override
                            public PreemptionLevel level() {
                                return PreemptionLevel.DEACTIVATE;
                            }

                            @Override
                            public List<dev.xq.hal.spi.HwCommand> deactivate() {
                                return List.of();
                            }

                            @Override
                            public void reactivate() {
                            }

                            @Override
                            public void interrupt() {
                                throw new UnsupportedOperationException("level 2 only");
                            }

                            @Override
                            public void restore() {
                                throw new UnsupportedOperationException("level 2 only");
                            }
                        });
                    }

                    @Override
                    public void check(dev.xq.api.Command command) {
                    }

                    @Override
                    public void launch(dev.xq.hal.spi.HwCommand command) {
                    }

                    @Override
                    public void close() {
                    }
                };
            }
        });
        shell = new XqCommands(core, core);
        q = core.create(QueueOptions.on("d0").named("fg").with(new Hint.Priority(2)));
    }

    @AfterEach
    void tearDown() {
        core.stop();
    }

    private static void assertMessage(IllegalArgumentException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "'" + e.getMessage() + "' should contain '" + p + "'");
        }
    }

    @Test
    void hintOutOfRangeNamesValueAndRangeAndKeepsTheOldHint() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "priority", "5000")), "5000", "[-1000, 1000]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "colour", "red")), "'colour'", "priority, deadline");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "utilization", "0")), "0%", "[1, 100]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "deadline", "soon")), "soon", "not a whole number");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("nope", "priority", "1")), "'nope'", "fg");
        assertEquals(List.of(new Hint.Priority(2)), q.hints());
        assertTrue(shell.hint("fg", "priority", "7").contains("priority=7"));
        assertEquals(List.of(new Hint.Priority(7)), q.hints());
    }

    @Test
    void badConfigNamesValueAndRangeAndKeepsTheOldConfig() {
        QueueConfig before = q.status().config();
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "threshold", "0")), "threshold 0", "[1, 1048576]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "batch", "99")), "batch 99", "threshold=16");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "level", "4")), "level 4", "1 (block)");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "window", "-5")), "window -5", "[0, 60000000]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "speed", "9")), "'speed'", "level, threshold, batch, window");
        assertEquals(before, q.status().config());
        shell.config("fg", "window", "250");
        assertEquals(250, q.status().config().windowMicros());
    }

    @Test
    void policyAndTopRefuseWhatTheyDoNotKnow() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.policy("fifo")), "'fifo'", "native");
        assertEquals("native", core.selectedPolicy());
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.top("--fast")), "--fast", "--once");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.top("--interval", "5")), "--interval 5", "[100, 60000]");
    }

    @Test
    void tablesShowDevicesQueuesAndPolicies() throws Exception {
        assertTrue(shell.devices().contains("d0"), shell.devices());
        assertTrue(shell.devices().contains("idle") && shell.devices().contains("1 device"));
        assertTrue(shell.queues().contains("fg") && shell.queues().contains("priority=2"), shell.queues());
        assertTrue(shell.policies().contains("native"));
        assertTrue(shell.top("--once").contains("policy native"));
        shell.suspend("fg");
        assertTrue(q.status().suspendedByApp());
        shell.resume(String.valueOf(q.handle()));
        assertTrue(!q.status().suspendedByApp());
    }
}
