package dev.xq.hal.cuda;

import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueueListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Records what a queue reports, in order, with the host time each report arrived. */
final class RecordingListener implements HwQueueListener {

    record Report(String what, HwCommand command, long startNanos, long endNanos, long seenNanos, Throwable cause, String thread) { }

    final List<Report> reports = new CopyOnWriteArrayList<>();

    @Override
    public void completed(HwCommand command, long startNanos, long endNanos) {
        reports.add(new Report("completed", command, startNanos, endNanos, System.nanoTime(), null, Thread.currentThread().getName()));
    }

    @Override
    public void failed(HwCommand command, Throwable cause) {
        reports.add(new Report("failed", command, 0, 0, System.nanoTime(), cause, Thread.currentThread().getName()));
    }

    @Override
    public void lost(Throwable cause) {
        reports.add(new Report("lost", null, 0, 0, System.nanoTime(), cause, Thread.currentThread().getName()));
    }

    /** Waits up to 10 s for {@code n} reports; returns whether they came. */
    boolean await(int n) {
        return awaitThat(() -> reports.size() >= n);
    }

    static boolean awaitThat(BooleanSupplier condition) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until) {
            if (condition.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return condition.getAsBoolean();
    }
}
