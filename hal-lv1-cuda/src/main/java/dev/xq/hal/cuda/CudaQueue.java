package dev.xq.hal.cuda;

import dev.xq.api.Command;
import dev.xq.hal.spi.DeviceOp;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.Preemption;
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
 * One CUDA stream: XQ's Lv1 hardware queue. Each command is followed by an end event recorded on
 * the stream, and preceded by a start event where its start is the device's to tell (below); the
 * device's {@link CompletionWatcher} watches the end events, and timing events are turned into
 * host times through the device's {@link DeviceClock}.
 *
 * <p>Start events, chained (the default): a command launched onto an idle stream (nothing of this
 * queue in flight) gets a start event of its own, since its start is the device's to tell; a
 * command launched behind another starts where that one ended, or when its launch call began if
 * that was later, or, when it carries a level-2 guard and a hold covered that moment, where the
 * hold ended (the queue keeps its last holds' host times). On the H100 a timing event costs the
 * device ~1.5 us per command and a back-to-back stream pays it in full (bench/gpu/probe/guardcost.cu:
 * E K E +5.9 us over the kernel, K E +4.5; with a guard W E K E +7.6, W K E +5.6), so chaining
 * saves 1.4-2 us per command. {@code startEvents=every} gives every command its own start event
 * (cuEventElapsedTime exact), as before. A start event marks when the stream reached the command,
 * not when its blocks got SMs: a kernel that waits behind another stream's kernel counts the wait;
 * so does a chained start.
 *
 * <p>End events ({@code timing}): a timing event, the device's timestamp, or one without timing,
 * which costs the device nothing (E K E +5.9 us against K e +2.6 on the H100), the end then being
 * when the completion thread saw it. {@code auto} takes the second under poll completion, whose
 * thread spins at each predicted end and sees it within microseconds, and the first under the
 * other modes, which see completions late or in batches (a chained start after a late-seen end
 * would shorten the next command's time).
 *
 * <p>Level 2 ({@link StreamStall}, where the device offers it): a guarded launch puts a
 * {@code cuStreamWaitValue32} on the queue's flag word before the start event, so a deactivate
 * (flag := 1, written on the device's side stream) keeps every guarded command that has not
 * started from starting, and the running one goes on; a reactivate (flag := 0) lets them go
 * (H200, measured: one kernel ends after the flag rises, the running one, in 50 of 50 tries;
 * the stream goes on 10 us after the flag falls). The command's start event then marks its
 * start after the stall, so its device time does not count the hold.
 *
 * <p>Threads: {@link #launch} and {@link #close} take {@code launchLock}; the thread that looks
 * (the completion thread, or a waiter helping it through {@link #poll}, one at a time under the
 * watcher's look lock) alone queries events, recycles them and updates the predictions, and the
 * completion thread finally destroys the stream, so neither needs a lock that the launch path
 * takes, and listener calls are made with no lock held. "Completion thread" below means whichever
 * thread holds the look lock.
 */
final class CudaQueue implements HwQueue {

    /** A launched command. {@code untracked} is set when its end event could not be recorded. */
    static final class InFlight {
        final HwCommand command;
        /** Its start event; null where the start is chained to the previous command's end. */
        final MemorySegment start;
        final MemorySegment end;
        final HalException untracked;
        final long order;
        /** Host time just before its launch call: a chained command cannot have started earlier. */
        long launchNanos;
        /** Whether a level-2 guard is in front of it (a hold can delay its start). */
        boolean guarded;
        /** Completion thread only: host time of the start event once it happened. */
        long startNanos = DeviceClock.UNKNOWN;
        /** Completion thread only: host time of the last look that found it not yet done. */
        long notDoneNanos = DeviceClock.UNKNOWN;
        /** A read's host side: copied from staging into the application's memory before the completion is reported. */
        Staged staged;

        InFlight(HwCommand command, MemorySegment start, MemorySegment end, HalException untracked, long order) {
            this.command = command;
            this.start = start;
            this.end = end;
            this.untracked = untracked;
            this.order = order;
        }
    }

    private final CudaDevice device;
    private final CudaApi api;
    private final String name;
    private final HwQueueListener listener;
    private final MemorySegment stream;
    private final int cudaPriority;
    private final int eventFlags;
    private final boolean hostFunc;
    private final Arena arena = Arena.ofShared();
    private final KernelArgs kernelArgs = new KernelArgs(arena);
    private final ConcurrentLinkedDeque<InFlight> inFlight = new ConcurrentLinkedDeque<>();
    private final ConcurrentLinkedQueue<MemorySegment> eventPool = new ConcurrentLinkedQueue<>();
    /** Events without timing, for ends under timing=seen. */
    private final ConcurrentLinkedQueue<MemorySegment> plainPool = new ConcurrentLinkedQueue<>();
    private final boolean deviceEnds;
    /** Every event this queue made; guarded by launchLock until the queue is closed. */
    private final List<MemorySegment> allEvents = new ArrayList<>();
    private final ReentrantLock launchLock = new ReentrantLock();
    private volatile boolean closed;
    private volatile HalException lostBy;
    private volatile boolean released;
    private boolean hostFuncWarned;
    /** Level 2, or null where the device does not offer it. */
    private final StreamStall stall;

    // Completion thread only: estimate of a command's device time, for waking up in time.
    private long estimateNanos;
    private boolean estimated;
    /** Completion thread only: host time of the last collected command's end (a chained start's floor). */
    private long lastEndNanos = DeviceClock.UNKNOWN;
    /**
     * Completion thread, seen end times: where the last collected command is estimated to have
     * really ended (no later than {@link #lastEndNanos}, when it was seen); predictions chain on it.
     */
    private long lastAnchorNanos = DeviceClock.UNKNOWN;

    CudaQueue(CudaDevice device, CudaApi api, String name, HwQueueListener listener, MemorySegment stream,
              int cudaPriority, int eventFlags, boolean hostFunc) {
        this.device = device;
        this.api = api;
        this.name = name;
        this.listener = listener;
        this.stream = stream;
        this.cudaPriority = cudaPriority;
        this.eventFlags = eventFlags;
        this.hostFunc = hostFunc;
        this.deviceEnds = device.deviceEndTimes();
        this.stall = device.stallable() ? new StreamStall(this, device) : null;
    }

    @Override
    public Optional<Preemption> preemption() {
        return Optional.ofNullable(stall);
    }

    /** @return level 2's state, for tests; null where the device does not offer it */
    StreamStall stall() {
        return stall;
    }

    @Override
    public String platform() {
        return CudaPlatform.PLATFORM;
    }

    @Override
    public String deviceId() {
        return device.id();
    }


    String name() {
        return name;
    }

    /** @return the CUDA stream priority this queue's stream has (lower = more urgent) */
    int cudaPriority() {
        return cudaPriority;
    }

    /** @return the stream, for providers that work below the driver (none for CUDA yet) */
    @Override
    public <T> Optional<T> nativeHandle(Class<T> type) {
        return type == StreamHandle.Cuda.class ? Optional.of(type.cast(new StreamHandle.Cuda(stream.address()))) : Optional.empty();
    }

    MemorySegment stream() {
        return stream;
    }

    @Override
    public void check(Command command) {
        device.check(command);
    }

    /** A look at the device's queues on the calling thread, when no one else is looking (poll completion only). */
    @Override
    public boolean poll() {
        return !closed && device.watcher().help();
    }

    @Override
    public void launch(HwCommand command) {
        launchLock.lock();
        try {
            if (closed) {
                throw new HalException("cuda queue '" + name + "' on " + device.id() + " is closed; command #"
                        + command.sequence() + " was not launched");
            }
            HalException lost = lostBy;
            if (lost != null) {
                throw new HalException("cuda queue '" + name + "' on " + device.id() + " is lost (" + lost.getMessage()
                        + "); command #" + command.sequence() + " was not launched", lost);
            }
            device.makeCurrent();
            int rc;
            boolean guarded = false;
            if (stall != null) {
                long w = stall.guardFor(System.nanoTime());
                if (w != 0) {
                    rc = api.streamWaitValue32(stream, w, 0, CudaApi.CU_STREAM_WAIT_VALUE_EQ);
                    if (rc != CudaApi.CUDA_SUCCESS) {
                        throw api.failure(rc, "cuStreamWaitValue32", "guard of " + about(command));
                    }
                    guarded = true;
                }
            }
            // chained start: only behind a command of this queue still tracked in flight (its end comes first)
            InFlight behind = inFlight.peekLast();
            boolean chained = !device.everyStartEvent() && behind != null && behind.untracked == null;
            MemorySegment start = chained ? null : takeEvent();
            MemorySegment end = deviceEnds ? takeEvent() : takePlainEvent();
            long launchNanos = System.nanoTime();
            if (start != null) {
                rc = api.eventRecord(start, stream);
                if (rc != CudaApi.CUDA_SUCCESS) {
                    recycle(start);
                    recycleEnd(end);
                    throw api.failure(rc, "cuEventRecord", "start of " + about(command));
                }
            }
            Staged staged = null;
            try {
                if (command.op() != null) {
                    staged = issue(command.op(), command);
                } else {
                    issue(command.command());
                }
            } catch (RuntimeException e) {
                // the start event stays recorded on the stream; re-recording it later is allowed
                recycle(start);
                recycleEnd(end);
                throw e;
            }
            long order = device.nextLaunchOrder();
            rc = api.eventRecord(end, stream);
            if (rc != CudaApi.CUDA_SUCCESS) {
                // the command is on the stream and will run, but its end cannot be seen: report it
                // failed, in its turn, rather than pretend it was never launched
                recycleEnd(end);
                InFlight untracked = new InFlight(command, start, null,
                        api.failure(rc, "cuEventRecord", "end of " + about(command)), order);
                untracked.staged = staged;
                inFlight.addLast(untracked);
                device.watcher().launched(0);
                return;
            }
            if (hostFunc) {
                rc = api.launchHostFunc(stream, HostFuncSignal.stub(), device.watcher().token());
                if (rc != CudaApi.CUDA_SUCCESS && !hostFuncWarned) {
                    hostFuncWarned = true;
                    device.log().warn("cuLaunchHostFunc failed on queue '" + name + "' of " + device.id() + ": "
                            + api.describe(rc) + "; completions are seen by the watcher's safety wake-up", null);
                }
            }
            InFlight launched = new InFlight(command, start, end, null, order);
            launched.staged = staged;
            launched.launchNanos = launchNanos;
            launched.guarded = guarded;
            inFlight.addLast(launched);
            device.watcher().launched(command.command() instanceof Command.Spin s ? s.micros() * 1000L : 0);
        } finally {
            launchLock.unlock();
        }
    }

    private String about(HwCommand command) {
        return "command #" + command.sequence() + " (" + command.command().kind() + ") on queue '" + name + "' of "
                + device.id();
    }

    /**
     * The host side of a read: the device copies into {@code staging} (native memory, which the
     * driver may write while the stream runs), and the completion thread copies that into the
     * application's segment, which may be on the Java heap, before it reports the command done.
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
    private static final long MIN_STAGING = 64 * 1024;

    /** Caller holds launchLock with the context current. */
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
        MemorySegment m = api.memAllocHost(want);
        if (m != null) {
            return new Staged(m, target, true);
        }
        // pageable: lives until the command is collected (or the GC finds it unused)
        return new Staged(Arena.ofAuto().allocate(Math.max(1, bytes), 16), target, false);
    }

    /** A command's staging area is free again: back to the pool, or freed if the pool is full or the queue released. */
    private void unstage(Staged s) {
        if (s == null || !s.pinned()) {
            return;
        }
        synchronized (pinnedPool) {
            if (!released && pinnedPool.size() < POOL) {
                pinnedPool.add(s.staging());
                return;
            }
        }
        try {
            device.makeCurrent();
            api.memFreeHost(s.staging());
        } catch (RuntimeException e) {
            device.log().warn("cuMemFreeHost of a staging area of queue '" + name + "' failed: " + e, null);
        }
    }

    /** Issues a data or launch command with its buffers resolved; caller holds launchLock with the context current. */
    private Staged issue(DeviceOp op, HwCommand command) {
        int rc;
        String call;
        Staged staged = null;
        switch (op) {
            case DeviceOp.Write w -> {
                // staged in native memory (page-locked where the library gives it) until the command is
                // collected: the application's segment may be on the heap, which the driver must not see
                staged = stage(w.source().byteSize(), MemorySegment.NULL);
                MemorySegment.copy(w.source(), 0, staged.staging(), 0, w.source().byteSize());
                call = "cuMemcpyHtoDAsync_v2";
                rc = api.memcpyHtoDAsync(w.target().address() + w.offset(), staged.staging(), w.source().byteSize(), stream);
            }
            case DeviceOp.Read r -> {
                staged = stage(r.target().byteSize(), r.target());
                call = "cuMemcpyDtoHAsync_v2";
                rc = api.memcpyDtoHAsync(staged.staging(), r.source().address() + r.offset(), r.target().byteSize(), stream);
            }
            case DeviceOp.Fill f -> {
                call = "cuMemsetD8Async";
                rc = api.memsetD8Async(f.target().address() + f.offset(), f.value(), f.bytes(), stream);
            }
            case DeviceOp.Launch l -> {
                if (!(l.function() instanceof CudaMemory.CudaFunction f)) {
                    throw new HalException("function " + l.function().name() + " of " + about(command) + " is not a CUDA module's");
                }
                try {
                    KernelArgs.checkAgainst(f.name(), f.sizes(), l.args());
                } catch (IllegalArgumentException e) {
                    throw new HalException(e.getMessage(), e);
                }
                call = "cuLaunchKernel";
                rc = api.launchKernel(f.handle(), l.grid().x(), l.grid().y(), l.grid().z(), l.block().x(), l.block().y(),
                        l.block().z(), l.sharedMemBytes(), stream, kernelArgs.marshal(l.args()));
            }
        }
        if (rc != CudaApi.CUDA_SUCCESS) {
            unstage(staged);
            throw api.failure(rc, call, about(command));
        }
        return staged;
    }

    private void issue(Command command) {
        int rc;
        String call;
        switch (command) {
            case Command.Spin s -> {
                CudaDevice.KernelFunction f = device.spinFunction();
                call = "cuLaunchKernel";
                rc = api.launchKernel(f.handle(), device.spinBlocks(), 1, 1, CudaDevice.SPIN_BLOCK_THREADS, 1, 1, 0, stream,
                        kernelArgs.marshalLong(Math.multiplyExact(s.micros(), 1000L)));
            }
            case Command.Kernel k -> {
                CudaDevice.KernelFunction f;
                try {
                    f = device.function(k.module(), k.function());
                    KernelArgs.checkAgainst(f.label(), f.parameterSizes(), k.args());
                } catch (IllegalArgumentException e) {
                    throw new HalException(e.getMessage(), e);
                }
                call = "cuLaunchKernel";
                rc = api.launchKernel(f.handle(), k.grid().x(), k.grid().y(), k.grid().z(), k.block().x(), k.block().y(),
                        k.block().z(), k.sharedMemBytes(), stream, kernelArgs.marshal(k.args()));
            }
            case Command.Copy c -> {
                call = "cuMemcpyAsync";
                rc = api.memcpyAsync(c.target(), c.source(), c.bytes(), stream);
            }
            case Command.Memset m -> {
                call = "cuMemsetD8Async";
                rc = api.memsetD8Async(m.target(), m.value(), m.bytes(), stream);
            }
            default -> throw new HalException(command.kind() + " on queue '" + name + "' of " + device.id()
                    + " comes without its resolved buffers (HwCommand.op)");
        }
        if (rc != CudaApi.CUDA_SUCCESS) {
            throw api.failure(rc, call, command.kind() + " on queue '" + name + "' of " + device.id());
        }
    }

    /** Caller holds launchLock and has made the context current. */
    private MemorySegment takeEvent() {
        MemorySegment e = eventPool.poll();
        if (e == null) {
            e = api.eventCreate(eventFlags);
            allEvents.add(e);
        }
        return e;
    }

    /** Caller holds launchLock and has made the context current. */
    private MemorySegment takePlainEvent() {
        MemorySegment e = plainPool.poll();
        if (e == null) {
            e = api.eventCreate(eventFlags | CudaApi.CU_EVENT_DISABLE_TIMING);
            allEvents.add(e);
        }
        return e;
    }

    private void recycle(MemorySegment event) {
        if (event != null) {
            eventPool.add(event);
        }
    }

    /** An end event goes back to the pool it came from. */
    private void recycleEnd(MemorySegment event) {
        if (event != null) {
            (deviceEnds ? eventPool : plainPool).add(event);
        }
    }

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
        device.retire(this);
    }

    boolean isClosed() {
        return closed;
    }

    // ------------------------------------------------------------------ completion thread

    boolean hasInFlight() {
        return !inFlight.isEmpty() && lostBy == null && !released && !closed;
    }

    /** @return launch order of the oldest command in flight, or Long.MAX_VALUE */
    long oldestOrder() {
        InFlight f = inFlight.peekFirst();
        return f == null || lostBy != null ? Long.MAX_VALUE : f.order;
    }

    /** @return the oldest command's end event, or null */
    MemorySegment oldestEndEvent() {
        InFlight f = inFlight.peekFirst();
        return f == null ? null : f.end;
    }

    /**
     * Moves every finished command off the head of the queue into {@code deliveries}, in order.
     *
     * @return how many it moved; stops at the first command that has not finished
     * @throws DeviceFault if CUDA reports an error for a command: the context is broken
     */
    int collect(List<Runnable> deliveries, DeviceClock clock) {
        if (released || lostBy != null) {
            return 0;
        }
        int n = 0;
        InFlight f;
        while ((f = inFlight.peekFirst()) != null) {
            if (f.untracked != null) {
                inFlight.pollFirst();
                recycle(f.start);
                unstage(f.staged);
                HwCommand c = f.command;
                HalException cause = f.untracked;
                deliveries.add(() -> listener.failed(c, cause));
                n++;
                continue;
            }
            int rc = api.eventQuery(f.end);
            if (rc == CudaApi.CUDA_ERROR_NOT_READY) {
                f.notDoneNanos = System.nanoTime();
                break;
            }
            inFlight.pollFirst();
            HwCommand c = f.command;
            if (rc != CudaApi.CUDA_SUCCESS) {
                unstage(f.staged);
                HalException cause = api.failure(rc, "cuEventQuery", about(c));
                deliveries.add(() -> listener.failed(c, cause));
                throw new DeviceFault(cause, n + 1);
            }
            long now = System.nanoTime();
            long start;
            long end;
            if (!deviceEnds) {
                // an end without timing: when it was seen; a start event's own time where there is one
                end = now;
                start = f.startNanos != DeviceClock.UNKNOWN ? f.startNanos
                        : f.start != null ? clock.toNanos(f.start) : chainedStart(f);
                if (start == DeviceClock.UNKNOWN || start > end) {
                    start = Math.min(end, lastEndNanos == DeviceClock.UNKNOWN ? f.launchNanos : Math.max(lastEndNanos, f.launchNanos));
                }
            } else if (f.start == null) {
                end = clock.toNanos(f.end);
                if (end == DeviceClock.UNKNOWN) {
                    end = now;
                }
                start = f.startNanos != DeviceClock.UNKNOWN ? f.startNanos : chainedStart(f);
                if (start > end) {
                    // a hold raised just as it passed its guard: it ran, from where it could have started
                    start = Math.min(end, lastEndNanos == DeviceClock.UNKNOWN ? f.launchNanos : Math.max(lastEndNanos, f.launchNanos));
                }
            } else {
                long duration = clock.elapsedNanos(f.start, f.end);
                start = f.startNanos != DeviceClock.UNKNOWN ? f.startNanos : clock.toNanos(f.start);
                if (duration == DeviceClock.UNKNOWN || duration < 0) {
                    duration = 0;
                }
                if (start == DeviceClock.UNKNOWN) {
                    start = now - duration;
                }
                end = start + duration;
            }
            long duration = end - start;
            if (!deviceEnds) {
                long from = f.start != null ? start : predictionStart(f);
                lastAnchorNanos = chainAnchor(f, from == Long.MAX_VALUE ? start : from, end);
            }
            lastEndNanos = end;
            recycle(f.start);
            recycleEnd(f.end);
            if (!(c.command() instanceof Command.Spin)) {
                // EWMA with weight 1/4, like the runtime's own estimate
                estimateNanos = estimated ? estimateNanos + (duration - estimateNanos) / 4 : duration;
                estimated = true;
            }
            long s = start;
            long e = end;
            Staged staged = f.staged;
            if (staged == null || staged.target().byteSize() == 0) {
                unstage(staged); // a write's staging: the copy is done
                deliveries.add(() -> listener.completed(c, s, e));
            } else {
                deliveries.add(() -> {
                    try {
                        staged.finish();
                    } catch (RuntimeException x) {
                        listener.failed(c, new HalException("read of " + about(c) + " could not copy into its target: " + x, x));
                        return;
                    } finally {
                        unstage(staged);
                    }
                    listener.completed(c, s, e);
                });
            }
            n++;
        }
        return n;
    }

    /**
     * @return the host time at which the oldest command should end, or Long.MAX_VALUE if that
     *         cannot be told yet (it has not started, or nothing of its size ran before)
     */
    long predictedEnd(DeviceClock clock, long now) {
        InFlight f = inFlight.peekFirst();
        if (f == null || lostBy != null || released) {
            return Long.MAX_VALUE;
        }
        if (f.untracked != null) {
            return now;
        }
        long expected = expectedNanos(f);
        if (expected < 0) {
            return Long.MAX_VALUE;
        }
        if (f.startNanos == DeviceClock.UNKNOWN && f.start == null) {
            long s = chainedStart(f);
            if (s == Long.MAX_VALUE) {
                return Long.MAX_VALUE; // held: it has not started
            }
            f.startNanos = s;
        }
        if (f.startNanos == DeviceClock.UNKNOWN) {
            if (api.eventQuery(f.start) != CudaApi.CUDA_SUCCESS) {
                return Long.MAX_VALUE;
            }
            long s = clock.toNanos(f.start);
            f.startNanos = s == DeviceClock.UNKNOWN ? now : s;
        }
        if (f.start == null && !deviceEnds) {
            long s = predictionStart(f);
            if (s != Long.MAX_VALUE && s < f.startNanos) {
                return s + expected;
            }
        }
        return f.startNanos + expected;
    }

    /**
     * Completion thread, seen end times: where a command without a start event is predicted to
     * have started: where its predecessor is estimated to have really ended (its anchor), rather
     * than where that end was seen. The reported start stays the seen one (a report's start is
     * its predecessor's reported end).
     *
     * @return host time, or Long.MAX_VALUE while a hold keeps it from starting
     */
    private long predictionStart(InFlight f) {
        return startAfter(f, lastAnchorNanos != DeviceClock.UNKNOWN ? lastAnchorNanos : lastEndNanos);
    }

    /**
     * Completion thread, seen end times: where a collected command is estimated to have really
     * ended, for predicting the next one on the stream. The command ended somewhere between the
     * last look that found it running and the look that found it done ({@code seen}); its
     * predicted end, kept inside that interval, is the better guess. Anchoring the next command's prediction on {@code seen} instead would carry
     * this look's lateness into the next one, and along a queue of commands launched together the
     * lateness would add up (each look starts from the previous one's lateness).
     */
    private long chainAnchor(InFlight f, long start, long seen) {
        long expected = expectedNanos(f);
        if (expected < 0) {
            return seen;
        }
        long lower = Math.max(f.launchNanos, f.notDoneNanos == DeviceClock.UNKNOWN ? start : f.notDoneNanos);
        return Math.min(seen, Math.max(lower, start + expected));
    }

    /**
     * Completion thread: where a command without a start event started. Its predecessor on the
     * stream has been collected (commands are collected in order), so its end is known: the
     * stream reached this one then, or when its launch call began if that was later, or, for a
     * guarded command, where the holds covering that moment ended.
     *
     * @return host time, or Long.MAX_VALUE while a hold keeps it from starting
     */
    private long chainedStart(InFlight f) {
        return startAfter(f, lastEndNanos);
    }

    /** Where a command without a start event started if its predecessor ended at {@code predecessorEnd}. */
    private long startAfter(InFlight f, long predecessorEnd) {
        long t = predecessorEnd == DeviceClock.UNKNOWN ? f.launchNanos : Math.max(predecessorEnd, f.launchNanos);
        return f.guarded && stall != null ? stall.startAfterHolds(t) : t;
    }

    /**
     * For an oldest command of known length that has not started yet (it waits for the device):
     * how often to look for its start. Half its length suffices, because a start seen that late
     * still leaves time to wake before its end.
     *
     * @return that interval, or Long.MAX_VALUE if its length is unknown
     */
    long startCheckInterval() {
        InFlight f = inFlight.peekFirst();
        if (f == null) {
            return Long.MAX_VALUE;
        }
        long expected = expectedNanos(f);
        return expected < 0 ? Long.MAX_VALUE : expected / 2;
    }

    /** @return the expected device time of a command, or -1 if unknown */
    private long expectedNanos(InFlight f) {
        if (f.command.command() instanceof Command.Spin s) {
            return s.micros() * 1000L;
        }
        return estimated ? estimateNanos : -1;
    }

    /** The device failed: nothing more will be reported but {@link HwQueueListener#lost}. */
    void lose(HalException cause) {
        if (lostBy != null || closed && released) {
            return;
        }
        lostBy = cause;
        if (!closed) {
            listener.lost(cause);
        }
    }

    /**
     * Destroys the stream and the events. Called by the completion thread once the queue is
     * closed (or by the device when it shuts down); commands still on the stream run to their
     * end, and CUDA frees the stream and the events after them.
     */
    void release() {
        if (released) {
            return;
        }
        released = true;
        if (stall != null) {
            stall.release();
        }
        api.streamDestroy(stream);
        launchLock.lock();
        try {
            for (MemorySegment e : allEvents) {
                api.eventDestroy(e);
            }
            allEvents.clear();
        } finally {
            launchLock.unlock();
        }
        eventPool.clear();
        plainPool.clear();
        List<MemorySegment> pinned = new ArrayList<>();
        synchronized (pinnedPool) {
            pinned.addAll(pinnedPool);
            pinnedPool.clear();
        }
        for (InFlight f : inFlight) {
            if (f.staged != null && f.staged.pinned()) {
                pinned.add(f.staged.staging());
            }
        }
        for (MemorySegment m : pinned) {
            api.memFreeHost(m);
        }
        inFlight.clear();
        arena.close();
    }

    /** CUDA reported an error for a command: the device's context cannot be used any more. */
    static final class DeviceFault extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int collected;

        DeviceFault(HalException cause, int collected) {
            super(cause.getMessage(), cause);
            this.collected = collected;
        }

        HalException halCause() {
            return (HalException) getCause();
        }
    }
}
