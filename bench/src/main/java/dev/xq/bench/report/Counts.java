package dev.xq.bench.report;

/**
 * What became of the commands one mode submitted. {@code lost} counts commands that had not
 * ended in any way after their queues were drained and closed; it must be 0.
 */
public record Counts(long submitted, long completed, long failed, long cancelled) {

    /** @return commands that neither completed, failed nor were cancelled */
    public long lost() {
        return submitted - completed - failed - cancelled;
    }

    /** @return the sum of two counts */
    public Counts plus(Counts o) {
        return new Counts(submitted + o.submitted, completed + o.completed, failed + o.failed, cancelled + o.cancelled);
    }

    /** No commands. */
    public static final Counts NONE = new Counts(0, 0, 0, 0);
}
