package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.Preemption;
import dev.xq.hal.spi.XpuDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A test driver whose hardware queues do nothing by themselves: the test says when a command
 * completes or fails. It records every HAL call, so tests can check exactly what the engine did.
 */
final class ManualDevice implements XpuDriver {
    final String id;
    final PreemptionLevel level;
    final boolean flush;
    final List<ManualQueue> opened = new ArrayList<>();

    ManualDevice(String id, PreemptionLevel level, boolean flush) {
        this.id = id;
        this.level = level;
        this.flush = flush;
    }

    @Override
    public String platform() {
        return "manual";
    }

    @Override
    public String status() {
        return "1 device";
    }

    @Override
    public List<DeviceDescriptor> devices() {
        return List.of(new DeviceDescriptor(id, "manual test device", level, 1, 1L << 30, Set.of("spin"), Map.of()));
    }

    @Override
    public synchronized HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
        ManualQueue q = new ManualQueue(listener);
        opened.add(q);
        return q;
    }

    final class ManualQueue implements HwQueue, Preemption {
        final HwQueueListener listener;
        /** Launched and not yet reported, in launch order. */
        final List<HwCommand> onDevice = new ArrayList<>();
        /** Every launch, relaunches included. */
        final List<Long> launches = new ArrayList<>();
        /** When each launch came (System.nanoTime), as {@link #launches}. */
        final List<Long> launchNanos = new ArrayList<>();
        /** When the last deactivate came (System.nanoTime); 0 before any. */
        long deactivateNanos;
        final List<String> calls = new ArrayList<>();
        boolean deactivated;
        /** For each launch, whether the runtime said just before it that it may go unheld. */
        final List<Boolean> unheld = new ArrayList<>();
        private boolean unheldNext;
        boolean interrupted;
        boolean closed;
        int failNextLaunches;
        /** poll(): how often it was called, and by which threads. */
        final java.util.concurrent.atomic.AtomicInteger polls = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.Set<String> pollers = java.util.concurrent.ConcurrentHashMap.newKeySet();
        /** Set: the oldest command on the device has ended, and a poll reports it (as an adapter's look would). */
        volatile boolean endedUnseen;

        ManualQueue(HwQueueListener listener) {
            this.listener = listener;
        }

        @Override
        public String platform() {
            return "manual";
        }

        @Override
        public String deviceId() {
            return id;
        }

        @Override
        public Optional<Preemption> preemption() {
            return level.number() >= 2 ? Optional.of(this) : Optional.empty();
        }

        @Override
        public PreemptionLevel level() {
            return level;
        }

        @Override
        public void check(Command command) {
            if (!(command instanceof Command.Spin)) {
                throw new IllegalArgumentException("manual device accepts only spin, not " + command.kind());
            }
        }

        @Override
        public synchronized void launch(HwCommand command) {
            if (failNextLaunches > 0) {
                failNextLaunches--;
                throw new HalException("launch refused (test)");
            }
            launches.add(command.sequence());
            launchNanos.add(System.nanoTime());
            unheld.add(unheldNext);
            unheldNext = false;
            onDevice.add(command);
        }

        @Override
        public synchronized List<HwCommand> deactivate() {
            require(2);
            calls.add("deactivate");
            deactivateNanos = System.nanoTime();
            deactivated = true;
            if (!flush || onDevice.size() <= 1) {
                return List.of();
            }
            // the first one is "running"; the rest go back
            List<HwCommand> back = new ArrayList<>(onDevice.subList(1, onDevice.size()));
            onDevice.subList(1, onDevice.size()).clear();
            return back;
        }

        @Override
        public synchronized void reactivate() {
            require(2);
            calls.add("reactivate");
            deactivated = false;
        }

        @Override
        public synchronized void nextLaunchUnheld(boolean unheld) {
            unheldNext = unheld;
        }

        @Override
        public synchronized void interrupt() {
            require(3);
            calls.add("interrupt");
            interrupted = true;
        }

        @Override
        public synchronized void restore() {
            require(3);
            calls.add("restore");
            interrupted = false;
        }

        private void require(int n) {
            if (level.number() < n) {
                throw new UnsupportedOperationException("level " + n);
            }
        }

        @Override
        public synchronized void close() {
            closed = true;
            calls.add("close");
        }

        /** Completes the oldest command on the device, taking {@code micros} of device time. */
        @Override
        public boolean poll() {
            polls.incrementAndGet();
            pollers.add(Thread.currentThread().getName());
            if (endedUnseen) {
                endedUnseen = false;
                completeNextIfAny(100);
            }
            return true;
        }

        void completeNext(long micros) {
            HwCommand c;
            synchronized (this) {
                c = onDevice.removeFirst();
            }
            long end = System.nanoTime();
            listener.completed(c, end - micros * 1000, end);
        }

        /** Completes the oldest command on the device if there is one (called outside the lock, as drivers must). */
        boolean completeNextIfAny(long micros) {
            HwCommand c;
            synchronized (this) {
                if (onDevice.isEmpty()) {
                    return false;
                }
                c = onDevice.removeFirst();
            }
            long end = System.nanoTime();
            listener.completed(c, end - micros * 1000, end);
            return true;
        }

        void failNext(String why) {
            HwCommand c;
            synchronized (this) {
                c = onDevice.removeFirst();
            }
            listener.failed(c, new HalException(why));
        }

        synchronized int onDeviceCount() {
            return onDevice.size();
        }
    }
}
