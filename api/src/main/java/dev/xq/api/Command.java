package dev.xq.api;

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

    /** @return a spin command that occupies one engine for {@code micros} */
    static Spin spin(long micros) {
        return new Spin(micros, 1, 0);
    }

    /** @return a spin command that occupies {@code engines} engines and {@code memoryBytes} for {@code micros} */
    static Spin spin(long micros, int engines, long memoryBytes) {
        return new Spin(micros, engines, memoryBytes);
    }
}
