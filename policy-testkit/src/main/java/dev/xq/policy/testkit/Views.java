package dev.xq.policy.testkit;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Builds policy views by hand for reference cases. */
public final class Views {

    public static final long GB = 1L << 30;

    private Views() {
    }

    public static Q queue(long handle) {
        return new Q(handle);
    }

    /** A view whose devices are the queues' devices, each with 8 engines and 16 GiB. */
    public static SchedulerView view(long nowNanos, QueueView... queues) {
        Set<String> ids = new LinkedHashSet<>();
        for (QueueView q : queues) {
            ids.add(q.device());
        }
        List<DeviceView> devices = new ArrayList<>();
        for (String id : ids) {
            devices.add(new DeviceView(id, "sim", 8, 16 * GB));
        }
        return new SchedulerView(nowNanos, List.of(queues), devices);
    }

    public static SchedulerView view(long nowNanos, List<DeviceView> devices, List<QueueView> queues) {
        return new SchedulerView(nowNanos, queues, devices);
    }

    /** A queue under construction: idle, resumed, on device {@code d0}, group {@code g}. */
    public static final class Q {
        private final long handle;
        private String device = "d0";
        private String group = "g";
        private boolean ready;
        private boolean suspended;
        private boolean byApp;
        private long readySince;
        private long runNanos;
        private long lastResumed;
        private int pending = -1;
        private int inFlight;
        private long commandNanos;
        private final List<Hint> hints = new ArrayList<>();

        private Q(long handle) {
            this.handle = handle;
        }

        public Q device(String id) {
            device = id;
            return this;
        }

        public Q group(String name) {
            group = name;
            return this;
        }

        public Q readySince(long nanos) {
            ready = true;
            readySince = nanos;
            return this;
        }

        public Q suspended() {
            suspended = true;
            return this;
        }

        public Q suspendedByApp() {
            byApp = true;
            return this;
        }

        public Q resumedAt(long nanos) {
            lastResumed = nanos;
            return this;
        }

        public Q ran(long nanos) {
            runNanos = nanos;
            return this;
        }

        /** Work left: {@code pending} commands held, {@code inFlight} launched, each measured at {@code commandNanos}. */
        public Q work(int pending, int inFlight, long commandNanos) {
            this.pending = pending;
            this.inFlight = inFlight;
            this.commandNanos = commandNanos;
            return this;
        }

        public Q hint(Hint h) {
            hints.add(h);
            return this;
        }

        public Q priority(int p) {
            return hint(new Hint.Priority(p));
        }

        /** A window-active hint: the queue's group owns display {@code display}'s active window from {@code mark} on. */
        public Q window(int display, long mark) {
            return hint(new Hint.WindowActive(display, mark));
        }

        public QueueView build() {
            return new QueueView(handle, "q" + handle, device, group, ready, suspended, byApp,
                    ready ? readySince : 0, runNanos, lastResumed, pending >= 0 ? pending : ready ? 1 : 0, inFlight, 0, commandNanos,
                    hints, PreemptionLevel.BLOCK);
        }
    }
}
