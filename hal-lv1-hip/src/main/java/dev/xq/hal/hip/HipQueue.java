package dev.xq.hal.hip;

import dev.xq.api.Command;
import dev.xq.hal.spi.DeviceOp;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.StreamHandle;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One HIP stream: XQ's Lv1 hardware queue. Each launched command is bracketed by two events
 * recorded on the stream; the device's {@link CompletionPoller} watches the closing event.
 */
final class HipQueue implements HwQueue {

    /**
     * A launched command and its events. {@code untracked} is set when its end could not be
     * recorded; {@code staged} is the staging area of a write or read, or null.
     */
    private record InFlight(HwCommand command, MemorySegment start, MemorySegment end, long launchNanos,
                            HalException untracked, Staged staged) {
    }

    /**
     * The host side of a write or read: native memory (page-locked where HIP gives it) that HIP
     * copies from or into while the stream runs, since the application's segment may be on the
     * Java heap, which HIP must not see. A read's {@code target} is filled from it by the
     * poller before the command is reported completed; a write's target is empty.
     */
    record Staged(MemorySegment staging, MemorySegment target, boolean pinned) {
        void finish() {
            MemorySegment.copy(staging, 0, target, 0, target.byteSize());
        }
    }

    /** Page-locked staging areas that ended commands gave back, for the next copies; guarded by itself. */
    private final ArrayDeque<MemorySegment> pinnedPool = new ArrayDeque<>();
    private static final int POOL = 8;
    /** Smallest staging area: small copies share a size, so the pool serves them all. */
    static final long MIN_STAGING = 64 * 1024;

    private final HipDevice device;
    private final HipApi api;
    private final String name;
    private final HwQueueListener listener;
    private final MemorySegment stream;
    private final int hipPriority;
    private final Arena arena = Arena.ofShared();
    private final KernelArgs kernelArgs = new KernelArgs(arena);
    private final ConcurrentLinkedDeque<InFlight> inFlight = new ConcurrentLinkedDeque<>();
    private final ConcurrentLinkedQueue<MemorySegment> eventPool = new ConcurrentLinkedQueue<>();
    private final List<MemorySegment> allEvents = new ArrayList<>();
    /** Serialises launch and close (the runtime never launches concurrently, but may close from another thread). */
    private final ReentrantLock launchLock = new ReentrantLock();
    /** Held by the poller while it queries this queue's events, and by close before it destroys them. */
    private final ReentrantLock pollLock = new ReentrantLock();
    private volatile boolean closed;

    // Poller thread only: the end event and time of the last completed command, from which
    // the next end time is chained (see collect).
    private MemorySegment anchorEvent;
    private long anchorNanos;

    HipQueue(HipDevice device, HipApi api, String name, HwQueueListener listener, MemorySegment stream, int hipPriority) {
        this.device = device;
        this.api = api;
        this.name = name;
        this.listener = listener;
        this.stream = stream;
        this.hipPriority = hipPriority;
    }

    @Override
    public String platform() {
        return HipPlatform.PLATFORM;
    }

    @Override
    public String deviceId() {
        return device.id();
    }


    String name() {
        return name;
    }

    /** @return the HIP priority the stream was created with (lower = more urgent) */
    int hipPriority() {
        return hipPriority;
    }

    /** @return the stream, for providers that work below the driver (hal-lv3-kfd for HIP) */
    @Override
    public <T> Optional<T> nativeHandle(Class<T> type) {
        return type == StreamHandle.Hip.class ? Optional.of(type.cast(new StreamHandle.Hip(stream.address()))) : Optional.empty();
    }

    MemorySegment stream() {
        return stream;
    }

    @Override
    public void check(Command command) {
        device.check(command);
    }

    @Override
    public void launch(HwCommand command) {
        launchLock.lock();
        try {
            if (closed) {
                throw new HalException("hip queue '" + name + "' on " + device.id() + " is closed; command #"
                        + command.sequence() + " was not launched");
            }
            MemorySegment start = takeEvent();
            MemorySegment end = takeEvent();
            String about = "command #" + command.sequence() + " (" + command.command().kind() + ") on queue '" + name
                    + "' of " + device.id();
            int rc = api.eventRecord(start, stream);
            if (rc != HipApi.SUCCESS) {
                giveBack(start, end);
                api.check(rc, "hipEventRecord", "start of " + about);
            }
            long launchNanos = System.nanoTime();
            Staged staged = null;
            try {
                if (command.op() != null) {
                    staged = issue(command.op(), about);
                } else {
                    issue(command.command(), about);
                }
            } catch (RuntimeException e) {
                giveBack(start, end);
                throw e;
            }
            rc = api.eventRecord(end, stream);
            HalException untracked = null;
            if (rc != HipApi.SUCCESS) {
                // The command is on the stream and will run; only its end cannot be observed.
                // It is reported failed, in order, rather than thrown: a throw would claim it never ran.
                untracked = new HalException("hipEventRecord (end of " + about + ") failed: " + api.describe(rc)
                        + "; the command was launched but its completion cannot be observed");
                eventPool.add(end);
                end = null;
            }
            inFlight.addLast(new InFlight(command, start, end, launchNanos, untracked, staged));
        } finally {
            launchLock.unlock();
        }
        device.poller().wake();
    }

    private void issue(Command c, String about) {
        switch (c) {
            case Command.Spin s -> {
                HipDevice.Launch l = device.spinLaunch();
                api.check(api.moduleLaunchKernel(l.function(), l.gridX(), 1, 1, l.blockX(), 1, 1, 0, stream,
                        kernelArgs.single(s.micros())), "hipModuleLaunchKernel", "spin " + s.micros() + " us, " + about);
            }
            case Command.Kernel k -> {
                MemorySegment f = device.function(k.module(), k.function());
                api.check(api.moduleLaunchKernel(f, k.grid().x(), k.grid().y(), k.grid().z(), k.block().x(),
                        k.block().y(), k.block().z(), k.sharedMemBytes(), stream, kernelArgs.marshal(k.args())),
                        "hipModuleLaunchKernel", k.module() + "." + k.function() + ", " + about);
            }
            case Command.Copy cp -> api.check(api.memcpyAsync(cp.target(), cp.source(), cp.bytes(), stream),
                    "hipMemcpyAsync", cp.bytes() + " bytes 0x" + Long.toHexString(cp.source()) + " -> 0x"
                            + Long.toHexString(cp.target()) + ", " + about);
            case Command.Memset m -> api.check(api.memsetAsync(m.target(), m.value() & 0xff, m.bytes(), stream),
                    "hipMemsetAsync", m.bytes() + " bytes at 0x" + Long.toHexString(m.target()) + ", " + about);
            default -> throw new dev.xq.hal.spi.HalException(c.kind() + " is not run by the HIP adapter, " + about);
        }
    }

    /** Issues a data or launch command with its buffers resolved; caller holds launchLock. */
    private Staged issue(DeviceOp op, String about) {
        api.setDevice(device.ordinal());
        Staged staged = null;
        int rc;
        String call;
        switch (op) {
            case DeviceOp.Write w -> {
                long bytes = w.source().byteSize();
                staged = stage(bytes, MemorySegment.NULL);
                MemorySegment.copy(w.source(), 0, staged.staging(), 0, bytes);
                call = "hipMemcpyHtoDAsync";
                rc = api.memcpyHtoDAsync(w.target().address() + w.offset(), staged.staging(), bytes, stream);
            }
            case DeviceOp.Read r -> {
                long bytes = r.target().byteSize();
                staged = stage(bytes, r.target());
                call = "hipMemcpyDtoHAsync";
                rc = api.memcpyDtoHAsync(staged.staging(), r.source().address() + r.offset(), bytes, stream);
            }
            case DeviceOp.Fill f -> {
                call = "hipMemsetD8Async";
                rc = api.memsetD8Async(f.target().address() + f.offset(), f.value(), f.bytes(), stream);
            }
            case DeviceOp.Launch l -> {
                if (!(l.function() instanceof HipMemory.HipFunction f)) {
                    throw new HalException("function " + l.function().name() + " of " + about + " is not a HIP module's");
                }
                call = "hipModuleLaunchKernel";
                rc = api.moduleLaunchKernel(f.handle(), l.grid().x(), l.grid().y(), l.grid().z(), l.block().x(), l.block().y(),
                        l.block().z(), l.sharedMemBytes(), stream, kernelArgs.marshal(l.args()));
            }
        }
        if (rc != HipApi.SUCCESS) {
            unstage(staged);
            api.check(rc, call, about);
        }
        return staged;
    }

    /** A staging area of at least {@code bytes}: from the pool, page-locked, or pageable where HIP refuses. */
    private Staged stage(long bytes, MemorySegment target) {
        long want = Math.max(MIN_STAGING, bytes);
        synchronized (pinnedPool) {
            for (var it = pinnedPool.iterator(); it.hasNext(); ) {
                MemorySegment m = it.next();
                if (m.byteSize() >= want && m.byteSize() <= 4 * want) {
                    it.remove();
                    return new Staged(m, target, true);
                }
            }
        }
        MemorySegment m = api.hostMalloc(want);
        if (m != null) {
            return new Staged(m, target, true);
        }
        // pageable: HIP copies from and into it too (a device-to-host copy into it may make the launch wait)
        return new Staged(Arena.ofAuto().allocate(Math.max(1, bytes), 16), target, false);
    }

    /** A command's staging area is free again: back to the pool, or freed if the pool is full or the queue closed. */
    private void unstage(Staged s) {
        if (s == null || !s.pinned()) {
            return;
        }
        synchronized (pinnedPool) {
            if (!closed && pinnedPool.size() < POOL) {
                pinnedPool.add(s.staging());
                return;
            }
        }
        int rc = api.hostFree(s.staging());
        if (rc != HipApi.SUCCESS) {
            device.log().warn("hipHostFree of a staging area of queue '" + name + "' failed: " + api.describe(rc), null);
        }
    }

    private MemorySegment takeEvent() {
        MemorySegment e = eventPool.poll();
        if (e != null) {
            return e;
        }
        e = device.createEvent();
        synchronized (allEvents) {
            allEvents.add(e);
        }
        return e;
    }

    private void giveBack(MemorySegment a, MemorySegment b) {
        eventPool.add(a);
        eventPool.add(b);
    }

    boolean hasInFlight() {
        return !closed && !inFlight.isEmpty();
    }

    /**
     * Poller thread only. Takes every finished command off the head of the queue, in order, and
     * adds its report to {@code deliveries} (to be run outside the lock).
     *
     * <p>End times: the poller sees an end only when it queries, so the query time is an upper
     * bound of the true end. So is the previous command's end plus the device-measured time
     * between the two end events (hipEventElapsedTime). The smaller of the two is the estimate;
     * it keeps ends in order, and after a busy period it is as close as the first sighting
     * allowed. Start = end minus the device-measured time between the command's own events, so
     * durations, which the runtime's time budget estimates from, are the device's, not the poller's.
     *
     * @return how many commands finished
     */
    int collect(List<Runnable> deliveries, MemorySegment scratch) {
        if (!pollLock.tryLock()) {
            return 0; // closing
        }
        int finished = 0;
        try {
            while (!closed) {
                InFlight f = inFlight.peekFirst();
                if (f == null) {
                    break;
                }
                if (f.untracked() != null) {
                    inFlight.pollFirst();
                    eventPool.add(f.start());
                    unstage(f.staged());
                    HalException cause = f.untracked();
                    deliveries.add(() -> listener.failed(f.command(), cause));
                    finished++;
                    continue;
                }
                int rc = api.eventQuery(f.end());
                if (rc == HipApi.ERROR_NOT_READY) {
                    break;
                }
                long seen = System.nanoTime();
                inFlight.pollFirst();
                finished++;
                if (rc != HipApi.SUCCESS) {
                    HalException cause = new HalException("hipEventQuery (end of command #" + f.command().sequence() + " ("
                            + f.command().command().kind() + ") on queue '" + name + "' of " + device.id() + ") returned "
                            + api.describe(rc));
                    giveBack(f.start(), f.end());
                    unstage(f.staged());
                    deliveries.add(() -> listener.failed(f.command(), cause));
                    continue;
                }
                long end = seen;
                if (anchorEvent != null && api.eventElapsedTime(scratch, anchorEvent, f.end()) == HipApi.SUCCESS) {
                    long chained = anchorNanos + Math.round(HipApi.elapsedMillis(scratch) * 1e6);
                    end = Math.min(seen, chained);
                }
                end = Math.max(end, f.launchNanos());
                long start = f.launchNanos();
                if (api.eventElapsedTime(scratch, f.start(), f.end()) == HipApi.SUCCESS) {
                    long duration = Math.max(0, Math.round(HipApi.elapsedMillis(scratch) * 1e6));
                    start = Math.max(f.launchNanos(), end - duration);
                }
                if (anchorEvent != null) {
                    eventPool.add(anchorEvent);
                }
                anchorEvent = f.end();
                anchorNanos = end;
                eventPool.add(f.start());
                long s = start;
                long e = end;
                Staged staged = f.staged();
                if (staged == null || staged.target().byteSize() == 0) {
                    unstage(staged); // a write's staging: the copy is done
                    deliveries.add(() -> listener.completed(f.command(), s, e));
                } else {
                    // a read: its data goes into the application's memory before it is reported completed
                    deliveries.add(() -> {
                        try {
                            staged.finish();
                        } catch (RuntimeException x) {
                            listener.failed(f.command(), new HalException("read of command #" + f.command().sequence()
                                    + " on queue '" + name + "' of " + device.id() + " could not copy into its target: " + x, x));
                            return;
                        } finally {
                            unstage(staged);
                        }
                        listener.completed(f.command(), s, e);
                    });
                }
            }
        } finally {
            pollLock.unlock();
        }
        return finished;
    }

    /**
     * Destroys the stream and its events. Commands still in flight are not reported: the
     * runtime has accounted for them. Never throws; problems are logged.
     */
    @Override
    public void close() {
        launchLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            launchLock.unlock();
        }
        device.forget(this);
        pollLock.lock();
        try {
            // The stream goes first: HIP lets its queued work finish, so no event is destroyed
            // while the device may still write it.
            int rc = api.streamDestroy(stream);
            if (rc != HipApi.SUCCESS) {
                device.log().warn("hip queue '" + name + "' on " + device.id() + ": hipStreamDestroy failed: " + api.describe(rc), null);
            }
            List<MemorySegment> events;
            synchronized (allEvents) {
                events = List.copyOf(allEvents);
                allEvents.clear();
            }
            for (MemorySegment e : events) {
                rc = api.eventDestroy(e);
                if (rc != HipApi.SUCCESS) {
                    device.log().warn("hip queue '" + name + "' on " + device.id() + ": hipEventDestroy failed: " + api.describe(rc), null);
                }
            }
            eventPool.clear();
            // the stream is gone, so no copy uses a staging area any more
            List<MemorySegment> pinned = new ArrayList<>();
            synchronized (pinnedPool) {
                pinned.addAll(pinnedPool);
                pinnedPool.clear();
            }
            for (InFlight f : inFlight) {
                if (f.staged() != null && f.staged().pinned()) {
                    pinned.add(f.staged().staging());
                }
            }
            for (MemorySegment m : pinned) {
                rc = api.hostFree(m);
                if (rc != HipApi.SUCCESS) {
                    device.log().warn("hip queue '" + name + "' on " + device.id() + ": hipHostFree failed: " + api.describe(rc), null);
                }
            }
            inFlight.clear();
            anchorEvent = null;
        } finally {
            pollLock.unlock();
        }
        arena.close();
    }

    /**
     * The driver is going away while this queue is open: the runtime must fail what is still on
     * it, since nothing will report it any more.
     */
    void abandon(Throwable cause) {
        if (!closed && !inFlight.isEmpty()) {
            listener.lost(cause);
        }
        close();
    }

    @Override
    public String toString() {
        return "hip queue '" + name + "' on " + device.id() + " (stream priority " + hipPriority + ")";
    }
}
