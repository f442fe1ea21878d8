package dev.xq.microbench;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * One scheduling decision over N queues: building the view the scheduler hands a policy and a
 * highest-priority-first decision on it (the shape of {@code hpf}). The scheduler's own
 * decision-time statistics ({@code xq:top}) measure the same thing inside a node.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1)
public class DecisionBenchmark {

    @Param({"10", "1000"})
    public int queues;

    private List<QueueView> views;
    private final List<DeviceView> devices = List.of(new DeviceView("sim0", "sim", 1, 1L << 34));
    private final Policy highestFirst = new Policy() {
        @Override
        public String description() {
            return "benchmark: highest priority first";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            int top = Integer.MIN_VALUE;
            for (QueueView q : view.queues()) {
                if (q.ready()) {
                    top = Math.max(top, q.priority());
                }
            }
            for (QueueView q : view.queues()) {
                if (q.ready() && q.priority() < top) {
                    actions.suspend(q.handle());
                } else {
                    actions.resume(q.handle());
                }
            }
        }
    };

    @Setup
    public void setUp() {
        views = new ArrayList<>(queues);
        for (int i = 0; i < queues; i++) {
            views.add(new QueueView(i + 1, "q" + i, "sim0", "g" + (i % 8), i % 3 != 0, false, false, 1000L * i, 0, 0,
                    i % 5, i % 3, 0, 500_000, List.of(new Hint.Priority(i % 7)), PreemptionLevel.INTERRUPT));
        }
    }

    @Benchmark
    public void decide(Blackhole bh) {
        SchedulerView view = new SchedulerView(System.nanoTime(), views, devices);
        highestFirst.schedule(view, new SchedulerActions() {
            @Override
            public void suspend(long handle) {
                bh.consume(handle);
            }

            @Override
            public void resume(long handle) {
                bh.consume(-handle);
            }

            @Override
            public void wakeAt(long nanos) {
                bh.consume(nanos);
            }
        });
    }
}
