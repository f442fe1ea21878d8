package dev.xq.http;

import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.QueueState;
import dev.xq.api.SchedulerControl;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Test doubles of the runtime's services. The HTTP API needs queues with handles a real node
 * does not hand out yet (above 2^53 and 2^63, as XSched's are) and exact counters, so the
 * queues are made up; the checks of values are the runtime's own (Hint, QueueConfig).
 */
final class Fakes {

    private Fakes() {
    }

    static final class Queue implements XQueue {
        final long handle;
        final String name;
        final String device;
        final String group;
        final long pid;
        volatile QueueConfig config = QueueConfig.defaults();
        final Map<String, Hint> hints = new LinkedHashMap<>();
        volatile boolean suspendedByApp;
        volatile boolean suspendedByScheduler;
        volatile QueueState state = QueueState.IDLE;
        int pending;
        int inFlight;
        long submitted;
        long completed;
        long failed;
        long runMicros;
        XQueueStatus.Limits limits = XQueueStatus.Limits.CONFIGURED;
        int smSharePercent = 100;
        long deviceLags;
        int widthSms;
        int stretchWidthSms;
        int deviceSms;
        long slowDeviceLags;

        Queue(long handle, String name, String device, String group, long pid) {
            this.handle = handle;
            this.name = name;
            this.device = device;
            this.group = group;
            this.pid = pid;
        }

        @Override
        public long handle() {
            return handle;
        }

        @Override
        public String device() {
            return device;
        }

        @Override
        public Submission submit(dev.xq.api.Command command) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void waitAll() {
        }

        @Override
        public void waitAll(Duration timeout) {
        }

        @Override
        public void suspend() {
            suspendedByApp = true;
        }

        @Override
        public void resume() {
            suspendedByApp = false;
        }

        @Override
        public synchronized void hint(Hint hint) {
            hints.put(hint.kind(), hint);
        }

        @Override
        public synchronized List<Hint> hints() {
            return List.copyOf(hints.values());
        }

        @Override
        public void configure(QueueConfig config) {
            this.config = config;
        }

        @Override
        public synchronized XQueueStatus status() {
            return new XQueueStatus(handle, name, device, group, pid, state, config, config.level(), PreemptionLevel.INTERRUPT,
                    suspendedByScheduler, suspendedByApp, pending, inFlight, submitted, completed, failed, 0, 250, runMicros,
                    List.copyOf(hints.values()), "", limits, smSharePercent, deviceLags, slowDeviceLags, widthSms, stretchWidthSms,
                    deviceSms);
        }

        @Override
        public AutoCloseable onStateChange(Consumer<QueueState> listener) {
            return () -> { };
        }

        @Override
        public void close() {
            state = QueueState.CLOSED;
        }
    }

    static final class Service implements XQueueService {
        final List<XQueue> queues = new ArrayList<>();
        final List<DeviceInfo> devices = new ArrayList<>(List.of(
                new DeviceInfo("sim0", "sim", "simulated XPU", PreemptionLevel.INTERRUPT, 1, 1L << 34, 0),
                new DeviceInfo("cuda0", "cuda", "NVIDIA H100", PreemptionLevel.BLOCK, 132, 80L << 30, 0)));

        Queue add(long handle, String name, String device, String group, long pid) {
            Queue q = new Queue(handle, name, device, group, pid);
            queues.add(q);
            return q;
        }

        @Override
        public XQueue create(QueueOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<XQueue> queues() {
            return List.copyOf(queues);
        }

        @Override
        public Optional<XQueue> find(long handle) {
            return queues.stream().filter(q -> q.handle() == handle).findFirst();
        }

        @Override
        public List<DeviceInfo> devices() {
            return devices;
        }

        @Override
        public List<DriverInfo> drivers() {
            return List.of(new DriverInfo("sim", "driver", "1 device", List.of("sim0")),
                    new DriverInfo("cuda", "driver", "1 device", List.of("cuda0")));
        }

        @Override
        public QueueConfig defaults() {
            return QueueConfig.defaults();
        }
    }

    /** A scheduler with a fixed set of registered policies; refuses others as the node's does. */
    static final class Scheduler implements SchedulerControl {
        final List<String> names;
        volatile String selected = "hpf";
        volatile DecisionHistogram histogram = new DecisionHistogram(List.of(1.0, 2.0, 5.0, 10.0), List.of(3L, 4L, 0L, 2L, 1L), 50.5);

        Scheduler(String... names) {
            this.names = List.of(names);
        }

        @Override
        public String selectedPolicy() {
            return selected;
        }

        @Override
        public String activePolicy() {
            return selected;
        }

        @Override
        public void selectPolicy(String name) {
            if (!names.contains(name)) {
                throw new IllegalArgumentException("no policy '" + name + "'; known: " + String.join(", ", names));
            }
            selected = name;
        }

        @Override
        public List<PolicyInfo> policies() {
            return names.stream().map(n -> new PolicyInfo(n, "policy " + n, "test", n.equals(selected), "")).toList();
        }

        @Override
        public SchedulerStats stats() {
            return new SchedulerStats(42, 3, 1, 5.5, 120.0, 900.0);
        }

        @Override
        public void resetStats() {
        }

        @Override
        public DecisionHistogram decisionHistogram() {
            return histogram;
        }
    }
}
