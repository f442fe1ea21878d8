package dev.xq.runtime.shell;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table with columns as wide as their widest cell. */
final class Table {
    private final String[] head;
    private final List<String[]> rows = new ArrayList<>();

    Table(String... head) {
        this.head = head;
    }

    Table row(Object... cells) {
        String[] r = new String[head.length];
        for (int i = 0; i < head.length; i++) {
            r[i] = i < cells.length && cells[i] != null ? cells[i].toString() : "";
        }
        rows.add(r);
        return this;
    }

    @Override
    public String toString() {
        int[] w = new int[head.length];
        for (int i = 0; i < head.length; i++) {
            w[i] = head[i].length();
            for (String[] r : rows) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        line(sb, head, w);
        for (String[] r : rows) {
            line(sb, r, w);
        }
        if (rows.isEmpty()) {
            sb.append("(none)\n");
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, String[] cells, int[] w) {
        for (int i = 0; i < cells.length; i++) {
            sb.append(cells[i]);
            if (i < cells.length - 1) {
                sb.append(" ".repeat(w[i] - cells[i].length() + 2));
            }
        }
        sb.append('\n');
    }
}
