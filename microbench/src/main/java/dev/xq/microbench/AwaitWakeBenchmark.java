package dev.xq.microbench;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Submit one command and await it, on a device that ends each command {@code T} microseconds
 * after its launch (its own thread spins, so the device is never late): the time over T is XQ's
 * round trip, and most of it, with {@code awaitSpinMicros=0}, is the waiting thread's wake-up.
 * With a spin the waiter is running when the completion comes. Sample time, so the percentiles
 * show the tail.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class AwaitWakeBenchmark {

    /** How long await spins around the expected end (the dev.xq.scheduler setting). */
    @Param({"0", "100"})
    public long spinMicros;

    /** The device's command length. */
    @Param({"200"})
    public long T;

    private XqCore core;
    private XQueue queue;
    private TimedDevice device;
    private final Command spin = Command.spin(1);

    @Setup(Level.Trial)
    public void setUp() {
        device = new TimedDevice(T * 1000);
        core = new XqCore(RuntimeLog.NONE);
        core.awaitSpinMicros(spinMicros);
        core.addDriver(device);
        core.start();
        queue = core.create(QueueOptions.on("t0").with(QueueConfig.xsched(16, 8)));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        core.stop();
        device.stop();
    }

    @Benchmark
    public CommandResult submitAndAwait() throws InterruptedException {
        return queue.submit(spin).await();
    }

    /** Ends each command a fixed time after its launch, from one spinning thread, in launch order. */
    static final class TimedDevice implements XpuDriver {
        private record Pending(HwCommand command, HwQueueListener listener, long start, long end) { }

        private final long nanos;
        private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
        private volatile boolean stopped;
        private final Thread thread;

        TimedDevice(long nanos) {
            this.nanos = nanos;
            this.thread = Thread.ofPlatform().daemon().name("timed-device").start(this::run);
        }

        private void run() {
            while (!stopped) {
                Pending p = pending.peek();
                if (p == null || System.nanoTime() < p.end) {
                    Thread.onSpinWait();
                    continue;
                }
                pending.poll();
                p.listener.completed(p.command, p.start, System.nanoTime());
            }
        }

        void stop() {
            stopped = true;
        }

        @Override
        public String platform() {
            return "timed";
        }

        @Override
        public String status() {
            return "1 device";
        }

        @Override
        public List<DeviceDescriptor> devices() {
            return List.of(new DeviceDescriptor("t0", "timed", PreemptionLevel.BLOCK, 1, 0, Set.of("spin"), Map.of()));
        }

        @Override
        public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
            return new HwQueue() {
                @Override
                public String platform() {
                    return "timed";
                }

                @Override
                public String deviceId() {
                    return "t0";
                }

                @Override
                public void check(Command command) {
                }

                @Override
                public void launch(HwCommand command) {
                    long t = System.nanoTime();
                    pending.add(new Pending(command, listener, t, t + nanos));
                }

                @Override
                public void close() {
                }
            };
        }
    }
}
