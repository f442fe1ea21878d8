package dev.xq.bench.report;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The figures of one mode of a scenario (e.g. {@code native} or {@code xq:hpf}), the counts of
 * its commands, and raw samples kept for plots.
 */
public final class ModeResult {

    private final String mode;
    private final Map<String, Object> figures = new LinkedHashMap<>();
    private final Map<String, double[]> samples = new LinkedHashMap<>();
    private Counts counts = Counts.NONE;
    private String note = "";

    public ModeResult(String mode) {
        this.mode = mode;
    }

    /** @return the mode's label */
    public String mode() {
        return mode;
    }

    /** Sets a figure; a double that could not be measured may be NaN (written as null). */
    public ModeResult put(String name, Object value) {
        figures.put(name, value);
        return this;
    }

    /** @return the figure, or null */
    public Object figure(String name) {
        return figures.get(name);
    }

    /** @return the figure as a double, NaN when missing or not a number */
    public double number(String name) {
        return figures.get(name) instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** @return the named figures in the order they were set */
    public Map<String, Object> figures() {
        return figures;
    }

    /** Keeps a sample series for plots (e.g. {@code fg latency ms}); not written to JSON. */
    public ModeResult samples(String series, double[] values) {
        samples.put(series, values.clone());
        return this;
    }

    /** @return the sample series for plots */
    public Map<String, double[]> samples() {
        return samples;
    }

    public ModeResult counts(Counts c) {
        this.counts = c;
        return this;
    }

    public Counts counts() {
        return counts;
    }

    /** A one-line explanation shown under the table. */
    public ModeResult note(String n) {
        this.note = n;
        return this;
    }

    public String note() {
        return note;
    }
}
