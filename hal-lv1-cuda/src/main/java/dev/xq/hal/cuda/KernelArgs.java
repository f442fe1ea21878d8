package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.xq.api.Command.Arg;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Builds cuLaunchKernel's {@code kernelParams}: an array of pointers, one per kernel parameter,
 * each pointing at that argument's value. The driver copies the values during the launch call,
 * so one scratch area per queue is reused for every launch (launches of one queue never run
 * concurrently). Layout: the pointer array first, then one 8-byte slot per value, so every
 * value is aligned for its type.
 */
final class KernelArgs {

    private static final long SLOT = 8;

    private final Arena arena;
    private MemorySegment scratch;

    /** @param arena owns the scratch area; it must outlive every launch that uses this object */
    KernelArgs(Arena arena) {
        this.arena = arena;
        this.scratch = arena.allocate(16 * 2 * SLOT, SLOT);
    }

    /** @return the size in bytes of the C value an argument stands for */
    static long size(Arg arg) {
        return switch (arg) {
            case Arg.I32 ignored -> 4;
            case Arg.F32 ignored -> 4;
            case Arg.I64 ignored -> 8;
            case Arg.F64 ignored -> 8;
            case Arg.Ptr ignored -> 8;
            case Arg.Buf ignored -> 8;
        };
    }

    /**
     * Writes the arguments and their pointer array into the scratch area.
     *
     * @return the {@code void**} to pass as kernelParams, or NULL for no arguments
     */
    MemorySegment marshal(List<Arg> args) {
        int n = args.size();
        if (n == 0) {
            return MemorySegment.NULL;
        }
        long need = 2 * SLOT * n;
        if (scratch.byteSize() < need) {
            scratch = arena.allocate(Math.max(need, scratch.byteSize() * 2), SLOT);
        }
        MemorySegment values = scratch.asSlice(SLOT * n, SLOT * n);
        for (int i = 0; i < n; i++) {
            MemorySegment slot = values.asSlice(SLOT * i, SLOT);
            switch (args.get(i)) {
                case Arg.I32 a -> slot.set(JAVA_INT, 0, a.value());
                case Arg.F32 a -> slot.set(JAVA_FLOAT, 0, a.value());
                case Arg.I64 a -> slot.set(JAVA_LONG, 0, a.value());
                case Arg.F64 a -> slot.set(JAVA_DOUBLE, 0, a.value());
                case Arg.Ptr a -> slot.set(JAVA_LONG, 0, a.address());
                case Arg.Buf b -> throw new IllegalArgumentException("argument #" + i + " is " + b.buffer()
                        + ": buffers reach the driver as Ptr, resolved by the runtime (use Command.Launch, not Command.Kernel)");
            }
            scratch.setAtIndex(ADDRESS, i, slot);
        }
        return scratch;
    }

    /** Like {@link #marshal} for a single 64-bit argument (the spin kernel's), without allocating. */
    MemorySegment marshalLong(long value) {
        MemorySegment slot = scratch.asSlice(SLOT, SLOT);
        slot.set(JAVA_LONG, 0, value);
        scratch.set(ADDRESS, 0, slot);
        return scratch;
    }

    /**
     * Compares the arguments with the kernel's parameter sizes as the driver reports them.
     *
     * @param sizes the parameter sizes, or {@code null} if the driver cannot tell (then nothing is checked)
     * @throws IllegalArgumentException naming the kernel, the parameter and both sizes
     */
    static void checkAgainst(String kernel, long[] sizes, List<Arg> args) {
        if (sizes == null) {
            return;
        }
        if (sizes.length != args.size()) {
            throw new IllegalArgumentException("kernel " + kernel + " takes " + sizes.length + " parameter"
                    + (sizes.length == 1 ? "" : "s") + " of " + describe(sizes) + " bytes, but " + args.size()
                    + " argument" + (args.size() == 1 ? " was" : "s were") + " given");
        }
        for (int i = 0; i < sizes.length; i++) {
            long given = size(args.get(i));
            if (sizes[i] != given) {
                throw new IllegalArgumentException("kernel " + kernel + " parameter #" + i + " is " + sizes[i]
                        + " bytes, but argument #" + i + " (" + args.get(i) + ") is " + given
                        + " bytes; XQ passes I32/F32 as 4 bytes and I64/F64/Ptr as 8");
            }
        }
    }

    private static String describe(long[] sizes) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < sizes.length; i++) {
            b.append(i == 0 ? "" : ", ").append(sizes[i]);
        }
        return b.append(']').toString();
    }
}
