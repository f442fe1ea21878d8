package dev.xq.hal.sim;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.Preemption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * A simulated XPU: {@code engines} execution engines and {@code memoryBytes} of memory, shared
 * by hardware queues that each run their commands one at a time, in launch order.
 *
 * <p>The model runs in <em>virtual time</em>: a command starts at the later of the moment it
 * became visible to the device (launch + launch cost) and the moment its engines became free,
 * and ends exactly its duration later, whenever the device thread happens to wake up. Thread
 * wake-up jitter therefore delays only the <em>callbacks</em> (which is what a host sees of a
 * real device too), never the device's own timeline. Every change from outside first brings
 * the model up to the real clock, and nothing may start before the last such change.
 *
 * <p>Arbitration between queues is round-robin, starting after the queue served last, skipping
 * queues whose head does not fit right now: a model of a GPU's hardware scheduler interleaving
 * streams. One platform thread per device runs the model and delivers callbacks, without
 * holding the device lock, so the runtime may launch again from inside a callback.
 */
final class SimDevice {

    private final SimSettings settings;
    private final BiConsumer<String, Throwable> errors;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread thread;
    private volatile boolean running = true;

    // --- guarded by lock ---
    /** Open queues by slot; a slot is reused after its queue closes. Round-robin goes by slot. */
    private SimQueue[] slots = new SimQueue[16];
    private final BitSet usedSlots = new BitSet();
    /** Slots whose queue has a head that may start once it fits (not running, held or closed). */
    private final BitSet ready = new BitSet();
    private final List<Occupant> active = new ArrayList<>();
    private final List<Runnable> outbox = new ArrayList<>();
    private int freeEngines;
    private long freeMemory;
    private int lastServed = -1;
    /**
     * Nothing may start before this time: the moment of the last change made from outside (a
     * reactivate, restore or close at real time "now" must not let a command start in the past).
     */
    private long floor = Long.MIN_VALUE;
    /** When the device thread will wake at the latest; launches that make an earlier event wake it. */
    private long plannedWake = Long.MIN_VALUE;
    private long launches;
    private long firstStarts;
    private long completions;
    private String lostWhy;

    /** What occupies engines now: a command, or the save of an interrupted one ({@code queue == null}). */
    private record Occupant(SimQueue queue, Pending cmd, long start, long end, int engines, long memory) { }

    /** A launched command on its way through the device. */
    private static final class Pending {
        final HwCommand hw;
        final int engines;
        final long memory;
        /** What a data command does when it ends (null for a spin). */
        final Runnable effect;
        final long readyAt;
        /** Device time still to run: the whole duration until it first starts. */
        long remaining;
        /** Extra device time before the rest runs: the restore after an interrupt. */
        long restore;
        /**
         * Device time run before the current run (earlier runs and their restores, not the saves),
         * so that end - start reports the command's own device time: its duration plus restores.
         */
        long used;
        boolean begun;
        boolean hang;
        boolean fail;

        Pending(HwCommand hw, long micros, int engines, long memory, Runnable effect, long readyAt) {
            this.hw = hw;
            this.engines = engines;
            this.memory = memory;
            this.effect = effect;
            this.readyAt = readyAt;
            this.remaining = micros * 1000L;
        }
    }

    private static Pending pendingSpin(HwCommand hw, Command.Spin s, long readyAt) {
        return new Pending(hw, s.micros(), s.engines(), s.memoryBytes(), null, readyAt);
    }

    private final SimMemory memory;

    /** @return its memory and programs */
    SimMemory memory() {
        return memory;
    }

    /** A device whose unattributable failures go to the JDK's platform logger (for use outside OSGi). */
    SimDevice(SimSettings settings) {
        this(settings, (what, e) -> System.getLogger(SimDevice.class.getName()).log(System.Logger.Level.ERROR, what, e));
    }

    /**
     * @param errors where failures that have no caller to go to are reported: a listener that
     *        threw, or a fault in the model itself
     */
    SimDevice(SimSettings settings, BiConsumer<String, Throwable> errors) {
        this.settings = settings;
        this.errors = errors;
        this.freeEngines = settings.engines();
        this.freeMemory = settings.memoryBytes();
        this.memory = new SimMemory(settings);
        this.thread = new Thread(this::loop, threadName(settings.id()));
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** @return the name of the one thread a device with this id runs on */
    static String threadName(String id) {
        return "xq-sim-" + id;
    }

    SimSettings settings() {
        return settings;
    }

    DeviceDescriptor descriptor() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("lv2Mode", settings.lv2Flush() ? "flush" : "stall");
        p.put("saveCostMicros", Long.toString(settings.saveCostMicros()));
        p.put("restoreCostMicros", Long.toString(settings.restoreCostMicros()));
        p.put("launchCostMicros", Long.toString(settings.launchCostMicros()));
        p.put("fault.failLaunchEvery", Long.toString(settings.failLaunchEvery()));
        p.put("fault.failCommandEvery", Long.toString(settings.failCommandEvery()));
        p.put("fault.hangEvery", Long.toString(settings.hangEvery()));
        p.put("fault.loseAfter", Long.toString(settings.loseAfter()));
        return new DeviceDescriptor(settings.id(), settings.name(), settings.maxLevel(), settings.engines(), settings.memoryBytes(),
                Set.of("spin", "write", "read", "fill", "launch"), p);
    }

    String status() {
        lock.lock();
        try {
            String base = "1 device, " + settings.engines() + (settings.engines() == 1 ? " engine" : " engines") + ", Lv"
                    + settings.maxLevel().number();
            if (lostWhy != null) {
                return base + ", lost: " + lostWhy;
            }
            int open = usedSlots.cardinality();
            return base + ", " + open + (open == 1 ? " queue" : " queues");
        } finally {
            lock.unlock();
        }
    }

    /** @return how many queues are open now */
    int openQueues() {
        lock.lock();
        try {
            return usedSlots.cardinality();
        } finally {
            lock.unlock();
        }
    }

    HwQueue open(String name, HwQueueListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("a sim queue needs a listener; got null");
        }
        lock.lock();
        try {
            if (lostWhy != null) {
                throw new HalException("sim device " + settings.id() + " is lost (" + lostWhy + "); no new queues");
            }
            int slot = usedSlots.nextClearBit(0);
            if (slot >= slots.length) {
                slots = Arrays.copyOf(slots, slots.length * 2);
            }
            SimQueue q = new SimQueue(slot, name, listener);
            slots[slot] = q;
            usedSlots.set(slot);
            return q;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the device thread; queues still open are told the device is gone first. */
    void shutdown(String why) {
        lose(why);
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // the device is gone and nothing runs on it any more: its memory goes back to the host
        memory.freeAll();
    }

    /**
     * Loses the device: every open queue hears it once; launches are refused from now on.
     * @return false if it was lost already
     */
    boolean lose(String why) {
        boolean first;
        lock.lock();
        try {
            catchUp();
            first = lostWhy == null;
            loseLocked(why);
        } finally {
            lock.unlock();
        }
        LockSupport.unpark(thread);
        return first;
    }

    private void loseLocked(String why) {
        if (lostWhy != null) {
            return;
        }
        lostWhy = why;
        HalException cause = new HalException("sim device " + settings.id() + " lost: " + why);
        for (int i = usedSlots.nextSetBit(0); i >= 0; i = usedSlots.nextSetBit(i + 1)) {
            SimQueue q = slots[i];
            q.fifo.clear();
            q.running = null;
            q.saved = null;
            HwQueueListener l = q.listener;
            outbox.add(() -> l.lost(cause));
        }
        ready.clear();
        active.clear();
        freeEngines = settings.engines();
        freeMemory = settings.memoryBytes();
    }

    // ------------------------------------------------------------------ the model

    private void loop() {
        List<Runnable> deliver = new ArrayList<>();
        while (running) {
            long sleep;
            lock.lock();
            try {
                try {
                    advance(System.nanoTime());
                } catch (RuntimeException e) {
                    // a fault in the model must not leave queues waiting for callbacks that never come
                    errors.accept("sim device " + settings.id() + ": internal error; the device is lost", e);
                    loseLocked("internal error: " + e);
                }
                deliver.addAll(outbox);
                outbox.clear();
                plannedWake = nextEvent();
                sleep = plannedWake == Long.MAX_VALUE ? Long.MAX_VALUE : plannedWake - System.nanoTime();
            } finally {
                lock.unlock();
            }
            if (!deliver.isEmpty()) {
                deliverAll(deliver);
            } else if (sleep == Long.MAX_VALUE) {
                LockSupport.park(this);
            } else if (sleep > 0) {
                LockSupport.parkNanos(this, sleep);
            }
        }
        // the lost() callbacks of a shutdown must still reach their queues
        lock.lock();
        List<Runnable> last;
        try {
            last = new ArrayList<>(outbox);
            outbox.clear();
        } finally {
            lock.unlock();
        }
        deliverAll(last);
    }

    private void deliverAll(List<Runnable> deliver) {
        for (Runnable r : deliver) {
            try {
                r.run();
            } catch (Throwable e) {
                errors.accept("sim device " + settings.id() + ": a queue listener threw; the device goes on", e);
            }
        }
        deliver.clear();
    }

    /** Brings the model up to the real clock before a change from outside; returns that time. Caller holds the lock. */
    private long catchUp() {
        long now = System.nanoTime();
        if (lostWhy == null) {
            advance(now);
        }
        return now;
    }

    /** Processes every event due by {@code now}, in virtual-time order. Caller holds the lock. */
    private void advance(long now) {
        while (lostWhy == null) {
            long t = nextEvent();
            if (t > now) {
                return;
            }
            // end everything that ends at t, then start what can start at t
            for (int i = 0; i < active.size() && lostWhy == null; ) {
                Occupant o = active.get(i);
                if (o.end() <= t) {
                    active.remove(i);
                    freeEngines += o.engines();
                    freeMemory += o.memory();
                    if (o.queue() != null) {
                        finish(o);
                    }
                } else {
                    i++;
                }
            }
            if (lostWhy == null) {
                dispatch(t);
            }
        }
    }

    /** Earliest time something happens: an occupant ends, or a waiting head becomes visible and fits. */
    private long nextEvent() {
        long t = Long.MAX_VALUE;
        for (int i = 0, n = active.size(); i < n; i++) {
            t = Math.min(t, active.get(i).end());
        }
        if (freeEngines > 0) {
            for (int i = ready.nextSetBit(0); i >= 0; i = ready.nextSetBit(i + 1)) {
                Pending h = slots[i].fifo.peekFirst();
                if (fits(h)) {
                    t = Math.min(t, Math.max(h.readyAt, floor));
                }
            }
        }
        return t;
    }

    private boolean fits(Pending p) {
        return p.engines <= freeEngines && p.memory <= freeMemory;
    }

    private void finish(Occupant o) {
        SimQueue q = o.queue();
        q.running = null;
        q.refresh();
        HwQueueListener l = q.listener;
        Pending p = o.cmd();
        HwCommand c = p.hw;
        long end = o.end();
        long start = o.start() - p.used;
        if (p.fail) {
            HalException cause = new HalException("sim device " + settings.id() + ": injected command failure (fault.failCommandEvery="
                    + settings.failCommandEvery() + ") of " + c.command().kind() + " #" + c.sequence());
            outbox.add(() -> l.failed(c, cause));
            return;
        }
        Runnable effect = p.effect;
        if (effect == null) {
            outbox.add(() -> l.completed(c, start, end));
        } else {
            // the data moves at the command's end, before its completion is reported
            outbox.add(() -> {
                try {
                    effect.run();
                } catch (RuntimeException e) {
                    l.failed(c, new HalException("sim device " + settings.id() + ": " + c.command().kind() + " #" + c.sequence()
                            + " failed: " + e.getMessage(), e));
                    return;
                }
                l.completed(c, start, end);
            });
        }
        completions++;
        if (settings.loseAfter() > 0 && completions >= settings.loseAfter()) {
            loseLocked("injected device loss after " + completions + " completed commands (fault.loseAfter="
                    + settings.loseAfter() + ")");
        }
    }

    /**
     * Starts queue heads at virtual time {@code t}: one round-robin sweep that begins after the
     * queue served last. One sweep is enough: starting a command frees nothing, so a head
     * skipped because it did not fit still does not fit later in the same instant.
     */
    private void dispatch(long t) {
        if (freeEngines == 0 || ready.isEmpty()) {
            return;
        }
        int from = lastServed + 1;
        for (int pass = 0; pass < 2 && freeEngines > 0; pass++) {
            int lo = pass == 0 ? from : 0;
            int hi = pass == 0 ? Integer.MAX_VALUE : from;
            for (int i = ready.nextSetBit(lo); i >= 0 && i < hi && freeEngines > 0; i = ready.nextSetBit(i + 1)) {
                SimQueue q = slots[i];
                Pending h = q.fifo.peekFirst();
                if (Math.max(h.readyAt, floor) > t || !fits(h)) {
                    continue;
                }
                q.fifo.pollFirst();
                start(q, h, t);
                lastServed = i;
            }
        }
    }

    private void start(SimQueue q, Pending p, long t) {
        if (!p.begun) {
            // faults count commands, not runs: a restored command is not counted again
            p.begun = true;
            long n = ++firstStarts;
            p.hang = settings.hangEvery() > 0 && n % settings.hangEvery() == 0;
            p.fail = !p.hang && settings.failCommandEvery() > 0 && n % settings.failCommandEvery() == 0;
        }
        long end = p.hang ? Long.MAX_VALUE : t + p.restore + p.remaining;
        p.restore = 0;
        Occupant o = new Occupant(q, p, t, end, p.engines, p.memory);
        q.running = o;
        q.refresh();
        active.add(o);
        freeEngines -= o.engines();
        freeMemory -= o.memory();
    }

    // ------------------------------------------------------------------ a hardware queue

    private final class SimQueue implements HwQueue, Preemption {
        final int slot;
        final String name;
        final HwQueueListener listener;
        final ArrayDeque<Pending> fifo = new ArrayDeque<>();
        Occupant running;
        /** The command an interrupt took off the engines, waiting for restore; it holds the queue until then. */
        Pending saved;
        boolean deactivated;
        boolean closed;

        SimQueue(int slot, String name, HwQueueListener listener) {
            this.slot = slot;
            this.name = name;
            this.listener = listener;
        }

        /** Keeps the ready set true to this queue's state. Caller holds the lock. */
        void refresh() {
            if (!closed && running == null && saved == null && !deactivated && !fifo.isEmpty()) {
                ready.set(slot);
            } else {
                ready.clear(slot);
            }
        }

        @Override
        public String platform() {
            return "sim";
        }

        @Override
        public String deviceId() {
            return settings.id();
        }

        /** Levels 2 and 3 as the device's settings allow ({@code maxLevel}). */
        @Override
        public Optional<Preemption> preemption() {
            return settings.maxLevel().number() >= 2 ? Optional.of(this) : Optional.empty();
        }

        @Override
        public PreemptionLevel level() {
            return settings.maxLevel();
        }

        @Override
        public void check(Command command) {
            if (command instanceof Command.Write || command instanceof Command.Read || command instanceof Command.Fill
                    || command instanceof Command.Launch) {
                return; // the runtime checks these against their buffers and functions
            }
            if (!(command instanceof Command.Spin s)) {
                throw new IllegalArgumentException("command kind '" + (command == null ? null : command.kind())
                        + "' is not accepted on sim device " + settings.id() + ": accepted on sim: spin, write, read, fill, launch"
                        + " (kernel, copy and memset name device addresses; use launch, write/read and fill with buffers)");
            }
            if (s.engines() > settings.engines()) {
                throw new IllegalArgumentException("spin needs " + s.engines() + " engines; sim device " + settings.id()
                        + " has " + settings.engines());
            }
            if (s.memoryBytes() > settings.memoryBytes()) {
                throw new IllegalArgumentException("spin needs " + s.memoryBytes() + " bytes of memory; sim device "
                        + settings.id() + " has " + settings.memoryBytes() + " bytes");
            }
        }

        @Override
        public void launch(HwCommand command) {
            SimMemory.Work work = null;
            try {
                check(command.command());
                if (command.op() != null) {
                    work = memory.plan(command.op());
                } else if (!(command.command() instanceof Command.Spin)) {
                    throw new IllegalArgumentException(command.command().kind() + " #" + command.sequence()
                            + " comes without its resolved buffers (HwCommand.op)");
                }
            } catch (IllegalArgumentException | HalException e) {
                // a command that can never run must not sit in the stream forever
                throw new HalException("sim queue " + name + " on " + settings.id() + " refused #" + command.sequence() + ": "
                        + e.getMessage(), e);
            }
            boolean wake;
            lock.lock();
            try {
                if (lostWhy != null) {
                    throw new HalException("sim device " + settings.id() + " is lost (" + lostWhy + "); launch of #"
                            + command.sequence() + " refused");
                }
                if (closed) {
                    throw new HalException("sim queue " + name + " on " + settings.id() + " is closed; launch of #"
                            + command.sequence() + " refused");
                }
                launches++;
                if (settings.failLaunchEvery() > 0 && launches % settings.failLaunchEvery() == 0) {
                    throw new HalException("sim device " + settings.id() + ": injected launch failure (fault.failLaunchEvery="
                            + settings.failLaunchEvery() + ") of #" + command.sequence());
                }
                long now = catchUp();
                floor = now;
                long readyAt = now + settings.launchCostMicros() * 1000L;
                Pending p = work != null ? new Pending(command, work.micros(), 1, 0, work.effect(), readyAt)
                        : pendingSpin(command, (Command.Spin) command.command(), readyAt);
                fifo.addLast(p);
                refresh();
                // wake the device thread only when this launch makes an event earlier than its planned wake
                wake = !outbox.isEmpty() || lostWhy != null
                        || (ready.get(slot) && fifo.peekFirst() == p && freeEngines > 0 && fits(p) && p.readyAt < plannedWake);
            } finally {
                lock.unlock();
            }
            if (wake) {
                LockSupport.unpark(thread);
            }
        }

        @Override
        public List<HwCommand> deactivate() {
            requireLevel(PreemptionLevel.DEACTIVATE);
            lock.lock();
            try {
                floor = catchUp();
                deactivated = true;
                refresh();
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
                // No wake-up: holding commands back only removes events, so the device thread's
                // planned wake is still early enough. Waking it made it take the lock just as the
                // engine's interrupt() (which follows at level 3) wanted it.
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
                refresh();
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
                Occupant r = running;
                if (r == null) {
                    return;
                }
                active.remove(r);
                running = null;
                Pending p = r.cmd();
                long save = settings.saveCostMicros() * 1000L;
                // what ran so far is kept; the rest waits for restore(). The save is charged to the
                // engines only: a command's reported time stays its duration plus restore costs.
                p.used += Math.max(0, now - r.start());
                if (!p.hang) {
                    p.remaining = Math.max(0, r.end() - now);
                }
                p.restore = settings.restoreCostMicros() * 1000L;
                saved = p;
                refresh();
                saveUntil = now + save;
                if (save > 0) {
                    // the engines (and memory) stay busy while the command's state is saved
                    active.add(new Occupant(null, p, now, saveUntil, r.engines(), r.memory()));
                } else {
                    freeEngines += r.engines();
                    freeMemory += r.memory();
                }
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
            // The caller waits for the save, as a driver waits for the hardware. Short waits spin:
            // a timed park of 20 us returns after the OS's timer slack and wake-up, which on a
            // loaded or virtual host is up to milliseconds, a cost no device has.
            for (long left; (left = saveUntil - System.nanoTime()) > 0; ) {
                if (left > 200_000L) {
                    LockSupport.parkNanos(left - 100_000L);
                } else {
                    Thread.onSpinWait();
                }
            }
        }

        @Override
        public void restore() {
            requireLevel(PreemptionLevel.INTERRUPT);
            lock.lock();
            try {
                floor = catchUp();
                if (saved != null) {
                    fifo.addFirst(saved);
                    saved = null;
                }
                refresh();
            } finally {
                lock.unlock();
            }
            LockSupport.unpark(thread);
        }

        private void requireLevel(PreemptionLevel needed) {
            if (settings.maxLevel().number() < needed.number()) {
                throw new UnsupportedOperationException("sim device " + settings.id() + " is configured for maxLevel "
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
                if (running != null && active.remove(running)) {
                    freeEngines += running.engines();
                    freeMemory += running.memory();
                }
                running = null;
                ready.clear(slot);
                usedSlots.clear(slot);
                slots[slot] = null;
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
