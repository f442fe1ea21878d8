package dev.xq.hal.hip;

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
 * Builds the {@code void** kernelParams} array of hipModuleLaunchKernel: one pointer per
 * argument, each to a copy of the argument's value. HIP reads the values during the launch
 * call, so one buffer per queue is reused for every launch (launches of one queue never overlap).
 */
final class KernelArgs {

    /** Every value gets an 8-byte, 8-aligned slot: wide enough for the widest argument kind. */
    private static final long SLOT = 8;

    private final Arena arena;
    private MemorySegment values = MemorySegment.NULL;
    private MemorySegment pointers = MemorySegment.NULL;
    private int capacity;

    /** @param arena owned by the queue; must allow access from any thread (launch may come from any) */
    KernelArgs(Arena arena) {
        this.arena = arena;
    }

    /** @return the pointer array for {@code args}, or NULL for a kernel without arguments */
    MemorySegment marshal(List<Arg> args) {
        int n = args.size();
        if (n == 0) {
            return MemorySegment.NULL;
        }
        if (n > capacity) {
            int c = Math.max(n, Math.max(8, capacity * 2));
            values = arena.allocate(SLOT * c, SLOT);
            pointers = arena.allocate(ADDRESS, c);
            capacity = c;
        }
        for (int i = 0; i < n; i++) {
            long off = SLOT * i;
            switch (args.get(i)) {
                case Arg.I32 a -> values.set(JAVA_INT, off, a.value());
                case Arg.I64 a -> values.set(JAVA_LONG, off, a.value());
                case Arg.F32 a -> values.set(JAVA_FLOAT, off, a.value());
                case Arg.F64 a -> values.set(JAVA_DOUBLE, off, a.value());
                case Arg.Ptr a -> values.set(JAVA_LONG, off, a.address());
                case Arg.Buf b -> throw new IllegalArgumentException("argument #" + i + " is " + b.buffer()
                        + ": the HIP adapter takes device addresses (Ptr)");
            }
            pointers.setAtIndex(ADDRESS, i, values.asSlice(off, SLOT));
        }
        return pointers;
    }

    /** @return the pointer array for one 64-bit argument (the spin kernel's microseconds) */
    MemorySegment single(long value) {
        return marshal(List.of(new Arg.I64(value)));
    }
}
