package dev.xq.hal.sim;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A simulated XPU: {@code engines} execution engines and {@code memoryBytes} of memory, shared
 * by hardware queues that each run their commands one at a time, in launch order.
 *
 * <p>The model runs in <em>virtual time</em>: a command starts at the later of the moment it
 * became visible to the device (launch + launch cost) and the moment its engines became free,
 * and ends exactly its duration later, whenever the device thread happens to wake up. Thread
 * wake-up jitter therefore delays only the <em>callbacks</em> (which is what a host sees of a
 * real device too), never the device's own timeline.
 *
 * <p>Arbitration between queues is round-robin, starting after the queue served last, skipping
 * queues whose head does not fit right now: a model of a GPU's hardware scheduler interleaving
 * streams. One platform thread per device runs the model and delivers callbacks, without
 * holding the device lock, so the runtime may launch again from inside a callback.
 */
final class SimDevice {

    private final SimSettings settings;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread thread;
    private volatile boolean running = true;

    // --- guarded by lock ---
    private final List<SimQueue> queues = new ArrayList<>();
    private final List<Running> active = new ArrayList<>();
    private final List<Runnable> outbox = new ArrayList<>();
    private int freeEngines;
    private long freeMemory;
    private int rr = -1;
    /**
     * Nothing may start before this time: the moment of the last change made from outside (a
     * reactivate, restore or close at real time "now" must not let a command start in the past).
     */
    private long floor;
    private long launches;
    private long starts;
    private long completions;
    private boolean lost;
    private String lostWhy;

    /** What occupies engines now: a command, or the save of an interrupted one (queue == null). */
    private static final class Running {
        final SimQueue queue;
        final Pending cmd;
        final long start;
        final long end;
        final int engines;
        final long memory;
        final boolean fail;

        Running(SimQueue queue, Pending cmd, long start, long end, int engines, long memory, boolean fail) {
            this.queue = queue;
            this.cmd = cmd;
            this.start = start;
            this.end = end;
            this.engines = engines;
            this.memory = memory;
            this.fail = fail;
        }
    }

    /** A launched command on its way through the device. */
    private static final class Pending {
        final HwCommand hw;
        final long readyAt;
        /** Device time still to run (the whole duration until it first starts). */
        long remaining;
        /** Extra device time before the rest runs: the restore after an interrupt. */
        long restore;
        /** Device time run before an interrupt, so that the reported start covers all of the command's device time. */
        long used;

        Pending(HwCommand hw, long readyAt, long remaining) {
            this.hw = hw;
            this.readyAt = readyAt;
            this.remaining = remaining;
        }
    }

    SimDevice(SimSettings settings) {
        this.settings = settings;
        this.freeEngines = settings.engines();
        this.freeMemory = settings.memoryBytes();
        this.thread = new Thread(this::loop, "xq-sim-" + settings.id());
        this.thread.setDaemon(true);
        this.thread.start();
    }

    SimSettings settings() {
        return settings;
    }

    DeviceDescriptor descriptor() {
        return new DeviceDescriptor(settings.id(), settings.name(), settings.maxLevel(), settings.engines(), settings.memoryBytes(),
                Set.of("spin"), Map.of(
                        "lv2Mode", settings.lv2Flush() ? "flush" : "stall",
                        "saveCostMicros", Long.toString(settings.saveCostMicros()),
                        "restoreCostMicros", Long.toString(settings.restoreCostMicros()),
                        "launchCostMicros", Long.toString(settings.launchCostMicros())));
    }

    String status() {
        lock.lock();
        try {
            if (lost) {
                return "lost: " + lostWhy;
            }
            return "1 device, " + settings.engines() + (settings.engines() == 1 ? " engine" : " engines") + ", Lv"
                    + settings.maxLevel().number() + ", " + queues.size() + " queues";
        } finally {
            lock.unlock();
        }
    }

    HwQueue open(String name, HwQueueListener listener) {
        lock.lock();
        try {
            if (lost) {
                throw new HalException("sim device " + settings.id() + " is lost (" + lostWhy + "); no new queues");
            }
            SimQueue q = new SimQueue(name, listener);
            queues.add(q);
            return q;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the device thread; queues still open are told the device is gone. */
    void shutdown(String why) {
        lose(why);
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Loses the device: every open queue hears it once; launches are refused from now on. */
    void lose(String why) {
        lock.lock();
        try {
            if (lost) {
                return;
            }
            lost = true;
            lostWhy = why;
            HalException cause = new HalException("sim device " + settings.id() + " lost: " + why);
            for (SimQueue q : queues) {
                q.fifo.clear();
                q.running = null;
                q.saved = null;
                HwQueueListener l = q.listener;
                outbox.add(() -> l.lost(cause));
            }
            active.clear();
            freeEngines = settings.engines();
            freeMemory = settings.memoryBytes();
        } finally {
            lock.unlock();
        }
        LockSupport.unpark(thread);
    }

    // ------------------------------------------------------------------ the model

    private void loop() {
        List<Runnable> deliver = new ArrayList<>();
        while (running) {
            long sleep;
            lock.lock();
            try {
                long now = System.nanoTime();
                advance(now);
                deliver.addAll(outbox);
                outbox.clear();
                long next = nextEvent();
                sleep = next == Long.MAX_VALUE ? 1_000_000_000L : next - System.nanoTime();
            } finally {
                lock.unlock();
            }
            for (Runnable r : deliver) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    // a listener's failure must not stop the device; the runtime logs its own errors
                }
            }
            if (deliver.isEmpty() && sleep > 0) {
                LockSupport.parkNanos(this, sleep);
            }
            deliver.clear();
        }
    }

    /** Brings the model up to the real clock before a change from outside; returns that time. Caller holds the lock. */
    private long catchUp() {
        long now = System.nanoTime();
        advance(now);
        return now;
    }

    /** Processes every event due by {@code now}, in virtual-time order. Caller holds the lock. */
    private void advance(long now) {
        while (true) {
            long t = nextEvent();
            if (t > now) {
                return;
            }
            // end everything that ends at t, then start what can start at t
            for (int i = 0; i < active.size(); ) {
                Running r = active.get(i);
                if (r.end <= t) {
                    active.remove(i);
                    release(r);
                    if (r.queue != null) {
                        finish(r);
                    }
                } else {
                    i++;
                }
            }
            dispatch(t);
            if (lost) {
                return;
            }
        }
    }

    /** Earliest time something happens: a running command ends, or a waiting head becomes visible. */
    private long nextEvent() {
        long t = Long.MAX_VALUE;
        for (Running r : active) {
            t = Math.min(t, r.end);
        }
        for (SimQueue q : queues) {
            Pending h = q.eligibleHead();
            if (h != null && fits(h)) {
                t = Math.min(t, Math.max(h.readyAt, floor));
            }
        }
        return t;
    }

    private boolean fits(Pending p) {
        Command.Spin s = (Command.Spin) p.hw.command();
        return s.engines() <= freeEngines && s.memoryBytes() <= freeMemory;
    }

    private void release(Running r) {
        freeEngines += r.engines;
        freeMemory += r.memory;
    }

    private void finish(Running r) {
        SimQueue q = r.queue;
        q.running = null;
        HwQueueListener l = q.listener;
        HwCommand c = r.cmd.hw;
        long end = r.end;
        long start = r.start - r.cmd.used;
        if (r.fail) {
            outbox.add(() -> l.failed(c, new HalException("sim device " + settings.id() + ": injected command failure (fault.failCommandEvery="
                    + settings.failCommandEvery() + ") of " + c.command().kind() + " #" + c.sequence())));
        } else {
            outbox.add(() -> l.completed(c, start, end));
        }
        completions++;
        if (settings.loseAfter() > 0 && completions >= settings.loseAfter() && !lost) {
            lostAfterCompletions();
        }
    }

    private void lostAfterCompletions() {
        lost = true;
        lostWhy = "injected device loss after " + completions + " completed commands (fault.loseAfter)";
        HalException cause = new HalException("sim device " + settings.id() + " lost: " + lostWhy);
        for (SimQueue q : queues) {
            q.fifo.clear();
            q.running = null;
            q.saved = null;
            HwQueueListener l = q.listener;
            outbox.add(() -> l.lost(cause));
        }
        active.clear();
        freeEngines = settings.engines();
        freeMemory = settings.memoryBytes();
    }

    /** Starts queue heads at virtual time {@code t}, round-robin after the queue served last. */
    private void dispatch(long t) {
        int n = queues.size();
        if (n == 0 || freeEngines == 0) {
            return;
        }
        boolean started = true;
        while (started && freeEngines > 0) {
            started = false;
            for (int k = 1; k <= n; k++) {
                int i = (rr + k) % n;
                SimQueue q = queues.get(i);
                Pending h = q.eligibleHead();
                if (h == null || Math.max(h.readyAt, floor) > t || !fits(h)) {
                    continue;
                }
                q.fifo.pollFirst();
                start(q, h, t);
                rr = i;
                started = true;
                break;
            }
        }
    }

    private void start(SimQueue q, Pending p, long t) {
        Command.Spin s = (Command.Spin) p.hw.command();
        starts++;
        boolean hang = settings.hangEvery() > 0 && starts % settings.hangEvery() == 0 && p.used == 0;
        boolean fail = settings.failCommandEvery() > 0 && starts % settings.failCommandEvery() == 0 && p.used == 0;
        long run = p.restore + p.remaining;
        long end = hang ? Long.MAX_VALUE : t + run;
        p.restore = 0;
        Running r = new Running(q, p, t, end, s.engines(), s.memoryBytes(), fail);
        q.running = r;
        active.add(r);
        freeEngines -= s.engines();
        freeMemory -= s.memoryBytes();
    }

    // ------------------------------------------------------------------ a hardware queue

    private final class SimQueue implements HwQueue {
        final String name;
        final HwQueueListener listener;
        final ArrayDeque<Pending> fifo = new ArrayDeque<>();
        Running running;
        /** The command an interrupt took off the engines, waiting for restore. */
        Pending saved;
        boolean deactivated;
        boolean interrupted;
        boolean closed;

        SimQueue(String name, HwQueueListener listener) {
            this.name = name;
            this.listener = listener;
        }

        /** The command that would start next, if this queue may start one now. */
        Pending eligibleHead() {
            if (closed || running != null || deactivated || interrupted) {
                return null;
            }
            return fifo.peekFirst();
        }

        @Override
        public String platform() {
            return "sim";
        }

        @Override
        public String deviceId() {
            return settings.id();
        }

        @Override
        public PreemptionLevel maxLevel() {
            return settings.maxLevel();
        }

        @Override
        public void check(Command command) {
            if (!(command instanceof Command.Spin s)) {
                throw new IllegalArgumentException("sim device " + settings.id() + " runs only 'spin' commands, not '"
                        + command.kind() + "'");
            }
            if (s.engines() > settings.engines()) {
                throw new IllegalArgumentException("spin needs " + s.engines() + " engines; sim device " + settings.id()
                        + " has " + settings.engines());
            }
            if (s.memoryBytes() > settings.memoryBytes()) {
                throw new IllegalArgumentException("spin needs " + s.memoryBytes() + " bytes of memory; sim device "
                        + settings.id() + " has " + settings.memoryBytes());
            }
        }

        @Override
        public void launch(HwCommand command) {
            Command.Spin s = (Command.Spin) command.command();
            lock.lock();
            try {
                if (lost) {
                    throw new HalException("sim device " + settings.id() + " is lost (" + lostWhy + "); launch refused");
                }
                if (closed) {
                    throw new HalException("sim queue " + name + " on " + settings.id() + " is closed; launch refused");
                }
                launches++;
                if (settings.failLaunchEvery() > 0 && launches % settings.failLaunchEvery() == 0) {
                    throw new HalException("sim device " + settings.id() + ": injected launch failure (fault.failLaunchEvery="
                            + settings.failLaunchEvery() + ") of #" + command.sequence());
                }
                long now = catchUp();
                floor = now;
                fifo.addLast(new Pending(command, now + settings.launchCostMicros() * 1000L, s.micros() * 1000L));
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
        }

        @Override
        public List<HwCommand> deactivate() {
            requireLevel(PreemptionLevel.DEACTIVATE);
            lock.lock();
            try {
                floor = catchUp();
                deactivated = true;
                if (!settings.lv2Flush() || fifo.isEmpty()) {
                    return List.of();
                }
                List<HwCommand> back = new ArrayList<>(fifo.size());
                for (Pending p : fifo) {
                    back.add(p.hw);
                }
                fifo.clear();
                return back;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void reactivate() {
            requireLevel(PreemptionLevel.DEACTIVATE);
            lock.lock();
            try {
                floor = catchUp();
                deactivated = false;
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
        }

        @Override
        public void interrupt() {
            requireLevel(PreemptionLevel.INTERRUPT);
            long saveUntil;
            lock.lock();
            try {
                long now = catchUp();
                floor = now;
                interrupted = true;
                Running r = running;
                if (r == null) {
                    return;
                }
                active.remove(r);
                running = null;
                Pending p = r.cmd;
                // the part already run is kept; the rest and the restore cost wait for restore()
                long ran = Math.max(0, now - r.start);
                p.used += ran;
                p.remaining = r.end == Long.MAX_VALUE ? Long.MAX_VALUE / 4 : Math.max(0, r.end - now);
                p.restore = settings.restoreCostMicros() * 1000L;
                saved = p;
                saveUntil = now + settings.saveCostMicros() * 1000L;
                // the engines stay busy while the waves' state is saved
                active.add(new Running(null, p, now, saveUntil, r.engines, r.memory, false));
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
            while (System.nanoTime() < saveUntil) {
                LockSupport.parkNanos(saveUntil - System.nanoTime());
            }
        }

        @Override
        public void restore() {
            requireLevel(PreemptionLevel.INTERRUPT);
            lock.lock();
            try {
                floor = catchUp();
                interrupted = false;
                if (saved != null) {
                    fifo.addFirst(saved);
                    saved = null;
                }
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
        }

        private void requireLevel(PreemptionLevel needed) {
            if (settings.maxLevel().number() < needed.number()) {
                throw new UnsupportedOperationException("sim device " + settings.id() + " is configured for level "
                        + settings.maxLevel().number() + "; level " + needed.number() + " is not offered");
            }
        }

        @Override
        public void close() {
            lock.lock();
            try {
                if (closed) {
                    return;
                }
                floor = catchUp();
                closed = true;
                fifo.clear();
                saved = null;
                if (running != null) {
                    active.remove(running);
                    release(running);
                    running = null;
                }
                queues.remove(this);
                if (rr >= queues.size()) {
                    rr = -1;
                }
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
        }

        @Override
        public String toString() {
            return "sim queue " + name + " on " + settings.id();
        }
    }
}
