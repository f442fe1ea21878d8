package dev.xq.node.remote;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The text the Gogo commands print, made from the API's JSON: the same columns and words as
 * {@code xq:queues}, {@code xq:top}, {@code xq:policy} and {@code xq:hint} (runtime's
 * {@code XqCommands}), so that an operator sees one thing whichever way they ask.
 */
final class Views {

    private Views() {
    }

    /** {@code xq:queues}: one line per queue of {@code GET /api/v1/queues}. */
    static String queueTable(Map<String, Object> queues) {
        Table t = new Table("HANDLE", "NAME", "DEVICE", "GROUP", "STATE", "LV", "PEND", "FLIGHT", "DONE", "FAIL", "CANCEL",
                "EST_US", "RUN_MS", "SM%", "WIDTH", "LAG", "LIMITS", "HINTS");
        for (Object o : list(queues, "queues")) {
            Map<String, Object> q = object(o, "a queue");
            t.row(number(q, "handle"), q.get("name"), q.get("device"), q.get("group"),
                    text(q, "state") + (Boolean.TRUE.equals(q.get("suspended_by_app")) ? "(app)" : ""),
                    number(q, "level"), number(q, "pending"), number(q, "in_flight"), number(q, "completed"),
                    number(q, "failed"), number(q, "cancelled"), number(q, "estimated_command_us"),
                    whole(q, "run_us") / 1000, smShare(q), width(q), lag(q), limits(q), hints(q));
        }
        return t.toString();
    }

    /**
     * The LIMITS column as {@code xq:queues} shows it: empty while the configured limits apply, and
     * for a node too old to say ({@code limits} absent).
     */
    private static String limits(Map<String, Object> q) {
        return switch (String.valueOf(q.get("limits"))) {
            case "alone" -> "alone";
            case "on_top" -> "on top";
            case "guarded" -> "guarded";
            case "narrowed" -> "narrowed";
            default -> "";
        };
    }

    /**
     * The SM% column as {@code xq:queues} shows it: the queue's share of its device's
     * multiprocessors in percent; 100 for a node too old to say ({@code sm_share_percent} absent).
     */
    private static String smShare(Map<String, Object> q) {
        return q.containsKey("sm_share_percent") ? number(q, "sm_share_percent") : "100";
    }

    /**
     * The WIDTH column as {@code xq:queues} shows it: "now/widest of device" multiprocessors as the
     * queue's process tells them; empty when it tells none, and for a node too old to say.
     */
    private static String width(Map<String, Object> q) {
        if (!(q.get("device_sms") instanceof Number n) || n.longValue() == 0) {
            return "";
        }
        return number(q, "stretch_width_sms") + "/" + number(q, "width_sms") + " of " + number(q, "device_sms");
    }

    /**
     * The LAG column as {@code xq:queues} shows it: "slow/timed" busy periods of a process whose
     * interposer times its device lag; empty when it times none, and for a node too old to say.
     */
    private static String lag(Map<String, Object> q) {
        if (!(q.get("device_lags") instanceof Number n) || n.longValue() == 0) {
            return "";
        }
        return number(q, "slow_device_lags") + "/" + number(q, "device_lags");
    }

    /** {@code xq:top}'s first line, from {@code GET /api/v1/scheduler}. */
    static String topHead(Map<String, Object> s) {
        return String.format("policy %s (selected %s)  decisions %d  swaps %d  watchdog %d  decision p50 %.1f us  p99 %.1f us%n",
                s.get("active"), s.get("selected"), whole(s, "decisions"), whole(s, "swaps"), whole(s, "watchdog_trips"),
                real(s, "decision_p50_us"), real(s, "decision_p99_us"));
    }

    /** {@code xq:policy} without a name. */
    static String policy(Map<String, Object> p) {
        return "selected: " + p.get("selected") + "\nactive:   " + p.get("active");
    }

    /** {@code xq:policy NAME} once the node took it. */
    static String policySelected(String name) {
        return "selected: " + name + " (decides from the next scheduling event)";
    }

    /** The policies' names as {@code xq:policy} lists them when refusing, from {@code GET /api/v1/policies}. */
    static String policyNames(Map<String, Object> policies) {
        List<String> names = new ArrayList<>();
        for (Object o : list(policies, "policies")) {
            names.add(String.valueOf(object(o, "a policy").get("name")));
        }
        return String.join(", ", names);
    }

    /**
     * {@code xq:hint}'s answer: the queue's handle and the hint of {@code kind} it now has, from
     * the {@code {"queue": Q}} that {@code POST /api/v1/hint} answers.
     */
    static String hintSet(Map<String, Object> answer, String kind) {
        Map<String, Object> q = object(answer.get("queue"), "the queue");
        for (Object o : list(q, "hints")) {
            Map<String, Object> h = object(o, "a hint");
            if (kind.equals(h.get("kind"))) {
                return "queue " + number(q, "handle") + ": " + hintText(h);
            }
        }
        throw new NodeApi.Failure("the node took the hint but queue " + number(q, "handle") + " does not list a " + kind + " hint", 1);
    }

    /**
     * A hint {@code {"kind", "values", "text"}} in the shell's words ({@code priority=2},
     * {@code deadline=5000us}): its {@code text}, which the node writes with the shell's own code
     * ({@code Hint.text()}); from a node that sends none, {@code kind=value/value}.
     */
    static String hintText(Map<String, Object> h) {
        if (h.get("text") instanceof String text) {
            return text;
        }
        List<String> w = list(h, "values").stream().map(x -> x instanceof BigDecimal d ? d.toPlainString() : String.valueOf(x)).toList();
        return h.get("kind") + "=" + String.join("/", w);
    }

    private static String hints(Map<String, Object> q) {
        return list(q, "hints").stream().map(o -> hintText(object(o, "a hint"))).collect(Collectors.joining(" "));
    }

    // ------------------------------------------------------------------ reading the JSON

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object o, String what) {
        if (o instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw unexpected(what + " is not a JSON object");
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> m, String key) {
        Object o = m.get(key);
        if (o instanceof List<?> l) {
            return (List<Object>) l;
        }
        throw unexpected("'" + key + "' is not a JSON array");
    }

    private static String text(Map<String, Object> m, String key) {
        return String.valueOf(m.get(key));
    }

    /** A number as the node wrote it (an unsigned handle stays unsigned); empty when absent. */
    private static String number(Map<String, Object> m, String key) {
        Object o = m.get(key);
        return o instanceof BigDecimal d ? d.toPlainString() : o == null ? "" : o.toString();
    }

    private static long whole(Map<String, Object> m, String key) {
        return m.get(key) instanceof BigDecimal d ? d.longValue() : 0;
    }

    /** A figure the node could not compute is written as null: the shell prints it as NaN. */
    private static double real(Map<String, Object> m, String key) {
        return m.get(key) instanceof BigDecimal d ? d.doubleValue() : Double.NaN;
    }

    private static NodeApi.Failure unexpected(String what) {
        return new NodeApi.Failure("the node's answer is not what XQ's API sends: " + what, 1);
    }

    /** A plain-text table with columns as wide as their widest cell, as the shell prints them. */
    static final class Table {
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
}
