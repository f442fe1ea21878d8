package dev.xq.bench.scenario;

/**
 * Where a scenario reports what it is doing. Called only from the thread that runs the
 * command: the shell routes output per thread, so lines from workload threads would be lost.
 */
@FunctionalInterface
public interface Progress {
    /** Prints one line. */
    void line(String text);
}
