package dev.xq.hal.hip;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One thread per device that finds finished commands of all the device's queues and reports
 * them, in launch order per queue.
 *
 * <p>Why polling with hipEventQuery rather than blocking in hipEventSynchronize: a blocked
 * synchronize waits for one event of one stream, so a single thread would see a short command
 * on an urgent stream only after the long command it happens to be waiting for on another
 * stream; getting each stream's completions on time would take a thread per stream (XQ opens a
 * stream per XQueue, hundreds of them). A non-blocking query lets one thread watch every stream
 * of the device. To keep its cost low the wait between passes adapts: it restarts at the
 * shortest interval whenever a pass saw progress and doubles up to the longest interval
 * otherwise, so a steady stream of short commands is seen within microseconds while a long
 * command costs a few queries a millisecond; with nothing in flight the thread parks until a
 * launch wakes it. The longest interval bounds how late a completion is seen, and with it the
 * error of the end timestamps (see {@link HipQueue#collect}).
 */
final class CompletionPoller {

    private final String deviceId;
    private final RuntimeLog log;
    private final long minWaitNanos;
    private final long maxWaitNanos;
    private final CopyOnWriteArrayList<HipQueue> queues = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean sleeping;

    CompletionPoller(String deviceId, long minWaitMicros, long maxWaitMicros, RuntimeLog log) {
        this.deviceId = deviceId;
        this.log = log;
        this.minWaitNanos = TimeUnit.MICROSECONDS.toNanos(minWaitMicros);
        this.maxWaitNanos = TimeUnit.MICROSECONDS.toNanos(maxWaitMicros);
        this.thread = Thread.ofPlatform().daemon().name("xq-hip-poller-" + deviceId).unstarted(this::run);
        thread.start();
    }

    void register(HipQueue q) {
        queues.add(q);
    }

    void unregister(HipQueue q) {
        queues.remove(q);
    }

    /** Called after a launch: rouses the thread if it parked for lack of work. */
    void wake() {
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** Stops the thread and waits for it; callbacks under way finish first. */
    void stop() {
        running = false;
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                log.warn("hip completion poller of " + deviceId + " did not stop within 10 s", null);
            }
        }
    }

    private void run() {
        List<Runnable> deliveries = new ArrayList<>();
        long wait = minWaitNanos;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = arena.allocate(JAVA_FLOAT);
            while (running) {
                int finished = 0;
                for (HipQueue q : queues) {
                    try {
                        finished += q.collect(deliveries, scratch);
                    } catch (RuntimeException e) {
                        log.warn("hip completion poller of " + deviceId + ": polling queue " + q.name() + " failed", e);
                    }
                }
                // Listener calls happen outside every queue lock: the runtime may launch more
                // work (or close the queue) from inside them.
                for (Runnable d : deliveries) {
                    try {
                        d.run();
                    } catch (RuntimeException e) {
                        log.warn("hip completion listener on " + deviceId + " threw", e);
                    }
                }
                deliveries.clear();
                if (!anyInFlight()) {
                    sleeping = true;
                    // re-check after announcing the sleep: a launch in between has seen the flag
                    if (running && !anyInFlight()) {
                        LockSupport.park(this);
                    }
                    sleeping = false;
                    wait = minWaitNanos;
                    continue;
                }
                wait = finished > 0 ? minWaitNanos : Math.min(wait * 2, maxWaitNanos);
                LockSupport.parkNanos(this, wait);
            }
        }
    }

    private boolean anyInFlight() {
        for (HipQueue q : queues) {
            if (q.hasInFlight()) {
                return true;
            }
        }
        return false;
    }
}
