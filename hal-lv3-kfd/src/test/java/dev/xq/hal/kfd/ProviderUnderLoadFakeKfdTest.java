package dev.xq.hal.kfd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The provider installed into and removed from a running node while a HIP-platform queue keeps
 * working and keeps being suspended and resumed: the queue is raised to level 3 (suspend goes
 * to the fake KFD queue), lowered back to level 1 on removal with its KFD queue resumed, and no
 * command is lost either way. The runtime engine is the real one.
 */
class ProviderUnderLoadFakeKfdTest {

    private FakeKfd fake;
    private KfdDevice hip;
    private KfdProvider provider;
    private XqCore core;
    private final ScheduledExecutorService gpu = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "test-hip-gpu");
        t.setDaemon(true);
        return t;
    });

    /** A HIP-platform driver whose queues run each command for 200 us on a timer, in order. */
    private final class TestHip implements XpuDriver {
        final AtomicLong streams = new AtomicLong(0x7000);

        @Override
        public String platform() {
            return "hip";
        }

        @Override
        public String status() {
            return "1 device (test)";
        }

        @Override
        public List<DeviceDescriptor> devices() {
            return List.of(new DeviceDescriptor("hip0", "test HIP device", PreemptionLevel.BLOCK, 1, 1L << 30, Set.of("spin"), Map.of()));
        }

        @Override
        public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
            long stream = streams.getAndAdd(0x100);
            AtomicLong lastEnd = new AtomicLong();
            return new HwQueue() {
                @Override
                public String platform() {
                    return "hip";
                }

                @Override
                public String deviceId() {
                    return "hip0";
                }


                @Override
                public void check(Command command) {
                }

                @Override
                public void launch(HwCommand command) {
                    long now = System.nanoTime();
                    long end = Math.max(now, lastEnd.get()) + 200_000;
                    lastEnd.set(end);
                    gpu.schedule(() -> listener.completed(command, end - 200_000, end), end - now, TimeUnit.NANOSECONDS);
                }

                @Override
                public <T> java.util.Optional<T> nativeHandle(Class<T> type) {
                    Object h = new dev.xq.hal.spi.StreamHandle.Hip(stream);
                    return type.isInstance(h) ? java.util.Optional.of(type.cast(h)) : java.util.Optional.empty();
                }

                @Override
                public void close() {
                }
            };
        }
    }

    @BeforeEach
    void start() {
        assertTrue(FakeKfd.preloaded(), "run with LD_PRELOAD=target/fakekfd/libfakekfd.so");
        fake = new FakeKfd();
        hip = KfdDevice.open("/dev/kfd");
        hip.runtimeEnable(0, 0);
        provider = new KfdProvider();
        provider.activate(TestQueues.config("/dev/kfd", 100, 0, "auto"), java.util.Map.of());
        core = new XqCore(RuntimeLog.NONE);
        core.addDriver(new TestHip());
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
        provider.deactivate();
        hip.close();
        fake.close();
        gpu.shutdownNow();
    }

    @Test
    void installingAndRemovingTheProviderUnderLoadLosesNothing() throws Exception {
        int kfdQueue = fake.createQueue(3); // the HSA queue HIP made for the stream
        XQueue q = core.create(QueueOptions.on("hip0").named("load").with(QueueConfig.defaults()));
        assertEquals(PreemptionLevel.BLOCK, q.status().level(), "HIP alone offers level 1");

        ConcurrentLinkedQueue<Submission> subs = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread load = Thread.ofPlatform().name("load").start(() -> {
            while (!stop.get()) {
                if (q.status().pending() < 16) {
                    subs.add(q.submit(Command.spin(200)));
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        try {
            Thread.sleep(20);
            core.addProvider(provider);
            assertEquals(PreemptionLevel.INTERRUPT, q.status().level(), "installing the provider raised the live queue: " + provider.status());

            for (int round = 0; round < 5; round++) {
                q.suspend();
                assertTrue(fake.suspended(kfdQueue), "round " + round + ": suspend reached the KFD queue");
                Thread.sleep(3);
                q.resume();
                assertFalse(fake.suspended(kfdQueue), "round " + round + ": resume reached it too");
                Thread.sleep(3);
            }

            // Removed while the queue is suspended: the runtime resumes the KFD queue before letting go.
            q.suspend();
            assertTrue(fake.suspended(kfdQueue));
            core.removeProvider(provider);
            assertFalse(fake.suspended(kfdQueue), "removing the provider resumed the KFD queue");
            assertEquals(PreemptionLevel.BLOCK, q.status().level(), "lowered back to level 1");
            q.resume();
            Thread.sleep(20);
        } finally {
            stop.set(true);
            load.join(5_000);
        }
        q.waitAll(Duration.ofSeconds(30));
        XQueueStatus st = q.status();
        assertTrue(subs.size() > 50, "load ran: " + subs.size());
        assertEquals(subs.size(), st.submitted());
        assertEquals(st.submitted(), st.completed(), "lost = 0: every command completed: " + st);
        for (Submission s : subs) {
            assertTrue(s.isDone());
        }
        assertEquals(fake.suspends(kfdQueue), fake.resumes(kfdQueue), "every suspend was matched by a resume");
        q.close();
    }
}
