package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.fail;

import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueueListener;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Keeps what a hardware queue reports, in the order it reported it. */
final class RecordingListener implements HwQueueListener {

    /** One report; {@code seenNanos} is when the listener got it. */
    record Report(String what, HwCommand command, long startNanos, long endNanos, Throwable cause, long seenNanos) {
    }

    private final LinkedBlockingQueue<Report> reports = new LinkedBlockingQueue<>();

    @Override
    public void completed(HwCommand command, long startNanos, long endNanos) {
        reports.add(new Report("completed", command, startNanos, endNanos, null, System.nanoTime()));
    }

    @Override
    public void failed(HwCommand command, Throwable cause) {
        reports.add(new Report("failed", command, 0, 0, cause, System.nanoTime()));
    }

    @Override
    public void lost(Throwable cause) {
        reports.add(new Report("lost", null, 0, 0, cause, System.nanoTime()));
    }

    /** Waits (generously: the CI machine is shared) for the next report. */
    Report next() throws InterruptedException {
        Report r = reports.poll(30, TimeUnit.SECONDS);
        if (r == null) {
            fail("no report from the hip queue within 30 s");
        }
        return r;
    }

    /** @return a report that is already there, or null after a short wait */
    Report poll(long millis) throws InterruptedException {
        return reports.poll(millis, TimeUnit.MILLISECONDS);
    }
}
