package dev.xq.hal.cuda;

import dev.xq.hal.spi.HwBuffer;
import dev.xq.hal.spi.HwFunction;
import dev.xq.hal.spi.HwModule;
import dev.xq.hal.spi.XpuMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Device memory and modules loaded at run time on the CUDA devices, through the driver API
 * ({@code cuMemAlloc_v2}, {@code cuMemFree_v2}, {@code cuModuleLoadDataEx},
 * {@code cuModuleGetFunction}, {@code cuFuncGetParamInfo}, {@code cuModuleUnload}); the data
 * commands themselves run on the queue's stream ({@link CudaQueue}). Each call makes the
 * device's primary context current on the calling thread first.
 */
final class CudaMemory implements XpuMemory {

    private final Supplier<CudaPlatform> platform;

    /** @param platform the driver's platform now (a configuration change replaces it) */
    CudaMemory(Supplier<CudaPlatform> platform) {
        this.platform = platform;
    }

    @Override
    public HwBuffer allocate(String deviceId, long bytes) {
        CudaDevice d = platform.get().device(deviceId);
        if (bytes < 1) {
            throw new IllegalArgumentException("buffer of " + bytes + " bytes on " + deviceId + ": allowed: >= 1");
        }
        d.makeCurrent();
        long address = d.api().memAlloc(bytes); // throws HalException naming the error (out of memory ...)
        return new CudaBuffer(d, address, bytes);
    }

    @Override
    public HwModule load(String deviceId, String name, byte[] image) {
        CudaDevice d = platform.get().device(deviceId);
        // PTX is text and must end with a NUL; a cubin or fatbin (ELF, fatbin magic) is taken as it is
        boolean binary = image.length >= 4 && ((image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F')
                || (image[0] == 0x50 && image[1] == (byte) 0xed && image[2] == 0x55 && image[3] == (byte) 0xba)
                || (image[0] == (byte) 0xba && image[1] == 0x55 && image[2] == (byte) 0xed && image[3] == 0x50));
        boolean terminated = image.length > 0 && image[image.length - 1] == 0;
        d.makeCurrent();
        CudaApi.ModuleLoad load;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment img = a.allocate(image.length + (binary || terminated ? 0 : 1));
            MemorySegment.copy(image, 0, img, ValueLayout.JAVA_BYTE, 0, image.length);
            load = d.api().moduleLoad(img);
        }
        if (load.error() != CudaApi.CUDA_SUCCESS) {
            throw new IllegalArgumentException("module '" + name + "' (" + image.length + " bytes, " + (binary ? "cubin/fatbin" : "PTX")
                    + ") does not load on " + deviceId + ": " + d.api().describe(load.error())
                    + (load.log().isEmpty() ? "" : "; JIT log: " + load.log()));
        }
        return new CudaModule(d, name, load.module());
    }

    /** Memory from cuMemAlloc. */
    static final class CudaBuffer implements HwBuffer {
        private final CudaDevice device;
        private final long address;
        private final long size;
        private boolean freed;

        CudaBuffer(CudaDevice device, long address, long size) {
            this.device = device;
            this.address = address;
            this.size = size;
        }

        @Override
        public String deviceId() {
            return device.id();
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
        public synchronized void free() {
            if (freed) {
                return;
            }
            freed = true;
            device.makeCurrent();
            int rc = device.api().memFree(address);
            if (rc != CudaApi.CUDA_SUCCESS) {
                device.log().warn("cuMemFree_v2 of " + size + " bytes at 0x" + Long.toHexString(address) + " on " + device.id()
                        + " failed: " + device.api().describe(rc), null);
            }
        }
    }

    /** A module from cuModuleLoadDataEx. */
    static final class CudaModule implements HwModule {
        private final CudaDevice device;
        private final String name;
        private final MemorySegment module;
        private final List<CudaFunction> functions = new ArrayList<>();
        private boolean unloaded;

        CudaModule(CudaDevice device, String name, MemorySegment module) {
            this.device = device;
            this.name = name;
            this.module = module;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public synchronized HwFunction function(String function) {
            if (unloaded) {
                throw new IllegalStateException("module '" + name + "' on " + device.id() + " was unloaded");
            }
            device.makeCurrent();
            CudaApi.FunctionLookup found = device.api().moduleFunction(module, function);
            if (found.error() != CudaApi.CUDA_SUCCESS) {
                throw new IllegalArgumentException("module '" + name + "' has no kernel '" + function + "' ("
                        + device.api().describe(found.error()) + "); a kernel's name is its extern \"C\" name, its .entry in PTX");
            }
            CudaFunction f = new CudaFunction(function, found.function(), device.api().parameterSizes(found.function()));
            functions.add(f);
            return f;
        }

        @Override
        public synchronized void unload() {
            if (unloaded) {
                return;
            }
            unloaded = true;
            device.makeCurrent();
            int rc = device.api().moduleUnload(module);
            if (rc != CudaApi.CUDA_SUCCESS) {
                device.log().warn("cuModuleUnload of '" + name + "' on " + device.id() + " failed: " + device.api().describe(rc), null);
            }
        }
    }

    /** A kernel: its handle and, where the driver tells (cuFuncGetParamInfo), its parameter sizes. */
    record CudaFunction(String name, MemorySegment handle, long[] sizes) implements HwFunction {
        @Override
        public Optional<List<Long>> parameterSizes() {
            if (sizes == null) {
                return Optional.empty();
            }
            List<Long> l = new ArrayList<>(sizes.length);
            for (long s : sizes) {
                l.add(s);
            }
            return Optional.of(List.copyOf(l));
        }
    }
}
