package dev.xq.api;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One unit of XPU work. Commands of one queue run in submission order. A device accepts the
 * kinds its driver supports; submitting another kind fails at once with a message naming it.
 */
@ProviderType
public sealed interface Command {

    /** @return short name of the command kind, e.g. {@code spin} or {@code kernel} */
    String kind();

    /**
     * Synthetic work: occupies {@code engines} execution engines and {@code memoryBytes} of
     * device memory for {@code micros} microseconds. On a GPU, "engines" means the whole device.
     */
    record Spin(long micros, int engines, long memoryBytes) implements Command {
        public Spin {
            if (micros < 0 || micros > 3_600_000_000L) {
                throw new IllegalArgumentException("spin " + micros + " us is out of range [0, 3600000000] us");
            }
            if (engines < 1 || engines > 1_000_000) {
                throw new IllegalArgumentException("spin engines " + engines + " is out of range [1, 1000000]");
            }
            if (memoryBytes < 0) {
                throw new IllegalArgumentException("spin memory " + memoryBytes + " bytes is negative; allowed: >= 0");
            }
        }

        @Override
        public String kind() {
            return "spin";
        }
    }

    /** Grid or block dimensions of a kernel launch; each in [1, 2^31 - 1]. */
    record Dim3(int x, int y, int z) {
        public Dim3 {
            if (x < 1 || y < 1 || z < 1) {
                throw new IllegalArgumentException("dimensions (" + x + ", " + y + ", " + z + ") must each be >= 1");
            }
        }
    }

    /** A kernel argument, passed by value. */
    @ProviderType
    sealed interface Arg {
        /** A 32-bit integer. */
        record I32(int value) implements Arg { }
        /** A 64-bit integer. */
        record I64(long value) implements Arg { }
        /** A 32-bit float. */
        record F32(float value) implements Arg { }
        /** A 64-bit float. */
        record F64(double value) implements Arg { }
        /** A device address. */
        record Ptr(long address) implements Arg { }

        /**
         * A {@link DeviceBuffer}, passed as its device address (8 bytes); the buffer must be on the
         * queue's device and open when the launch is submitted.
         *
         * @since 1.5
         */
        record Buf(DeviceBuffer buffer) implements Arg {
            public Buf {
                Objects.requireNonNull(buffer, "buffer argument is null; give a DeviceBuffer from XQueueService.allocate");
            }
        }

        /** @return the size in bytes of the value the kernel receives: 4 for I32 and F32, 8 for the others */
        static long size(Arg arg) {
            return switch (arg) {
                case I32 ignored -> 4;
                case F32 ignored -> 4;
                case I64 ignored -> 8;
                case F64 ignored -> 8;
                case Ptr ignored -> 8;
                case Buf ignored -> 8;
            };
        }
    }

    /**
     * A kernel launch: {@code function} of the module the driver knows as {@code module}.
     */
    record Kernel(String module, String function, Dim3 grid, Dim3 block, int sharedMemBytes, List<Arg> args) implements Command {
        public Kernel {
            Objects.requireNonNull(module, "kernel module is null; give the module's name");
            Objects.requireNonNull(function, "kernel function is null; give the function's name");
            Objects.requireNonNull(grid, "kernel grid is null; give a Dim3 such as new Dim3(1, 1, 1)");
            Objects.requireNonNull(block, "kernel block is null; give a Dim3 such as new Dim3(1, 1, 1)");
            if (sharedMemBytes < 0) {
                throw new IllegalArgumentException("shared memory " + sharedMemBytes + " bytes is negative; allowed: >= 0");
            }
            Objects.requireNonNull(args, "kernel args is null; use List.of() for a kernel without arguments");
            for (int i = 0; i < args.size(); i++) {
                if (args.get(i) == null) {
                    throw new NullPointerException("kernel argument " + i + " is null; every argument is an Arg");
                }
            }
            args = List.copyOf(args);
        }

        @Override
        public String kind() {
            return "kernel";
        }
    }

    /** Copy {@code bytes} from {@code source} to {@code target}; addresses as the device understands them. */
    record Copy(long target, long source, long bytes) implements Command {
        public Copy {
            if (bytes < 0) {
                throw new IllegalArgumentException("copy of " + bytes + " bytes is negative; allowed: >= 0");
            }
        }

        @Override
        public String kind() {
            return "copy";
        }
    }

    /** Fill {@code bytes} at device address {@code target} with {@code value}. */
    record Memset(long target, byte value, long bytes) implements Command {
        public Memset {
            if (bytes < 0) {
                throw new IllegalArgumentException("memset of " + bytes + " bytes is negative; allowed: >= 0");
            }
        }

        @Override
        public String kind() {
            return "memset";
        }
    }

    /**
     * Copies {@code source} (heap or native memory, not confined to one thread) into {@code target} at {@code offset}, in its
     * turn on the queue. The source is read between submit and the command's completion: leave it
     * unchanged until the {@link Submission} completes.
     *
     * @since 1.5
     */
    record Write(DeviceBuffer target, long offset, MemorySegment source) implements Command {
        public Write {
            Objects.requireNonNull(target, "write target is null; give a DeviceBuffer from XQueueService.allocate");
            Objects.requireNonNull(source, "write source is null; give a MemorySegment (MemorySegment.ofArray(...) for an array)");
            if (offset < 0) {
                throw new IllegalArgumentException("write offset " + offset + " is negative; allowed: 0.." + target.size());
            }
            Segments.shareable("write source", source);
        }

        /** @return the number of bytes copied: the source's size */
        public long bytes() {
            return source.byteSize();
        }

        @Override
        public String kind() {
            return "write";
        }
    }

    /**
     * Copies {@code target.byteSize()} bytes of {@code source} from {@code offset} into
     * {@code target} (heap or native memory, not confined to one thread), in its turn on the queue; the data is in {@code target} when the
     * {@link Submission} completes (not before: do not read it earlier).
     *
     * @since 1.5
     */
    record Read(DeviceBuffer source, long offset, MemorySegment target) implements Command {
        public Read {
            Objects.requireNonNull(source, "read source is null; give a DeviceBuffer from XQueueService.allocate");
            Objects.requireNonNull(target, "read target is null; give a writable MemorySegment");
            if (offset < 0) {
                throw new IllegalArgumentException("read offset " + offset + " is negative; allowed: 0.." + source.size());
            }
            if (target.isReadOnly()) {
                throw new IllegalArgumentException("read target " + target + " is read-only; give a writable MemorySegment");
            }
            Segments.shareable("read target", target);
        }

        /** @return the number of bytes copied: the target's size */
        public long bytes() {
            return target.byteSize();
        }

        @Override
        public String kind() {
            return "read";
        }
    }

    /**
     * Sets {@code bytes} bytes of {@code target} from {@code offset} to {@code value}, in its turn.
     *
     * @since 1.5
     */
    record Fill(DeviceBuffer target, long offset, long bytes, byte value) implements Command {
        public Fill {
            Objects.requireNonNull(target, "fill target is null; give a DeviceBuffer from XQueueService.allocate");
            if (offset < 0) {
                throw new IllegalArgumentException("fill offset " + offset + " is negative; allowed: 0.." + target.size());
            }
            if (bytes < 0) {
                throw new IllegalArgumentException("fill of " + bytes + " bytes is negative; allowed: >= 0");
            }
        }

        @Override
        public String kind() {
            return "fill";
        }
    }

    /**
     * Launches {@code function} (of a module loaded at run time) with {@code args}; buffers go as
     * {@link Arg.Buf}. The arguments are checked against the function's parameters at submit.
     *
     * @since 1.5
     */
    record Launch(KernelFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, List<Arg> args) implements Command {
        public Launch {
            Objects.requireNonNull(function, "launch function is null; give a KernelFunction from CodeModule.function");
            Objects.requireNonNull(grid, "launch grid is null; give a Dim3 such as new Dim3(1, 1, 1)");
            Objects.requireNonNull(block, "launch block is null; give a Dim3 such as new Dim3(1, 1, 1)");
            if (sharedMemBytes < 0) {
                throw new IllegalArgumentException("shared memory " + sharedMemBytes + " bytes is negative; allowed: >= 0");
            }
            Objects.requireNonNull(args, "launch args is null; use List.of() for a kernel without arguments");
            for (int i = 0; i < args.size(); i++) {
                if (args.get(i) == null) {
                    throw new NullPointerException("launch argument " + i + " is null; every argument is an Arg");
                }
            }
            args = List.copyOf(args);
        }

        @Override
        public String kind() {
            return "launch";
        }
    }

    /** @return a command that copies all of {@code source} to the start of {@code target} */
    static Write write(DeviceBuffer target, MemorySegment source) {
        return new Write(target, 0, source);
    }

    /** @return a command that copies the start of {@code source} into all of {@code target} */
    static Read read(DeviceBuffer source, MemorySegment target) {
        return new Read(source, 0, target);
    }

    /** @return a command that sets every byte of {@code target} to {@code value} */
    static Fill fill(DeviceBuffer target, byte value) {
        return new Fill(target, 0, target.size(), value);
    }

    /** @return a spin command that occupies one engine for {@code micros} */
    static Spin spin(long micros) {
        return new Spin(micros, 1, 0);
    }

    /** @return a spin command that occupies {@code engines} engines and {@code memoryBytes} for {@code micros} */
    static Spin spin(long micros, int engines, long memoryBytes) {
        return new Spin(micros, engines, memoryBytes);
    }
}
