package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A thousand queues need no thread of their own, and completions may re-enter launch. */
class ScaleTest {

    /** Completes every command inside {@code launch}: the most re-entrant driver possible. */
    static final class InstantDriver implements XpuDriver {
        @Override
        public String platform() {
            return "instant";
        }

        @Override
        public String status() {
            return "1 device";
        }

        @Override
        public List<DeviceDescriptor> devices() {
            return List.of(new DeviceDescriptor("i0", "instant", PreemptionLevel.BLOCK, 1, 0, Set.of("spin"), Map.of()));
        }

        @Override
        public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
            return new HwQueue() {
                @Override
                public String platform() {
                    return "instant";
                }

                @Override
                public String deviceId() {
                    return "i0";
                }


                @Override
                public void check(Command command) {
                }

                @Override
                public void launch(HwCommand command) {
                    long t = System.nanoTime();
                    listener.completed(command, t, t);
                }

                @Override
                public void close() {
                }
            };
        }
    }

    @Test
    void thousandQueuesOfAHundredCommandsCompleteWithoutAThreadPerQueue() throws Exception {
        XqCore core = new XqCore(RuntimeLog.NONE);
        core.addDriver(new InstantDriver());
        core.start();
        int threadsBefore = Thread.activeCount();
        try {
            List<XQueue> queues = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                queues.add(core.create(QueueOptions.on("i0").named("q" + i)));
            }
            for (int c = 0; c < 100; c++) {
                for (XQueue q : queues) {
                    q.submit(Command.spin(0));
                }
            }
            for (XQueue q : queues) {
                q.waitAll(Duration.ofSeconds(30));
            }
            long done = queues.stream().mapToLong(q -> q.status().completed()).sum();
            assertEquals(100_000, done);
            assertTrue(Thread.activeCount() - threadsBefore < 10, "threads grew by " + (Thread.activeCount() - threadsBefore));
        } finally {
            core.stop();
        }
    }
}
