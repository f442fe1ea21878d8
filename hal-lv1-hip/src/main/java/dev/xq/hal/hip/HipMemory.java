package dev.xq.hal.hip;

import dev.xq.hal.spi.HwBuffer;
import dev.xq.hal.spi.HwFunction;
import dev.xq.hal.spi.HwModule;
import dev.xq.hal.spi.XpuMemory;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Device memory and code objects loaded at run time on the HIP devices ({@code hipMalloc},
 * {@code hipFree}, {@code hipModuleLoadData}, {@code hipModuleGetFunction},
 * {@code hipModuleUnload}); the data commands themselves run on the queue's stream
 * ({@link HipQueue}). Each call selects the device on the calling thread first
 * ({@code hipSetDevice}).
 *
 * <p>Parameter sizes: HIP has no call that tells a kernel's parameters (CUDA has
 * {@code cuFuncGetParamInfo}), so {@link HwFunction#parameterSizes()} is empty here and a
 * launch's arguments are not checked against the kernel; only their count is bounded.
 */
final class HipMemory implements XpuMemory {

    private final Supplier<HipPlatform> platform;

    /** @param platform the driver's platform now (a configuration change replaces it) */
    HipMemory(Supplier<HipPlatform> platform) {
        this.platform = platform;
    }

    @Override
    public HwBuffer allocate(String deviceId, long bytes) {
        HipDevice d = platform.get().memoryDevice(deviceId);
        if (bytes < 1) {
            throw new IllegalArgumentException("buffer of " + bytes + " bytes on " + deviceId + ": allowed: >= 1");
        }
        return d.allocate(bytes);
    }

    @Override
    public HwModule load(String deviceId, String name, byte[] image) {
        return platform.get().memoryDevice(deviceId).load(name, image);
    }

    /**
     * Memory from hipMalloc; freed by {@link #free} or, still open when the driver stops, by its
     * device. The device's table of live buffers is what makes a free happen once.
     */
    static final class HipBuffer implements HwBuffer {
        private final HipDevice device;
        private final long address;
        private final long size;

        HipBuffer(HipDevice device, long address, long size) {
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
        public void free() {
            device.free(this);
        }
    }

    /** A code object from hipModuleLoadData; the device's table of loaded modules makes an unload happen once. */
    static final class HipModule implements HwModule {
        private final HipDevice device;
        private final String name;
        private final MemorySegment module;

        HipModule(HipDevice device, String name, MemorySegment module) {
            this.device = device;
            this.name = name;
            this.module = module;
        }

        @Override
        public String name() {
            return name;
        }

        MemorySegment handle() {
            return module;
        }

        @Override
        public HwFunction function(String function) {
            return new HipFunction(function, device.function(this, function));
        }

        @Override
        public void unload() {
            device.unload(this);
        }
    }

    /** A kernel: its handle. HIP cannot tell its parameters, so their sizes are unknown. */
    record HipFunction(String name, MemorySegment handle) implements HwFunction {
        @Override
        public Optional<List<Long>> parameterSizes() {
            return Optional.empty();
        }
    }
}
