package dev.xq.http;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Reading what a request says: query parameters, hex handles, JSON fields; every refusal names the value. */
final class Params {

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    private Params() {
    }

    /**
     * @return the query's parameters, decoded, in order
     * @throws ApiException 400 for a parameter given twice or an undecodable one
     */
    static Map<String, String> query(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = decode(eq < 0 ? pair : pair.substring(0, eq));
            String v = eq < 0 ? "" : decode(pair.substring(eq + 1));
            if (out.putIfAbsent(k, v) != null) {
                throw ApiException.badRequest("query parameter '" + k + "' is given twice; give it once");
            }
        }
        return out;
    }

    /** @throws ApiException 400 naming the unknown parameters and the allowed ones */
    static void only(Map<String, String> params, List<String> allowed) {
        for (String k : params.keySet()) {
            if (!allowed.contains(k)) {
                throw ApiException.badRequest("query parameter '" + k + "' is unknown; allowed: " + String.join(", ", allowed));
            }
        }
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("query text '" + s + "' is not URL-encoded correctly: " + e.getMessage());
        }
    }

    /**
     * Parses an XSched handle in a path: hex, optional {@code 0x}, 1 to 16 digits, not 0.
     * @return the handle's 64 bits
     */
    static long hexHandle(String text) {
        String t = text;
        if (t.startsWith("0x") || t.startsWith("0X")) {
            t = t.substring(2);
        }
        if (t.isEmpty() || t.length() > 16 || !t.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw ApiException.badRequest("handle '" + text + "' is not a hexadecimal XQueue handle; allowed: 1 to 16 hex digits, "
                    + "optionally after 0x, not 0 (GET /xqueues lists the handles)");
        }
        long h = Long.parseUnsignedLong(t, 16);
        if (h == 0) {
            throw ApiException.badRequest("handle '" + text + "' is 0, which is no XQueue's handle (GET /xqueues lists the handles)");
        }
        return h;
    }

    /** @return the handle in XSched's form, {@code 0x} and lower-case hex */
    static String hex(long handle) {
        return "0x" + Long.toHexString(handle);
    }

    /** @return the parsed request body: a JSON object */
    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String body) {
        if (body.isBlank()) {
            throw ApiException.badRequest("the request body is empty; a JSON object is expected");
        }
        Object v = Json.parse(body);
        if (!(v instanceof Map<?, ?>)) {
            throw ApiException.badRequest("the request body is JSON but not an object; a JSON object is expected");
        }
        return (Map<String, Object>) v;
    }

    /** @throws ApiException 400 naming the unknown fields and the allowed ones */
    static void onlyFields(Map<String, Object> body, List<String> allowed) {
        for (String k : body.keySet()) {
            if (!allowed.contains(k)) {
                throw ApiException.badRequest("field '" + k + "' is unknown; allowed: " + String.join(", ", allowed));
            }
        }
    }

    /**
     * A JSON integer field within [min, max].
     * @throws ApiException 400 when it is missing, not an integer, or out of range
     */
    static long integer(Map<String, Object> body, String field, long min, long max) {
        if (!body.containsKey(field)) {
            throw ApiException.badRequest("field '" + field + "' is missing; an integer in [" + min + ", " + max + "] is expected");
        }
        BigInteger v = integerValue(body.get(field), field, "an integer in [" + min + ", " + max + "]");
        if (v.compareTo(BigInteger.valueOf(min)) < 0 || v.compareTo(BigInteger.valueOf(max)) > 0) {
            throw ApiException.badRequest("field '" + field + "' " + v + " is out of range [" + min + ", " + max + "]");
        }
        return v.longValue();
    }

    /**
     * A JSON integer field of any size, for a field whose allowed values are not a range (XSched's
     * hint types).
     * @param expected what is allowed, as the refusal of a missing or non-integer field says it
     * @throws ApiException 400 when it is missing or not an integer
     */
    static BigInteger whole(Map<String, Object> body, String field, String expected) {
        if (!body.containsKey(field)) {
            throw ApiException.badRequest("field '" + field + "' is missing; " + expected + " is expected");
        }
        return integerValue(body.get(field), field, expected);
    }

    /**
     * A JSON unsigned 64-bit integer field (an XSched handle), 0 when absent.
     * @return its 64 bits
     */
    static long unsigned64(Map<String, Object> body, String field) {
        if (!body.containsKey(field)) {
            return 0;
        }
        BigInteger v = integerValue(body.get(field), field, "an unsigned 64-bit integer");
        if (v.signum() < 0 || v.compareTo(TWO_64) >= 0) {
            throw ApiException.badRequest("field '" + field + "' " + v + " is out of range [0, 18446744073709551615]");
        }
        return v.longValue();
    }

    private static BigInteger integerValue(Object o, String field, String expected) {
        if (!(o instanceof BigDecimal d)) {
            throw ApiException.badRequest("field '" + field + "' is " + describe(o) + "; " + expected + " is expected");
        }
        // Bounds first: 1e999999999 is a short text but a huge integer.
        if (d.abs().compareTo(new BigDecimal(TWO_64)) > 0) {
            throw ApiException.badRequest("field '" + field + "' " + numberText(d) + " is out of range; " + expected + " is expected");
        }
        BigInteger v;
        try {
            v = d.toBigIntegerExact();
        } catch (ArithmeticException e) {
            throw ApiException.badRequest("field '" + field + "' " + numberText(d) + " is not a whole number; " + expected + " is expected");
        }
        if (d instanceof Json.Fractional f) { // 1e3, 2.0: whole, but not what the field takes
            throw ApiException.badRequest("field '" + field + "' " + f.text() + " is not written as an integer (digits only, "
                    + "without a fraction or an exponent: " + v + "); " + expected + " is expected");
        }
        return v;
    }

    /**
     * A JSON number as the request wrote it where it has a fraction or an exponent ({@code 1e3} stays
     * {@code 1e3}, so that a field that takes whole numbers refuses it by name), else its digits.
     */
    static String numberText(BigDecimal d) {
        return d instanceof Json.Fractional f ? f.text() : d.toPlainString();
    }

    /** A text field; a JSON number is taken as its text (so {@code "queue": 7} and {@code "queue": "7"} mean the same). */
    static String text(Map<String, Object> body, String field, String expected) {
        Object o = body.get(field);
        if (o instanceof String s) {
            return s;
        }
        if (o instanceof BigDecimal d) {
            return numberText(d);
        }
        if (!body.containsKey(field)) {
            throw ApiException.badRequest("field '" + field + "' is missing; " + expected + " is expected");
        }
        throw ApiException.badRequest("field '" + field + "' is " + describe(o) + "; " + expected + " is expected");
    }

    /** A text field that must be a JSON string: a number, boolean, array or object is refused naming its type. */
    static String string(Map<String, Object> body, String field, String expected) {
        Object o = body.get(field);
        if (o instanceof String s) {
            return s;
        }
        if (!body.containsKey(field)) {
            throw ApiException.badRequest("field '" + field + "' is missing; " + expected + " is expected");
        }
        throw ApiException.badRequest("field '" + field + "' is " + describe(o) + ", not a string; " + expected + " is expected");
    }

    static String describe(Object o) {
        return switch (o) {
            case null -> "null";
            case String s -> "the string \"" + s + "\"";
            case Boolean b -> "the boolean " + b;
            case BigDecimal d -> "the number " + numberText(d);
            case Map<?, ?> m -> "an object";
            case List<?> l -> "an array";
            default -> o.getClass().getSimpleName().toLowerCase(Locale.ROOT);
        };
    }
}
