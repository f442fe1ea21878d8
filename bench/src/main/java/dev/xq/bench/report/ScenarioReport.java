package dev.xq.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one scenario run measured: what ran (scenario, device, parameters), one
 * {@link ModeResult} per mode, notes for the reader, and which figures to draw as bars.
 */
public final class ScenarioReport {

    private final String scenario;
    private final String device;
    private final Map<String, Object> params;
    private final List<ModeResult> modes = new ArrayList<>();
    private final Map<String, Object> summary = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final List<String> barFigures = new ArrayList<>();
    private final List<Goal> goals = new ArrayList<>();
    private final Map<String, Object> extras = new LinkedHashMap<>();
    private List<String> tableHeader;
    private List<List<String>> tableRows;

    /** A goal the scenario states (e.g. "xq:drf runs 3 A and 2 B tasks"), and whether this run met it. */
    public record Goal(String goal, boolean met, String measured) { }

    public ScenarioReport(String scenario, String device, Map<String, Object> params) {
        this.scenario = scenario;
        this.device = device;
        this.params = new LinkedHashMap<>(params);
    }

    public String scenario() {
        return scenario;
    }

    public String device() {
        return device;
    }

    public Map<String, Object> params() {
        return params;
    }

    /** Adds a mode's result and returns it. */
    public ModeResult add(ModeResult m) {
        modes.add(m);
        return m;
    }

    public List<ModeResult> modes() {
        return modes;
    }

    /** @return figures that compare modes (e.g. overhead in percent); written as {@code summary} */
    public Map<String, Object> summary() {
        return summary;
    }

    /** Adds a line printed under the table and written to JSON as {@code notes}. */
    public void note(String line) {
        notes.add(line);
    }

    public List<String> notes() {
        return notes;
    }

    /** Records whether a stated goal was met; a missed goal is reported, not thrown. */
    public void goal(String goal, boolean met, String measured) {
        goals.add(new Goal(goal, met, measured));
    }

    /** @return the goals checked, the no-lost-command goal first */
    public List<Goal> goals() {
        List<Goal> all = new ArrayList<>();
        long lost = totalCounts().lost();
        all.add(new Goal("no submitted command is lost", lost == 0, "lost " + lost));
        all.addAll(goals);
        return all;
    }

    /** Names a figure to draw as a bar chart across modes with {@code --plot}. */
    public void barFigure(String name) {
        barFigures.add(name);
    }

    public List<String> barFigures() {
        return barFigures;
    }

    /**
     * Adds a top-level JSON member of the scenario's own (e.g. {@code mixes}: figures grouped in a
     * way one row per mode cannot hold); written after {@code modes}. The value must be
     * something {@link Json} writes.
     * @throws IllegalArgumentException if {@code key} is one of the report's own members
     */
    public void extra(String key, Object value) {
        if (List.of("scenario", "device", "params", "modes", "summary", "goals", "notes").contains(key)) {
            throw new IllegalArgumentException("JSON member '" + key + "' is the report's own");
        }
        extras.put(key, value);
    }

    /** @return the scenario's own JSON members, in the order they were added */
    public Map<String, Object> extras() {
        return extras;
    }

    /**
     * Replaces the per-mode rows of the text table with rows of the scenario's own, for a scenario
     * whose modes are too many to read one row each (the JSON keeps every mode).
     */
    public void table(List<String> header, List<List<String>> rows) {
        for (List<String> r : rows) {
            if (r.size() != header.size()) {
                throw new IllegalArgumentException("row " + r + " has " + r.size() + " cells; the header " + header.size());
            }
        }
        this.tableHeader = List.copyOf(header);
        this.tableRows = List.copyOf(rows);
    }

    /** @return the header of the scenario's own table, or null for the per-mode one */
    public List<String> tableHeader() {
        return tableHeader;
    }

    /** @return the rows of the scenario's own table, or null for the per-mode one */
    public List<List<String>> tableRows() {
        return tableRows;
    }

    /** @return the sum of every mode's counts */
    public Counts totalCounts() {
        Counts c = Counts.NONE;
        for (ModeResult m : modes) {
            c = c.plus(m.counts());
        }
        return c;
    }

    /** @return the JSON object of this report */
    public Map<String, Object> toJsonObject() {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("scenario", scenario);
        o.put("device", device);
        o.put("params", params);
        List<Object> ms = new ArrayList<>();
        for (ModeResult m : modes) {
            Map<String, Object> mo = new LinkedHashMap<>();
            mo.put("mode", m.mode());
            mo.putAll(m.figures());
            Counts c = m.counts();
            mo.put("submitted", c.submitted());
            mo.put("completed", c.completed());
            mo.put("failed", c.failed());
            mo.put("cancelled", c.cancelled());
            mo.put("lost", c.lost());
            ms.add(mo);
        }
        o.put("modes", ms);
        o.putAll(extras);
        if (!summary.isEmpty()) {
            o.put("summary", summary);
        }
        List<Object> gs = new ArrayList<>();
        for (Goal g : goals()) {
            Map<String, Object> go = new LinkedHashMap<>();
            go.put("goal", g.goal());
            go.put("met", g.met());
            go.put("measured", g.measured());
            gs.add(go);
        }
        o.put("goals", gs);
        if (!notes.isEmpty()) {
            o.put("notes", notes);
        }
        return o;
    }
}
