package dev.xq.hal.sim;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import dev.xq.api.Command.Arg;
import dev.xq.hal.spi.DeviceOp;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwBuffer;
import dev.xq.hal.spi.HwFunction;
import dev.xq.hal.spi.HwModule;
import dev.xq.hal.spi.XpuMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The memory and the programs of one simulated device. Buffers are host memory (zeroed at
 * allocation) at made-up device addresses that are never reused, so a stale address is caught
 * rather than landing in someone else's buffer. Programs are text ({@code docs/host-api.md}):
 *
 * <pre>
 * xq-sim-program 1
 * # a comment
 * kernel xq_matmul_tiled matmul_f32
 * kernel xq_saxpy saxpy_f32
 * </pre>
 *
 * Each {@code kernel NAME OP} line names a built-in operation, which really computes, with the
 * parameters of the CUDA kernel of the same job (so one host program drives both):
 * {@code matmul_f32(ptr a, ptr b, ptr c, i32 m, i32 n, i32 k)}: {@code c[m x n] = a[m x k] * b[k x n]},
 * row-major floats; {@code saxpy_f32(i32 n, f32 alpha, ptr x, ptr y)}: {@code y = alpha * x + y}.
 * The grid and block of a launch are not used: the operation covers its whole range.
 *
 * <p>Timing model (virtual device time, as spins): a copy or fill takes
 * {@link #BYTES_PER_MICRO} bytes per microsecond, an operation {@link #FLOPS_PER_MICRO} floating
 * point operations per microsecond; at least 1 us each. The data moves when the command ends on
 * the device's timeline, before its completion is reported, so a read's target holds the data
 * when the submission completes.
 */
final class SimMemory implements XpuMemory {

    /** Copy and fill bandwidth: 10 GB/s. */
    static final long BYTES_PER_MICRO = 10_000;
    /**
     * Compute rate of an operation: 1 GFLOP/s, a rate the host computing the result on the
     * device's thread can keep up with, so that the model's time, not the host's arithmetic,
     * decides when commands end (a 64 x 64 matmul: 0.5 ms; 128 x 128: 4.2 ms).
     */
    static final long FLOPS_PER_MICRO = 1_000;
    /** Where made-up device addresses start. */
    static final long BASE = 0x7f00_0000_0000L;

    static final String MAGIC = "xq-sim-program 1";

    /** The built-in operations and their parameter sizes. */
    enum Op {
        MATMUL_F32("matmul_f32", List.of(8L, 8L, 8L, 4L, 4L, 4L)),
        SAXPY_F32("saxpy_f32", List.of(4L, 4L, 8L, 8L));

        final String word;
        final List<Long> sizes;

        Op(String word, List<Long> sizes) {
            this.word = word;
            this.sizes = sizes;
        }

        static Op of(String word) {
            for (Op o : values()) {
                if (o.word.equals(word)) {
                    return o;
                }
            }
            return null;
        }
    }

    private final SimSettings settings;
    private final TreeMap<Long, SimBuffer> buffers = new TreeMap<>();
    private long next = BASE;
    private long allocated;
    private int modules;

    SimMemory(SimSettings settings) {
        this.settings = settings;
    }

    private void device(String deviceId) {
        if (!settings.id().equals(deviceId)) {
            throw new IllegalArgumentException("device '" + deviceId + "' is not this sim driver's; known: " + settings.id());
        }
    }

    @Override
    public HwBuffer allocate(String deviceId, long bytes) {
        device(deviceId);
        synchronized (this) {
            long free = settings.memoryBytes() - allocated;
            if (bytes < 1 || bytes > free) {
                throw new IllegalArgumentException("buffer of " + bytes + " bytes does not fit on sim device " + settings.id() + ": "
                        + free + " of " + settings.memoryBytes() + " bytes are free");
            }
            Arena arena = Arena.ofShared();
            MemorySegment seg = arena.allocate(bytes, 256);
            SimBuffer b = new SimBuffer(next, bytes, seg, arena);
            next += (bytes + 255) / 256 * 256 + 256;
            buffers.put(b.address, b);
            allocated += bytes;
            return b;
        }
    }

    /** The device is gone: frees every buffer (their owners see them closed: the runtime forgets the driver's objects). */
    void freeAll() {
        List<SimBuffer> all;
        synchronized (this) {
            all = List.copyOf(buffers.values());
        }
        for (SimBuffer b : all) {
            b.free();
        }
    }

    /** @return bytes allocated now */
    synchronized long allocated() {
        return allocated;
    }

    /** @return buffers allocated now */
    synchronized int bufferCount() {
        return buffers.size();
    }

    /** @return modules loaded now */
    synchronized int moduleCount() {
        return modules;
    }

    /**
     * @return the memory at device address {@code address}, {@code bytes} long
     * @throws HalException if that range is not within one live buffer
     */
    synchronized MemorySegment at(long address, long bytes, String what) {
        var e = buffers.floorEntry(address);
        if (e == null || address - e.getKey() + bytes > e.getValue().size || bytes < 0) {
            throw new HalException("sim device " + settings.id() + ": " + what + " at 0x" + Long.toHexString(address) + " ("
                    + bytes + " bytes) is not within an allocated buffer");
        }
        return e.getValue().segment.asSlice(address - e.getKey(), bytes);
    }

    final class SimBuffer implements HwBuffer {
        final long address;
        final long size;
        final MemorySegment segment;
        final Arena arena;

        SimBuffer(long address, long size, MemorySegment segment, Arena arena) {
            this.address = address;
            this.size = size;
            this.segment = segment;
            this.arena = arena;
        }

        @Override
        public String deviceId() {
            return settings.id();
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public void free() {
            synchronized (SimMemory.this) {
                if (buffers.remove(address) == null) {
                    return;
                }
                allocated -= size;
            }
            arena.close();
        }
    }

    // ------------------------------------------------------------------ programs

    @Override
    public HwModule load(String deviceId, String name, byte[] image) {
        device(deviceId);
        String text = new String(image, StandardCharsets.UTF_8);
        String[] lines = text.split("\r?\n", -1);
        if (lines.length == 0 || !lines[0].trim().equals(MAGIC)) {
            String first = lines.length == 0 ? "" : lines[0].trim();
            throw new IllegalArgumentException("module '" + name + "' is not a sim program: its first line is '"
                    + (first.length() > 40 ? first.substring(0, 40) + "..." : first) + "', expected '" + MAGIC + "'");
        }
        Map<String, Op> kernels = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i].trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] w = line.split("\\s+");
            if (w.length != 3 || !w[0].equals("kernel")) {
                throw new IllegalArgumentException("module '" + name + "' line " + (i + 1) + " '" + line
                        + "' is not 'kernel NAME OP'");
            }
            Op op = Op.of(w[2]);
            if (op == null) {
                throw new IllegalArgumentException("module '" + name + "' line " + (i + 1) + ": operation '" + w[2]
                        + "' is unknown; known: matmul_f32, saxpy_f32");
            }
            if (kernels.putIfAbsent(w[1], op) != null) {
                throw new IllegalArgumentException("module '" + name + "' line " + (i + 1) + ": kernel '" + w[1] + "' is defined twice");
            }
        }
        synchronized (this) {
            modules++;
        }
        return new SimModule(name, Map.copyOf(kernels));
    }

    private final class SimModule implements HwModule {
        final String name;
        final Map<String, Op> kernels;
        boolean unloaded;

        SimModule(String name, Map<String, Op> kernels) {
            this.name = name;
            this.kernels = kernels;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public HwFunction function(String function) {
            Op op = kernels.get(function);
            if (op == null) {
                throw new IllegalArgumentException("module '" + name + "' has no kernel '" + function + "'; it has: "
                        + String.join(", ", new java.util.TreeSet<>(kernels.keySet())));
            }
            return new SimFunction(function, op);
        }

        @Override
        public void unload() {
            synchronized (SimMemory.this) {
                if (!unloaded) {
                    unloaded = true;
                    modules--;
                }
            }
        }
    }

    record SimFunction(String name, Op op) implements HwFunction {
        @Override
        public Optional<List<Long>> parameterSizes() {
            return Optional.of(op.sizes);
        }
    }

    // ------------------------------------------------------------------ running ops

    /** What a data command costs on the device and what it does at its end. */
    record Work(long micros, Runnable effect) {
    }

    /**
     * @return the device time and the effect of an op
     * @throws HalException if it names memory that is not allocated or a function of another device
     */
    Work plan(DeviceOp op) {
        return switch (op) {
            case DeviceOp.Write w -> {
                MemorySegment dst = at(w.target().address() + w.offset(), w.source().byteSize(), "write");
                MemorySegment src = w.source();
                yield new Work(copyMicros(src.byteSize()), () -> MemorySegment.copy(src, 0, dst, 0, src.byteSize()));
            }
            case DeviceOp.Read r -> {
                MemorySegment src = at(r.source().address() + r.offset(), r.target().byteSize(), "read");
                MemorySegment dst = r.target();
                yield new Work(copyMicros(dst.byteSize()), () -> MemorySegment.copy(src, 0, dst, 0, dst.byteSize()));
            }
            case DeviceOp.Fill f -> {
                MemorySegment dst = at(f.target().address() + f.offset(), f.bytes(), "fill");
                yield new Work(copyMicros(f.bytes()), () -> dst.fill(f.value()));
            }
            case DeviceOp.Launch l -> launch(l);
        };
    }

    private static long copyMicros(long bytes) {
        return Math.max(1, (bytes + BYTES_PER_MICRO - 1) / BYTES_PER_MICRO);
    }

    private static long computeMicros(long flops) {
        return Math.max(1, (flops + FLOPS_PER_MICRO - 1) / FLOPS_PER_MICRO);
    }

    private Work launch(DeviceOp.Launch l) {
        if (!(l.function() instanceof SimFunction f)) {
            throw new HalException("sim device " + settings.id() + ": function " + l.function().name() + " is not a sim program's");
        }
        List<Arg> a = l.args();
        if (a.size() != f.op().sizes.size()) {
            throw new HalException("sim kernel " + f.name() + " takes " + f.op().sizes.size() + " arguments, got " + a.size());
        }
        return switch (f.op()) {
            case MATMUL_F32 -> {
                int m = i32(a.get(3), f, 3);
                int n = i32(a.get(4), f, 4);
                int k = i32(a.get(5), f, 5);
                if (m < 0 || n < 0 || k < 0) {
                    throw new HalException("sim kernel " + f.name() + ": m, n, k = " + m + ", " + n + ", " + k + " must be >= 0");
                }
                MemorySegment as = at(ptr(a.get(0), f, 0), 4L * m * k, f.name() + " a");
                MemorySegment bs = at(ptr(a.get(1), f, 1), 4L * k * n, f.name() + " b");
                MemorySegment cs = at(ptr(a.get(2), f, 2), 4L * m * n, f.name() + " c");
                yield new Work(computeMicros(2L * m * n * k), () -> matmul(as, bs, cs, m, n, k));
            }
            case SAXPY_F32 -> {
                int n = i32(a.get(0), f, 0);
                if (n < 0) {
                    throw new HalException("sim kernel " + f.name() + ": n = " + n + " must be >= 0");
                }
                float alpha = a.get(1) instanceof Arg.F32 x ? x.value() : Float.NaN;
                if (!(a.get(1) instanceof Arg.F32)) {
                    throw new HalException("sim kernel " + f.name() + ": argument #1 (alpha) must be an F32, got " + a.get(1));
                }
                MemorySegment xs = at(ptr(a.get(2), f, 2), 4L * n, f.name() + " x");
                MemorySegment ys = at(ptr(a.get(3), f, 3), 4L * n, f.name() + " y");
                yield new Work(computeMicros(2L * n), () -> {
                    for (long i = 0; i < n; i++) {
                        ys.setAtIndex(JAVA_FLOAT, i, alpha * xs.getAtIndex(JAVA_FLOAT, i) + ys.getAtIndex(JAVA_FLOAT, i));
                    }
                });
            }
        };
    }

    /**
     * c = a * b, each sum accumulated in float in the order of k, as the tiled CUDA kernel does
     * per thread; on arrays copied out of the buffers (element access through segments is several
     * times slower, and this runs on the device's one thread).
     */
    static void matmul(MemorySegment a, MemorySegment b, MemorySegment c, int m, int n, int k) {
        float[] av = a.toArray(JAVA_FLOAT);
        float[] bv = b.toArray(JAVA_FLOAT);
        float[] cv = new float[m * n];
        for (int i = 0; i < m; i++) {
            int ci = i * n;
            for (int p = 0; p < k; p++) {
                float x = av[i * k + p];
                int bp = p * n;
                for (int j = 0; j < n; j++) {
                    cv[ci + j] += x * bv[bp + j];
                }
            }
        }
        MemorySegment.copy(cv, 0, c, JAVA_FLOAT, 0, cv.length);
    }

    private static int i32(Arg a, SimFunction f, int i) {
        if (a instanceof Arg.I32 v) {
            return v.value();
        }
        throw new HalException("sim kernel " + f.name() + ": argument #" + i + " must be an I32, got " + a);
    }

    private static long ptr(Arg a, SimFunction f, int i) {
        if (a instanceof Arg.Ptr p) {
            return p.address();
        }
        throw new HalException("sim kernel " + f.name() + ": argument #" + i + " must be a buffer or Ptr, got " + a);
    }
}
