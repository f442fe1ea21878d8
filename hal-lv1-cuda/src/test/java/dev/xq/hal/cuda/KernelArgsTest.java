package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command.Arg;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
class KernelArgsTest {

    /** Follows pointer #i of a kernelParams array to its value. */
    private static MemorySegment value(MemorySegment params, int i, long size) {
        return params.reinterpret(8L * (i + 1)).getAtIndex(ADDRESS, i).reinterpret(size);
    }

    @Test
    void everyArgumentKindIsReachableThroughItsPointer() {
        try (Arena a = Arena.ofConfined()) {
            KernelArgs args = new KernelArgs(a);
            MemorySegment p = args.marshal(List.of(new Arg.I32(-7), new Arg.I64(1L << 40), new Arg.F32(1.5f),
                    new Arg.F64(-2.25), new Arg.Ptr(0xdead_beef_0000L)));
            assertEquals(-7, value(p, 0, 4).get(JAVA_INT, 0));
            assertEquals(1L << 40, value(p, 1, 8).get(JAVA_LONG, 0));
            assertEquals(1.5f, value(p, 2, 4).get(JAVA_FLOAT, 0));
            assertEquals(-2.25, value(p, 3, 8).get(JAVA_DOUBLE, 0));
            assertEquals(0xdead_beef_0000L, value(p, 4, 8).get(JAVA_LONG, 0));
            for (int i = 0; i < 5; i++) {
                long addr = p.reinterpret(40).getAtIndex(ADDRESS, i).address();
                assertEquals(0, addr % 8, "value #" + i + " must be 8-byte aligned");
            }
        }
    }

    @Test
    void noArgumentsGiveNull() {
        try (Arena a = Arena.ofConfined()) {
            assertEquals(MemorySegment.NULL, new KernelArgs(a).marshal(List.of()));
        }
    }

    @Test
    void manyArgumentsGrowTheScratchAreaAndKeepEveryValue() {
        try (Arena a = Arena.ofConfined()) {
            KernelArgs args = new KernelArgs(a);
            List<Arg> many = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                many.add(new Arg.I64(1000L + i));
            }
            MemorySegment p = args.marshal(many);
            for (int i = 0; i < 100; i++) {
                assertEquals(1000L + i, value(p, i, 8).get(JAVA_LONG, 0));
            }
            // a later, shorter launch reuses the area and sees its own values
            MemorySegment q = args.marshal(List.of(new Arg.I32(5)));
            assertEquals(5, value(q, 0, 4).get(JAVA_INT, 0));
        }
    }

    @Test
    void spinArgumentNeedsNoList() {
        try (Arena a = Arena.ofConfined()) {
            KernelArgs args = new KernelArgs(a);
            args.marshal(List.of(new Arg.I32(1), new Arg.I32(2)));
            MemorySegment p = args.marshalLong(500_000L);
            assertEquals(500_000L, value(p, 0, 8).get(JAVA_LONG, 0));
        }
    }

    @Test
    void argumentsAreComparedWithTheKernelsParameters() {
        long[] probe = {8, 4, 8, 4, 8};
        KernelArgs.checkAgainst("spin.xq_probe", probe, List.of(new Arg.Ptr(1), new Arg.I32(2), new Arg.I64(3),
                new Arg.F32(4), new Arg.F64(5)));
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> KernelArgs.checkAgainst("spin.xq_spin", new long[] {8}, List.of()));
        assertTrue(count.getMessage().contains("spin.xq_spin takes 1 parameter of [8] bytes, but 0 arguments were given"),
                count.getMessage());
        IllegalArgumentException size = assertThrows(IllegalArgumentException.class,
                () -> KernelArgs.checkAgainst("spin.xq_spin", new long[] {8}, List.of(new Arg.I32(1))));
        assertTrue(size.getMessage().contains("parameter #0 is 8 bytes, but argument #0"), size.getMessage());
        // a driver that cannot tell the sizes checks nothing
        KernelArgs.checkAgainst("k", null, List.of(new Arg.I32(1)));
    }

    @Test
    void sizesFollowTheCTypes() {
        assertEquals(4, KernelArgs.size(new Arg.I32(0)));
        assertEquals(4, KernelArgs.size(new Arg.F32(0)));
        assertEquals(8, KernelArgs.size(new Arg.I64(0)));
        assertEquals(8, KernelArgs.size(new Arg.F64(0)));
        assertNotEquals(4, KernelArgs.size(new Arg.Ptr(0)));
    }
}
