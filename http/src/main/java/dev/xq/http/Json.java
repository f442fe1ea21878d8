package dev.xq.http;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON the API reads and writes. Values are Java objects: {@link Map} (object, insertion
 * order kept), {@link List}, {@link String}, {@link Boolean}, numbers, {@link Unsigned} (a
 * 64-bit value written as an unsigned integer: XSched's handles), and {@code null}.
 *
 * <p>The parser is strict (RFC 8259: one value, no trailing commas or comments, no duplicate
 * keys, nesting at most {@value #MAX_DEPTH} deep) and keeps numbers exact as {@link BigDecimal},
 * so that a handle above 2^53 arrives unrounded.
 */
final class Json {

    /** Deepest nesting the parser accepts. */
    static final int MAX_DEPTH = 32;

    /** A 64-bit value written as an unsigned decimal integer (0 .. 2^64-1). */
    record Unsigned(long bits) {
        @Override
        public String toString() {
            return Long.toUnsignedString(bits);
        }
    }

    /**
     * A JSON number written with a fraction or an exponent ({@code 1.5}, {@code 1.0}, {@code 1e3}):
     * its value as any number's, and its text as sent, so that a field documented as an integer can
     * refuse it by that text whatever its value ({@code 1e3} is no integer there, nor {@code 2.0}).
     */
    static final class Fractional extends BigDecimal {
        private static final long serialVersionUID = 1L;
        private final String text;

        Fractional(String text) {
            super(text);
            this.text = text;
        }

        /** The number as the request wrote it. */
        String text() {
            return text;
        }
    }

    /** The request body is not JSON; the message says where and why. */
    static final class Malformed extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    private Json() {
    }

    // ------------------------------------------------------------------ writing

    /** @return a new object to fill, keeping the order keys are put in */
    static Map<String, Object> object() {
        return new LinkedHashMap<>();
    }

    /** @return {@code {"key": value}} */
    static Map<String, Object> object(String key, Object value) {
        Map<String, Object> m = object();
        m.put(key, value);
        return m;
    }

    static String write(Object value) {
        StringBuilder sb = new StringBuilder(256);
        write(sb, value);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v) {
        switch (v) {
            case null -> sb.append("null");
            case String s -> string(sb, s);
            case Boolean b -> sb.append(b);
            case Unsigned u -> sb.append(u);
            case Integer i -> sb.append(i);
            case Long l -> sb.append(l);
            case Short s -> sb.append(s);
            case BigInteger b -> sb.append(b);
            case BigDecimal b -> sb.append(b.toPlainString());
            case Double d -> finite(sb, d);
            case Float f -> finite(sb, f.doubleValue());
            case Map<?, ?> m -> {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    string(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            }
            case Iterable<?> it -> {
                sb.append('[');
                boolean first = true;
                for (Object o : it) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    write(sb, o);
                }
                sb.append(']');
            }
            default -> throw new IllegalArgumentException("cannot write a " + v.getClass().getName() + " as JSON");
        }
    }

    private static void finite(StringBuilder sb, double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            sb.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            sb.append((long) d);
        } else {
            sb.append(d);
        }
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    // ------------------------------------------------------------------ reading

    /**
     * Parses one JSON text.
     * @throws Malformed naming the offset and what was expected
     */
    static Object parse(String text) {
        Parser p = new Parser(text);
        p.space();
        Object v = p.value(0);
        p.space();
        if (p.i != text.length()) {
            throw p.error("unexpected '" + text.charAt(p.i) + "' after the JSON value");
        }
        return v;
    }

    private static final class Parser {
        private final String s;
        private int i;

        Parser(String s) {
            this.s = s;
        }

        Malformed error(String what) {
            return new Malformed("malformed JSON at offset " + i + ": " + what);
        }

        void space() {
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                    i++;
                } else {
                    break;
                }
            }
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            if (i >= s.length()) {
                throw error("the text ends where a value was expected");
            }
            char c = s.charAt(i);
            return switch (c) {
                case '{' -> object(depth);
                case '[' -> array(depth);
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        yield number();
                    }
                    throw error("unexpected '" + c + "' where a value was expected");
                }
            };
        }

        private Object literal(String word, Object v) {
            if (!s.startsWith(word, i)) {
                throw error("unexpected '" + s.charAt(i) + "' where a value was expected");
            }
            i += word.length();
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
                int at = i;
                String key = string();
                if (m.containsKey(key)) {
                    i = at;
                    throw error("key \"" + key + "\" appears twice");
                }
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
            if (i >= s.length()) {
                throw error("the text ends where '" + c + "' was expected");
            }
            if (s.charAt(i) != c) {
                throw error("expected '" + c + "' but found '" + s.charAt(i) + "'");
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
                if (c < 0x20) {
                    i--;
                    throw error("control character in a string");
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
                    case '"' -> sb.append('"');
                    case '\\' -> sb.append('\\');
                    case '/' -> sb.append('/');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw error("\\u needs four hex digits");
                        }
                        int cp = 0;
                        for (int k = 0; k < 4; k++) {
                            int d = Character.digit(s.charAt(i + k), 16);
                            if (d < 0) {
                                throw error("\\u needs four hex digits");
                            }
                            cp = cp * 16 + d;
                        }
                        i += 4;
                        sb.append((char) cp);
                    }
                    default -> {
                        i--;
                        throw error("unknown escape \\" + e);
                    }
                }
            }
        }

        private BigDecimal number() {
            int start = i;
            if (s.charAt(i) == '-') {
                i++;
            }
            if (i >= s.length() || !digit(s.charAt(i))) {
                throw error("a number needs digits");
            }
            if (s.charAt(i) == '0' && i + 1 < s.length() && digit(s.charAt(i + 1))) {
                throw error("a number may not start with 0");
            }
            digits();
            int integerEnd = i;
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                if (i >= s.length() || !digit(s.charAt(i))) {
                    throw error("a fraction needs digits");
                }
                digits();
            }
            if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                i++;
                if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                    i++;
                }
                if (i >= s.length() || !digit(s.charAt(i))) {
                    throw error("an exponent needs digits");
                }
                digits();
            }
            if (i - start > 64) {
                i = start;
                throw error("a number longer than 64 characters");
            }
            String text = s.substring(start, i);
            return i == integerEnd ? new BigDecimal(text) : new Fractional(text);
        }

        private void digits() {
            while (i < s.length() && digit(s.charAt(i))) {
                i++;
            }
        }

        /** JSON's digits are ASCII's: Java's isDigit also takes other scripts' (Arabic-Indic, Devanagari...). */
        private static boolean digit(char c) {
            return c >= '0' && c <= '9';
        }
    }
}
