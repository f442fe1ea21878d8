package dev.xq.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link Hint.Kind} is the one list of hint kinds: a record of {@link Hint} without its entry (or
 * with two) fails here, and so does an entry whose usage, example, values or text disagree.
 */
class HintTest {

    @Test
    void everyHintRecordHasExactlyOneKind() {
        Set<Class<?>> permitted = Set.of(Hint.class.getPermittedSubclasses());
        for (Class<?> c : permitted) {
            assertTrue(c.isRecord(), c + " is a record: values() reads its components");
            List<Hint.Kind> entries = Arrays.stream(Hint.Kind.values()).filter(k -> k.type() == c).toList();
            assertEquals(1, entries.size(), c.getSimpleName() + " has exactly one entry in Hint.Kind, has " + entries);
        }
        assertEquals(permitted, Arrays.stream(Hint.Kind.values()).map(Hint.Kind::type).collect(Collectors.toSet()),
                "every Hint.Kind names a permitted record");
        assertEquals(Hint.Kind.values().length,
                Arrays.stream(Hint.Kind.values()).map(Hint.Kind::kind).distinct().count(), "the shell's words differ");
    }

    @Test
    void eachKindParsesItsExampleAndRoundTripsThroughItsValuesAndText() {
        for (Hint.Kind k : Hint.Kind.values()) {
            assertEquals(k.valueNames().size(), k.example().size(), k + ": one example value per value name");
            assertTrue(k.kind().matches("[a-z][a-z-]*"), k + ": the shell's word is lower case");
            Hint h = Hint.parse(k.kind(), k.example().toArray(String[]::new));
            assertEquals(k.type(), h.getClass());
            assertEquals(k.kind(), h.kind());
            assertEquals(k, Hint.Kind.of(h.getClass()));
            assertEquals(k.example(), h.values().stream().map(String::valueOf).toList(), k + ": values() gives the example back");
            assertEquals(h, k.parse(h.values().stream().map(String::valueOf).toArray(String[]::new)), k + ": values() parse back");
            assertTrue(h.text().startsWith(k.kind() + "="), k + ": text " + h.text() + " starts with the kind");
            assertTrue(Hint.Kind.usages().contains(k.usage()), k.usage());
            String fewer = assertThrows(IllegalArgumentException.class,
                    () -> k.parse(k.example().subList(1, k.example().size()).toArray(String[]::new))).getMessage();
            assertTrue(fewer.startsWith(k.kind() + " takes " + k.valueNames().size()) && fewer.contains(String.join(" ", k.valueNames())), fewer);
        }
    }

    @Test
    void textIsWhatTheShellAlwaysShowed() {
        assertEquals("priority=2", new Hint.Priority(2).text());
        assertEquals("deadline=5000us", new Hint.Deadline(5000).text());
        assertEquals("laxity=1000us/1/5", new Hint.Laxity(1000, 1, 5).text());
        assertEquals("utilization=50%", new Hint.Utilization(50).text());
        assertEquals("timeslice=2000us", new Hint.Timeslice(2000).text());
        assertEquals(String.format("demand=2e/%.1fGiB", 3_000_000_000.0 / (1L << 30)), new Hint.Demand(2, 3_000_000_000L).text());
        assertEquals(String.format("demand=1e/%.1fMiB", 512.0), new Hint.Demand(1, 512L << 20).text());
        assertEquals(List.of(1000L, 1, 5), new Hint.Laxity(1000, 1, 5).values());
        assertEquals("window-active=:0@1764000000000", new Hint.WindowActive(0, 1_764_000_000_000L).text());
        assertEquals("window-active=:2@off", new Hint.WindowActive(2, 0).text());
        assertEquals(List.of(2, 0L), new Hint.WindowActive(2, 0).values());
    }

    @Test
    void windowActiveMarksAreNumbersOrNowAndNowNeverRepeats() {
        assertEquals(new Hint.WindowActive(1, 7), Hint.parse("window-active", "1", "7"));
        assertTrue(new Hint.WindowActive(0, 7).active());
        assertTrue(!new Hint.WindowActive(0, 0).active(), "mark 0 is not active");
        long before = System.currentTimeMillis();
        Hint.WindowActive a = (Hint.WindowActive) Hint.parse("window-active", "0", "now");
        Hint.WindowActive b = (Hint.WindowActive) Hint.parse("window-active", "0", "now");
        long after = System.currentTimeMillis();
        assertTrue(a.mark() >= before, a + " is the node's clock, at least " + before);
        assertTrue(b.mark() > a.mark(), "a later now is higher, even in the same millisecond: " + a + ", " + b);
        // nextMark may run ahead of the clock only by the marks taken in one millisecond
        assertTrue(b.mark() <= after + 2, b + " not far ahead of " + after);
        long[] marks = new long[1000];
        for (int i = 0; i < marks.length; i++) {
            marks[i] = Hint.WindowActive.nextMark();
        }
        for (int i = 1; i < marks.length; i++) {
            assertTrue(marks[i] > marks[i - 1], "mark " + i + ": " + marks[i] + " after " + marks[i - 1]);
        }
    }

    @Test
    void refusalsNameTheValueAndWhatIsAllowed() {
        assertEquals("hint kind 'colour' is unknown; allowed: priority, deadline, laxity, utilization, timeslice, demand, window-active",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("colour", "red")).getMessage());
        assertEquals("hint deadline value 'soon' is not a whole number; allowed: US, a whole number in [1, 3600000000]",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("deadline", "soon")).getMessage());
        assertEquals("priority 5000 is out of range [-1000, 1000]",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("priority", "5000")).getMessage());
        assertEquals("laxity takes 3 values (US PRIO CRITICAL_PRIO), got 1",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("laxity", "1000")).getMessage());
        assertEquals("hint window-active values[1] 'soon' is not a whole number; allowed: MARK, a whole number in [0, 9223372036854775807] (0: not active) or now",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("window-active", "0", "soon")).getMessage());
        assertEquals("hint window-active values[1] '\u0661\u0662' is not a whole number; allowed: MARK, a whole number in [0, 9223372036854775807] (0: not active) or now",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("window-active", "0", "\u0661\u0662")).getMessage(),
                "other scripts' digits are not taken for a mark");
        assertEquals("hint window-active values[1] '' is not a whole number; allowed: MARK, a whole number in [0, 9223372036854775807] (0: not active) or now",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("window-active", "0", "")).getMessage());
        assertEquals("window-active mark -1 is out of range [0, 9223372036854775807] (0: not active; now: the node's clock)",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("window-active", "0", "-1")).getMessage());
        assertEquals("window-active display 1000001 is out of range [0, 1000000]",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("window-active", "1000001", "1")).getMessage());
        assertEquals("hint window-active values[0] ':0' is not a whole number; allowed: DISPLAY, a whole number in [0, 1000000]",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("window-active", ":0", "1")).getMessage());
        assertEquals("priority takes 1 value (N), got 2",
                assertThrows(IllegalArgumentException.class, () -> Hint.parse("priority", "1", "2")).getMessage());
        assertEquals("priority N, deadline US, laxity US PRIO CRITICAL_PRIO, utilization PERCENT, timeslice US, demand ENGINES BYTES, window-active DISPLAY MARK",
                Hint.Kind.usages());
    }
}
