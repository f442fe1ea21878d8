package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void numbersStayExact() {
        Map<?, ?> m = (Map<?, ?>) Json.parse("{\"handle\": 18446744073709551615, \"x\": 9007199254740993}");
        assertEquals(new BigDecimal("18446744073709551615"), m.get("handle"));
        assertEquals(new BigDecimal("9007199254740993"), m.get("x"));
        assertEquals("{\"h\":18446744073709551615}", Json.write(Json.object("h", new Json.Unsigned(-1L))));
    }

    @Test
    void writesAndReadsStrings() {
        String text = Json.write(Map.of("s", "a\"b\\c\n\u0001/é"));
        assertEquals("{\"s\":\"a\\\"b\\\\c\\n\\u0001/é\"}", text);
        assertEquals(Map.of("s", "a\"b\\c\n\u0001/é"), Json.parse(text));
        assertEquals(List.of(true, false), Json.parse(" [true , false] "));
    }

    @Test
    void refusesWhatIsNotStrictJson() {
        assertEquals("malformed JSON at offset 8: key \"a\" appears twice",
                assertThrows(Json.Malformed.class, () -> Json.parse("{\"a\":1, \"a\":2}")).getMessage());
        assertEquals("malformed JSON at offset 6: unexpected ']' where a value was expected",
                assertThrows(Json.Malformed.class, () -> Json.parse("[1, 2,]")).getMessage());
        assertEquals("malformed JSON at offset 3: unexpected 'x' after the JSON value",
                assertThrows(Json.Malformed.class, () -> Json.parse("{} x")).getMessage());
        assertEquals("malformed JSON at offset 0: a number may not start with 0",
                assertThrows(Json.Malformed.class, () -> Json.parse("01")).getMessage());
        // JSON's digits are ASCII's (Java's own parsing takes Arabic-Indic digits as numbers)
        assertEquals("malformed JSON at offset 0: unexpected '\u0661' where a value was expected",
                assertThrows(Json.Malformed.class, () -> Json.parse("\u0661\u0662")).getMessage());
        assertThrows(Json.Malformed.class, () -> Json.parse("[1\u0662]"));
        assertThrows(Json.Malformed.class, () -> Json.parse("[".repeat(40) + "]".repeat(40)));
        assertThrows(Json.Malformed.class, () -> Json.parse("\"\\x\""));
        assertThrows(Json.Malformed.class, () -> Json.parse(""));
    }
}
