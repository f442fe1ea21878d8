package dev.xq.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Renders a {@link ScenarioReport} as a fixed-width text table: one row per mode, one column
 * per figure, then the command counts. By default only the figures a user compares, in at most
 * {@link #WIDTH} columns (latencies, ratios, throughputs, lost); {@code --wide} shows them all,
 * and the JSON always has them.
 */
public final class TextTable {

    private TextTable() {
    }

    /** The widest line the short table may take (a terminal's 100 columns). */
    public static final int WIDTH = 100;

    /** @return the short table, the summary and the notes, ending with a newline */
    public static String render(ScenarioReport r) {
        return render(r, false);
    }

    /**
     * @param wide every figure of every mode (else the short table: see the class)
     * @return the table, the summary and the notes, ending with a newline
     */
    public static String render(ScenarioReport r, boolean wide) {
        StringBuilder out = new StringBuilder();
        out.append("scenario ").append(r.scenario()).append(" on ").append(r.device()).append("  ").append(r.params()).append('\n');
        if (r.tableHeader() != null) {
            // a scenario's own rows are words as much as numbers: all left-aligned
            grid(out, r.tableHeader(), r.tableRows(), false);
        } else {
            modeGrid(out, r, wide);
        }
        if (!r.summary().isEmpty()) {
            StringBuilder sum = new StringBuilder("summary:");
            r.summary().forEach((k, v) -> sum.append(' ').append(k).append('=').append(format(v)));
            prose(out, sum.toString(), wide);
        }
        for (ModeResult m : r.modes()) {
            if (!m.note().isEmpty()) {
                prose(out, "  " + m.mode() + ": " + m.note(), wide);
            }
        }
        for (String n : r.notes()) {
            prose(out, "note: " + n, wide);
        }
        for (ScenarioReport.Goal g : r.goals()) {
            prose(out, "goal " + (g.met() ? "MET:    " : "MISSED: ") + g.goal() + " (" + g.measured() + ")", wide);
        }
        return out.toString();
    }

    /** A line of prose; in the short output folded at spaces to {@link #WIDTH} columns, the rest indented. */
    static void prose(StringBuilder out, String text, boolean wide) {
        if (wide || text.length() <= WIDTH) {
            out.append(text).append('\n');
            return;
        }
        String rest = text;
        boolean first = true;
        while (!rest.isEmpty()) {
            String lead = first ? "" : "    ";
            int room = WIDTH - lead.length();
            if (rest.length() <= room) {
                out.append(lead).append(rest).append('\n');
                break;
            }
            int cut = rest.lastIndexOf(' ', room);
            if (cut <= 0) { // one word longer than the line: kept whole
                cut = rest.indexOf(' ');
                if (cut < 0) {
                    out.append(lead).append(rest).append('\n');
                    break;
                }
            }
            out.append(lead).append(rest, 0, cut).append('\n');
            rest = rest.substring(cut + 1).stripLeading();
            first = false;
        }
    }

    /**
     * Where a short table's figures come from: a breakdown (slowest / median parts of a task,
     * where the device idled, nice values, counts of tasks) is for who digs, in --wide and the JSON.
     */
    static boolean detail(String figure) {
        return figure.contains("_slow_") || figure.contains("_med_") || figure.startsWith("idle_") || figure.endsWith("_nice")
                || figure.endsWith("_cmd_us") || figure.equals("fg_tasks") || figure.endsWith("_during_swaps");
    }

    /** One row per mode, one column per figure, then the command counts (short: see the class). */
    private static void modeGrid(StringBuilder out, ScenarioReport r, boolean wide) {
        Set<String> columns = new LinkedHashSet<>();
        columns.add("mode");
        for (ModeResult m : r.modes()) {
            for (String f : m.figures().keySet()) {
                if (wide || !detail(f)) {
                    columns.add(f);
                }
            }
        }
        columns.addAll(wide ? List.of("submitted", "completed", "failed", "lost") : List.of("lost"));
        List<String> header = new ArrayList<>(columns);
        List<String> left = new ArrayList<>();
        while (!wide && header.size() > 2 && width(header, r) > WIDTH) {
            left.add(header.remove(header.size() - 2)); // the figure before "lost"
        }
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
        if (!wide) {
            out.append("(the figures users compare; every figure").append(left.isEmpty() ? "" : ", " + String.join(", ", left.reversed()) + " too,")
                    .append(" with --wide and in --json)\n");
        }
    }

    /** How wide the grid of these columns would be, its widest line. */
    private static int width(List<String> header, ScenarioReport r) {
        int total = 0;
        for (String c : header) {
            int w = c.length();
            for (ModeResult m : r.modes()) {
                String cell = switch (c) {
                    case "mode" -> m.mode();
                    case "submitted" -> Long.toString(m.counts().submitted());
                    case "completed" -> Long.toString(m.counts().completed());
                    case "failed" -> Long.toString(m.counts().failed());
                    case "lost" -> Long.toString(m.counts().lost());
                    default -> format(m.figure(c));
                };
                w = Math.max(w, cell.length());
            }
            total += w + 2;
        }
        return total - 2;
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
