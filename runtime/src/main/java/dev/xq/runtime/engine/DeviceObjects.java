package dev.xq.runtime.engine;

import dev.xq.api.CodeModule;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.KernelFunction;
import dev.xq.hal.spi.HwBuffer;
import dev.xq.hal.spi.HwFunction;
import dev.xq.hal.spi.HwModule;
import dev.xq.hal.spi.XpuMemory;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's table of device memory and loaded code that host applications own: every
 * {@link DeviceBuffer} and {@link CodeModule} belongs to one {@link Owner} (a bundle's view of
 * {@code XQueueService}, or the core itself), which frees what it still holds when it closes.
 *
 * <p>A buffer or module is freed on the hardware only once nothing uses it: each submitted
 * command that names it holds a use ({@link Held#acquire()}) until it ends, so closing a buffer
 * while commands on it are queued refuses new commands at once and frees the memory after the
 * last of them (a queued command never touches freed memory). A driver that goes away takes its
 * objects with it: they are closed without being freed (there is nobody left to free them).
 */
public final class DeviceObjects {

    /** Finds the memory of a device: the driver's {@link XpuMemory}, or an error naming the device and what is allowed. */
    public interface Devices {
        /**
         * @return the device's memory and its size in bytes
         * @throws IllegalArgumentException if the device is unknown or offers no memory
         */
        Target memoryOf(String device);
    }

    /** A device's memory as found by {@link Devices}. */
    public record Target(XpuMemory memory, long deviceBytes) {
    }

    private final Devices devices;
    private final RuntimeLog log;
    private final AtomicLong ids = new AtomicLong();
    private final Set<Owner> owners = ConcurrentHashMap.newKeySet();

    public DeviceObjects(Devices devices, RuntimeLog log) {
        this.devices = devices;
        this.log = log;
    }

    /** @return a new owner; {@code name} appears in messages (e.g. the bundle's name) */
    public Owner owner(String name) {
        Owner o = new Owner(name);
        owners.add(o);
        return o;
    }

    /** Closes every owner: what they hold is freed once unused. */
    public void closeAll() {
        for (Owner o : List.copyOf(owners)) {
            o.close();
        }
    }

    /** The driver whose memory this is went away: its objects are closed and never freed. */
    public void forget(XpuMemory memory) {
        for (Owner o : List.copyOf(owners)) {
            for (Held h : o.held()) {
                if (h.memory == memory) {
                    h.abandon();
                }
            }
        }
    }

    /** @return how many buffers are allocated on the hardware now (closed ones still in use included) */
    public int liveBuffers() {
        return live.size();
    }

    private final Set<Held> live = ConcurrentHashMap.newKeySet();

    /** Something on a device that commands may use: freed once closed and unused. */
    abstract class Held {
        final long id = ids.incrementAndGet();
        final String device;
        final XpuMemory memory;
        final Owner owner;
        private int uses;
        private boolean closed;
        private boolean gone;

        Held(String device, XpuMemory memory, Owner owner) {
            this.device = device;
            this.memory = memory;
            this.owner = owner;
            live.add(this);
        }

        /**
         * Takes a use for a command.
         * @throws IllegalArgumentException if it is closed (the message says what it was)
         */
        final void acquire() {
            synchronized (this) {
                if (!closed) {
                    uses++;
                    return;
                }
            }
            throw new IllegalArgumentException(this + " was " + (gone ? "lost with its driver" : "freed") + "; "
                    + "allocate or load a new one");
        }

        /** Gives back a use; the last one of a closed object frees it. */
        final void release() {
            boolean dispose;
            synchronized (this) {
                uses--;
                dispose = closed && uses == 0 && !gone;
            }
            if (dispose) {
                disposeNow();
            }
        }

        public final boolean isOpen() {
            synchronized (this) {
                return !closed;
            }
        }

        public void close() {
            boolean dispose;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                dispose = uses == 0 && !gone;
            }
            owner.forget(this);
            if (dispose) {
                disposeNow();
            }
        }

        final void abandon() {
            synchronized (this) {
                gone = true;
                closed = true;
            }
            owner.forget(this);
            live.remove(this);
        }

        private void disposeNow() {
            live.remove(this);
            try {
                dispose();
            } catch (RuntimeException e) {
                log.error("freeing " + this + " of " + owner.name + " failed", e);
            }
        }

        abstract void dispose();
    }

    /** A buffer as host applications see it. */
    final class BufferImpl extends Held implements DeviceBuffer {
        final HwBuffer hw;

        BufferImpl(String device, XpuMemory memory, Owner owner, HwBuffer hw) {
            super(device, memory, owner);
            this.hw = hw;
        }

        @Override
        public long id() {
            return id;
        }

        @Override
        public String device() {
            return device;
        }

        @Override
        public long size() {
            return hw.size();
        }

        @Override
        void dispose() {
            hw.free();
        }

        DeviceObjects objects() {
            return DeviceObjects.this;
        }

        @Override
        public String toString() {
            return "buffer #" + id + " (" + hw.size() + " bytes on " + device + ")";
        }
    }

    /** A module as host applications see it. */
    final class ModuleImpl extends Held implements CodeModule {
        final String name;
        final HwModule hw;
        private final Map<String, FunctionImpl> functions = new ConcurrentHashMap<>();

        ModuleImpl(String device, XpuMemory memory, Owner owner, String name, HwModule hw) {
            super(device, memory, owner);
            this.name = name;
            this.hw = hw;
        }

        @Override
        public String device() {
            return device;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public KernelFunction function(String function) {
            Objects.requireNonNull(function, "function name is null; give the kernel's name in module '" + name + "'");
            if (!isOpen()) {
                throw new IllegalStateException(this + " was closed; load it again");
            }
            return functions.computeIfAbsent(function, f -> new FunctionImpl(this, hw.function(f)));
        }

        @Override
        void dispose() {
            hw.unload();
        }

        DeviceObjects objects() {
            return DeviceObjects.this;
        }

        @Override
        public String toString() {
            return "module '" + name + "' #" + id + " (on " + device + ")";
        }
    }

    /** A kernel of a module. */
    record FunctionImpl(ModuleImpl module, HwFunction hw) implements KernelFunction {
        @Override
        public String name() {
            return hw.name();
        }

        @Override
        public Optional<List<Long>> parameterSizes() {
            return hw.parameterSizes();
        }

        @Override
        public String toString() {
            return "function " + hw.name() + " of " + module;
        }
    }

    /** What one bundle (or the core) owns. */
    public final class Owner implements AutoCloseable {
        final String name;
        private final Set<Held> held = new LinkedHashSet<>();
        private boolean closed;

        Owner(String name) {
            this.name = name;
        }

        /** @see dev.xq.api.XQueueService#allocate(String, long) */
        public DeviceBuffer allocate(String device, long bytes) {
            Objects.requireNonNull(device, "device is null; give a device id such as sim0 (XQueueService.devices() lists them)");
            Target t = devices.memoryOf(device);
            if (bytes < 1 || bytes > t.deviceBytes()) {
                throw new IllegalArgumentException("buffer of " + bytes + " bytes is out of range [1, " + t.deviceBytes()
                        + "] bytes on " + device);
            }
            HwBuffer hw = t.memory().allocate(device, bytes);
            BufferImpl b = new BufferImpl(device, t.memory(), this, hw);
            keep(b);
            return b;
        }

        /** @see dev.xq.api.XQueueService#load(String, String, byte[]) */
        public CodeModule load(String device, String module, byte[] image) {
            Objects.requireNonNull(device, "device is null; give a device id such as sim0 (XQueueService.devices() lists them)");
            Objects.requireNonNull(module, "module name is null; give it a name for messages");
            Objects.requireNonNull(image, "module image is null; give the bytes of the PTX, cubin, code object or sim program");
            if (image.length == 0) {
                throw new IllegalArgumentException("module '" + module + "' is empty (0 bytes); give the bytes of the code");
            }
            Target t = devices.memoryOf(device);
            HwModule hw = t.memory().load(device, module, image);
            ModuleImpl m = new ModuleImpl(device, t.memory(), this, module, hw);
            keep(m);
            return m;
        }

        private void keep(Held h) {
            boolean late;
            synchronized (this) {
                late = closed;
                if (!late) {
                    held.add(h);
                }
            }
            if (late) {
                h.close();
                throw new IllegalStateException("the owner " + name + " has stopped; " + h + " was freed at once");
            }
        }

        synchronized void forget(Held h) {
            held.remove(h);
        }

        synchronized List<Held> held() {
            return new ArrayList<>(held);
        }

        /** @return its open buffers, oldest first */
        public List<DeviceBuffer> buffers() {
            List<DeviceBuffer> out = new ArrayList<>();
            for (Held h : held()) {
                if (h instanceof BufferImpl b) {
                    out.add(b);
                }
            }
            return out;
        }

        /** @return its open modules, oldest first */
        public List<CodeModule> modules() {
            List<CodeModule> out = new ArrayList<>();
            for (Held h : held()) {
                if (h instanceof ModuleImpl m) {
                    out.add(m);
                }
            }
            return out;
        }

        /** Closes everything it owns (freed once unused). Idempotent. */
        @Override
        public void close() {
            List<Held> all;
            synchronized (this) {
                closed = true;
                all = new ArrayList<>(held);
            }
            Map<String, Integer> counts = new LinkedHashMap<>();
            for (Held h : all) {
                counts.merge(h instanceof BufferImpl ? "buffers" : "modules", 1, Integer::sum);
                h.close();
            }
            owners.remove(this);
            if (!all.isEmpty()) {
                log.info(name + " stopped: freed " + counts);
            }
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
