package dev.xq.hal.sim;

import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueueListener;
import java.util.ArrayList;
import java.util.List;

/** Collects what a simulated queue reports, with the device's timestamps. */
final class Recorder implements HwQueueListener {
    record Done(String queue, long sequence, long start, long end) {
        long micros() {
            return (end - start) / 1000;
        }
    }

    final String name;
    final List<Done> done = new ArrayList<>();
    final List<Long> failed = new ArrayList<>();
    final List<Throwable> lost = new ArrayList<>();

    Recorder(String name) {
        this.name = name;
    }

    @Override
    public synchronized void completed(HwCommand command, long startNanos, long endNanos) {
        done.add(new Done(name, command.sequence(), startNanos, endNanos));
        notifyAll();
    }

    @Override
    public synchronized void failed(HwCommand command, Throwable cause) {
        failed.add(command.sequence());
        notifyAll();
    }

    @Override
    public synchronized void lost(Throwable cause) {
        lost.add(cause);
        notifyAll();
    }

    synchronized List<Done> awaitDone(int n) throws InterruptedException {
        long end = System.currentTimeMillis() + 10_000;
        while (done.size() + failed.size() < n) {
            long left = end - System.currentTimeMillis();
            if (left <= 0) {
                throw new AssertionError(name + ": " + (done.size() + failed.size()) + " of " + n + " reported within 10 s");
            }
            wait(left);
        }
        return List.copyOf(done);
    }

    synchronized void awaitLost() throws InterruptedException {
        long end = System.currentTimeMillis() + 10_000;
        while (lost.isEmpty()) {
            long left = end - System.currentTimeMillis();
            if (left <= 0) {
                throw new AssertionError(name + ": no loss reported within 10 s");
            }
            wait(left);
        }
    }
}
