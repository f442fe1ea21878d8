package dev.xq.hal.cuda;

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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The slice of the CUDA driver API (libcuda) that XQ uses, bound with FFM. Every method returns
 * the {@code CUresult} as an int, or throws {@link HalException} where a method's name says it
 * checks. Handles ({@code CUcontext}, {@code CUstream}, {@code CUevent}, {@code CUmodule},
 * {@code CUfunction}) are zero-length segments holding the driver's pointer; device addresses
 * ({@code CUdeviceptr}) are longs. Symbol names are the ones cuda.h maps the plain names to
 * ({@code _v2} where it does), so the bindings get the same ABI a C program built against
 * CUDA 12/13 headers gets.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
final class CudaApi {

    // ---- CUresult (cuda.h, enum cudaError_enum)
    static final int CUDA_SUCCESS = 0;
    static final int CUDA_ERROR_INVALID_VALUE = 1;
    static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    static final int CUDA_ERROR_STUB_LIBRARY = 34;
    static final int CUDA_ERROR_NO_DEVICE = 100;
    static final int CUDA_ERROR_INVALID_HANDLE = 400;
    static final int CUDA_ERROR_NOT_FOUND = 500;
    static final int CUDA_ERROR_NOT_READY = 600;
    static final int CUDA_ERROR_ILLEGAL_ADDRESS = 700;
    static final int CUDA_ERROR_LAUNCH_FAILED = 719;

    // ---- CUdevice_attribute (cuda.h, enum CUdevice_attribute_enum)
    static final int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
    /** kHz. */
    static final int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
    static final int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
    static final int CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33;
    static final int CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34;
    static final int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39;
    static final int CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41;
    static final int CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50;
    static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
    static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

    // ---- CUstream_flags (cuda.h, enum CUstream_flags_enum): no implicit sync with the NULL stream
    static final int CU_STREAM_NON_BLOCKING = 0x1;

    // ---- CUevent_flags (cuda.h, enum CUevent_flags_enum)
    static final int CU_EVENT_DEFAULT = 0x0;
    static final int CU_EVENT_BLOCKING_SYNC = 0x1;
    static final int CU_EVENT_DISABLE_TIMING = 0x2;

    // ---- CUstreamWaitValue_flags (cuda.h): wait until *addr == value
    static final int CU_STREAM_WAIT_VALUE_EQ = 0x1;

    // ---- CUjit_option (cuda.h, enum CUjit_option_enum)
    static final int CU_JIT_ERROR_LOG_BUFFER = 5;
    static final int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

    /** Host callback signature {@code void (*CUhostFn)(void *userData)} (cuda.h). */
    static final FunctionDescriptor HOST_FN = FunctionDescriptor.ofVoid(ADDRESS);

    /** Required symbols and their C signatures (cuda.h of CUDA 13.0). */
    static final Map<String, FunctionDescriptor> REQUIRED = new LinkedHashMap<>();
    /** Symbols used when present: newer drivers only. */
    static final Map<String, FunctionDescriptor> OPTIONAL = new LinkedHashMap<>();

    static {
        REQUIRED.put("cuInit", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        REQUIRED.put("cuDriverGetVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuGetErrorName", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        REQUIRED.put("cuGetErrorString", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        REQUIRED.put("cuDeviceGetCount", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuDeviceGet", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        REQUIRED.put("cuDeviceGetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        REQUIRED.put("cuDeviceGetAttribute", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        REQUIRED.put("cuDeviceTotalMem_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        REQUIRED.put("cuDevicePrimaryCtxRetain", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        REQUIRED.put("cuDevicePrimaryCtxRelease_v2", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        REQUIRED.put("cuCtxSetCurrent", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuCtxGetStreamPriorityRange", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        REQUIRED.put("cuModuleLoadDataEx", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
        REQUIRED.put("cuModuleGetFunction", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        REQUIRED.put("cuModuleUnload", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuLaunchKernel", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        REQUIRED.put("cuLaunchHostFunc", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        REQUIRED.put("cuMemAlloc_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        REQUIRED.put("cuMemFree_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        REQUIRED.put("cuMemcpyAsync", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
        REQUIRED.put("cuMemcpyHtoDAsync_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
        REQUIRED.put("cuMemcpyDtoHAsync_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
        REQUIRED.put("cuMemsetD8Async", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_BYTE, JAVA_LONG, ADDRESS));
        REQUIRED.put("cuStreamCreateWithPriority", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        REQUIRED.put("cuStreamDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuStreamSynchronize", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuStreamQuery", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuEventCreate", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        REQUIRED.put("cuEventDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuEventRecord", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        REQUIRED.put("cuEventQuery", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        REQUIRED.put("cuEventSynchronize", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // cuda.h 12.8+ maps cuEventElapsedTime to _v2; older drivers have only the plain one (same signature)
        REQUIRED.put("cuEventElapsedTime", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        OPTIONAL.put("cuEventElapsedTime_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        // CUDA 12.4+: lets check() compare a kernel's parameters with the arguments given
        OPTIONAL.put("cuFuncGetParamInfo", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS));
        // stream memory operations (cuda.h maps the plain names to _v2 since CUDA 11.7): level 2's stall
        OPTIONAL.put("cuStreamWaitValue32_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT));
        OPTIONAL.put("cuStreamWriteValue32_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT));
        // page-locked staging for the data commands' copies (truly asynchronous; pageable memory is the fallback)
        OPTIONAL.put("cuMemAllocHost_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        OPTIONAL.put("cuMemFreeHost", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    private final String library;
    private final MethodHandle init;
    private final MethodHandle driverGetVersion;
    private final MethodHandle getErrorName;
    private final MethodHandle getErrorString;
    private final MethodHandle deviceGetCount;
    private final MethodHandle deviceGet;
    private final MethodHandle deviceGetName;
    private final MethodHandle deviceGetAttribute;
    private final MethodHandle deviceTotalMem;
    private final MethodHandle primaryCtxRetain;
    private final MethodHandle primaryCtxRelease;
    private final MethodHandle ctxSetCurrent;
    private final MethodHandle ctxGetStreamPriorityRange;
    private final MethodHandle moduleLoadDataEx;
    private final MethodHandle moduleGetFunction;
    private final MethodHandle moduleUnload;
    private final MethodHandle launchKernel;
    private final MethodHandle launchHostFunc;
    private final MethodHandle memAlloc;
    private final MethodHandle memFree;
    private final MethodHandle memcpyAsync;
    private final MethodHandle memcpyHtoDAsync;
    private final MethodHandle memcpyDtoHAsync;
    private final MethodHandle memsetD8Async;
    private final MethodHandle streamCreateWithPriority;
    private final MethodHandle streamDestroy;
    private final MethodHandle streamSynchronize;
    private final MethodHandle streamQuery;
    private final MethodHandle eventCreate;
    private final MethodHandle eventDestroy;
    private final MethodHandle eventRecord;
    private final MethodHandle eventQuery;
    private final MethodHandle eventSynchronize;
    private final MethodHandle eventElapsedTime;
    private final MethodHandle funcGetParamInfo;
    private final MethodHandle streamWaitValue32;
    private final MethodHandle streamWriteValue32;
    private final MethodHandle memAllocHost;
    private final MethodHandle memFreeHost;

    private CudaApi(String library, Map<String, MethodHandle> h) {
        this.library = library;
        init = h.get("cuInit");
        driverGetVersion = h.get("cuDriverGetVersion");
        getErrorName = h.get("cuGetErrorName");
        getErrorString = h.get("cuGetErrorString");
        deviceGetCount = h.get("cuDeviceGetCount");
        deviceGet = h.get("cuDeviceGet");
        deviceGetName = h.get("cuDeviceGetName");
        deviceGetAttribute = h.get("cuDeviceGetAttribute");
        deviceTotalMem = h.get("cuDeviceTotalMem_v2");
        primaryCtxRetain = h.get("cuDevicePrimaryCtxRetain");
        primaryCtxRelease = h.get("cuDevicePrimaryCtxRelease_v2");
        ctxSetCurrent = h.get("cuCtxSetCurrent");
        ctxGetStreamPriorityRange = h.get("cuCtxGetStreamPriorityRange");
        moduleLoadDataEx = h.get("cuModuleLoadDataEx");
        moduleGetFunction = h.get("cuModuleGetFunction");
        moduleUnload = h.get("cuModuleUnload");
        launchKernel = h.get("cuLaunchKernel");
        launchHostFunc = h.get("cuLaunchHostFunc");
        memAlloc = h.get("cuMemAlloc_v2");
        memFree = h.get("cuMemFree_v2");
        memcpyAsync = h.get("cuMemcpyAsync");
        memcpyHtoDAsync = h.get("cuMemcpyHtoDAsync_v2");
        memcpyDtoHAsync = h.get("cuMemcpyDtoHAsync_v2");
        memsetD8Async = h.get("cuMemsetD8Async");
        streamCreateWithPriority = h.get("cuStreamCreateWithPriority");
        streamDestroy = h.get("cuStreamDestroy_v2");
        streamSynchronize = h.get("cuStreamSynchronize");
        streamQuery = h.get("cuStreamQuery");
        eventCreate = h.get("cuEventCreate");
        eventDestroy = h.get("cuEventDestroy_v2");
        eventRecord = h.get("cuEventRecord");
        eventQuery = h.get("cuEventQuery");
        eventSynchronize = h.get("cuEventSynchronize");
        eventElapsedTime = h.containsKey("cuEventElapsedTime_v2") ? h.get("cuEventElapsedTime_v2") : h.get("cuEventElapsedTime");
        funcGetParamInfo = h.get("cuFuncGetParamInfo");
        streamWaitValue32 = h.get("cuStreamWaitValue32_v2");
        streamWriteValue32 = h.get("cuStreamWriteValue32_v2");
        memAllocHost = h.get("cuMemAllocHost_v2");
        memFreeHost = h.get("cuMemFreeHost");
    }

    /**
     * Opens the driver library. It stays loaded for the life of the JVM (the global arena):
     * after cuInit the driver runs threads inside it, and unloading it under them would crash
     * the process; a second load of the same library only bumps the loader's count.
     *
     * @param library a path (contains '/') or a file name for the dynamic loader's search
     * @throws IllegalArgumentException if the loader cannot open it
     * @throws HalException if it opens but lacks a symbol XQ needs
     */
    static CudaApi load(String library) {
        SymbolLookup lookup = library.contains("/")
                ? SymbolLookup.libraryLookup(java.nio.file.Path.of(library), Arena.global())
                : SymbolLookup.libraryLookup(library, Arena.global());
        return bind(library, lookup);
    }

    /** Binds the functions found through {@code lookup}; tests hand in a lookup of upcall stubs. */
    static CudaApi bind(String library, SymbolLookup lookup) {
        Linker linker = Linker.nativeLinker();
        Map<String, MethodHandle> handles = new LinkedHashMap<>();
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, FunctionDescriptor> e : REQUIRED.entrySet()) {
            Optional<MemorySegment> address = lookup.find(e.getKey());
            if (address.isEmpty()) {
                missing.add(e.getKey());
            } else {
                handles.put(e.getKey(), linker.downcallHandle(address.get(), e.getValue()));
            }
        }
        if (!missing.isEmpty()) {
            throw new HalException(library + " opened but lacks " + missing
                    + "; the CUDA driver library of CUDA 10.0 or newer exports them");
        }
        for (Map.Entry<String, FunctionDescriptor> e : OPTIONAL.entrySet()) {
            lookup.find(e.getKey()).ifPresent(a -> handles.put(e.getKey(), linker.downcallHandle(a, e.getValue())));
        }
        return new CudaApi(library, handles);
    }

    // No Linker.Option.critical, even for cuEventQuery: a critical call may not reach an upcall
    // (the test double is made of upcalls) and blocks safepoints if the driver ever waits on a lock.

    String library() {
        return library;
    }

    /** @return whether the driver can report a kernel's parameter sizes (cuFuncGetParamInfo, CUDA 12.4+) */
    boolean hasParamInfo() {
        return funcGetParamInfo != null;
    }

    /** @return whether the driver has the stream memory operations level 2 stalls with (CUDA 11.7+) */
    boolean hasStreamMemOps() {
        return streamWaitValue32 != null && streamWriteValue32 != null;
    }

    // ------------------------------------------------------------------ errors

    /** @return e.g. {@code CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected} */
    String describe(int error) {
        String name = null;
        String text = null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            if ((int) getErrorName.invokeExact(error, p) == CUDA_SUCCESS) {
                name = cString(p.get(ADDRESS, 0));
            }
            if ((int) getErrorString.invokeExact(error, p) == CUDA_SUCCESS) {
                text = cString(p.get(ADDRESS, 0));
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
        String base = (name == null ? "CUresult" : name) + " (" + error + ")";
        return text == null || text.isEmpty() || text.equals(name) ? base : base + ": " + text;
    }

    /** @return the error's name alone, e.g. {@code CUDA_ERROR_NO_DEVICE (100)} */
    String name(int error) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            if ((int) getErrorName.invokeExact(error, p) == CUDA_SUCCESS) {
                String n = cString(p.get(ADDRESS, 0));
                if (n != null) {
                    return n + " (" + error + ")";
                }
            }
            return "CUresult " + error;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** @throws HalException naming the call, its subject and the error, unless {@code error} is success */
    void check(int error, String call, String about) {
        if (error != CUDA_SUCCESS) {
            throw failure(error, call, about);
        }
    }

    HalException failure(int error, String call, String about) {
        return new HalException(call + (about.isEmpty() ? "" : " (" + about + ")") + " failed: " + describe(error));
    }

    private static String cString(MemorySegment p) {
        if (p.equals(MemorySegment.NULL)) {
            return null;
        }
        return p.reinterpret(4096).getString(0, StandardCharsets.UTF_8);
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("FFM call failed", t);
    }

    // ------------------------------------------------------------------ init and devices

    int init(int flags) {
        try {
            return (int) init.invokeExact(flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** @return e.g. 13000 for CUDA 13.0 */
    int driverVersion() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check((int) driverGetVersion.invokeExact(out), "cuDriverGetVersion", "");
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The result of cuDeviceGetCount: its error and the count written. */
    record DeviceCount(int error, int count) { }

    DeviceCount deviceCount() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            int rc = (int) deviceGetCount.invokeExact(out);
            return new DeviceCount(rc, out.get(JAVA_INT, 0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** @return the CUdevice handle of an ordinal */
    int device(int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check((int) deviceGet.invokeExact(out, ordinal), "cuDeviceGet", "ordinal " + ordinal);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String deviceName(int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(256);
            check((int) deviceGetName.invokeExact(out, 256, device), "cuDeviceGetName", "device " + device);
            return out.getString(0, StandardCharsets.UTF_8);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int attribute(int attribute, int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check((int) deviceGetAttribute.invokeExact(out, attribute, device), "cuDeviceGetAttribute",
                    "attribute " + attribute + " of device " + device);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    long totalMemory(int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check((int) deviceTotalMem.invokeExact(out, device), "cuDeviceTotalMem_v2", "device " + device);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment primaryContextRetain(int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check((int) primaryCtxRetain.invokeExact(out, device), "cuDevicePrimaryCtxRetain", "device " + device);
            return out.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int primaryContextRelease(int device) {
        try {
            return (int) primaryCtxRelease.invokeExact(device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int setCurrent(MemorySegment context) {
        try {
            return (int) ctxSetCurrent.invokeExact(context);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** @return {least, greatest} stream priority of the current context (greatest is numerically lower) */
    int[] streamPriorityRange() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment least = a.allocate(JAVA_INT);
            MemorySegment greatest = a.allocate(JAVA_INT);
            check((int) ctxGetStreamPriorityRange.invokeExact(least, greatest), "cuCtxGetStreamPriorityRange", "");
            return new int[] {least.get(JAVA_INT, 0), greatest.get(JAVA_INT, 0)};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------ modules and launches

    /** What cuModuleLoadDataEx did: its error, the module, and the JIT's error log. */
    record ModuleLoad(int error, MemorySegment module, String log) { }

    /**
     * Loads a module from an image in memory: PTX text (NUL-terminated), cubin or fatbin. The
     * JIT's error log comes back so that a bad PTX file is reported with the line at fault.
     */
    ModuleLoad moduleLoad(MemorySegment image) {
        int logSize = 8192;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            MemorySegment log = a.allocate(logSize);
            MemorySegment options = a.allocate(JAVA_INT, 2);
            options.setAtIndex(JAVA_INT, 0, CU_JIT_ERROR_LOG_BUFFER);
            options.setAtIndex(JAVA_INT, 1, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
            MemorySegment values = a.allocate(ADDRESS, 2);
            values.setAtIndex(ADDRESS, 0, log);
            // the size travels as the pointer's value ("unsigned int" option, cuda.h)
            values.setAtIndex(ADDRESS, 1, MemorySegment.ofAddress(logSize));
            int rc = (int) moduleLoadDataEx.invokeExact(out, image, 2, options, values);
            String text = log.getString(0, StandardCharsets.UTF_8).strip();
            return new ModuleLoad(rc, rc == CUDA_SUCCESS ? out.get(ADDRESS, 0) : MemorySegment.NULL, text);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The result of cuModuleGetFunction. */
    record FunctionLookup(int error, MemorySegment function) { }

    FunctionLookup moduleFunction(MemorySegment module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = (int) moduleGetFunction.invokeExact(out, module, a.allocateFrom(name));
            return new FunctionLookup(rc, rc == CUDA_SUCCESS ? out.get(ADDRESS, 0) : MemorySegment.NULL);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int moduleUnload(MemorySegment module) {
        try {
            return (int) moduleUnload.invokeExact(module);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * @return the byte sizes of a kernel's parameters in order, or {@code null} where the driver
     *         cannot tell (older than CUDA 12.4)
     */
    long[] parameterSizes(MemorySegment function) {
        if (funcGetParamInfo == null) {
            return null;
        }
        List<Long> sizes = new ArrayList<>();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment offset = a.allocate(JAVA_LONG);
            MemorySegment size = a.allocate(JAVA_LONG);
            // the driver answers CUDA_ERROR_INVALID_VALUE for the first index past the last parameter
            for (long i = 0; i < 4096; i++) {
                int rc = (int) funcGetParamInfo.invokeExact(function, i, offset, size);
                if (rc == CUDA_ERROR_INVALID_VALUE) {
                    break;
                }
                check(rc, "cuFuncGetParamInfo", "parameter " + i);
                sizes.add(size.get(JAVA_LONG, 0));
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return sizes.stream().mapToLong(Long::longValue).toArray();
    }

    /** {@code kernelParams} is an array of pointers, one per parameter, each to the argument's value. */
    int launchKernel(MemorySegment function, int gx, int gy, int gz, int bx, int by, int bz, int sharedMem,
                     MemorySegment stream, MemorySegment kernelParams) {
        try {
            return (int) launchKernel.invokeExact(function, gx, gy, gz, bx, by, bz, sharedMem, stream, kernelParams,
                    MemorySegment.NULL);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int launchHostFunc(MemorySegment stream, MemorySegment fn, MemorySegment userData) {
        try {
            return (int) launchHostFunc.invokeExact(stream, fn, userData);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------ memory

    long memAlloc(long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check((int) memAlloc.invokeExact(out, bytes), "cuMemAlloc_v2", bytes + " bytes");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Page-locked host memory (cuMemAllocHost_v2), which copies on a stream read and write
     * without the calling thread waiting for the stream. Needs the context current.
     *
     * @return the memory, or null where the library lacks the call or refuses (then the caller
     *         stages in pageable memory, whose device-to-host copies wait for the stream)
     */
    MemorySegment memAllocHost(long bytes) {
        if (memAllocHost == null || memFreeHost == null) {
            return null;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            if ((int) memAllocHost.invokeExact(out, bytes) != CUDA_SUCCESS) {
                return null;
            }
            return out.get(ADDRESS, 0).reinterpret(bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Frees memory of {@link #memAllocHost}; needs the context current. */
    int memFreeHost(MemorySegment p) {
        try {
            return (int) memFreeHost.invokeExact(p);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int memFree(long address) {
        try {
            return (int) memFree.invokeExact(address);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Unified-addressing copy: the driver tells host from device addresses itself. */
    int memcpyAsync(long target, long source, long bytes, MemorySegment stream) {
        try {
            return (int) memcpyAsync.invokeExact(target, source, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int memcpyHtoDAsync(long target, MemorySegment source, long bytes, MemorySegment stream) {
        try {
            return (int) memcpyHtoDAsync.invokeExact(target, source, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int memcpyDtoHAsync(MemorySegment target, long source, long bytes, MemorySegment stream) {
        try {
            return (int) memcpyDtoHAsync.invokeExact(target, source, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int memsetD8Async(long target, byte value, long bytes, MemorySegment stream) {
        try {
            return (int) memsetD8Async.invokeExact(target, value, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------ streams and events

    /** Work after this on {@code stream} waits until the 32-bit word at {@code address} equals {@code value}. */
    int streamWaitValue32(MemorySegment stream, long address, int value, int flags) {
        try {
            return (int) streamWaitValue32.invokeExact(stream, address, value, flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Writes {@code value} to the 32-bit word at {@code address} in {@code stream}'s order. */
    int streamWriteValue32(MemorySegment stream, long address, int value, int flags) {
        try {
            return (int) streamWriteValue32.invokeExact(stream, address, value, flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment streamCreate(int flags, int priority) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check((int) streamCreateWithPriority.invokeExact(out, flags, priority), "cuStreamCreateWithPriority",
                    "priority " + priority);
            return out.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int streamDestroy(MemorySegment stream) {
        try {
            return (int) streamDestroy.invokeExact(stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int streamSynchronize(MemorySegment stream) {
        try {
            return (int) streamSynchronize.invokeExact(stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int streamQuery(MemorySegment stream) {
        try {
            return (int) streamQuery.invokeExact(stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment eventCreate(int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check((int) eventCreate.invokeExact(out, flags), "cuEventCreate", "flags " + flags);
            return out.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int eventDestroy(MemorySegment event) {
        try {
            return (int) eventDestroy.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int eventRecord(MemorySegment event, MemorySegment stream) {
        try {
            return (int) eventRecord.invokeExact(event, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** @return CUDA_SUCCESS when the event has happened, CUDA_ERROR_NOT_READY when not yet, else the error */
    int eventQuery(MemorySegment event) {
        try {
            return (int) eventQuery.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int eventSynchronize(MemorySegment event) {
        try {
            return (int) eventSynchronize.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * @param millis a 4-byte scratch segment that receives the time from {@code start} to
     *        {@code end} in milliseconds (negative when {@code end} happened first)
     */
    int elapsed(MemorySegment millis, MemorySegment start, MemorySegment end) {
        try {
            return (int) eventElapsedTime.invokeExact(millis, start, end);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Scratch layout for {@link #elapsed}. */
    static final java.lang.foreign.ValueLayout.OfFloat MILLIS = JAVA_FLOAT;
}
