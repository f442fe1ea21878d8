package dev.xq.bench.report;

import java.util.Collection;
import java.util.Map;

/**
 * Writes maps, lists, strings, numbers, booleans and null as JSON text. Numbers that JSON
 * cannot hold (NaN, infinities) become {@code null}, so a figure that could not be measured
 * stays visible as missing rather than breaking the file.
 */
public final class Json {

    private Json() {
    }

    /** @return {@code value} as JSON text, objects and lists pretty-printed with two-space indents */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value, 0);
        return out.append('\n').toString();
    }

    private static void write(StringBuilder out, Object value, int depth) {
        switch (value) {
            case null -> out.append("null");
            case String s -> string(out, s);
            case Boolean b -> out.append(b);
            case Double d -> number(out, d);
            case Float f -> number(out, f.doubleValue());
            case Number n -> out.append(n.longValue());
            case Map<?, ?> m -> object(out, m, depth);
            case Collection<?> c -> array(out, c, depth);
            case double[] a -> {
                out.append('[');
                for (int i = 0; i < a.length; i++) {
                    if (i > 0) {
                        out.append(", ");
                    }
                    number(out, a[i]);
                }
                out.append(']');
            }
            case Enum<?> e -> string(out, e.name());
            default -> throw new IllegalArgumentException("cannot write a " + value.getClass().getName()
                    + " as JSON; allowed: Map, Collection, String, Number, Boolean, double[], null");
        }
    }

    private static void object(StringBuilder out, Map<?, ?> m, int depth) {
        if (m.isEmpty()) {
            out.append("{}");
            return;
        }
        out.append("{\n");
        int i = 0;
        for (var e : m.entrySet()) {
            if (!(e.getKey() instanceof String key)) {
                throw new IllegalArgumentException("JSON object key " + e.getKey() + " is not a String");
            }
            indent(out, depth + 1);
            string(out, key);
            out.append(": ");
            write(out, e.getValue(), depth + 1);
            out.append(++i < m.size() ? ",\n" : "\n");
        }
        indent(out, depth);
        out.append('}');
    }

    private static void array(StringBuilder out, Collection<?> c, int depth) {
        if (c.isEmpty()) {
            out.append("[]");
            return;
        }
        out.append("[\n");
        int i = 0;
        for (Object o : c) {
            indent(out, depth + 1);
            write(out, o, depth + 1);
            out.append(++i < c.size() ? ",\n" : "\n");
        }
        indent(out, depth);
        out.append(']');
    }

    private static void indent(StringBuilder out, int depth) {
        out.append("  ".repeat(depth));
    }

    private static void number(StringBuilder out, double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            out.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            out.append((long) d);
        } else {
            out.append(d);
        }
    }

    /** Appends {@code s} as a JSON string literal. */
    static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    // Control characters and the line separators that break JavaScript parsers.
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
