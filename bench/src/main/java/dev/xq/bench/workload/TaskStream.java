package dev.xq.bench.workload;

import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * One tenant's workload on one queue, issued by its own thread: tasks released periodically
 * (open loop: the thread waits for each task's end, but no longer than its next release), back
 * to back with a number of tasks outstanding (closed loop), or back to back with a random pause
 * after each. The thread never prints; it only records.
 */
public final class TaskStream {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private enum Pacing { PERIODIC, BACK_TO_BACK, PAUSED }

    private final String tenant;
    private final XQueue queue;
    private final Ledger ledger;
    private final TaskShape shape;
    private final Pacing pacing;
    private final long periodNanos;
    private final int depth;
    private final long minPauseNanos;
    private final long maxPauseNanos;
    private final SplittableRandom random;
    private final List<TaskRecord> records = new ArrayList<>();
    private final AtomicInteger completedTasks = new AtomicInteger();
    private volatile Consumer<XQueue> beforeTask = q -> { };
    private long firstRelease;
    private boolean fixedFirst;
    private volatile boolean stopping;
    // Held while a task is submitted, so that stop() never returns in the middle of one.
    private final Object submitLock = new Object();
    private volatile boolean abandoned;
    private volatile Throwable error;
    private Thread thread;

    private TaskStream(String tenant, XQueue queue, Ledger ledger, TaskShape shape, Pacing pacing, long periodNanos,
                       int depth, long minPauseNanos, long maxPauseNanos, long seed) {
        this.tenant = tenant;
        this.queue = queue;
        this.ledger = ledger;
        this.shape = shape;
        this.pacing = pacing;
        this.periodNanos = periodNanos;
        this.depth = depth;
        this.minPauseNanos = minPauseNanos;
        this.maxPauseNanos = maxPauseNanos;
        this.random = new SplittableRandom(seed);
    }

    /** Tasks released every {@code periodNanos}, whether or not earlier ones have finished. */
    public static TaskStream periodic(String tenant, XQueue q, Ledger l, TaskShape shape, long periodNanos) {
        if (periodNanos < 1) {
            throw new IllegalArgumentException("period " + periodNanos + " ns must be >= 1");
        }
        return new TaskStream(tenant, q, l, shape, Pacing.PERIODIC, periodNanos, Integer.MAX_VALUE, 0, 0, 0);
    }

    /**
     * Tasks released every {@code periodNanos} from {@code firstNanos} on ({@link System#nanoTime()}; a moment
     * already past when the stream starts is its start), whether or not earlier ones have finished.
     */
    public static TaskStream periodicFrom(String tenant, XQueue q, Ledger l, TaskShape shape, long periodNanos, long firstNanos) {
        TaskStream s = periodic(tenant, q, l, shape, periodNanos);
        s.firstRelease = firstNanos;
        s.fixedFirst = true;
        return s;
    }

    /** Tasks back to back, with up to {@code depth} tasks submitted and not yet ended. */
    public static TaskStream backToBack(String tenant, XQueue q, Ledger l, TaskShape shape, int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("depth " + depth + " must be >= 1");
        }
        return new TaskStream(tenant, q, l, shape, Pacing.BACK_TO_BACK, 0, depth, 0, 0, 0);
    }

    /** One task at a time, each followed by a pause drawn uniformly from [min, max]. */
    public static TaskStream paused(String tenant, XQueue q, Ledger l, TaskShape shape, Duration min, Duration max, long seed) {
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("pause range [" + min + ", " + max + "] is invalid; need 0 <= min <= max");
        }
        return new TaskStream(tenant, q, l, shape, Pacing.PAUSED, 0, 1, min.toNanos(), max.toNanos(), seed);
    }

    /** Runs {@code hook} on the stream's thread just before each task is submitted (e.g. to set a deadline hint). */
    public TaskStream beforeEachTask(Consumer<XQueue> hook) {
        this.beforeTask = hook;
        return this;
    }

    /** @return the tenant name */
    public String tenant() {
        return tenant;
    }

    /** @return the queue the stream submits to */
    public XQueue queue() {
        return queue;
    }

    /** Starts issuing tasks on a new thread. */
    public synchronized TaskStream start() {
        if (thread != null) {
            throw new IllegalStateException("stream " + tenant + " is already started");
        }
        thread = Thread.ofPlatform().daemon().name("xq-bench-" + tenant).start(this::loop);
        return this;
    }

    /**
     * Issues no more tasks; tasks already submitted go on. When this returns, the stream
     * submits nothing more, so its queue may be closed.
     */
    public void stop() {
        synchronized (submitLock) {
            stopping = true;
        }
        LockSupport.unpark(thread);
    }

    /** Stops and no longer waits for outstanding tasks (they still end on their own or when the queue closes). */
    public void abandon() {
        stop();
        abandoned = true;
        LockSupport.unpark(thread);
    }

    /**
     * Waits for the thread to end.
     * @throws IllegalStateException if it does not end in time, or if it failed to submit
     */
    public void join(Duration timeout) throws InterruptedException {
        if (thread != null && !thread.join(timeout)) {
            throw new IllegalStateException("workload thread of " + tenant + " did not end within " + timeout);
        }
        if (error != null) {
            throw new IllegalStateException("workload " + tenant + " failed: " + error, error);
        }
    }

    /** @return an error that stopped the stream early, or null */
    public Throwable error() {
        return error;
    }

    /** @return tasks whose last command has ended so far */
    public int completedTasks() {
        return completedTasks.get();
    }

    /** @return the tasks issued so far (a copy) */
    public synchronized List<TaskRecord> records() {
        return List.copyOf(records);
    }

    private void loop() {
        ArrayDeque<TaskRecord> outstanding = new ArrayDeque<>();
        long next = System.nanoTime();
        if (fixedFirst && firstRelease - next > 0) {
            next = firstRelease;
        }
        try {
            while (!stopping) {
                long release = System.nanoTime();
                if (pacing == Pacing.PERIODIC) {
                    while (!stopping && (release = System.nanoTime()) < next) {
                        LockSupport.parkNanos(next - release);
                    }
                    if (stopping) {
                        break;
                    }
                    release = next;
                    next += periodNanos;
                }
                TaskRecord task = issue(release);
                if (task == null) {
                    break;
                }
                if (pacing == Pacing.PERIODIC) {
                    awaitUntil(task, next);
                    continue;
                }
                outstanding.addLast(task);
                while (outstanding.size() >= depth && !abandoned) {
                    if (awaitEnd(outstanding.peekFirst())) {
                        outstanding.removeFirst();
                    }
                }
                if (pacing == Pacing.PAUSED && !stopping) {
                    long pause = minPauseNanos == maxPauseNanos ? minPauseNanos : random.nextLong(minPauseNanos, maxPauseNanos + 1);
                    long until = System.nanoTime() + pause;
                    long left;
                    while (!stopping && (left = until - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(left);
                    }
                }
            }
        } catch (Throwable t) {
            error = t;
        }
    }

    /** @return the task submitted, or null when the stream was stopped first */
    private TaskRecord issue(long release) {
        List<Submission> subs = new ArrayList<>(shape.count());
        long cpu;
        synchronized (submitLock) {
            if (stopping) {
                return null;
            }
            beforeTask.accept(queue);
            cpu = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < shape.count(); i++) {
                subs.add(ledger.submit(queue, shape.command()));
            }
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
        }
        TaskRecord task = new TaskRecord(tenant, release, subs, cpu);
        subs.getLast().stage().whenComplete((r, e) -> completedTasks.incrementAndGet());
        synchronized (this) {
            records.add(task);
        }
        return task;
    }

    /**
     * A periodic tenant waits for each task's result, as a client that uses it does (and as the C++
     * reference tenant spins on its last end event), but never past its next release: a task
     * still running then is left to end on its own, and the next one is released on time.
     */
    private void awaitUntil(TaskRecord task, long nextRelease) throws InterruptedException {
        long left = nextRelease - System.nanoTime();
        if (left <= 0 || stopping || abandoned) {
            return;
        }
        try {
            task.commands().getLast().await(Duration.ofNanos(left));
        } catch (TimeoutException | XQueueException e) {
            // still running at the next release, or failed or cancelled (the ledger counts it)
        }
    }

    /** @return whether the task's last command has ended; false after a short wait so that stop/abandon are seen */
    private boolean awaitEnd(TaskRecord task) throws InterruptedException {
        try {
            task.commands().getLast().await(Duration.ofMillis(50));
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (XQueueException e) {
            // Failed or cancelled: the ledger counts it; the task has ended either way.
            return true;
        }
    }
}
