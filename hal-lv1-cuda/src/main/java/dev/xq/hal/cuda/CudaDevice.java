package dev.xq.hal.cuda;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.StreamPriorities;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One CUDA device as XQ uses it: its primary context (shared with any other CUDA user in the
 * process, as the runtime API does), loaded modules, a stream for clock calibration, and the
 * completion thread of all its queues.
 */
final class CudaDevice {

    /** Spin commands launch this many blocks per SM (the shape of XSched's benchmark). */
    static final int SPIN_BLOCKS_PER_SM = 8;
    static final int SPIN_BLOCK_THREADS = 256;
    static final String SPIN_FUNCTION = "xq_spin";
    static final String PROBE_FUNCTION = "xq_probe";
    /** The built-in module, a resource of this bundle. */
    static final String SPIN_RESOURCE = "spin.ptx";
    static final Set<String> KINDS = Set.of("spin", "kernel", "copy", "memset", "write", "read", "fill", "launch");

    /** A kernel ready to launch; {@code parameterSizes} is null where the driver cannot tell them. */
    record KernelFunction(String label, MemorySegment handle, long[] parameterSizes) { }

    private final String id;
    private final int ordinal;
    private final int handle;
    private final CudaApi api;
    private final CudaSettings settings;
    private final RuntimeLog log;
    private final MemorySegment context;
    private final String name;
    private final int sms;
    private final int clockKhz;
    private final int ccMajor;
    private final int ccMinor;
    private final int maxThreadsPerBlock;
    private final long memory;
    private final String pci;
    private final int leastPriority;
    private final int greatestPriority;
    private final int driverVersion;
    private final Map<String, MemorySegment> modules = new ConcurrentHashMap<>();
    private final Map<String, KernelFunction> functions = new ConcurrentHashMap<>();
    private final Set<CudaQueue> queues = ConcurrentHashMap.newKeySet();
    private final AtomicLong launchOrder = new AtomicLong();
    private MemorySegment calibrationStream;
    /** Level 2: the stream that writes the queues' flags (highest priority); null when level 2 is off or unsupported. */
    private MemorySegment sideStream;
    /** Why level 2 is off, for the descriptor; null when it is on. */
    private String stallOff;
    /** Level 2 flag words: chunks of device memory, handed out one word per queue, never reused, freed at close. */
    private final List<Long> flagChunks = new ArrayList<>();
    /** Level 2's flag chunks in page-locked host memory ({@code stallFlags=host}); guarded by this. */
    private final List<java.lang.foreign.MemorySegment> hostFlagChunks = new ArrayList<>();
    /** Whether the flag words are in host memory (decided at the first chunk; all chunks alike). */
    private volatile boolean flagsInHost;
    /** Further calibrations at open while the first point is wide (each is five tries of a few us on a GPU). */
    private static final int OPEN_CALIBRATIONS = 4;
    private static final java.lang.invoke.VarHandle FLAG = java.lang.foreign.ValueLayout.JAVA_INT.varHandle();
    private long flagNext;
    private long flagEnd;
    private DeviceClock clock;
    private CompletionWatcher watcher;
    private KernelFunction spin;
    private volatile HalException fault;
    private volatile boolean closed;

    private CudaDevice(CudaApi api, int ordinal, CudaSettings settings, RuntimeLog log, int driverVersion) {
        this.api = api;
        this.ordinal = ordinal;
        this.settings = settings;
        this.log = log;
        this.driverVersion = driverVersion;
        this.id = CudaPlatform.PLATFORM + ordinal;
        this.handle = api.device(ordinal);
        this.name = api.deviceName(handle);
        this.sms = api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle);
        this.clockKhz = api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, handle);
        this.ccMajor = api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
        this.ccMinor = api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
        this.maxThreadsPerBlock = api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, handle);
        this.pci = String.format("%04x:%02x:%02x.0", api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, handle),
                api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, handle),
                api.attribute(CudaApi.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, handle));
        this.memory = api.totalMemory(handle);
        this.context = api.primaryContextRetain(handle);
        try {
            makeCurrent();
            int[] range = api.streamPriorityRange();
            this.leastPriority = range[0];
            this.greatestPriority = range[1];
        } catch (RuntimeException e) {
            api.primaryContextRelease(handle);
            throw e;
        }
    }

    /**
     * Opens the device: retains its primary context, calibrates its clock, loads the spin module
     * and starts its completion thread.
     *
     * @throws HalException if any of that fails (the context is released again)
     */
    static CudaDevice open(CudaApi api, int ordinal, CudaSettings settings, RuntimeLog log, int driverVersion) {
        CudaDevice d = new CudaDevice(api, ordinal, settings, log, driverVersion);
        try {
            d.calibrationStream = api.streamCreate(CudaApi.CU_STREAM_NON_BLOCKING, d.greatestPriority);
            d.clock = new DeviceClock(api, d.calibrationStream);
            d.clock.place(OPEN_CALIBRATIONS);
            try {
                d.spin = d.function(CudaSettings.SPIN_MODULE, SPIN_FUNCTION);
            } catch (IllegalArgumentException e) {
                throw new HalException(e.getMessage(), e);
            }
            d.openStall();
            d.watcher = new CompletionWatcher(d, api, d.clock, settings, log);
            d.watcher.start();
            return d;
        } catch (RuntimeException e) {
            d.closeResources();
            throw e;
        }
    }

    String id() {
        return id;
    }

    int ordinal() {
        return ordinal;
    }

    MemorySegment context() {
        return context;
    }

    RuntimeLog log() {
        return log;
    }

    CompletionWatcher watcher() {
        return watcher;
    }

    DeviceClock clock() {
        return clock;
    }

    int multiprocessors() {
        return sms;
    }

    int spinBlocks() {
        return sms * SPIN_BLOCKS_PER_SM;
    }

    KernelFunction spinFunction() {
        return spin;
    }

    int[] priorityRange() {
        return new int[] {leastPriority, greatestPriority};
    }

    HalException fault() {
        return fault;
    }

    long nextLaunchOrder() {
        return launchOrder.incrementAndGet();
    }

    CudaApi api() {
        return api;
    }

    /** Makes this device's context current on the calling thread; every thread that calls the driver must. */
    void makeCurrent() {
        int rc = api.setCurrent(context);
        if (rc != CudaApi.CUDA_SUCCESS) {
            throw api.failure(rc, "cuCtxSetCurrent", id);
        }
    }

    DeviceDescriptor descriptor() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("computeCapability", ccMajor + "." + ccMinor);
        p.put("clockKHz", Integer.toString(clockKhz));
        p.put("driver", (driverVersion / 1000) + "." + (driverVersion % 1000 / 10));
        p.put("pci", pci);
        p.put("streamPriorities", leastPriority + " (least) .. " + greatestPriority + " (greatest)");
        p.put("completion", settings.completion().label());
        if (settings.completion() == CompletionMode.POLL && watcher != null) {
            p.put("pollWait", watcher.spins()
                    ? "spin (the completion thread spins between looks while commands are in flight)"
                    : "park (a timer wakes the completion thread for each look)");
            p.put("waiterLooks", watcher.helpedLooks() + " (looks for completions made by threads waiting for them: HwQueue.poll)");
        }
        p.put("level2", stallOff != null ? stallOff : settings.stall().label() + " (launches wait on a flag a deactivate raises: cuStreamWaitValue32)");
        p.put("startEvents", settings.everyStartEvent() ? "every (each command's start is the device's own timestamp)"
                : "chained (only a command launched onto an idle stream gets a start event)");
        p.put("timing", settings.deviceEndTimes() ? "device (a command's end is the device's timestamp)"
                : "seen (a command's end is when its completion was seen)");
        p.put("spin", SPIN_BLOCKS_PER_SM + " x " + SPIN_BLOCK_THREADS + "-thread blocks per SM, %globaltimer; memory not reserved");
        Set<String> names = new TreeSet<>(settings.modules().keySet());
        names.add(CudaSettings.SPIN_MODULE);
        p.put("modules", String.join(", ", names));
        HalException f = fault;
        if (f != null) {
            p.put("fault", f.getMessage());
        }
        return new DeviceDescriptor(id, name, stallable() ? PreemptionLevel.DEACTIVATE : PreemptionLevel.BLOCK, sms, memory, KINDS, p);
    }

    String summary() {
        return id + " " + name + " (" + sms + " SMs, sm_" + ccMajor + ccMinor + ", completion " + settings.completion().label()
                + ")" + (fault == null ? "" : " FAILED: " + fault.getMessage());
    }

    // ------------------------------------------------------------------ commands

    /** @throws IllegalArgumentException if this device cannot run {@code command}, saying why */
    void check(Command command) {
        switch (command) {
            case Command.Spin s -> {
                if (s.memoryBytes() > memory) {
                    throw new IllegalArgumentException("spin memory " + s.memoryBytes() + " bytes exceeds " + id + "'s "
                            + memory + " bytes");
                }
            }
            case Command.Kernel k -> {
                KernelFunction f = function(k.module(), k.function());
                long threads = (long) k.block().x() * k.block().y() * k.block().z();
                if (threads > maxThreadsPerBlock) {
                    throw new IllegalArgumentException("kernel " + f.label() + " block " + k.block().x() + "x"
                            + k.block().y() + "x" + k.block().z() + " has " + threads + " threads; " + id
                            + " allows at most " + maxThreadsPerBlock);
                }
                if (k.grid().y() > 65535 || k.grid().z() > 65535) {
                    throw new IllegalArgumentException("kernel " + f.label() + " grid y/z (" + k.grid().y() + ", "
                            + k.grid().z() + ") exceeds CUDA's 65535");
                }
                KernelArgs.checkAgainst(f.label(), f.parameterSizes(), k.args());
            }
            case Command.Copy c -> {
                if (c.bytes() > 0 && (c.target() == 0 || c.source() == 0)) {
                    throw new IllegalArgumentException("copy of " + c.bytes() + " bytes from 0x" + Long.toHexString(c.source())
                            + " to 0x" + Long.toHexString(c.target()) + " names a null address");
                }
            }
            case Command.Memset m -> {
                if (m.bytes() > 0 && m.target() == 0) {
                    throw new IllegalArgumentException("memset of " + m.bytes() + " bytes names the null address");
                }
            }
            case Command.Launch l -> {
                long threads = (long) l.block().x() * l.block().y() * l.block().z();
                if (threads > maxThreadsPerBlock) {
                    throw new IllegalArgumentException("launch of " + l.function().name() + ": block " + l.block().x() + "x"
                            + l.block().y() + "x" + l.block().z() + " has " + threads + " threads; " + id + " allows at most "
                            + maxThreadsPerBlock);
                }
                if (l.grid().y() > 65535 || l.grid().z() > 65535) {
                    throw new IllegalArgumentException("launch of " + l.function().name() + ": grid y/z (" + l.grid().y() + ", "
                            + l.grid().z() + ") exceeds CUDA's 65535");
                }
            }
            // buffers, ranges and arguments of these are checked by the runtime against the objects it resolves them to
            case Command.Write w -> { }
            case Command.Read r -> { }
            case Command.Fill f -> { }
        }
    }

    /**
     * @return the kernel, loading its module on first use
     * @throws IllegalArgumentException for an unknown module or function, or a module that does not load
     */
    KernelFunction function(String module, String function) {
        String key = module + "\u0000" + function;
        KernelFunction f = functions.get(key);
        if (f != null) {
            return f;
        }
        synchronized (this) {
            f = functions.get(key);
            if (f != null) {
                return f;
            }
            MemorySegment m = module(module);
            makeCurrent();
            CudaApi.FunctionLookup found = api.moduleFunction(m, function);
            if (found.error() != CudaApi.CUDA_SUCCESS) {
                throw new IllegalArgumentException("module '" + module + "' has no kernel '" + function + "' ("
                        + api.name(found.error()) + "); kernels are looked up by their PTX .entry name (extern \"C\")");
            }
            f = new KernelFunction(module + "." + function, found.function(), api.parameterSizes(found.function()));
            functions.put(key, f);
            return f;
        }
    }

    /** Caller holds this object's lock. */
    private MemorySegment module(String name) {
        MemorySegment m = modules.get(name);
        if (m != null) {
            return m;
        }
        byte[] image;
        String origin;
        boolean text;
        if (CudaSettings.SPIN_MODULE.equals(name)) {
            origin = "built-in " + SPIN_RESOURCE;
            image = spinPtx().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            text = true;
        } else {
            Path path = settings.modules().get(name);
            if (path == null) {
                Set<String> known = new TreeSet<>(settings.modules().keySet());
                known.add(CudaSettings.SPIN_MODULE);
                throw new IllegalArgumentException("module '" + name + "' is not configured for " + id + "; known: " + known
                        + " (configure more in PID " + CudaConfig.PID + ", property modules = name=path)");
            }
            origin = path.toString();
            try {
                image = Files.readAllBytes(path);
            } catch (IOException e) {
                throw new IllegalArgumentException("module '" + name + "' cannot be read from " + path + ": " + e, e);
            }
            text = path.getFileName().toString().endsWith(".ptx");
        }
        makeCurrent();
        CudaApi.ModuleLoad load;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment img = a.allocate(image.length + (text ? 1 : 0));
            MemorySegment.copy(image, 0, img, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, image.length);
            load = api.moduleLoad(img);
        }
        if (load.error() != CudaApi.CUDA_SUCCESS) {
            throw new IllegalArgumentException("module '" + name + "' (" + origin + ") does not load on " + id + ": "
                    + api.describe(load.error()) + (load.log().isEmpty() ? "" : "; JIT log: " + load.log()));
        }
        modules.put(name, load.module());
        return load.module();
    }

    /** @return the text of the built-in spin module */
    static String spinPtx() {
        try (InputStream in = CudaDevice.class.getResourceAsStream(SPIN_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(SPIN_RESOURCE + " is missing from the bundle");
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------ level 2

    private static final long FLAG_CHUNK_BYTES = 4096;

    /** Decides whether this device's queues offer level 2, and makes the side stream if so. */
    private void openStall() {
        if (settings.stall() == StallMode.OFF) {
            stallOff = "off (setting stall=off)";
        } else if (!api.hasStreamMemOps()) {
            stallOff = "off (the driver lacks cuStreamWaitValue32_v2/cuStreamWriteValue32_v2)";
        } else if (settings.completion() != CompletionMode.POLL && settings.completion() != CompletionMode.HOST_FUNC) {
            // cuEventSynchronize on a held command would block the completion thread of every queue
            stallOff = "off (completion " + settings.completion().label() + " waits inside the driver; poll or hostfunc allow it)";
        } else {
            try {
                sideStream = api.streamCreate(CudaApi.CU_STREAM_NON_BLOCKING, greatestPriority);
            } catch (HalException e) {
                // level 2 is an extra: without its stream the device still serves at level 1
                stallOff = "off (" + e.getMessage() + ")";
                log.warn("cuda " + id + ": level 2 is off: " + e.getMessage(), null);
            }
        }
    }

    /** @return whether this device's queues offer level 2 */
    boolean stallable() {
        return sideStream != null;
    }

    StallMode stallMode() {
        return settings.stall();
    }

    /** @return whether every command gets its own start event (else: chained starts) */
    boolean everyStartEvent() {
        return settings.everyStartEvent();
    }

    /** @return whether a command's end is the device's timestamp (else: when its completion was seen) */
    boolean deviceEndTimes() {
        return settings.deviceEndTimes();
    }

    long stallHoldNanos() {
        return settings.stallHoldMillis() * 1_000_000L;
    }

    /**
     * @return a fresh flag word, set to 0 (a queue's own for its life): in page-locked host memory
     *         ({@code stallFlags=host}; under unified addressing its host address is its device
     *         address), or in device memory where the setting says so or host memory cannot be had
     */
    synchronized long flagWord() {
        if (flagNext == flagEnd) {
            makeCurrent();
            boolean first = hostFlagChunks.isEmpty() && flagChunks.isEmpty();
            if ((first && settings.hostFlags()) || flagsInHost) {
                java.lang.foreign.MemorySegment host = api.memAllocHost(FLAG_CHUNK_BYTES);
                if (host != null) {
                    host.fill((byte) 0);
                    hostFlagChunks.add(host);
                    flagsInHost = true;
                    flagNext = host.address();
                    flagEnd = flagNext + FLAG_CHUNK_BYTES;
                    long w = flagNext;
                    flagNext += 4;
                    return w;
                }
                if (flagsInHost) {
                    throw new HalException("cuda " + id + ": no page-locked host memory for more level 2 flags (cuMemAllocHost)");
                }
                log.warn("cuda " + id + ": no page-locked host memory for level 2 flags; they live in device memory", null);
            }
            long chunk = api.memAlloc(FLAG_CHUNK_BYTES);
            flagChunks.add(chunk);
            int rc = api.memsetD8Async(chunk, (byte) 0, FLAG_CHUNK_BYTES, sideStream);
            if (rc == CudaApi.CUDA_SUCCESS) {
                rc = api.streamSynchronize(sideStream);
            }
            if (rc != CudaApi.CUDA_SUCCESS) {
                throw api.failure(rc, "cuMemsetD8Async", "level 2 flags of " + id);
            }
            flagNext = chunk;
            flagEnd = chunk + FLAG_CHUNK_BYTES;
        }
        long w = flagNext;
        flagNext += 4;
        return w;
    }

    /**
     * Writes a queue's flag: 1 holds its guarded commands, 0 lets them go. In host memory, a
     * volatile store (the device's next look at the word sees it); in device memory, on the side
     * stream.
     */
    void writeFlag(long word, int value) {
        if (flagsInHost) {
            FLAG.setVolatile(java.lang.foreign.MemorySegment.ofAddress(word).reinterpret(4), 0L, value);
            return;
        }
        makeCurrent();
        int rc = api.streamWriteValue32(sideStream, word, value, 0);
        if (rc != CudaApi.CUDA_SUCCESS) {
            throw api.failure(rc, "cuStreamWriteValue32", "level 2 flag of " + id + " := " + value);
        }
    }

    // ------------------------------------------------------------------ queues

    CudaQueue open(HwQueueOptions options, HwQueueListener listener) {
        if (closed) {
            throw new HalException(id + " is shut down");
        }
        HalException f = fault;
        if (f != null) {
            throw new HalException(id + " failed earlier and takes no new queue: " + f.getMessage(), f);
        }
        int priority = StreamPriorities.toDevice(options.nativePriority(), leastPriority, greatestPriority);
        makeCurrent();
        MemorySegment stream = api.streamCreate(CudaApi.CU_STREAM_NON_BLOCKING, priority);
        int eventFlags = settings.completion() == CompletionMode.SYNC_BLOCK ? CudaApi.CU_EVENT_BLOCKING_SYNC
                : CudaApi.CU_EVENT_DEFAULT;
        CudaQueue q = new CudaQueue(this, api, options.name(), listener, stream, priority, eventFlags,
                settings.completion() == CompletionMode.HOST_FUNC);
        queues.add(q);
        watcher.register(q);
        return q;
    }

    void retire(CudaQueue q) {
        watcher.retire(q);
    }

    void forget(CudaQueue q) {
        queues.remove(q);
    }

    /**
     * CUDA reported an error for a command: with the driver API that leaves the context unusable
     * (a "sticky" error), so every queue of the device is lost; the device stays listed as
     * failed until the driver restarts.
     */
    void fail(HalException cause) {
        if (fault != null) {
            return;
        }
        fault = cause;
        log.warn("cuda device " + id + " failed; its " + queues.size() + " queue(s) are lost", cause);
        for (CudaQueue q : new ArrayList<>(queues)) {
            try {
                q.lose(cause);
            } catch (RuntimeException e) {
                log.warn("cuda: a listener of queue " + q.name() + " threw on lost()", e);
            }
        }
    }

    /** Stops the completion thread, reports open queues lost, and releases everything. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (watcher != null) {
            watcher.stop();
        }
        HalException gone = new HalException("the cuda driver stopped; device " + id + " is no longer served");
        List<CudaQueue> open = new ArrayList<>(queues);
        for (CudaQueue q : open) {
            try {
                q.lose(gone);
            } catch (RuntimeException e) {
                log.warn("cuda: a listener of queue " + q.name() + " threw on lost()", e);
            }
        }
        for (CudaQueue q : open) {
            try {
                makeCurrent();
                q.release();
            } catch (RuntimeException e) {
                log.warn("cuda: releasing queue " + q.name() + " failed", e);
            }
        }
        queues.clear();
        closeResources();
        api.primaryContextRelease(handle);
    }

    private void closeResources() {
        try {
            makeCurrent();
        } catch (RuntimeException e) {
            log.warn("cuda: cannot make " + id + " current to release it", e);
        }
        for (MemorySegment m : modules.values()) {
            api.moduleUnload(m);
        }
        modules.clear();
        functions.clear();
        if (clock != null) {
            clock.close();
        }
        if (calibrationStream != null) {
            api.streamDestroy(calibrationStream);
        }
        if (sideStream != null) {
            api.streamSynchronize(sideStream);
            api.streamDestroy(sideStream);
            sideStream = null;
        }
        synchronized (this) {
            for (long chunk : flagChunks) {
                api.memFree(chunk);
            }
            flagChunks.clear();
            for (java.lang.foreign.MemorySegment chunk : hostFlagChunks) {
                api.memFreeHost(chunk);
            }
            hostFlagChunks.clear();
            flagNext = flagEnd = 0;
        }
        if (watcher == null) {
            api.primaryContextRelease(handle);
        }
    }
}
