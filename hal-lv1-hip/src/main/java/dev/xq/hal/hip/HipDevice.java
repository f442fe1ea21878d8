package dev.xq.hal.hip;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.StreamPriorities;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One HIP device: what it is, its loaded code objects, its open queues and its completion poller.
 */
final class HipDevice {

    /** Kernel arguments beyond this are refused up front (HIP's kernarg segment is a few KiB). */
    static final int MAX_KERNEL_ARGS = 512;

    /** The spin module's key among the loaded modules; no configured module name can contain a NUL. */
    private static final String SPIN_MODULE_KEY = "\0spin";

    /** A resolved launch of the spin kernel. */
    record Launch(MemorySegment function, int gridX, int blockX) {
    }

    private final HipApi api;
    private final int ordinal;
    private final String id;
    private final HipSettings settings;
    private final RuntimeLog log;
    private final int computeUnits;
    private final int maxThreadsPerBlock;
    private final int[] maxBlockDim;
    private final int maxSharedPerBlock;
    private final int leastPriority;
    private final int greatestPriority;
    private final DeviceDescriptor descriptor;
    private final CompletionPoller poller;
    private final CopyOnWriteArrayList<HipQueue> queues = new CopyOnWriteArrayList<>();
    /** The host API's buffers and modules still held on this device; freed by {@link #close} if still there. */
    private final Set<HipMemory.HipBuffer> buffers = new LinkedHashSet<>();
    private final Set<HipMemory.HipModule> loaded = new LinkedHashSet<>();
    private boolean closed;

    private final Object modulesLock = new Object();
    private final Map<String, MemorySegment> modules = new HashMap<>();
    private final Map<String, MemorySegment> functions = new HashMap<>();
    /** The spin kernel, or null; then {@link #spinUnavailable} says why. */
    private final Launch spin;
    private final String spinUnavailable;

    private HipDevice(HipApi api, int ordinal, HipSettings settings, RuntimeLog log) {
        this.api = api;
        this.ordinal = ordinal;
        this.id = HipPlatform.PLATFORM + ordinal;
        this.settings = settings;
        this.log = log;
        api.setDevice(ordinal);
        String name = api.deviceName(ordinal);
        long memory = api.deviceTotalMem(ordinal);
        computeUnits = api.deviceAttribute(HipApi.ATTR_MULTIPROCESSOR_COUNT, ordinal);
        maxThreadsPerBlock = api.deviceAttribute(HipApi.ATTR_MAX_THREADS_PER_BLOCK, ordinal);
        maxBlockDim = new int[] {
            api.deviceAttribute(HipApi.ATTR_MAX_BLOCK_DIM_X, ordinal),
            api.deviceAttribute(HipApi.ATTR_MAX_BLOCK_DIM_Y, ordinal),
            api.deviceAttribute(HipApi.ATTR_MAX_BLOCK_DIM_Z, ordinal)};
        maxSharedPerBlock = api.deviceAttribute(HipApi.ATTR_MAX_SHARED_MEMORY_PER_BLOCK, ordinal);
        int[] range = api.streamPriorityRange();
        leastPriority = range[0];
        greatestPriority = range[1];

        Launch s = null;
        String why;
        if (settings.spinModule() == null) {
            why = "no spin kernel configured: set spinModule (Config Admin PID " + HipConfig.PID + ") or "
                    + HipSettings.ENV_SPIN_MODULE + " to a code object exporting extern \"C\" __global__ void spin(uint64_t micros)";
        } else {
            try {
                MemorySegment m = loadModule(SPIN_MODULE_KEY, settings.spinModule());
                MemorySegment f = api.moduleGetFunction(m, "spin", "spin in " + settings.spinModule() + " on " + id);
                int blockX = settings.spinBlockThreads();
                if (blockX > maxThreadsPerBlock) {
                    throw new IllegalArgumentException("spinBlockThreads=" + blockX + " exceeds " + id + "'s maximum of "
                            + maxThreadsPerBlock + " threads per block");
                }
                s = new Launch(f, Math.max(1, computeUnits) * settings.spinBlocksPerCu(), blockX);
                why = null;
            } catch (RuntimeException e) {
                why = "spin kernel unavailable: " + e.getMessage();
                log.warn(id + ": " + why, null);
            }
        }
        spin = s;
        spinUnavailable = why;

        Set<String> kinds = new LinkedHashSet<>(List.of("kernel", "copy", "memset", "write", "read", "fill", "launch"));
        if (spin != null) {
            kinds.add("spin");
        }
        Map<String, String> props = new LinkedHashMap<>();
        props.put("hip.ordinal", Integer.toString(ordinal));
        props.put("hip.library", api.library());
        props.put("hip.runtimeVersion", Integer.toString(api.runtimeVersion()));
        props.put("hip.driverVersion", Integer.toString(api.driverVersion()));
        props.put("hip.streamPriorities", "least " + leastPriority + ", greatest " + greatestPriority);
        props.put("hip.maxThreadsPerBlock", Integer.toString(maxThreadsPerBlock));
        props.put("hip.clockKHz", Integer.toString(api.deviceAttribute(HipApi.ATTR_CLOCK_RATE, ordinal)));
        props.put("hip.computeCapability", api.deviceAttribute(HipApi.ATTR_COMPUTE_CAPABILITY_MAJOR, ordinal) + "."
                + api.deviceAttribute(HipApi.ATTR_COMPUTE_CAPABILITY_MINOR, ordinal));
        props.put("hip.pci", String.format("%04x:%02x:%02x", api.deviceAttribute(HipApi.ATTR_PCI_DOMAIN_ID, ordinal),
                api.deviceAttribute(HipApi.ATTR_PCI_BUS_ID, ordinal), api.deviceAttribute(HipApi.ATTR_PCI_DEVICE_ID, ordinal)));
        props.put("hip.warpSize", Integer.toString(api.deviceAttribute(HipApi.ATTR_WARP_SIZE, ordinal)));
        props.put("hip.spin", spin != null ? "available" : spinUnavailable);
        descriptor = new DeviceDescriptor(id, name, PreemptionLevel.BLOCK, computeUnits, memory, kinds, props);
        poller = new CompletionPoller(id, settings.pollMinMicros(), settings.pollMaxMicros(), log);
    }

    /**
     * Queries the device and loads the spin module if one is configured.
     * @throws HalException if HIP refuses a query
     */
    static HipDevice probe(HipApi api, int ordinal, HipSettings settings, RuntimeLog log) {
        return new HipDevice(api, ordinal, settings, log);
    }

    String id() {
        return id;
    }

    DeviceDescriptor descriptor() {
        return descriptor;
    }

    CompletionPoller poller() {
        return poller;
    }

    RuntimeLog log() {
        return log;
    }

    int leastPriority() {
        return leastPriority;
    }

    int greatestPriority() {
        return greatestPriority;
    }

    /** Opens a stream with the mapped priority; the default stream priority (0, clamped into the range) when none is asked for. */
    HipQueue open(HwQueueOptions options, HwQueueListener listener) {
        int priority = StreamPriorities.toDevice(options.nativePriority(), leastPriority, greatestPriority);
        // hipSetDevice is per thread: set it on this thread right before the call that depends on it
        api.setDevice(ordinal);
        MemorySegment stream = api.streamCreateWithPriority(HipApi.STREAM_NON_BLOCKING, priority);
        HipQueue q = new HipQueue(this, api, options.name(), listener, stream, priority);
        queues.add(q);
        poller.register(q);
        return q;
    }

    MemorySegment createEvent() {
        api.setDevice(ordinal);
        return api.eventCreate(HipApi.EVENT_DEFAULT);
    }

    void forget(HipQueue q) {
        queues.remove(q);
        poller.unregister(q);
    }

    // ------------------------------------------------------------------ commands

    /** @throws IllegalArgumentException naming what this device cannot run and why */
    void check(Command command) {
        switch (command) {
            case Command.Spin s -> {
                if (spin == null) {
                    throw new IllegalArgumentException(id + " cannot run spin commands: " + spinUnavailable);
                }
            }
            case Command.Kernel k -> checkKernel(k);
            case Command.Copy c -> {
                if (c.bytes() > 0 && (c.target() == 0 || c.source() == 0)) {
                    throw new IllegalArgumentException("copy of " + c.bytes() + " bytes from 0x" + Long.toHexString(c.source())
                            + " to 0x" + Long.toHexString(c.target()) + " on " + id + ": addresses must not be 0");
                }
            }
            case Command.Memset m -> {
                if (m.bytes() > 0 && m.target() == 0) {
                    throw new IllegalArgumentException("memset of " + m.bytes() + " bytes on " + id + ": target address must not be 0");
                }
            }
            case Command.Launch l -> checkShape("launch of " + l.function().name(), l.block(), l.sharedMemBytes(), l.args().size());
            // buffers, ranges and arguments of these are checked by the runtime against the objects it resolves them to
            case Command.Write w -> { }
            case Command.Read r -> { }
            case Command.Fill f -> { }
        }
    }

    private void checkShape(String what, Command.Dim3 b, int sharedMemBytes, int args) {
        long threads = (long) b.x() * b.y() * b.z();
        if (threads > maxThreadsPerBlock || b.x() > maxBlockDim[0] || b.y() > maxBlockDim[1] || b.z() > maxBlockDim[2]) {
            throw new IllegalArgumentException(what + ": block (" + b.x() + ", " + b.y() + ", " + b.z() + ") = " + threads
                    + " threads exceeds " + id + "'s limits: at most " + maxThreadsPerBlock
                    + " threads per block, dimensions at most (" + maxBlockDim[0] + ", " + maxBlockDim[1] + ", "
                    + maxBlockDim[2] + ")");
        }
        if (sharedMemBytes > maxSharedPerBlock) {
            throw new IllegalArgumentException(what + ": " + sharedMemBytes + " bytes of shared memory exceeds " + id
                    + "'s maximum of " + maxSharedPerBlock + " bytes per block");
        }
        if (args > MAX_KERNEL_ARGS) {
            throw new IllegalArgumentException(what + ": " + args + " arguments; at most " + MAX_KERNEL_ARGS + " are allowed");
        }
    }

    // ------------------------------------------------------------------ device memory and code of the host API

    /** @throws IllegalArgumentException if HIP has not that much free, naming what is free */
    HipMemory.HipBuffer allocate(long bytes) {
        synchronized (modulesLock) {
            if (closed) {
                throw new IllegalStateException(id + " is closed (the hip driver stopped)");
            }
            api.setDevice(ordinal);
            HipApi.Pointer p = api.malloc(bytes);
            if (p.error() != HipApi.SUCCESS) {
                long[] info = api.memInfo();
                String free = info == null ? "" : "; " + info[0] + " of " + info[1] + " bytes are free (hipMemGetInfo)";
                String why = "buffer of " + bytes + " bytes on " + id + ": hipMalloc failed: " + api.describe(p.error()) + free;
                if (p.error() == HipApi.ERROR_OUT_OF_MEMORY) {
                    throw new IllegalArgumentException(why);
                }
                throw new HalException(why);
            }
            HipMemory.HipBuffer b = new HipMemory.HipBuffer(this, p.pointer().address(), bytes);
            buffers.add(b);
            return b;
        }
    }

    void free(HipMemory.HipBuffer b) {
        synchronized (modulesLock) {
            if (!buffers.remove(b)) {
                return; // the device freed it when it closed
            }
            api.setDevice(ordinal);
            int rc = api.free(b.address());
            if (rc != HipApi.SUCCESS) {
                log.warn("hipFree of " + b.size() + " bytes at 0x" + Long.toHexString(b.address()) + " on " + id + " failed: "
                        + api.describe(rc), null);
            }
        }
    }

    /** @throws IllegalArgumentException if the image does not load, with HIP's words */
    HipMemory.HipModule load(String name, byte[] image) {
        synchronized (modulesLock) {
            if (closed) {
                throw new IllegalStateException(id + " is closed (the hip driver stopped)");
            }
            api.setDevice(ordinal);
            HipApi.ModuleLoad l = api.moduleLoad(image);
            if (l.error() != HipApi.SUCCESS) {
                throw new IllegalArgumentException("module '" + name + "' (" + image.length + " bytes) does not load on " + id
                        + ": hipModuleLoadData returned " + api.describe(l.error()) + "; a HIP device takes a code object"
                        + " (hipcc --genco --offload-arch=<its gfx target>) built for its architecture");
            }
            HipMemory.HipModule m = new HipMemory.HipModule(this, name, l.module());
            loaded.add(m);
            return m;
        }
    }

    /** @throws IllegalArgumentException if the module has no such kernel */
    MemorySegment function(HipMemory.HipModule m, String function) {
        synchronized (modulesLock) {
            if (closed || !loaded.contains(m)) {
                throw new IllegalStateException("module '" + m.name() + "' on " + id + " was unloaded");
            }
            api.setDevice(ordinal);
            HipApi.Pointer f = api.moduleFunction(m.handle(), function);
            if (f.error() != HipApi.SUCCESS) {
                throw new IllegalArgumentException("module '" + m.name() + "' has no kernel '" + function + "' on " + id + " ("
                        + api.describe(f.error()) + "); a kernel's name is its extern \"C\" name");
            }
            return f.pointer();
        }
    }

    void unload(HipMemory.HipModule m) {
        synchronized (modulesLock) {
            if (!loaded.remove(m)) {
                return;
            }
            api.setDevice(ordinal);
            int rc = api.moduleUnload(m.handle());
            if (rc != HipApi.SUCCESS) {
                log.warn("hipModuleUnload of '" + m.name() + "' on " + id + " failed: " + api.describe(rc), null);
            }
        }
    }

    private void checkKernel(Command.Kernel k) {
        Command.Dim3 b = k.block();
        long threads = (long) b.x() * b.y() * b.z();
        if (threads > maxThreadsPerBlock || b.x() > maxBlockDim[0] || b.y() > maxBlockDim[1] || b.z() > maxBlockDim[2]) {
            throw new IllegalArgumentException("kernel " + k.module() + "." + k.function() + ": block (" + b.x() + ", " + b.y()
                    + ", " + b.z() + ") = " + threads + " threads exceeds " + id + "'s limits: at most " + maxThreadsPerBlock
                    + " threads per block, dimensions at most (" + maxBlockDim[0] + ", " + maxBlockDim[1] + ", "
                    + maxBlockDim[2] + ")");
        }
        if (k.sharedMemBytes() > maxSharedPerBlock) {
            throw new IllegalArgumentException("kernel " + k.module() + "." + k.function() + ": " + k.sharedMemBytes()
                    + " bytes of shared memory exceeds " + id + "'s maximum of " + maxSharedPerBlock + " bytes per block");
        }
        if (k.args().size() > MAX_KERNEL_ARGS) {
            throw new IllegalArgumentException("kernel " + k.module() + "." + k.function() + ": " + k.args().size()
                    + " arguments; at most " + MAX_KERNEL_ARGS + " are allowed");
        }
        function(k.module(), k.function());
    }

    /** @return the library's functions, for the queues' data commands */
    HipApi api() {
        return api;
    }

    int ordinal() {
        return ordinal;
    }

    Launch spinLaunch() {
        if (spin == null) {
            throw new HalException(id + " cannot run spin commands: " + spinUnavailable);
        }
        return spin;
    }

    /**
     * Resolves {@code module.function}, loading the module onto this device on first use.
     * @throws IllegalArgumentException if the module is not configured, cannot be read or loaded,
     *         or lacks the function
     */
    MemorySegment function(String module, String function) {
        String key = module + '\0' + function;
        synchronized (modulesLock) {
            MemorySegment f = functions.get(key);
            if (f != null) {
                return f;
            }
            Path path = settings.modules().get(module);
            if (path == null) {
                throw new IllegalArgumentException("kernel module '" + module + "' is not configured for " + id
                        + "; configured: " + settings.modules().keySet() + " (set modules=name=path in Config Admin PID "
                        + HipConfig.PID + ")");
            }
            try {
                MemorySegment m = modules.get(module);
                if (m == null) {
                    m = loadModule(module, path);
                }
                f = api.moduleGetFunction(m, function, "'" + function + "' in module '" + module + "' (" + path + ") on " + id);
            } catch (HalException e) {
                throw new IllegalArgumentException("kernel " + module + "." + function + " on " + id + ": " + e.getMessage(), e);
            }
            functions.put(key, f);
            return f;
        }
    }

    private MemorySegment loadModule(String key, Path path) {
        String what = key.equals(SPIN_MODULE_KEY) ? "spin module" : "module '" + key + "'";
        synchronized (modulesLock) {
            byte[] image;
            try {
                image = Files.readAllBytes(path);
            } catch (IOException e) {
                throw new IllegalArgumentException(what + ": cannot read " + path + ": " + e, e);
            }
            api.setDevice(ordinal);
            MemorySegment m = api.moduleLoadData(image, what + " from " + path + " on " + id);
            modules.put(key, m);
            return m;
        }
    }

    /** Closes every queue (reporting their in-flight commands lost), stops the poller, unloads modules. */
    void close(Throwable cause) {
        for (HipQueue q : List.copyOf(queues)) {
            q.abandon(cause);
        }
        poller.stop();
        synchronized (modulesLock) {
            closed = true;
            // what host bundles still hold: freed here, as the library goes away after this
            for (HipMemory.HipBuffer b : buffers) {
                int rc = api.free(b.address());
                if (rc != HipApi.SUCCESS) {
                    log.warn(id + ": hipFree of a buffer of " + b.size() + " bytes failed: " + api.describe(rc), null);
                }
            }
            buffers.clear();
            for (HipMemory.HipModule m : loaded) {
                int rc = api.moduleUnload(m.handle());
                if (rc != HipApi.SUCCESS) {
                    log.warn(id + ": hipModuleUnload of module '" + m.name() + "' failed: " + api.describe(rc), null);
                }
            }
            loaded.clear();
            for (Map.Entry<String, MemorySegment> e : modules.entrySet()) {
                int rc = api.moduleUnload(e.getValue());
                if (rc != HipApi.SUCCESS) {
                    log.warn(id + ": hipModuleUnload of module '" + e.getKey() + "' failed: " + api.describe(rc), null);
                }
            }
            modules.clear();
            functions.clear();
        }
    }
}
