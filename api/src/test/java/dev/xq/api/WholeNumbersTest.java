package dev.xq.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Numbers typed by operators: ASCII digits only, and a value out of range is named as typed. */
class WholeNumbersTest {

    @Test
    void digitsOfOtherScriptsAreNotNumbers() {
        // U+0663 ARABIC-INDIC DIGIT THREE and U+0969 DEVANAGARI DIGIT THREE: Integer.parseInt takes both
        for (String three : new String[] {"\u0663", "\u0969", "1\u0663"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Hint.Kind.PRIORITY.parse(three));
            assertTrue(e.getMessage().contains("is not a whole number"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> QueueConfig.defaults().with("threshold", three));
            assertTrue(e.getMessage().contains("is not a whole number"), e.getMessage());
        }
        assertEquals(new Hint.Priority(3), Hint.Kind.PRIORITY.parse("3"));
        assertEquals(new Hint.Priority(-3), Hint.Kind.PRIORITY.parse("-3"));
        assertEquals(7, QueueConfig.defaults().with("threshold", "7").threshold());
    }

    @Test
    void aLevelBeyondIntIsNamedAsTyped() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> QueueConfig.defaults().with("level", "4294967299"));
        assertTrue(e.getMessage().contains("4294967299") && e.getMessage().contains("1 (block)"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> QueueConfig.defaults().with("level", "4"));
        assertTrue(e.getMessage().contains("level 4 "), e.getMessage());
        assertEquals(PreemptionLevel.BLOCK, QueueConfig.defaults().with("level", "1").level());
    }
}
