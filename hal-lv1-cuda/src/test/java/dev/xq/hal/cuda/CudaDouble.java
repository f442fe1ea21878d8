package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A CPU-backed stand-in for libcuda, for tests on machines without a GPU. Every function the
 * adapter binds is an FFM upcall stub with the C signature of cuda.h, found through a
 * {@link SymbolLookup}: the adapter calls it through the same downcall handles it uses on real
 * hardware, with real pointers to real memory (kernelParams arrays, out-parameters, JIT log
 * buffers). Streams are Java threads that run their operations in order; "device memory" is
 * host memory; event timestamps are {@link System#nanoTime()}.
 *
 * <p>Kernels: a module is PTX text; its {@code .entry} names and parameter sizes are read from
 * it. {@code xq_spin} waits its argument's nanoseconds; {@code xq_probe} stores its arguments at
 * its first argument as the real PTX does; {@code xq_matmul_tiled} and {@code xq_saxpy} (the
 * example host bundle's kernels) compute what the CUDA source does; other kernels do nothing.
 * Memory: {@code cuMemAlloc_v2} hands out host memory and remembers it until {@code cuMemFree_v2},
 * which counts frees of memory it did not hand out ({@link #badFrees}).
 *
 * <p>Why this file is over 800 lines: it is the driver API the adapter binds, one upcall per
 * function with its C signature and its behaviour, and a stand-in must answer every function the
 * adapter may call; split by area, one symbol table would be spread over classes that only make
 * sense together.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
final class CudaDouble implements AutoCloseable {

    static final int NOT_READY = 600;
    static final int INVALID_CONTEXT = 201;
    static final int INVALID_HANDLE = 400;
    static final int INVALID_PTX = 218;
    static final int UNKNOWN = 999;

    private final Arena arena = Arena.ofShared();
    private final Map<String, MemorySegment> symbols = new HashMap<>();
    private final Map<Integer, MemorySegment> errorNames = new ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong(0x1000);
    private final ThreadLocal<Long> current = new ThreadLocal<>();
    private final Map<Long, Stream> streams = new ConcurrentHashMap<>();
    private final Map<Long, Event> events = new ConcurrentHashMap<>();
    private final Map<Long, Map<String, long[]>> modules = new ConcurrentHashMap<>();
    private final Map<Long, Fn> functions = new ConcurrentHashMap<>();
    private final Map<Long, Integer> contexts = new ConcurrentHashMap<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    final List<Integer> streamPriorities = new CopyOnWriteArrayList<>();
    final AtomicInteger kernelsLaunched = new AtomicInteger();
    /** When each kernel that ran ended ({@link System#nanoTime()}, in the order they ended). */
    final List<Long> kernelEnds = new CopyOnWriteArrayList<>();
    /** When each kernel that ran started, in the order they started. */
    final List<Long> kernelStarts = new CopyOnWriteArrayList<>();
    /** How many cuEventRecord calls were made, by stream. */
    private final Map<Long, AtomicInteger> eventsRecorded = new ConcurrentHashMap<>();
    /** How many events made with CU_EVENT_DISABLE_TIMING were recorded. */
    final AtomicInteger untimedEventsRecorded = new AtomicInteger();
    final AtomicInteger hostFuncsRun = new AtomicInteger();
    /** How many cuEventQuery calls were made. */
    final AtomicInteger eventQueries = new AtomicInteger();
    final AtomicInteger liveEvents = new AtomicInteger();
    final AtomicInteger liveStreams = new AtomicInteger();
    final AtomicInteger retainedContexts = new AtomicInteger();

    // configuration, set before the adapter starts
    volatile int initResult = 0;
    volatile int deviceCount = 1;
    volatile int multiprocessors = 4;
    volatile int leastPriority = 0;
    volatile int greatestPriority = -5;
    /** The next cuLaunchKernel returns this error if non-zero. */
    volatile int failNextLaunch;
    /** The next kernel "faults": its end event and everything after it report this error. */
    volatile int faultNextKernel;
    /** How many of the next recorded events are stamped late (a busy device or host), and by how much. */
    final AtomicInteger lateStamps = new AtomicInteger();
    volatile long lateStampNanos;

    private record Fn(String name, long[] sizes) { }

    private final class Event {
        volatile boolean timing = true;
        volatile boolean recorded;
        volatile boolean done;
        volatile long nanos;
        volatile int error;
        /** Which record the event's state belongs to: as in CUDA, a record supersedes an earlier one still pending. */
        final AtomicLong generation = new AtomicLong();
    }

    private final class Stream {
        final LinkedBlockingQueue<Runnable> ops = new LinkedBlockingQueue<>();
        final Thread thread;
        final AtomicInteger pending = new AtomicInteger();
        volatile int error;
        volatile boolean destroyed;

        Stream(long id) {
            thread = Thread.ofPlatform().daemon().name("cudadouble-stream-" + id).start(this::run);
        }

        void submit(Runnable op) {
            pending.incrementAndGet();
            ops.add(op);
        }

        private void run() {
            try {
                while (true) {
                    Runnable op = ops.take();
                    try {
                        op.run();
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                    if (pending.decrementAndGet() == 0 && destroyed) {
                        return;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    CudaDouble() {
        try {
            bindAll();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the lookup that {@link CudaApi#bind} takes */
    SymbolLookup lookup() {
        return name -> Optional.ofNullable(symbols.get(name));
    }

    CudaApi api() {
        return CudaApi.bind("cudadouble", lookup());
    }

    /** @return exceptions thrown inside the double (they must not be, in a passing test) */
    List<Throwable> errors() {
        return errors;
    }

    @Override
    public void close() {
        for (Stream s : streams.values()) {
            s.thread.interrupt();
        }
        // the stubs stay valid until the arena closes; the adapter is closed first by the tests
        arena.close();
    }

    // ------------------------------------------------------------------ binding

    private void bindAll() throws ReflectiveOperationException {
        Map<String, FunctionDescriptor> all = new LinkedHashMap<>(CudaApi.REQUIRED);
        all.putAll(CudaApi.OPTIONAL);
        MethodHandles.Lookup l = MethodHandles.lookup();
        for (Map.Entry<String, FunctionDescriptor> e : all.entrySet()) {
            String name = e.getKey();
            FunctionDescriptor fd = e.getValue();
            MethodType type = fd.toMethodType();
            MethodHandle target = l.findVirtual(CudaDouble.class, name, type).bindTo(this);
            symbols.put(name, Linker.nativeLinker().upcallStub(target, fd, arena));
        }
    }

    /** Drops a symbol, to test what a library without it does. */
    CudaDouble without(String name) {
        symbols.remove(name);
        return this;
    }

    private static MemorySegment out(MemorySegment p, MemoryLayout layout) {
        return p.reinterpret(layout.byteSize());
    }

    private long newHandle() {
        return handles.addAndGet(0x10);
    }

    private boolean noContext() {
        return current.get() == null || current.get() == 0L;
    }

    private int guard(java.util.function.IntSupplier body) {
        try {
            return body.getAsInt();
        } catch (Throwable t) {
            errors.add(t);
            return UNKNOWN;
        }
    }

    // ------------------------------------------------------------------ the C functions

    int cuInit(int flags) {
        return initResult;
    }

    int cuDriverGetVersion(MemorySegment v) {
        out(v, JAVA_INT).set(JAVA_INT, 0, 13000);
        return 0;
    }

    int cuGetErrorName(int error, MemorySegment p) {
        return guard(() -> {
            String name = switch (error) {
                case 0 -> "CUDA_SUCCESS";
                case 1 -> "CUDA_ERROR_INVALID_VALUE";
                case 100 -> "CUDA_ERROR_NO_DEVICE";
                case 201 -> "CUDA_ERROR_INVALID_CONTEXT";
                case 218 -> "CUDA_ERROR_INVALID_PTX";
                case 400 -> "CUDA_ERROR_INVALID_HANDLE";
                case 500 -> "CUDA_ERROR_NOT_FOUND";
                case 600 -> "CUDA_ERROR_NOT_READY";
                case 700 -> "CUDA_ERROR_ILLEGAL_ADDRESS";
                default -> null;
            };
            if (name == null) {
                return 1;
            }
            MemorySegment s = errorNames.computeIfAbsent(error, k -> arena.allocateFrom(name));
            out(p, ADDRESS).set(ADDRESS, 0, s);
            return 0;
        });
    }

    int cuGetErrorString(int error, MemorySegment p) {
        return 1;
    }

    int cuDeviceGetCount(MemorySegment n) {
        out(n, JAVA_INT).set(JAVA_INT, 0, initResult == 0 ? deviceCount : 0);
        return initResult == 0 ? 0 : 3;
    }

    int cuDeviceGet(MemorySegment d, int ordinal) {
        if (ordinal < 0 || ordinal >= deviceCount) {
            return 101;
        }
        out(d, JAVA_INT).set(JAVA_INT, 0, ordinal);
        return 0;
    }

    int cuDeviceGetName(MemorySegment name, int len, int device) {
        byte[] b = ("XQ CUDA double " + device).getBytes(StandardCharsets.UTF_8);
        MemorySegment s = name.reinterpret(len);
        MemorySegment.copy(b, 0, s, JAVA_BYTE, 0, b.length);
        s.set(JAVA_BYTE, b.length, (byte) 0);
        return 0;
    }

    int cuDeviceGetAttribute(MemorySegment v, int attribute, int device) {
        int value = switch (attribute) {
            case CudaApi.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT -> multiprocessors;
            case CudaApi.CU_DEVICE_ATTRIBUTE_CLOCK_RATE -> 1_755_000;
            case CudaApi.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK -> 1024;
            case CudaApi.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR -> 9;
            case CudaApi.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR -> 0;
            default -> 1;
        };
        out(v, JAVA_INT).set(JAVA_INT, 0, value);
        return 0;
    }

    int cuDeviceTotalMem_v2(MemorySegment v, int device) {
        out(v, JAVA_LONG).set(JAVA_LONG, 0, 80L << 30);
        return 0;
    }

    int cuDevicePrimaryCtxRetain(MemorySegment ctx, int device) {
        long h = 0x100 + device;
        contexts.put(h, device);
        retainedContexts.incrementAndGet();
        out(ctx, ADDRESS).set(ADDRESS, 0, MemorySegment.ofAddress(h));
        return 0;
    }

    int cuDevicePrimaryCtxRelease_v2(int device) {
        retainedContexts.decrementAndGet();
        return 0;
    }

    int cuCtxSetCurrent(MemorySegment ctx) {
        if (ctx.address() != 0 && !contexts.containsKey(ctx.address())) {
            return INVALID_CONTEXT;
        }
        current.set(ctx.address());
        return 0;
    }

    int cuCtxGetStreamPriorityRange(MemorySegment least, MemorySegment greatest) {
        if (noContext()) {
            return INVALID_CONTEXT;
        }
        out(least, JAVA_INT).set(JAVA_INT, 0, leastPriority);
        out(greatest, JAVA_INT).set(JAVA_INT, 0, greatestPriority);
        return 0;
    }

    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+(\\w+)\\s*\\(([^)]*)\\)");
    private static final Pattern PARAM = Pattern.compile("\\.param\\s+\\.[usbf](8|16|32|64)\\s+\\w+");

    int cuModuleLoadDataEx(MemorySegment module, MemorySegment image, int n, MemorySegment options, MemorySegment values) {
        return guard(() -> {
            if (noContext()) {
                return INVALID_CONTEXT;
            }
            String text = image.reinterpret(1 << 20).getString(0, StandardCharsets.UTF_8);
            MemorySegment opts = options.reinterpret(4L * n);
            MemorySegment vals = values.reinterpret(8L * n);
            MemorySegment log = null;
            long logSize = 0;
            for (int i = 0; i < n; i++) {
                int o = opts.getAtIndex(JAVA_INT, i);
                if (o == CudaApi.CU_JIT_ERROR_LOG_BUFFER) {
                    log = vals.getAtIndex(ADDRESS, i);
                } else if (o == CudaApi.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
                    logSize = vals.getAtIndex(ADDRESS, i).address();
                }
            }
            if (!text.contains(".version") || !text.contains(".target")) {
                if (log != null && logSize > 0) {
                    byte[] msg = "ptxas fatal   : no .version directive".getBytes(StandardCharsets.UTF_8);
                    MemorySegment l = log.reinterpret(logSize);
                    MemorySegment.copy(msg, 0, l, JAVA_BYTE, 0, (int) Math.min(msg.length, logSize - 1));
                    l.set(JAVA_BYTE, Math.min(msg.length, logSize - 1), (byte) 0);
                }
                return INVALID_PTX;
            }
            Map<String, long[]> entries = new HashMap<>();
            Matcher m = ENTRY.matcher(text);
            while (m.find()) {
                List<Long> sizes = new ArrayList<>();
                Matcher p = PARAM.matcher(m.group(2));
                while (p.find()) {
                    sizes.add(Long.parseLong(p.group(1)) / 8);
                }
                entries.put(m.group(1), sizes.stream().mapToLong(Long::longValue).toArray());
            }
            long h = newHandle();
            modules.put(h, entries);
            out(module, ADDRESS).set(ADDRESS, 0, MemorySegment.ofAddress(h));
            return 0;
        });
    }

    int cuModuleGetFunction(MemorySegment fn, MemorySegment module, MemorySegment name) {
        return guard(() -> {
            Map<String, long[]> entries = modules.get(module.address());
            if (entries == null) {
                return INVALID_HANDLE;
            }
            String n = name.reinterpret(1024).getString(0, StandardCharsets.UTF_8);
            long[] sizes = entries.get(n);
            if (sizes == null) {
                return 500;
            }
            long h = newHandle();
            functions.put(h, new Fn(n, sizes));
            out(fn, ADDRESS).set(ADDRESS, 0, MemorySegment.ofAddress(h));
            return 0;
        });
    }

    /** @return modules loaded and not unloaded */
    int liveModules() {
        return modules.size();
    }

    int cuModuleUnload(MemorySegment module) {
        return modules.remove(module.address()) == null ? INVALID_HANDLE : 0;
    }

    int cuFuncGetParamInfo(MemorySegment fn, long index, MemorySegment offset, MemorySegment size) {
        Fn f = functions.get(fn.address());
        if (f == null) {
            return INVALID_HANDLE;
        }
        if (index < 0 || index >= f.sizes().length) {
            return 1;
        }
        long off = 0;
        for (int i = 0; i < index; i++) {
            off = align(off, f.sizes()[i]) + f.sizes()[i];
        }
        out(offset, JAVA_LONG).set(JAVA_LONG, 0, align(off, f.sizes()[(int) index]));
        out(size, JAVA_LONG).set(JAVA_LONG, 0, f.sizes()[(int) index]);
        return 0;
    }

    private static long align(long v, long a) {
        return (v + a - 1) / a * a;
    }

    int cuLaunchKernel(MemorySegment fn, int gx, int gy, int gz, int bx, int by, int bz, int shared, MemorySegment stream,
                       MemorySegment params, MemorySegment extra) {
        return guard(() -> {
            if (noContext()) {
                return INVALID_CONTEXT;
            }
            int fail = failNextLaunch;
            if (fail != 0) {
                failNextLaunch = 0;
                return fail;
            }
            Fn f = functions.get(fn.address());
            Stream s = streams.get(stream.address());
            if (f == null || s == null) {
                return INVALID_HANDLE;
            }
            // the driver reads the argument values during the call, as the real one does
            long[] values = new long[f.sizes().length];
            MemorySegment array = params.reinterpret(8L * values.length);
            for (int i = 0; i < values.length; i++) {
                MemorySegment v = array.getAtIndex(ADDRESS, i).reinterpret(f.sizes()[i]);
                values[i] = f.sizes()[i] == 4 ? v.get(JAVA_INT, 0) & 0xFFFF_FFFFL : v.get(JAVA_LONG, 0);
            }
            int fault = faultNextKernel;
            faultNextKernel = 0;
            kernelsLaunched.incrementAndGet();
            s.submit(() -> {
                if (fault != 0) {
                    s.error = fault;
                    return;
                }
                if (s.error != 0) {
                    return;
                }
                kernelStarts.add(System.nanoTime());
                run(f, values);
                kernelEnds.add(System.nanoTime());
            });
            return 0;
        });
    }

    private void run(Fn f, long[] v) {
        switch (f.name()) {
            case "xq_spin" -> {
                long until = System.nanoTime() + v[0];
                while (System.nanoTime() < until) {
                    long left = until - System.nanoTime();
                    if (left > 200_000) {
                        LockSupport.parkNanos(left - 100_000);
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }
            // example-host's kernels (src/main/cuda/matmul.cu), computed on the host
            case "xq_matmul_tiled" -> {
                int m = (int) v[3];
                int n = (int) v[4];
                int k = (int) v[5];
                MemorySegment a = MemorySegment.ofAddress(v[0]).reinterpret(4L * m * k);
                MemorySegment b = MemorySegment.ofAddress(v[1]).reinterpret(4L * k * n);
                MemorySegment c = MemorySegment.ofAddress(v[2]).reinterpret(4L * m * n);
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        float sum = 0;
                        for (int p = 0; p < k; p++) {
                            sum += a.getAtIndex(JAVA_FLOAT, (long) i * k + p) * b.getAtIndex(JAVA_FLOAT, (long) p * n + j);
                        }
                        c.setAtIndex(JAVA_FLOAT, (long) i * n + j, sum);
                    }
                }
            }
            case "xq_saxpy" -> {
                int n = (int) v[0];
                float alpha = Float.intBitsToFloat((int) v[1]);
                MemorySegment x = MemorySegment.ofAddress(v[2]).reinterpret(4L * n);
                MemorySegment y = MemorySegment.ofAddress(v[3]).reinterpret(4L * n);
                for (int i = 0; i < n; i++) {
                    y.setAtIndex(JAVA_FLOAT, i, alpha * x.getAtIndex(JAVA_FLOAT, i) + y.getAtIndex(JAVA_FLOAT, i));
                }
            }
            case "xq_probe" -> {
                MemorySegment o = MemorySegment.ofAddress(v[0]).reinterpret(24);
                o.set(JAVA_INT, 0, (int) v[1]);
                o.set(JAVA_FLOAT, 4, Float.intBitsToFloat((int) v[3]));
                o.set(JAVA_LONG, 8, v[2]);
                o.set(ValueLayout.JAVA_DOUBLE, 16, Double.longBitsToDouble(v[4]));
            }
            default -> {
            }
        }
    }

    int cuLaunchHostFunc(MemorySegment stream, MemorySegment fn, MemorySegment userData) {
        return guard(() -> {
            Stream s = streams.get(stream.address());
            if (s == null) {
                return INVALID_HANDLE;
            }
            MethodHandle h = Linker.nativeLinker().downcallHandle(fn, CudaApi.HOST_FN);
            long data = userData.address();
            s.submit(() -> {
                try {
                    h.invokeExact(MemorySegment.ofAddress(data));
                    hostFuncsRun.incrementAndGet();
                } catch (Throwable t) {
                    errors.add(t);
                }
            });
            return 0;
        });
    }

    /** Device memory handed out and not freed: address to size. */
    final Map<Long, Long> allocations = new ConcurrentHashMap<>();
    /** Frees of an address that was not allocated (or freed twice). */
    final AtomicInteger badFrees = new AtomicInteger();
    /** Returned by the next cuMemAlloc_v2 instead of memory, once (e.g. 2: CUDA_ERROR_OUT_OF_MEMORY). */
    volatile int failNextAlloc;

    int cuMemAlloc_v2(MemorySegment p, long bytes) {
        if (noContext()) {
            return INVALID_CONTEXT;
        }
        int fail = failNextAlloc;
        if (fail != 0) {
            failNextAlloc = 0;
            return fail;
        }
        MemorySegment m = arena.allocate(Math.max(1, bytes), 256);
        allocations.put(m.address(), bytes);
        out(p, JAVA_LONG).set(JAVA_LONG, 0, m.address());
        return 0;
    }

    /** Page-locked host memory handed out and not freed: address to size. */
    final Map<Long, Long> hostAllocations = new ConcurrentHashMap<>();
    /** cuMemAllocHost_v2 calls, to see that staging areas are reused. */
    final AtomicInteger hostAllocs = new AtomicInteger();

    int cuMemAllocHost_v2(MemorySegment p, long bytes) {
        if (noContext()) {
            return INVALID_CONTEXT;
        }
        MemorySegment m = arena.allocate(Math.max(1, bytes), 4096);
        hostAllocations.put(m.address(), bytes);
        hostAllocs.incrementAndGet();
        out(p, ADDRESS).set(ADDRESS, 0, m);
        return 0;
    }

    int cuMemFreeHost(MemorySegment p) {
        if (noContext()) {
            return INVALID_CONTEXT;
        }
        if (hostAllocations.remove(p.address()) == null) {
            badFrees.incrementAndGet();
            return 1;
        }
        return 0;
    }

    int cuMemFree_v2(long address) {
        if (noContext()) {
            return INVALID_CONTEXT;
        }
        if (allocations.remove(address) == null) {
            badFrees.incrementAndGet();
            return 1; // CUDA_ERROR_INVALID_VALUE
        }
        return 0;
    }

    private int copy(long dst, long src, long bytes, MemorySegment stream) {
        Stream s = streams.get(stream.address());
        if (s == null) {
            return INVALID_HANDLE;
        }
        s.submit(() -> MemorySegment.copy(MemorySegment.ofAddress(src).reinterpret(bytes), 0,
                MemorySegment.ofAddress(dst).reinterpret(bytes), 0, bytes));
        return 0;
    }

    int cuMemcpyAsync(long dst, long src, long bytes, MemorySegment stream) {
        return guard(() -> copy(dst, src, bytes, stream));
    }

    int cuMemcpyHtoDAsync_v2(long dst, MemorySegment src, long bytes, MemorySegment stream) {
        return guard(() -> copy(dst, src.address(), bytes, stream));
    }

    int cuMemcpyDtoHAsync_v2(MemorySegment dst, long src, long bytes, MemorySegment stream) {
        return guard(() -> copy(dst.address(), src, bytes, stream));
    }

    int cuMemsetD8Async(long dst, byte value, long bytes, MemorySegment stream) {
        return guard(() -> {
            Stream s = streams.get(stream.address());
            if (s == null) {
                return INVALID_HANDLE;
            }
            s.submit(() -> MemorySegment.ofAddress(dst).reinterpret(bytes).fill(value));
            return 0;
        });
    }

    private static final java.lang.invoke.VarHandle WORD = JAVA_INT.varHandle();

    /** Stream memory operations seen: waits queued, writes queued. */
    final AtomicInteger waitsQueued = new AtomicInteger();
    final AtomicInteger writesQueued = new AtomicInteger();

    int cuStreamWaitValue32_v2(MemorySegment stream, long address, int value, int flags) {
        return guard(() -> {
            Stream s = streams.get(stream.address());
            if (s == null) {
                return INVALID_HANDLE;
            }
            if (flags != CudaApi.CU_STREAM_WAIT_VALUE_EQ || (address & 3) != 0) {
                return 1;
            }
            waitsQueued.incrementAndGet();
            MemorySegment word = MemorySegment.ofAddress(address).reinterpret(4);
            // the stream's thread waits as the device's front end does: nothing after it runs until the word matches
            s.submit(() -> {
                // a volatile read, as the device's front end reads the word afresh at each look
                while ((int) WORD.getVolatile(word, 0L) != value) {
                    Thread.onSpinWait();
                }
            });
            return 0;
        });
    }

    int cuStreamWriteValue32_v2(MemorySegment stream, long address, int value, int flags) {
        return guard(() -> {
            Stream s = streams.get(stream.address());
            if (s == null) {
                return INVALID_HANDLE;
            }
            if ((address & 3) != 0) {
                return 1;
            }
            writesQueued.incrementAndGet();
            MemorySegment word = MemorySegment.ofAddress(address).reinterpret(4);
            s.submit(() -> word.set(JAVA_INT, 0, value));
            return 0;
        });
    }

    /** The stream creation with this number (1 = the first) fails with CUDA_ERROR_OUT_OF_MEMORY (2); 0: none. */
    volatile int failStreamCreate;
    private final AtomicInteger streamCreates = new AtomicInteger();

    int cuStreamCreateWithPriority(MemorySegment p, int flags, int priority) {
        return guard(() -> {
            if (noContext()) {
                return INVALID_CONTEXT;
            }
            if (streamCreates.incrementAndGet() == failStreamCreate) {
                return 2;
            }
            long h = newHandle();
            streams.put(h, new Stream(h));
            streamPriorities.add(priority);
            liveStreams.incrementAndGet();
            out(p, ADDRESS).set(ADDRESS, 0, MemorySegment.ofAddress(h));
            return 0;
        });
    }

    int cuStreamDestroy_v2(MemorySegment stream) {
        Stream s = streams.remove(stream.address());
        if (s == null) {
            return INVALID_HANDLE;
        }
        liveStreams.decrementAndGet();
        s.destroyed = true;
        s.submit(() -> { });
        return 0;
    }

    int cuStreamSynchronize(MemorySegment stream) {
        Stream s = streams.get(stream.address());
        if (s == null) {
            return INVALID_HANDLE;
        }
        while (s.pending.get() > 0) {
            Thread.onSpinWait();
        }
        return s.error;
    }

    int cuStreamQuery(MemorySegment stream) {
        Stream s = streams.get(stream.address());
        if (s == null) {
            return INVALID_HANDLE;
        }
        return s.error != 0 ? s.error : s.pending.get() > 0 ? NOT_READY : 0;
    }

    int cuEventCreate(MemorySegment p, int flags) {
        return guard(() -> {
            if (noContext()) {
                return INVALID_CONTEXT;
            }
            long h = newHandle();
            Event e = new Event();
            e.timing = (flags & 0x2) == 0; // CU_EVENT_DISABLE_TIMING
            events.put(h, e);
            liveEvents.incrementAndGet();
            out(p, ADDRESS).set(ADDRESS, 0, MemorySegment.ofAddress(h));
            return 0;
        });
    }

    int cuEventDestroy_v2(MemorySegment event) {
        if (events.remove(event.address()) == null) {
            return INVALID_HANDLE;
        }
        liveEvents.decrementAndGet();
        return 0;
    }

    /** @return how many events were recorded on {@code stream} */
    int eventsRecordedOn(MemorySegment stream) {
        AtomicInteger n = eventsRecorded.get(stream.address());
        return n == null ? 0 : n.get();
    }

    int cuEventRecord(MemorySegment event, MemorySegment stream) {
        return guard(() -> {
            Event e = events.get(event.address());
            Stream s = streams.get(stream.address());
            if (e == null || s == null) {
                return INVALID_HANDLE;
            }
            e.recorded = true;
            long g;
            synchronized (e) {
                g = e.generation.incrementAndGet();
                e.done = false;
            }
            eventsRecorded.computeIfAbsent(stream.address(), k -> new AtomicInteger()).incrementAndGet();
            if (!e.timing) {
                untimedEventsRecorded.incrementAndGet();
            }
            boolean late = lateStamps.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
            long lateBy = lateStampNanos;
            s.submit(() -> {
                // parkNanos may return early (a permit left by the queue's wake-ups): park to the deadline
                for (long until = System.nanoTime() + lateBy; late && System.nanoTime() < until; ) {
                    LockSupport.parkNanos(until - System.nanoTime());
                }
                synchronized (e) {
                    if (e.generation.get() == g) {
                        e.nanos = System.nanoTime();
                        e.error = s.error;
                        e.done = true;
                    }
                }
            });
            return 0;
        });
    }

    /** @return when the double stamped {@code event}'s last record ({@link System#nanoTime()}), or -1 if not yet */
    long stampOf(MemorySegment event) {
        Event e = events.get(event.address());
        return e != null && e.done ? e.nanos : -1;
    }

    int cuEventQuery(MemorySegment event) {
        eventQueries.incrementAndGet();
        Event e = events.get(event.address());
        if (e == null) {
            return INVALID_HANDLE;
        }
        if (!e.done) {
            return NOT_READY;
        }
        return e.error;
    }

    int cuEventSynchronize(MemorySegment event) {
        Event e = events.get(event.address());
        if (e == null) {
            return INVALID_HANDLE;
        }
        while (!e.done) {
            Thread.onSpinWait();
        }
        return e.error;
    }

    int cuEventElapsedTime(MemorySegment ms, MemorySegment start, MemorySegment end) {
        Event a = events.get(start.address());
        Event b = events.get(end.address());
        if (a == null || b == null || !a.recorded || !b.recorded || !a.timing || !b.timing) {
            return INVALID_HANDLE; // as CUDA: an event made without timing has no time to give
        }
        if (!a.done || !b.done) {
            return NOT_READY;
        }
        out(ms, JAVA_FLOAT).set(JAVA_FLOAT, 0, (float) ((b.nanos - a.nanos) / 1e6));
        return 0;
    }

    int cuEventElapsedTime_v2(MemorySegment ms, MemorySegment start, MemorySegment end) {
        return cuEventElapsedTime(ms, start, end);
    }
}
