package dev.xq.hal.sim;

import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueueListener;
import java.util.ArrayList;
import java.util.List;

/** Collects what a simulated queue reports, with the device's timestamps and when each report arrived. */
class Recorder implements HwQueueListener {
    record Done(String queue, long sequence, long start, long end, long receivedAt) {
        long nanos() {
            return end - start;
        }
    }

    record Failed(long sequence, Throwable cause) { }

    final String name;
    final List<Done> done = new ArrayList<>();
    final List<Failed> failed = new ArrayList<>();
    final List<Throwable> lost = new ArrayList<>();
    final List<String> callbackThreads = new ArrayList<>();

    Recorder(String name) {
        this.name = name;
    }

    @Override
    public synchronized void completed(HwCommand command, long startNanos, long endNanos) {
        long now = System.nanoTime();
        done.add(new Done(name, command.sequence(), startNanos, endNanos, now));
        callbackThreads.add(Thread.currentThread().getName());
        notifyAll();
    }

    @Override
    public synchronized void failed(HwCommand command, Throwable cause) {
        failed.add(new Failed(command.sequence(), cause));
        callbackThreads.add(Thread.currentThread().getName());
        notifyAll();
    }

    @Override
    public synchronized void lost(Throwable cause) {
        lost.add(cause);
        callbackThreads.add(Thread.currentThread().getName());
        notifyAll();
    }

    /** Waits until {@code n} commands were reported (completed or failed); returns the completed ones. */
    synchronized List<Done> awaitReported(int n) throws InterruptedException {
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

    synchronized List<Long> doneSequences() {
        return done.stream().map(Done::sequence).toList();
    }

    synchronized List<Long> failedSequences() {
        return failed.stream().map(Failed::sequence).toList();
    }

    synchronized int reports() {
        return done.size() + failed.size() + lost.size();
    }
}
