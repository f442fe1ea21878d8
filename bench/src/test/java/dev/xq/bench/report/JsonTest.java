package dev.xq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    private static String str(String s) {
        StringBuilder sb = new StringBuilder();
        Json.string(sb, s);
        return sb.toString();
    }

    @Test
    void escapesQuotesBackslashesAndControlCharacters() {
        assertEquals("\"a\\\"b\"", str("a\"b"));
        assertEquals("\"C:\\\\tmp\"", str("C:\\tmp"));
        assertEquals("\"l1\\nl2\\tx\\r\"", str("l1\nl2\tx\r"));
        assertEquals("\"\\u0000\\u001f\\b\\f\"", str("\u0000\u001f\b\f"));
        assertEquals("\"\\u2028\"", str("\u2028"));
        // Non-ASCII text that JSON allows stays as it is.
        assertEquals("\"µs é\"", str("µs é"));
    }

    @Test
    void writesNestedObjectsInOrder() {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("scenario", "fixed-priority");
        o.put("n", 20);
        o.put("load", 0.2);
        o.put("ok", true);
        o.put("none", null);
        o.put("modes", List.of(Map.of("mode", "native")));
        o.put("empty", List.of());
        String s = Json.write(o);
        assertEquals("""
                {
                  "scenario": "fixed-priority",
                  "n": 20,
                  "load": 0.2,
                  "ok": true,
                  "none": null,
                  "modes": [
                    {
                      "mode": "native"
                    }
                  ],
                  "empty": []
                }
                """, s);
    }

    @Test
    void numbersThatJsonCannotHoldBecomeNull() {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("nan", Double.NaN);
        o.put("inf", Double.POSITIVE_INFINITY);
        o.put("whole", 3.0);
        o.put("arr", new double[] {1.5, Double.NaN});
        String s = Json.write(o);
        assertTrue(s.contains("\"nan\": null"), s);
        assertTrue(s.contains("\"inf\": null"), s);
        assertTrue(s.contains("\"whole\": 3"), s);
        assertTrue(s.contains("\"arr\": [1.5, null]"), s);
    }

    @Test
    void rejectsWhatItCannotWrite() {
        var e = assertThrows(IllegalArgumentException.class, () -> Json.write(new Object()));
        assertTrue(e.getMessage().contains("java.lang.Object"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Json.write(Map.of(1, "x")));
    }

    @Test
    void reportJsonCarriesCountsAndLost() {
        ScenarioReport r = new ScenarioReport("drf", "sim-drf", Map.of("T", 2000L));
        r.add(new ModeResult("xq:drf").put("a_tasks", 3.0).counts(new Counts(10, 7, 1, 1)));
        String s = Json.write(r.toJsonObject());
        assertTrue(s.contains("\"scenario\": \"drf\""), s);
        assertTrue(s.contains("\"device\": \"sim-drf\""), s);
        assertTrue(s.contains("\"mode\": \"xq:drf\""), s);
        assertTrue(s.contains("\"a_tasks\": 3"), s);
        assertTrue(s.contains("\"submitted\": 10"), s);
        assertTrue(s.contains("\"lost\": 1"), s);
        // The no-lost-command goal is always checked, and a loss misses it.
        assertTrue(s.contains("\"goal\": \"no submitted command is lost\",\n      \"met\": false"), s);
    }
}
