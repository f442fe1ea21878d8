package dev.xq.external.spi;

/**
 * One reading of an external queue's counters, as its owner reports them.
 *
 * @param pending commands held back now (for a process: threads held in a launch call)
 * @param inFlight commands launched whose end has not been seen
 * @param launched commands launched so far
 * @param completed commands seen done so far
 * @param failed launches that failed so far
 * @param runNanos device time of the completed commands
 * @param estimateNanos measured time of one command (0 before the first completion)
 * @param readySinceNanos {@link System#nanoTime()} when it last got work; 0 when idle
 */
public record ExternalCounters(int pending, int inFlight, long launched, long completed, long failed,
                               long runNanos, long estimateNanos, long readySinceNanos) {

    public static final ExternalCounters IDLE = new ExternalCounters(0, 0, 0, 0, 0, 0, 0, 0);

    /** @return whether it has work, held or launched */
    public boolean ready() {
        return pending > 0 || inFlight > 0;
    }
}
