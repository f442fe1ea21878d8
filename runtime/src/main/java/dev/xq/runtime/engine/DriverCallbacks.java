package dev.xq.runtime.engine;

import dev.xq.api.CommandFailedException;
import dev.xq.api.CommandResult;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.runtime.jfr.Tracing;

/**
 * What the driver tells an application queue ({@link XQueueImpl}): its commands' ends and the
 * device's loss. A private object of the queue, so that host applications never see these calls.
 */
final class DriverCallbacks implements HwQueueListener {

    /**
     * Set while a driver's thread delivers a completion (and runs the application's callbacks on
     * its future): a {@link XQueueImpl#close()} made there must not wait for completions that only
     * this very thread can deliver.
     */
    private static final ThreadLocal<Boolean> DELIVERING = ThreadLocal.withInitial(() -> Boolean.FALSE);

    private final XQueueImpl queue;

    DriverCallbacks(XQueueImpl queue) {
        this.queue = queue;
    }

    /** @return whether this thread is a driver's, delivering a completion */
    static boolean delivering() {
        return DELIVERING.get();
    }

    private static void delivering(Runnable r) {
        boolean outer = DELIVERING.get();
        DELIVERING.set(Boolean.TRUE);
        try {
            r.run();
        } finally {
            DELIVERING.set(outer);
        }
    }

    @Override
    public void completed(HwCommand command, long startNanos, long endNanos) {
        SubmissionImpl s = queue.takeInFlightLocking(command);
        if (s != null) {
            if (s.traced && Tracing.commandEnabled()) {
                Tracing.command(queue.handle(), queue.name(), s.sequence(), new long[] {s.enterNanos, s.submitNanos,
                    s.launchBeginNanos, s.launchEndNanos, s.pumpEndNanos, s.returnNanos, startNanos, endNanos, s.unheld ? 1 : 0},
                        s.submitThread, s.launchThread);
            }
            long d = Math.max(0, endNanos - startNanos);
            delivering(() -> queue.end(s, false, true, d, new CommandResult(s.sequence(), s.submitNanos, startNanos, endNanos),
                    null, true));
        }
    }

    @Override
    public void failed(HwCommand command, Throwable cause) {
        SubmissionImpl s = queue.takeInFlightLocking(command);
        if (s != null) {
            delivering(() -> queue.end(s, false, false, 0, null, new CommandFailedException(
                    "queue " + queue.name() + ": " + s + " failed on " + queue.device() + ": " + cause.getMessage(), cause), true));
        }
    }

    @Override
    public void lost(Throwable cause) {
        queue.breakQueue(new CommandFailedException("device " + queue.device() + " lost: " + cause.getMessage(), cause));
    }
}
