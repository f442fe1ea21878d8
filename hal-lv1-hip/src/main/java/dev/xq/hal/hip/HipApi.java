package dev.xq.hal.hip;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.xq.hal.spi.HalException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The HIP runtime functions XQ uses, bound with FFM from one loaded libamdhip64 (the real one
 * or the test double: the code is the same, only the library differs).
 *
 * <p>Every constant below is taken from {@code hip/hip_runtime_api.h} and
 * {@code hip/driver_types.h} of ROCm 5.2.3 (Debian package {@code libamdhip64-dev} 5.2.3-8),
 * printed by compiling that header with gcc; the attribute numbers were compared with the
 * current ROCm header (ROCm/rocm-systems), which keeps them stable with "Unused" placeholders.
 * Handles ({@code hipStream_t}, {@code hipEvent_t}, {@code hipModule_t}, {@code hipFunction_t})
 * are opaque pointers; {@code hipError_t} and the enums are C {@code int}s.
 */
final class HipApi implements AutoCloseable {

    // hipError_t (hip_runtime_api.h, ROCm 5.2.3)
    static final int SUCCESS = 0;
    static final int ERROR_OUT_OF_MEMORY = 2;
    static final int ERROR_NO_DEVICE = 100;
    static final int ERROR_INVALID_HANDLE = 400;
    static final int ERROR_NOT_READY = 600;

    // hipDeviceAttribute_t (hip_runtime_api.h, ROCm 5.2.3; same numbers in ROCm 6/7)
    static final int ATTR_CLOCK_RATE = 5;
    static final int ATTR_COMPUTE_CAPABILITY_MAJOR = 23;
    static final int ATTR_MAX_BLOCK_DIM_X = 26;
    static final int ATTR_MAX_BLOCK_DIM_Y = 27;
    static final int ATTR_MAX_BLOCK_DIM_Z = 28;
    static final int ATTR_MAX_THREADS_PER_BLOCK = 56;
    static final int ATTR_COMPUTE_CAPABILITY_MINOR = 61;
    static final int ATTR_MULTIPROCESSOR_COUNT = 63;
    static final int ATTR_PCI_BUS_ID = 67;
    static final int ATTR_PCI_DEVICE_ID = 68;
    static final int ATTR_PCI_DOMAIN_ID = 69;
    static final int ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74;
    static final int ATTR_WARP_SIZE = 87;

    // hipMemcpyKind (driver_types.h): hipMemcpyDefault lets the runtime infer the direction
    // from the addresses, which unified addressing on ROCm allows.
    static final int MEMCPY_DEFAULT = 4;
    // hipStreamNonBlocking (hip_runtime_api.h): no implicit sync with the null stream, which
    // XQ never uses; without it a library user's null-stream work would serialise our streams.
    static final int STREAM_NON_BLOCKING = 1;
    // hipEventDefault (hip_runtime_api.h): timing enabled, busy-wait sync (we never sync on events).
    static final int EVENT_DEFAULT = 0;

    private static final FunctionDescriptor INT_OF_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);

    /** The C signature of every function this class binds, by symbol name. */
    static final Map<String, FunctionDescriptor> SIGNATURES = signatures();

    private static Map<String, FunctionDescriptor> signatures() {
        Map<String, FunctionDescriptor> m = new LinkedHashMap<>();
        m.put("hipGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        m.put("hipGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        m.put("hipGetDeviceCount", INT_OF_PTR);
        m.put("hipSetDevice", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        m.put("hipDeviceGetAttribute", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        m.put("hipDeviceGetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        m.put("hipDeviceTotalMem", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        m.put("hipDriverGetVersion", INT_OF_PTR);
        m.put("hipRuntimeGetVersion", INT_OF_PTR);
        m.put("hipDeviceGetStreamPriorityRange", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        m.put("hipStreamCreateWithPriority", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        m.put("hipStreamGetPriority", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        m.put("hipStreamDestroy", INT_OF_PTR);
        m.put("hipStreamSynchronize", INT_OF_PTR);
        m.put("hipStreamQuery", INT_OF_PTR);
        m.put("hipEventCreateWithFlags", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        m.put("hipEventRecord", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        m.put("hipEventQuery", INT_OF_PTR);
        m.put("hipEventSynchronize", INT_OF_PTR);
        m.put("hipEventElapsedTime", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        m.put("hipEventDestroy", INT_OF_PTR);
        m.put("hipModuleLoadData", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        m.put("hipModuleGetFunction", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        m.put("hipModuleUnload", INT_OF_PTR);
        // hipModuleLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes,
        //                       stream, void** kernelParams, void** extra)
        m.put("hipModuleLaunchKernel", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        // hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind, hipStream_t)
        m.put("hipMemcpyAsync", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS));
        // hipMemsetAsync(void* dst, int value, size_t sizeBytes, hipStream_t)
        m.put("hipMemsetAsync", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS));
        // device memory of the host API (XQueueService.allocate): hipMalloc(void** ptr, size_t size),
        // hipFree(void* ptr), hipMemGetInfo(size_t* free, size_t* total)
        m.put("hipMalloc", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        m.put("hipFree", INT_OF_PTR);
        m.put("hipMemGetInfo", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        // page-locked staging: hipHostMalloc(void** ptr, size_t size, unsigned int flags), hipHostFree(void* ptr)
        m.put("hipHostMalloc", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
        m.put("hipHostFree", INT_OF_PTR);
        // hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t, hipStream_t),
        // hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t, hipStream_t)
        m.put("hipMemcpyHtoDAsync", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        m.put("hipMemcpyDtoHAsync", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        // hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count, hipStream_t)
        m.put("hipMemsetD8Async", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_LONG, ADDRESS));
        return java.util.Collections.unmodifiableMap(m);
    }

    private final String library;
    private final Arena arena;
    private final MethodHandle getErrorName;
    private final MethodHandle getErrorString;
    private final MethodHandle getDeviceCount;
    private final MethodHandle setDevice;
    private final MethodHandle deviceGetAttribute;
    private final MethodHandle deviceGetName;
    private final MethodHandle deviceTotalMem;
    private final MethodHandle driverGetVersion;
    private final MethodHandle runtimeGetVersion;
    private final MethodHandle deviceGetStreamPriorityRange;
    private final MethodHandle streamCreateWithPriority;
    private final MethodHandle streamGetPriority;
    private final MethodHandle streamDestroy;
    private final MethodHandle streamSynchronize;
    private final MethodHandle streamQuery;
    private final MethodHandle eventCreateWithFlags;
    private final MethodHandle eventRecord;
    private final MethodHandle eventQuery;
    private final MethodHandle eventSynchronize;
    private final MethodHandle eventElapsedTime;
    private final MethodHandle eventDestroy;
    private final MethodHandle moduleLoadData;
    private final MethodHandle moduleGetFunction;
    private final MethodHandle moduleUnload;
    private final MethodHandle moduleLaunchKernel;
    private final MethodHandle memcpyAsync;
    private final MethodHandle memsetAsync;
    private final MethodHandle malloc;
    private final MethodHandle free;
    private final MethodHandle memGetInfo;
    private final MethodHandle hostMalloc;
    private final MethodHandle hostFree;
    private final MethodHandle memcpyHtoDAsync;
    private final MethodHandle memcpyDtoHAsync;
    private final MethodHandle memsetD8Async;

    private HipApi(String library, Arena arena, Map<String, MethodHandle> h) {
        this.library = library;
        this.arena = arena;
        getErrorName = h.get("hipGetErrorName");
        getErrorString = h.get("hipGetErrorString");
        getDeviceCount = h.get("hipGetDeviceCount");
        setDevice = h.get("hipSetDevice");
        deviceGetAttribute = h.get("hipDeviceGetAttribute");
        deviceGetName = h.get("hipDeviceGetName");
        deviceTotalMem = h.get("hipDeviceTotalMem");
        driverGetVersion = h.get("hipDriverGetVersion");
        runtimeGetVersion = h.get("hipRuntimeGetVersion");
        deviceGetStreamPriorityRange = h.get("hipDeviceGetStreamPriorityRange");
        streamCreateWithPriority = h.get("hipStreamCreateWithPriority");
        streamGetPriority = h.get("hipStreamGetPriority");
        streamDestroy = h.get("hipStreamDestroy");
        streamSynchronize = h.get("hipStreamSynchronize");
        streamQuery = h.get("hipStreamQuery");
        eventCreateWithFlags = h.get("hipEventCreateWithFlags");
        eventRecord = h.get("hipEventRecord");
        eventQuery = h.get("hipEventQuery");
        eventSynchronize = h.get("hipEventSynchronize");
        eventElapsedTime = h.get("hipEventElapsedTime");
        eventDestroy = h.get("hipEventDestroy");
        moduleLoadData = h.get("hipModuleLoadData");
        moduleGetFunction = h.get("hipModuleGetFunction");
        moduleUnload = h.get("hipModuleUnload");
        moduleLaunchKernel = h.get("hipModuleLaunchKernel");
        memcpyAsync = h.get("hipMemcpyAsync");
        memsetAsync = h.get("hipMemsetAsync");
        malloc = h.get("hipMalloc");
        free = h.get("hipFree");
        memGetInfo = h.get("hipMemGetInfo");
        hostMalloc = h.get("hipHostMalloc");
        hostFree = h.get("hipHostFree");
        memcpyHtoDAsync = h.get("hipMemcpyHtoDAsync");
        memcpyDtoHAsync = h.get("hipMemcpyDtoHAsync");
        memsetD8Async = h.get("hipMemsetD8Async");
    }

    /**
     * Loads the library and binds every function in {@link #SIGNATURES}.
     *
     * @param library a path (contains '/') or a file name for the dynamic loader's search
     * @throws IllegalArgumentException if the loader cannot open it (the message says why)
     * @throws HalException if it opens but lacks a symbol (not a HIP runtime, or too old)
     */
    // Loading a library and binding its functions is what this class is for; the node and the
    // test JVMs grant native access (--enable-native-access=ALL-UNNAMED).
    @SuppressWarnings("restricted")
    static HipApi load(String library) {
        Arena arena = Arena.ofShared();
        try {
            SymbolLookup lookup = library.contains("/")
                    ? SymbolLookup.libraryLookup(Path.of(library), arena)
                    : SymbolLookup.libraryLookup(library, arena);
            Linker linker = Linker.nativeLinker();
            Map<String, MethodHandle> handles = new LinkedHashMap<>();
            List<String> missing = new ArrayList<>();
            for (Map.Entry<String, FunctionDescriptor> e : SIGNATURES.entrySet()) {
                lookup.find(e.getKey()).ifPresentOrElse(
                        address -> handles.put(e.getKey(), linker.downcallHandle(address, e.getValue())),
                        () -> missing.add(e.getKey()));
            }
            if (!missing.isEmpty()) {
                throw new HalException(library + " opened but lacks " + missing + "; a HIP runtime (libamdhip64, ROCm 5 or newer) exports them");
            }
            return new HipApi(library, arena, handles);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** @return what was loaded, as given to {@link #load} */
    String library() {
        return library;
    }

    /** Unloads the library. Every stream, event and module must be gone first. */
    @Override
    public void close() {
        arena.close();
    }

    // ------------------------------------------------------------------ errors

    /** @return e.g. {@code hipErrorNoDevice (100)}, with the library's description where it adds one */
    String describe(int error) {
        String name = cString(invokeAddress(getErrorName, error));
        String text = cString(invokeAddress(getErrorString, error));
        String base = (name == null ? "hipError" : name) + " (" + error + ")";
        return text == null || text.isEmpty() || text.equals(name) ? base : base + ": " + text;
    }

    /** @throws HalException naming the call, what it was about, and the error, if {@code error} is not success */
    void check(int error, String call, String about) {
        if (error != SUCCESS) {
            throw new HalException(call + (about.isEmpty() ? "" : " (" + about + ")") + " failed: " + describe(error));
        }
    }

    // HIP returns pointers to static NUL-terminated strings; the bound only limits the scan.
    @SuppressWarnings("restricted")
    private static String cString(MemorySegment p) {
        if (p.equals(MemorySegment.NULL)) {
            return null;
        }
        return p.reinterpret(4096).getString(0, StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ devices

    /** What hipGetDeviceCount said: its error (hipErrorNoDevice without a GPU) and the count it wrote. */
    record DeviceCount(int error, int count) { }

    DeviceCount deviceCount() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            int rc = invokeInt(getDeviceCount, out);
            return new DeviceCount(rc, out.get(JAVA_INT, 0));
        }
    }

    void setDevice(int ordinal) {
        check(invokeInt(setDevice, ordinal), "hipSetDevice", "device " + ordinal);
    }

    int deviceAttribute(int attribute, int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(invokeInt(deviceGetAttribute, out, attribute, ordinal), "hipDeviceGetAttribute",
                    "attribute " + attribute + ", device " + ordinal);
            return out.get(JAVA_INT, 0);
        }
    }

    String deviceName(int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(256);
            check(invokeInt(deviceGetName, out, 256, ordinal), "hipDeviceGetName", "device " + ordinal);
            return out.getString(0, StandardCharsets.UTF_8);
        }
    }

    long deviceTotalMem(int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(invokeInt(deviceTotalMem, out, ordinal), "hipDeviceTotalMem", "device " + ordinal);
            return out.get(JAVA_LONG, 0);
        }
    }

    int driverVersion() {
        return intOut(driverGetVersion, "hipDriverGetVersion");
    }

    int runtimeVersion() {
        return intOut(runtimeGetVersion, "hipRuntimeGetVersion");
    }

    /** @return {least, greatest} for the current device; HIP: a lower number is more urgent */
    int[] streamPriorityRange() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment least = a.allocate(JAVA_INT);
            MemorySegment greatest = a.allocate(JAVA_INT);
            check(invokeInt(deviceGetStreamPriorityRange, least, greatest), "hipDeviceGetStreamPriorityRange", "");
            return new int[] {least.get(JAVA_INT, 0), greatest.get(JAVA_INT, 0)};
        }
    }

    // ------------------------------------------------------------------ streams

    /** Creates a stream on the calling thread's current device. */
    MemorySegment streamCreateWithPriority(int flags, int priority) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check(invokeInt(streamCreateWithPriority, out, flags, priority), "hipStreamCreateWithPriority",
                    "priority " + priority);
            return out.get(ADDRESS, 0);
        }
    }

    int streamPriority(MemorySegment stream) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(invokeInt(streamGetPriority, stream, out), "hipStreamGetPriority", handle("stream", stream));
            return out.get(JAVA_INT, 0);
        }
    }

    int streamDestroy(MemorySegment stream) {
        return invokeInt(streamDestroy, stream);
    }

    int streamSynchronize(MemorySegment stream) {
        return invokeInt(streamSynchronize, stream);
    }

    int streamQuery(MemorySegment stream) {
        return invokeInt(streamQuery, stream);
    }

    // ------------------------------------------------------------------ events

    /** Creates an event on the calling thread's current device. */
    MemorySegment eventCreate(int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check(invokeInt(eventCreateWithFlags, out, flags), "hipEventCreateWithFlags", "flags " + flags);
            return out.get(ADDRESS, 0);
        }
    }

    int eventRecord(MemorySegment event, MemorySegment stream) {
        return invokeInt(eventRecord, event, stream);
    }

    int eventQuery(MemorySegment event) {
        return invokeInt(eventQuery, event);
    }

    int eventSynchronize(MemorySegment event) {
        return invokeInt(eventSynchronize, event);
    }

    /**
     * @param out a 4-byte scratch segment the caller owns (the poller reuses one)
     * @return the error; on success the milliseconds between the two events are in {@code out}
     */
    int eventElapsedTime(MemorySegment out, MemorySegment start, MemorySegment stop) {
        return invokeInt(eventElapsedTime, out, start, stop);
    }

    static float elapsedMillis(MemorySegment out) {
        return out.get(JAVA_FLOAT, 0);
    }

    int eventDestroy(MemorySegment event) {
        return invokeInt(eventDestroy, event);
    }

    // ------------------------------------------------------------------ modules and launches

    /**
     * Loads a code object onto the calling thread's current device.
     *
     * @param image the code object's bytes; a NUL is appended, which an ELF code object ignores
     *        and a text image (the test double's) needs
     */
    MemorySegment moduleLoadData(byte[] image, String about) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment data = a.allocate(image.length + 1L, 16);
            MemorySegment.copy(image, 0, data, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, image.length);
            MemorySegment out = a.allocate(ADDRESS);
            check(invokeInt(moduleLoadData, out, data), "hipModuleLoadData", about);
            return out.get(ADDRESS, 0);
        }
    }

    MemorySegment moduleGetFunction(MemorySegment module, String name, String about) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check(invokeInt(moduleGetFunction, out, module, a.allocateFrom(name)), "hipModuleGetFunction", about);
            return out.get(ADDRESS, 0);
        }
    }

    int moduleUnload(MemorySegment module) {
        return invokeInt(moduleUnload, module);
    }

    int moduleLaunchKernel(MemorySegment function, int gx, int gy, int gz, int bx, int by, int bz, int sharedMem,
                           MemorySegment stream, MemorySegment kernelParams) {
        try {
            return (int) moduleLaunchKernel.invokeExact(function, gx, gy, gz, bx, by, bz, sharedMem, stream, kernelParams,
                    MemorySegment.NULL);
        } catch (Throwable t) {
            throw rethrow("hipModuleLaunchKernel", t);
        }
    }

    int memcpyAsync(long target, long source, long bytes, MemorySegment stream) {
        try {
            return (int) memcpyAsync.invokeExact(MemorySegment.ofAddress(target), MemorySegment.ofAddress(source), bytes,
                    MEMCPY_DEFAULT, stream);
        } catch (Throwable t) {
            throw rethrow("hipMemcpyAsync", t);
        }
    }

    int memsetAsync(long target, int value, long bytes, MemorySegment stream) {
        try {
            return (int) memsetAsync.invokeExact(MemorySegment.ofAddress(target), value, bytes, stream);
        } catch (Throwable t) {
            throw rethrow("hipMemsetAsync", t);
        }
    }

    // ------------------------------------------------------------------ device memory (host API)

    /** What a call that hands back a pointer said: its error and, on success, the pointer. */
    record Pointer(int error, MemorySegment pointer) {
    }

    /** hipMalloc on the calling thread's current device. */
    Pointer malloc(long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = (int) malloc.invokeExact(out, bytes);
            return new Pointer(rc, rc == SUCCESS ? out.get(ADDRESS, 0) : MemorySegment.NULL);
        } catch (Throwable t) {
            throw rethrow("hipMalloc", t);
        }
    }

    int free(long address) {
        return invokeInt(free, MemorySegment.ofAddress(address));
    }

    /** @return {free, total} bytes of the current device, or null if HIP refuses to tell */
    long[] memInfo() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment free = a.allocate(JAVA_LONG);
            MemorySegment total = a.allocate(JAVA_LONG);
            if (invokeInt(memGetInfo, free, total) != SUCCESS) {
                return null;
            }
            return new long[] {free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0)};
        }
    }

    /** Page-locked host memory (hipHostMalloc, default flags), sized {@code bytes}; null if HIP refuses. */
    @SuppressWarnings("restricted") // the segment HIP hands back is exactly as large as asked for
    MemorySegment hostMalloc(long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = (int) hostMalloc.invokeExact(out, bytes, 0);
            return rc == SUCCESS ? out.get(ADDRESS, 0).reinterpret(bytes) : null;
        } catch (Throwable t) {
            throw rethrow("hipHostMalloc", t);
        }
    }

    int hostFree(MemorySegment m) {
        return invokeInt(hostFree, m);
    }

    int memcpyHtoDAsync(long target, MemorySegment source, long bytes, MemorySegment stream) {
        try {
            return (int) memcpyHtoDAsync.invokeExact(MemorySegment.ofAddress(target), source, bytes, stream);
        } catch (Throwable t) {
            throw rethrow("hipMemcpyHtoDAsync", t);
        }
    }

    int memcpyDtoHAsync(MemorySegment target, long source, long bytes, MemorySegment stream) {
        try {
            return (int) memcpyDtoHAsync.invokeExact(target, MemorySegment.ofAddress(source), bytes, stream);
        } catch (Throwable t) {
            throw rethrow("hipMemcpyDtoHAsync", t);
        }
    }

    int memsetD8Async(long target, byte value, long bytes, MemorySegment stream) {
        try {
            return (int) memsetD8Async.invokeExact(MemorySegment.ofAddress(target), value, bytes, stream);
        } catch (Throwable t) {
            throw rethrow("hipMemsetD8Async", t);
        }
    }

    /** What hipModuleLoadData said: its error and, on success, the module. */
    record ModuleLoad(int error, MemorySegment module) {
    }

    /** Like {@link #moduleLoadData}, but hands the error back for the caller to explain. */
    ModuleLoad moduleLoad(byte[] image) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment data = a.allocate(image.length + 1L, 16);
            MemorySegment.copy(image, 0, data, JAVA_BYTE, 0, image.length);
            MemorySegment out = a.allocate(ADDRESS);
            int rc = invokeInt(moduleLoadData, out, data);
            return new ModuleLoad(rc, rc == SUCCESS ? out.get(ADDRESS, 0) : MemorySegment.NULL);
        }
    }

    /** Like {@link #moduleGetFunction}, but hands the error back. */
    Pointer moduleFunction(MemorySegment module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = invokeInt(moduleGetFunction, out, module, a.allocateFrom(name));
            return new Pointer(rc, rc == SUCCESS ? out.get(ADDRESS, 0) : MemorySegment.NULL);
        }
    }

    // ------------------------------------------------------------------ invocation plumbing

    static String handle(String what, MemorySegment h) {
        return what + " 0x" + Long.toHexString(h.address());
    }

    private int intOut(MethodHandle mh, String call) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(invokeInt(mh, out), call, "");
            return out.get(JAVA_INT, 0);
        }
    }

    private static int invokeInt(MethodHandle mh, MemorySegment a) {
        try {
            return (int) mh.invokeExact(a);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static int invokeInt(MethodHandle mh, int a) {
        try {
            return (int) mh.invokeExact(a);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static int invokeInt(MethodHandle mh, MemorySegment a, int b) {
        try {
            return (int) mh.invokeExact(a, b);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static int invokeInt(MethodHandle mh, MemorySegment a, MemorySegment b) {
        try {
            return (int) mh.invokeExact(a, b);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static int invokeInt(MethodHandle mh, MemorySegment a, int b, int c) {
        try {
            return (int) mh.invokeExact(a, b, c);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static int invokeInt(MethodHandle mh, MemorySegment a, MemorySegment b, MemorySegment c) {
        try {
            return (int) mh.invokeExact(a, b, c);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static MemorySegment invokeAddress(MethodHandle mh, int a) {
        try {
            return (MemorySegment) mh.invokeExact(a);
        } catch (Throwable t) {
            throw rethrow(mh.toString(), t);
        }
    }

    private static RuntimeException rethrow(String call, Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new HalException("calling " + call + " failed: " + t, t);
    }
}
