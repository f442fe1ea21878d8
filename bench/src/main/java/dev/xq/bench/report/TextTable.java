package dev.xq.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Renders a {@link ScenarioReport} as a fixed-width text table: one row per mode, one column
 * per figure, then the command counts.
 */
public final class TextTable {

    private TextTable() {
    }

    /** @return the table, the summary and the notes, ending with a newline */
    public static String render(ScenarioReport r) {
        StringBuilder out = new StringBuilder();
        out.append("scenario ").append(r.scenario()).append(" on ").append(r.device()).append("  ").append(r.params()).append('\n');
        if (r.tableHeader() != null) {
            // a scenario's own rows are words as much as numbers: all left-aligned
            grid(out, r.tableHeader(), r.tableRows(), false);
        } else {
            modeGrid(out, r);
        }
        if (!r.summary().isEmpty()) {
            out.append("summary:");
            r.summary().forEach((k, v) -> out.append(' ').append(k).append('=').append(format(v)));
            out.append('\n');
        }
        for (ModeResult m : r.modes()) {
            if (!m.note().isEmpty()) {
                out.append("  ").append(m.mode()).append(": ").append(m.note()).append('\n');
            }
        }
        for (String n : r.notes()) {
            out.append("note: ").append(n).append('\n');
        }
        for (ScenarioReport.Goal g : r.goals()) {
            out.append("goal ").append(g.met() ? "MET:    " : "MISSED: ").append(g.goal()).append(" (").append(g.measured()).append(")\n");
        }
        return out.toString();
    }

    /** One row per mode, one column per figure, then the command counts. */
    private static void modeGrid(StringBuilder out, ScenarioReport r) {
        Set<String> columns = new LinkedHashSet<>();
        columns.add("mode");
        for (ModeResult m : r.modes()) {
            columns.addAll(m.figures().keySet());
        }
        columns.addAll(List.of("submitted", "completed", "failed", "lost"));
        List<String> header = new ArrayList<>(columns);
        List<List<String>> rows = new ArrayList<>();
        for (ModeResult m : r.modes()) {
            List<String> row = new ArrayList<>();
            for (String c : header) {
                row.add(switch (c) {
                    case "mode" -> m.mode();
                    case "submitted" -> Long.toString(m.counts().submitted());
                    case "completed" -> Long.toString(m.counts().completed());
                    case "failed" -> Long.toString(m.counts().failed());
                    case "lost" -> Long.toString(m.counts().lost());
                    default -> format(m.figure(c));
                });
            }
            rows.add(row);
        }
        grid(out, header, rows, true);
    }

    /**
     * The header, a rule and the rows, each column as wide as its widest cell.
     * @param numbersRight whether the columns after the first are right-aligned, as numbers are read
     */
    private static void grid(StringBuilder out, List<String> header, List<List<String>> rows, boolean numbersRight) {
        int[] width = new int[header.size()];
        for (int i = 0; i < header.size(); i++) {
            width[i] = header.get(i).length();
            for (List<String> row : rows) {
                width[i] = Math.max(width[i], row.get(i).length());
            }
        }
        line(out, header, width, numbersRight);
        StringBuilder rule = new StringBuilder();
        for (int i = 0; i < width.length; i++) {
            rule.append(i == 0 ? "" : "  ").append("-".repeat(width[i]));
        }
        out.append(rule).append('\n');
        for (List<String> row : rows) {
            line(out, row, width, numbersRight);
        }
    }

    private static void line(StringBuilder out, List<String> cells, int[] width, boolean numbersRight) {
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                out.append("  ");
            }
            String c = cells.get(i);
            // Labels left, numbers right, as people read tables.
            out.append(pad(c, width[i], i > 0 && numbersRight));
        }
        // No trailing blanks.
        int end = out.length();
        while (end > 0 && out.charAt(end - 1) == ' ') {
            end--;
        }
        out.setLength(end);
        out.append('\n');
    }

    private static String pad(String s, int w, boolean right) {
        String fill = " ".repeat(Math.max(0, w - s.length()));
        return right ? fill + s : s + fill;
    }

    /** @return a figure as a cell: integers as they are, other numbers with 3 decimals, NaN as "-" */
    static String format(Object v) {
        return switch (v) {
            case null -> "-";
            case Double d when d.isNaN() || d.isInfinite() -> "-";
            case Double d -> String.format(Locale.ROOT, "%.3f", d);
            case Float f -> String.format(Locale.ROOT, "%.3f", f);
            default -> v.toString();
        };
    }
}
