package dev.xq.host;

import dev.xq.api.QueueConfig;
import dev.xq.external.spi.ExternalCounters;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One session's shared-memory file (docs/processes.md, "Shared memory"): a header and one
 * 128-byte slot per stream, the first half written by the node, the second by the process.
 * Every access goes through this object's lock, so that nothing touches the mapping once it is
 * unmapped; after {@link #close()} reads give {@link ExternalCounters#IDLE} and writes are dropped.
 */
final class SharedMemory implements AutoCloseable {

    static final int MAGIC = 0x31515158; // "XQQ1" little-endian
    static final int VERSION = 1;
    static final int HEADER_SIZE = 64;
    static final int SLOT_SIZE = 128;

    // header
    static final long H_MAGIC = 0;
    static final long H_VERSION = 4;
    static final long H_SLOTS = 8;
    static final long H_SLOT_SIZE = 12;
    static final long H_START_NANOS = 16;
    /** {@code System.nanoTime()} ({@code CLOCK_MONOTONIC}), written every 100 ms while the session lives ({@link Heartbeat}) */
    static final long H_HEARTBEAT_NS = 24;
    // slot, node half
    static final long S_GATE = 0;
    static final long S_THRESHOLD = 4;
    static final long S_BATCH = 8;
    static final long S_WINDOW_US = 12;
    static final long S_CONFIG_SEQ = 16;
    /** narrowing: multiprocessors the stream's launches leave to others (0: the whole device) */
    static final long S_RESERVE_SMS = 20;
    static final long S_HORIZON_NS = 24;
    static final long S_GUARD_UNTIL_NS = 32;
    /** narrowing among best-effort processes: index << 16 | count (see ExternalQueueShare#part) */
    static final long S_PART = 40;
    // slot, client half
    static final long S_PENDING = 64;
    static final long S_IN_FLIGHT = 68;
    static final long S_LAUNCHED = 72;
    static final long S_COMPLETED = 80;
    static final long S_FAILED = 88;
    static final long S_RUN_NS = 96;
    static final long S_ESTIMATE_NS = 104;
    static final long S_READY_SINCE_NS = 112;
    static final long S_COMPLETION_SEQ = 120;
    /**
     * the stream's widths in multiprocessors and its device's count: with bit 31 set, its widest
     * launch of its last seconds of launching in bits 0-9, the widest of its current stretch of work
     * in bits 10-19, the device's count in bits 20-30 ({@link SlotControl}); without (an interposer
     * before session 116), the widest in the low 16 bits and the device's count in the high 16
     */
    static final long S_WIDTH = 124;

    private static final Set<StandardOpenOption> CREATE_RW = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE);
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final Path path;
    private final int slots;
    private final Arena arena;
    private final MemorySegment mem;
    private final AtomicInteger live;
    // guarded by this: what the node last wrote into each slot, to know when limits grew
    private final boolean[] held;
    private final int[] threshold;
    private final int[] batch;
    private final int[] windowMicros;
    private boolean closed;
    private boolean linked = true;

    private SharedMemory(Path path, int slots, Arena arena, MemorySegment mem, AtomicInteger live) {
        this.path = path;
        this.slots = slots;
        this.arena = arena;
        this.mem = mem;
        this.live = live;
        this.held = new boolean[slots];
        this.threshold = new int[slots];
        this.batch = new int[slots];
        this.windowMicros = new int[slots];
    }

    static long size(int slots) {
        return HEADER_SIZE + (long) slots * SLOT_SIZE;
    }

    /**
     * Creates the file (it must not exist), maps it and fills header and slots: every gate open,
     * the node's queue defaults as limits.
     *
     * @param live counts the mappings alive; incremented here, decremented by {@link #close()}
     */
    static SharedMemory create(Path path, int slots, QueueConfig defaults, long startNanos, GroupPrincipal group,
                               AtomicInteger live) throws IOException {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new IOException("the shared memory is little-endian and this host is not");
        }
        Arena arena = Arena.ofShared();
        boolean ok = false;
        try (FileChannel ch = FileChannel.open(path, CREATE_RW, PosixFilePermissions.asFileAttribute(SocketFiles.fileMode(group)))) {
            SocketFiles.restrict(path, group);
            long size = size(slots);
            // map() grows the new, empty file to the size (zeros: every client field starts at 0)
            MemorySegment mem = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            SharedMemory m = new SharedMemory(path, slots, arena, mem, live);
            m.fill(defaults, startNanos);
            live.incrementAndGet();
            ok = true;
            return m;
        } finally {
            if (!ok) {
                arena.close();
                Files.deleteIfExists(path);
            }
        }
    }

    private void fill(QueueConfig defaults, long startNanos) {
        int t = defaults.threshold();
        int b = defaults.batch();
        int w = (int) defaults.windowMicros();
        for (int i = 0; i < slots; i++) {
            long base = base(i);
            INT.set(mem, base + S_THRESHOLD, t);
            INT.set(mem, base + S_BATCH, b);
            INT.set(mem, base + S_WINDOW_US, w);
            INT.set(mem, base + S_CONFIG_SEQ, 0);
            INT.set(mem, base + S_GATE, 0);
            threshold[i] = t;
            batch[i] = b;
            windowMicros[i] = w;
        }
        INT.set(mem, H_VERSION, VERSION);
        INT.set(mem, H_SLOTS, slots);
        INT.set(mem, H_SLOT_SIZE, SLOT_SIZE);
        LONG.set(mem, H_START_NANOS, startNanos);
        // the magic last: a reader that sees it sees the rest
        INT.setRelease(mem, H_MAGIC, MAGIC);
    }

    private static long base(int slot) {
        return HEADER_SIZE + (long) slot * SLOT_SIZE;
    }

    Path path() {
        return path;
    }

    int slots() {
        return slots;
    }

    /**
     * Writes the limits (bumping {@code config_seq} when they changed), then the gate.
     *
     * @return whether held threads should look again now: the gate opened or a limit grew
     */
    synchronized boolean apply(int slot, boolean hold, QueueConfig config) {
        if (closed) {
            return false;
        }
        long base = base(slot);
        int t = config.threshold();
        int b = config.batch();
        int w = (int) Math.min(Integer.MAX_VALUE, config.windowMicros());
        boolean grew = t > threshold[slot] || (w == 0 ? windowMicros[slot] != 0 : windowMicros[slot] != 0 && w > windowMicros[slot]);
        if (t != threshold[slot] || b != batch[slot] || w != windowMicros[slot]) {
            INT.setRelease(mem, base + S_THRESHOLD, t);
            INT.setRelease(mem, base + S_BATCH, b);
            INT.setRelease(mem, base + S_WINDOW_US, w);
            int seq = (int) INT.getAcquire(mem, base + S_CONFIG_SEQ);
            INT.setRelease(mem, base + S_CONFIG_SEQ, seq + 1);
            threshold[slot] = t;
            batch[slot] = b;
            windowMicros[slot] = w;
        }
        boolean opened = held[slot] && !hold;
        INT.setRelease(mem, base + S_GATE, hold ? 1 : 0);
        held[slot] = hold;
        return opened || grew;
    }

    /** Writes the slot's narrowing reserve (0: the whole device); the process reads it at its next launch. */
    synchronized void reserve(int slot, int sms) {
        if (!closed) {
            INT.setRelease(mem, base(slot) + S_RESERVE_SMS, Math.max(0, sms));
        }
    }

    /** Writes the slot's part among best-effort processes (count 1: all of what it may use). */
    synchronized void part(int slot, int index, int count) {
        if (!closed) {
            INT.setRelease(mem, base(slot) + S_PART, index << 16 | count);
        }
    }

    /**
     * Writes the slot's part of its own size among best-effort processes: {@code width} sixteenths
     * from the {@code offset}-th (the top bit tells the interposer so).
     */
    synchronized void share(int slot, int offset, int width) {
        if (offset < 0 || width < 1 || offset + width > 16) {
            throw new IllegalArgumentException("a share of sixteenths from " + offset + ", " + width + " wide: allowed offset >= 0, width >= 1, offset + width <= 16");
        }
        if (!closed) {
            INT.setRelease(mem, base(slot) + S_PART, 1 << 31 | offset << 16 | width);
        }
    }

    /** @return the slot's width word (see {@link #S_WIDTH}), 0 once closed */
    synchronized int width(int slot) {
        return closed ? 0 : (int) INT.getAcquire(mem, base(slot) + S_WIDTH);
    }

    /**
     * Writes the arrival guard (both 0: none). The horizon first: a process that reads between the
     * two writes pairs the new horizon with the old end, which has lapsed or is about to.
     */
    synchronized void guard(int slot, long horizonNanos, long untilNanos) {
        if (closed) {
            return;
        }
        long base = base(slot);
        LONG.setRelease(mem, base + S_HORIZON_NS, horizonNanos);
        LONG.setRelease(mem, base + S_GUARD_UNTIL_NS, untilNanos);
    }

    /** @return the arrival guard in the slot: {horizon, until}, or null once unmapped (display and tests) */
    synchronized long[] guard(int slot) {
        if (closed) {
            return null;
        }
        long base = base(slot);
        return new long[] {(long) LONG.getAcquire(mem, base + S_HORIZON_NS), (long) LONG.getAcquire(mem, base + S_GUARD_UNTIL_NS)};
    }

    /** What the process wrote into the slot, sanitised: a process can only lie about itself, not break the node. */
    synchronized ExternalCounters counters(int slot) {
        if (closed) {
            return ExternalCounters.IDLE;
        }
        long base = base(slot);
        int pending = Math.max(0, (int) INT.getAcquire(mem, base + S_PENDING));
        int inFlight = Math.max(0, (int) INT.getAcquire(mem, base + S_IN_FLIGHT));
        long launched = Math.max(0, (long) LONG.getAcquire(mem, base + S_LAUNCHED));
        long completed = Math.max(0, (long) LONG.getAcquire(mem, base + S_COMPLETED));
        long failed = Math.max(0, (long) LONG.getAcquire(mem, base + S_FAILED));
        long run = Math.max(0, (long) LONG.getAcquire(mem, base + S_RUN_NS));
        long estimate = Math.max(0, (long) LONG.getAcquire(mem, base + S_ESTIMATE_NS));
        long readySince = (long) LONG.getAcquire(mem, base + S_READY_SINCE_NS);
        if (pending == 0 && inFlight == 0) {
            readySince = 0;
        } else if (readySince == 0 || readySince - System.nanoTime() > 0) {
            // ready without a time, or a time in the future: count it as ready from now on
            readySince = System.nanoTime();
        }
        return new ExternalCounters(pending, inFlight, launched, completed, failed, run, estimate, readySince);
    }

    /**
     * The slot's ready stamp as the process wrote it, for the arrival watch ({@link ArrivalWatch}):
     * its {@code ready_since} while it has work pending or in flight, else 0 (0 once unmapped).
     * Unchecked: the watch only compares it with the one it saw before.
     */
    synchronized long readyStamp(int slot) {
        if (closed) {
            return 0;
        }
        long base = base(slot);
        if ((int) INT.getAcquire(mem, base + S_PENDING) <= 0 && (int) INT.getAcquire(mem, base + S_IN_FLIGHT) <= 0) {
            return 0;
        }
        return (long) LONG.getAcquire(mem, base + S_READY_SINCE_NS);
    }

    /**
     * Writes the heartbeat: a process held by this node takes it for frozen when the value stops
     * moving for a second (docs/processes.md, "Faults").
     *
     * @return false once unmapped: nothing more to write
     */
    synchronized boolean beat(long nanos) {
        if (closed) {
            return false;
        }
        LONG.setRelease(mem, H_HEARTBEAT_NS, nanos);
        return true;
    }

    /** @return the heartbeat last written, or -1 once unmapped (tests) */
    synchronized long heartbeat() {
        return closed ? -1 : (long) LONG.getAcquire(mem, H_HEARTBEAT_NS);
    }

    /** @return the gate word of a slot, or -1 once unmapped (display and tests) */
    synchronized int gate(int slot) {
        return closed ? -1 : (int) INT.getAcquire(mem, base(slot) + S_GATE);
    }

    /** @return the limits in force for the slot, as an operator reads them: "16/8/300us", or "none" when lifted */
    synchronized String limits(int slot) {
        if (closed) {
            return "-";
        }
        int t = threshold[slot];
        int w = windowMicros[slot];
        if (t >= QueueConfig.MAX_THRESHOLD && w == 0) {
            return "none";
        }
        return t + "/" + batch[slot] + "/" + (w == 0 ? "-" : w + "us");
    }

    /** Removes the file's name; the mappings stay. Idempotent. */
    synchronized void unlink() {
        if (!linked) {
            return;
        }
        linked = false;
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            linked = !Files.notExists(path, LinkOption.NOFOLLOW_LINKS);
        }
    }

    /** Unmaps. Idempotent; later reads are idle and later writes dropped. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        arena.close();
        live.decrementAndGet();
    }
}
