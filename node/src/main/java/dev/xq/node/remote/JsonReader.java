package dev.xq.node.remote;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the JSON a node's API answers with: objects as {@link Map} (key order kept), arrays as
 * {@link List}, strings, {@link Boolean}, numbers as {@link BigDecimal} (exact, so that an
 * unsigned 64-bit handle arrives as written) and {@code null}. Strict enough to tell the API's
 * answers from something else on the port; it never has to read untrusted depth beyond what a
 * node writes.
 */
final class JsonReader {

    /** The text is not JSON; the message says where. */
    static final class Malformed extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    private static final int MAX_DEPTH = 64;

    private final String s;
    private int i;

    private JsonReader(String s) {
        this.s = s;
    }

    static Object parse(String text) {
        JsonReader r = new JsonReader(text);
        r.space();
        Object v = r.value(0);
        r.space();
        if (r.i != text.length()) {
            throw r.error("text after the JSON value");
        }
        return v;
    }

    private Malformed error(String what) {
        return new Malformed("not JSON at offset " + i + ": " + what);
    }

    private void space() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
        if (i >= s.length()) {
            throw error("the text ends where a value was expected");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{' -> {
                return object(depth);
            }
            case '[' -> {
                return array(depth);
            }
            case '"' -> {
                return string();
            }
            case 't' -> {
                return word("true", Boolean.TRUE);
            }
            case 'f' -> {
                return word("false", Boolean.FALSE);
            }
            case 'n' -> {
                return word("null", null);
            }
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected '" + c + "'");
            }
        }
    }

    private Object word(String w, Object v) {
        if (!s.startsWith(w, i)) {
            throw error("unexpected '" + s.charAt(i) + "'");
        }
        i += w.length();
        return v;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> m = new LinkedHashMap<>();
        i++;
        space();
        if (i < s.length() && s.charAt(i) == '}') {
            i++;
            return m;
        }
        while (true) {
            space();
            if (i >= s.length() || s.charAt(i) != '"') {
                throw error("expected a quoted key");
            }
            String key = string();
            space();
            expect(':');
            space();
            m.put(key, value(depth + 1));
            space();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
            } else {
                expect('}');
                return m;
            }
        }
    }

    private List<Object> array(int depth) {
        List<Object> l = new ArrayList<>();
        i++;
        space();
        if (i < s.length() && s.charAt(i) == ']') {
            i++;
            return l;
        }
        while (true) {
            space();
            l.add(value(depth + 1));
            space();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
            } else {
                expect(']');
                return l;
            }
        }
    }

    private void expect(char c) {
        if (i >= s.length() || s.charAt(i) != c) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private String string() {
        StringBuilder sb = new StringBuilder();
        i++;
        while (true) {
            if (i >= s.length()) {
                throw error("unterminated string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (i >= s.length()) {
                throw error("unterminated string");
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (i + 4 > s.length()) {
                        throw error("\\u needs four hex digits");
                    }
                    try {
                        sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    } catch (NumberFormatException x) {
                        throw error("\\u needs four hex digits");
                    }
                    i += 4;
                }
                default -> throw error("unknown escape \\" + e);
            }
        }
    }

    private BigDecimal number() {
        int start = i;
        if (s.charAt(i) == '-') {
            i++;
        }
        while (i < s.length() && "0123456789.eE+-".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        try {
            return new BigDecimal(s.substring(start, i));
        } catch (NumberFormatException e) {
            i = start;
            throw error("malformed number");
        }
    }
}
