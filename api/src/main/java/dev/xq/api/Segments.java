package dev.xq.api;

import java.lang.foreign.MemorySegment;

/** Checks on the host memory of data commands. */
final class Segments {

    /** A thread that never runs: a segment it may access is not confined to one thread. */
    private static final Thread ELSEWHERE = new Thread(() -> { }, "xq-segment-check");

    private Segments() {
    }

    /**
     * @throws IllegalArgumentException if only one thread may access {@code segment}: the device
     *         side reads or writes it on a thread of its own
     */
    static void shareable(String role, MemorySegment segment) {
        if (!segment.isAccessibleBy(ELSEWHERE)) {
            throw new IllegalArgumentException(role + " " + segment + " is confined to one thread (Arena.ofConfined()), but the"
                    + " device moves the data on a thread of its own; use a heap segment (MemorySegment.ofArray) or one of"
                    + " Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
    }
}
