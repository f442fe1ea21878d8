package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.xq.hal.spi.HalException;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One thread per device that sees commands of all the device's queues finish and reports them
 * to the queues' listeners, in launch order per queue. One thread per device rather than per
 * stream, because XQ opens a stream per XQueue (hundreds of them).
 *
 * <p>How it waits depends on {@link CompletionMode}:
 * <ul>
 * <li>{@code poll} (default): cuEventQuery on each queue's oldest command. A command's end is
 * predicted from its start event and its expected length (spin: its T; others: the queue's
 * running estimate); the thread sleeps until {@code pollEarlyMicros} before the earliest
 * predicted end and spins from there, so a completion is seen within microseconds while the
 * CPU is busy only for the early margin per command. A command of known length that waits
 * for the device is looked at every half of its length until it starts. Without a prediction
 * (unknown size, or past its predicted end) the sleep doubles from 5 us up to
 * {@code pollMaxSleepMicros}. The thread's Linux timer slack is lowered (prctl), because
 * with the default 50 us slack every sleep overshoots by about that much. With
 * {@code pollWait=spin} (automatic on hosts with 8 or more hardware threads) those waits are
 * spins instead of timed parks (a wait longer than {@code pollSpinMicros} parks until that long
 * before the look, then spins), and the back-off stops at {@code pollEarlyMicros}: on a shared
 * virtual machine a parked thread's timer wake-up is now and then milliseconds late (H100 host,
 * 26 Nov: up to 0.2 % of parks of 5-480 us lasted 1.5-4.6 ms), and each late look delays the next
 * launch of every queue whose window waits on a completion. A launch cuts a spin short as it
 * would wake a parked thread. With nothing in flight the thread parks either way.</li>
 * <li>{@code sync-spin}/{@code sync-block}: cuEventSynchronize on the device's oldest command;
 * while blocked in it, a shorter command on another stream is seen only after it.</li>
 * <li>{@code hostfunc}: sleeps until the cuLaunchHostFunc callback after a command wakes it
 * (with a 2 ms safety wake-up).</li>
 * </ul>
 * Listener calls happen with no lock held: the runtime launches the next command from inside
 * {@code completed}.
 *
 * <p>Helping ({@link #help}, poll mode): a thread that waits for a command (the runtime's
 * {@code Submission.await}, spinning near the command's end) looks too, so an end is seen while
 * this thread is off its CPU. On the GPU machine's shared host this thread was now and then not
 * run for 2-3 ms while commands ended (H100, 27 Nov: six of the eight slowest fg tasks of a run
 * that missed the goal had their last ends seen together 2.3 ms late, with the submitting thread
 * on time). A look (the queues' event queries and what they find) is done under {@code looking}
 * by one thread at a time; a helper only tries it, never waits for it. What a look finds goes,
 * in order, to {@code ready}, and one thread at a time reports it ({@code delivering}), so the
 * reports stay in launch order per queue whoever looked.
 *
 * <p>Why poll is the default (H100, spin-T commands chained from {@code completed}, completion
 * latency p50 / CPU of this thread): poll 7.8 us / 41 % at T=100 and 5.4 us / 8 % at T=500;
 * sync-spin 7-10 us / 100 %, and it holds a short queue up behind a long one on another stream;
 * sync-block 41-77 us; hostfunc 51-99 us, and its callback holds the stream, leaving the device
 * idle ~50-75 us between commands. Those CPU figures are for pollWait=park; with spin (the
 * default on hosts of 8 or more hardware threads) the thread takes a whole core while commands
 * are in flight, and in exchange no look is ever a timer's wake-up late. Numbers and method:
 * README.md, results/.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
final class CompletionWatcher {

    private static final long MIN_SLEEP_NANOS = 5_000;
    private static final long HOSTFUNC_SAFETY_NANOS = 2_000_000;
    private static final long CALIBRATION_ROOM_NANOS = 200_000;
    private static final long MIN_CALIBRATION_ROOM_NANOS = 30_000;
    /** PR_SET_TIMERSLACK (linux/prctl.h). */
    private static final int PR_SET_TIMERSLACK = 29;

    private final CudaDevice device;
    private final CudaApi api;
    private final DeviceClock clock;
    private final CompletionMode mode;
    private final long earlyNanos;
    private final long maxSleepNanos;
    private final int timerSlackNanos;
    private final RuntimeLog log;
    /**
     * The device's open queues, copied on each change (rare) and read as a plain array by each look
     * and plan (hundreds of thousands a second near an end): iterating an array allocates nothing,
     * where a list's iterator is garbage whenever the JIT does not remove it.
     */
    private volatile CudaQueue[] queues = new CudaQueue[0];
    private final ConcurrentLinkedQueue<CudaQueue> retired = new ConcurrentLinkedQueue<>();
    private final MemorySegment token;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean sleeping;
    /** pollWait=spin: waits between looks are spins, not timed parks. */
    private final boolean spin;
    /** pollWait=spin: the longest spin before a look; a longer wait parks until this long before it. */
    private final long spinNanos;
    /** Set by a launch or a retire to cut a spinning wait short. */
    private volatile boolean kicked;
    /**
     * pollWait=spin: where the current spin ends; Long.MAX_VALUE while the thread looks and plans
     * (a launch then always cuts the coming spin short), so a launch whose command cannot end
     * before the spin does leaves it alone, as it leaves a parked thread asleep.
     */
    private volatile long spinUntilNanos = Long.MAX_VALUE;
    /** When a sleeping thread wakes by itself (Long.MAX_VALUE: not before it is woken). */
    private volatile long wakeAt = Long.MAX_VALUE;
    private volatile boolean signalled;
    private volatile String timerSlack = "not set";
    /** Held by the thread that looks at the queues (queries events, updates their predictions). */
    private final ReentrantLock looking = new ReentrantLock();
    /** What looks found, in order, not yet reported. */
    private final ConcurrentLinkedQueue<Runnable> ready = new ConcurrentLinkedQueue<>();
    /** Set by the one thread reporting {@link #ready} at the moment. */
    private final AtomicBoolean delivering = new AtomicBoolean();
    /** A look's finds before they go to {@link #ready}; guarded by {@link #looking}. */
    private final List<Runnable> found = new ArrayList<>();
    /** How many looks a helper made (for tests and status). */
    private final java.util.concurrent.atomic.AtomicLong helped = new java.util.concurrent.atomic.AtomicLong();

    CompletionWatcher(CudaDevice device, CudaApi api, DeviceClock clock, CudaSettings settings, RuntimeLog log) {
        this.device = device;
        this.api = api;
        this.clock = clock;
        this.mode = settings.completion();
        this.earlyNanos = TimeUnit.MICROSECONDS.toNanos(settings.pollEarlyMicros());
        this.maxSleepNanos = TimeUnit.MICROSECONDS.toNanos(settings.pollMaxSleepMicros());
        this.timerSlackNanos = settings.timerSlackNanos();
        this.spin = mode == CompletionMode.POLL && settings.pollSpins(Runtime.getRuntime().availableProcessors());
        this.spinNanos = TimeUnit.MICROSECONDS.toNanos(settings.pollSpinMicros());
        this.log = log;
        this.token = HostFuncSignal.register(this);
        this.thread = Thread.ofPlatform().daemon().name("xq-cuda-completion-" + device.id()).unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    CompletionMode mode() {
        return mode;
    }

    /** @return the completion thread, for CPU-time measurements */
    Thread thread() {
        return thread;
    }

    /** @return whether the thread spins between looks while commands are in flight (pollWait) */
    boolean spins() {
        return spin;
    }

    /** @return what happened to the timer slack request, for status lines */
    String timerSlack() {
        return timerSlack;
    }

    /** @return the cuLaunchHostFunc user data that names this watcher */
    MemorySegment token() {
        return token;
    }

    void register(CudaQueue q) {
        synchronized (this) {
            CudaQueue[] now = Arrays.copyOf(queues, queues.length + 1);
            now[now.length - 1] = q;
            queues = now;
        }
    }

    private synchronized void unregister(CudaQueue q) {
        queues = Arrays.stream(queues).filter(x -> x != q).toArray(CudaQueue[]::new);
    }

    /** Hands a closed queue to the thread, which destroys its stream and events. */
    void retire(CudaQueue q) {
        retired.add(q);
        if (!running || !thread.isAlive()) {
            releaseRetired();
        } else {
            kicked = true;
            LockSupport.unpark(thread);
        }
    }

    /**
     * Called after a launch: a sleeping thread is woken to re-plan, unless it wakes by itself
     * before the new command can end (saves a futex wake, ~3 us, per pipelined launch).
     *
     * @param shortestNanos the least time the new command can take (0 if unknown)
     */
    void launched(long shortestNanos) {
        if (spin && Thread.currentThread() != thread && spinUntilNanos - System.nanoTime() > shortestNanos) {
            kicked = true; // cuts the spin short; the thread clears it before each look
        }
        if (sleeping && Thread.currentThread() != thread && wakeAt - System.nanoTime() > shortestNanos) {
            LockSupport.unpark(thread);
        }
    }

    /** Called from the cuLaunchHostFunc callback. */
    void signal() {
        signalled = true;
        LockSupport.unpark(thread);
    }

    /** Stops the thread and waits for it; callbacks under way finish first. */
    void stop() {
        running = false;
        kicked = true;
        HostFuncSignal.unregister(token);
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread && thread.isAlive()) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                log.warn("cuda completion thread of " + device.id() + " did not stop within 10 s", null);
            }
        }
        releaseRetired();
    }

    private void run() {
        int rc = api.setCurrent(device.context());
        if (rc != CudaApi.CUDA_SUCCESS) {
            device.fail(api.failure(rc, "cuCtxSetCurrent", "completion thread of " + device.id()));
            return;
        }
        lowerTimerSlack();
        long sleep = MIN_SLEEP_NANOS;
        while (running) {
            spinUntilNanos = Long.MAX_VALUE;
            kicked = false; // a launch from here on cuts the coming spin short
            int done;
            HalException fault;
            looking.lock();
            try {
                releaseRetired();
                if (clock.overdue(System.nanoTime()) && !renewClock()) {
                    continue;
                }
                done = lookLocked();
                fault = lookFault;
                lookFault = null;
            } finally {
                looking.unlock();
            }
            deliver();
            if (fault != null) {
                device.fail(fault);
                continue;
            }
            long now = System.nanoTime();
            if (!anyInFlight()) {
                if (clock.due(now) && !renewLocked()) {
                    continue;
                }
                wakeAt = Long.MAX_VALUE;
                sleeping = true;
                // re-check after announcing the sleep: a launch in between has seen the flag
                if (running && !anyInFlight() && retired.isEmpty()) {
                    LockSupport.park(this);
                }
                sleeping = false;
                sleep = MIN_SLEEP_NANOS;
                continue;
            }
            if (done > 0) {
                // look again at once: commands of several queues often end together
                sleep = MIN_SLEEP_NANOS;
                continue;
            }
            switch (mode) {
                case POLL -> sleep = waitPredicted(now, sleep);
                case SYNC_SPIN, SYNC_BLOCK -> {
                    if (!clock.due(now) || renewLocked()) {
                        synchronizeOldest();
                    }
                }
                case HOST_FUNC -> {
                    if (clock.due(now)) {
                        renewLocked();
                    }
                    if (!signalled) {
                        sleepFor(HOSTFUNC_SAFETY_NANOS);
                    }
                    signalled = false;
                }
            }
        }
    }

    /** Set by {@link #lookLocked} when a command failed: the context is broken; guarded by {@link #looking}. */
    private HalException lookFault;

    /**
     * One look at every queue: moves what ended to {@link #ready}, in order. Caller holds
     * {@link #looking}. @return how many commands ended
     */
    private int lookLocked() {
        int done = 0;
        for (CudaQueue q : queues) {
            if (q.isClosed()) {
                continue;
            }
            try {
                done += q.collect(found, clock);
            } catch (CudaQueue.DeviceFault f) {
                lookFault = f.halCause();
                break;
            } catch (RuntimeException e) {
                log.warn("cuda completion thread of " + device.id() + ": collecting queue " + q.name() + " failed", e);
            }
        }
        // by index, and only when there is something: ConcurrentLinkedQueue.addAll takes an
        // iterator, and a look that finds nothing (most of them, while the thread polls near an
        // end) must not allocate (H100, 27 Nov: ~2 KB a command of garbage, a young collection a run)
        for (int i = 0, n = found.size(); i < n; i++) {
            ready.add(found.get(i));
        }
        found.clear();
        return done;
    }

    /** Reports what the looks found, in order, unless another thread is reporting (it then reports these too). */
    private void deliver() {
        while (!ready.isEmpty() && delivering.compareAndSet(false, true)) {
            try {
                Runnable d;
                while ((d = ready.poll()) != null) {
                    try {
                        d.run();
                    } catch (RuntimeException e) {
                        log.warn("cuda completion listener on " + device.id() + " threw", e);
                    }
                }
            } finally {
                delivering.set(false);
            }
        }
    }

    /**
     * A look on the calling thread (poll mode; {@link CudaQueue#poll}): the runtime's waiter,
     * spinning near its command's end, sees that end even while this watcher's thread is late.
     * Never waits: when the thread (or another helper) is looking, or the device clock is due for
     * its renewal (the thread's job), it does nothing.
     *
     * @return whether it looked
     */
    boolean help() {
        if (mode != CompletionMode.POLL || !running || device.fault() != null || looking.isHeldByCurrentThread()
                || clock.overdue(System.nanoTime()) || !looking.tryLock()) {
            return false;
        }
        int done;
        HalException fault;
        try {
            device.makeCurrent();
            done = lookLocked();
            fault = lookFault;
            lookFault = null;
        } finally {
            looking.unlock();
        }
        helped.incrementAndGet();
        deliver();
        if (fault != null) {
            device.fail(fault);
        } else if (done > 0 && spin) {
            kicked = true; // the thread's plan was made for what is gone now: it plans again
        }
        return true;
    }

    /** @return how many looks helpers made */
    long helpedLooks() {
        return helped.get();
    }

    /**
     * Sleeps until shortly before the earliest predicted end, or spins when that is near. A
     * queue whose oldest command has not started is looked at every half of that command's
     * length (it may start at any moment once the device frees up); one of unknown length, or
     * one running past its prediction, by the doubling back-off.
     *
     * @return the next back-off sleep
     */
    private long waitPredicted(long now, long sleep) {
        long wake = Long.MAX_VALUE;
        boolean backOff = false;
        // the plan reads and updates the queues' predictions: a look's state (helpers look too)
        looking.lock();
        try {
            long next = Long.MAX_VALUE;
            long startCheck = Long.MAX_VALUE;
            for (CudaQueue q : queues) {
                if (!q.hasInFlight()) {
                    continue;
                }
                try {
                    long end = q.predictedEnd(clock, now);
                    if (end != Long.MAX_VALUE) {
                        next = Math.min(next, end);
                    } else {
                        long interval = q.startCheckInterval();
                        if (interval == Long.MAX_VALUE) {
                            backOff = true;
                        } else {
                            startCheck = Math.min(startCheck, Math.max(MIN_SLEEP_NANOS, interval));
                        }
                    }
                } catch (RuntimeException e) {
                    log.warn("cuda completion thread of " + device.id() + ": predicting queue " + q.name() + " failed", e);
                    backOff = true;
                }
            }
            if (next != Long.MAX_VALUE) {
                if (now >= next - earlyNanos) {
                    if (now - next <= earlyNanos + MIN_SLEEP_NANOS) {
                        Thread.onSpinWait();
                        return backOff ? sleep : MIN_SLEEP_NANOS;
                    }
                    // past its predicted end by more than the margin: a longer command than expected
                    backOff = true;
                } else {
                    wake = next - earlyNanos;
                }
            }
            if (startCheck != Long.MAX_VALUE) {
                wake = Math.min(wake, now + startCheck);
            }
            if (backOff || wake == Long.MAX_VALUE) {
                wake = Math.min(wake, now + sleep);
            }
            long room = wake - now;
            if (room > MIN_CALIBRATION_ROOM_NANOS && clock.due(now)) {
                // a renewal spins ~5 us per try: one try when the next end is near, five when there is time
                renewClock(room > CALIBRATION_ROOM_NANOS ? 5 : 1);
                return sleep;
            }
        } finally {
            looking.unlock();
        }
        if (spin && wake - now > spinNanos) {
            // a long wait: park until the spin's length before the look, then spin the rest
            sleepFor(wake - now - spinNanos);
            return sleep;
        }
        if (spin) {
            spinUntil(wake);
            return backOff ? Math.min(sleep * 2, Math.max(MIN_SLEEP_NANOS, Math.min(earlyNanos, maxSleepNanos))) : MIN_SLEEP_NANOS;
        }
        sleepFor(wake - now);
        return backOff ? Math.min(sleep * 2, maxSleepNanos) : MIN_SLEEP_NANOS;
    }

    /** {@link #renewClock()} under {@link #looking} (the clock converts the times a look reports). */
    private boolean renewLocked() {
        looking.lock();
        try {
            return renewClock();
        } finally {
            looking.unlock();
        }
    }

    /** @return false if the clock could not be read: the device has failed */
    private boolean renewClock() {
        return renewClock(5);
    }

    private boolean renewClock(int tries) {
        if (device.fault() != null) {
            return true;
        }
        try {
            clock.calibrate(tries);
            return true;
        } catch (HalException e) {
            device.fail(e);
            return false;
        }
    }

    private void synchronizeOldest() {
        CudaQueue oldest = null;
        long order = Long.MAX_VALUE;
        for (CudaQueue q : queues) {
            long o = q.oldestOrder();
            if (o < order && q.hasInFlight()) {
                order = o;
                oldest = q;
            }
        }
        if (oldest == null) {
            return;
        }
        MemorySegment end = oldest.oldestEndEvent();
        if (end != null) {
            // errors surface through the next cuEventQuery in collect
            api.eventSynchronize(end);
        }
    }

    /**
     * pollWait=spin: waits until {@code deadline} on the CPU; a launch, retire or stop since the
     * look began cuts it short.
     */
    private void spinUntil(long deadline) {
        spinUntilNanos = deadline;
        while (running && !kicked && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }

    private void sleepFor(long nanos) {
        wakeAt = System.nanoTime() + nanos;
        sleeping = true;
        LockSupport.parkNanos(this, nanos);
        sleeping = false;
    }

    private boolean anyInFlight() {
        for (CudaQueue q : queues) {
            if (q.hasInFlight()) {
                return true;
            }
        }
        return false;
    }

    private void releaseRetired() {
        CudaQueue q;
        while ((q = retired.poll()) != null) {
            unregister(q);
            try {
                device.makeCurrent();
                q.release();
            } catch (RuntimeException e) {
                log.warn("cuda: releasing queue " + q.name() + " of " + device.id() + " failed", e);
            }
            device.forget(q);
        }
    }

    /**
     * Sleeps shorter than the default 50 us timer slack only if the kernel is asked to be
     * exact; this thread's slack is its own (prctl applies to the calling thread).
     */
    private void lowerTimerSlack() {
        if (timerSlackNanos <= 0) {
            timerSlack = "OS default";
            return;
        }
        try {
            Linker linker = Linker.nativeLinker();
            Optional<MemorySegment> prctl = linker.defaultLookup().find("prctl");
            if (prctl.isEmpty()) {
                timerSlack = "no prctl";
                return;
            }
            MethodHandle h = linker.downcallHandle(prctl.get(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG),
                    Linker.Option.firstVariadicArg(1));
            int rc = (int) h.invokeExact(PR_SET_TIMERSLACK, (long) timerSlackNanos);
            timerSlack = rc == 0 ? timerSlackNanos + " ns" : "prctl returned " + rc;
        } catch (Throwable t) {
            timerSlack = "prctl failed: " + t;
        }
    }
}
