package dev.xq.microbench;

import dev.xq.api.Command;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
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
 * One command through XQ to a device that finishes it at once: submit, launch, completion,
 * result. The figure is XQ's per-command CPU cost on the host.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SubmitPathBenchmark {

    @Param({"window", "xsched"})
    public String launching;

    private XqCore core;
    private XQueue queue;
    private final Command spin = Command.spin(0);

    @Setup(Level.Trial)
    public void setUp() {
        core = new XqCore(RuntimeLog.NONE);
        core.addDriver(new InstantDevice());
        core.start();
        QueueConfig cfg = launching.equals("window") ? QueueConfig.defaults() : QueueConfig.xsched(16, 8);
        queue = core.create(QueueOptions.on("i0").with(cfg));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        core.stop();
    }

    @Benchmark
    public Submission submitAndComplete() {
        return queue.submit(spin);
    }
}
