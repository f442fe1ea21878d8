package dev.xq.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TextTableTest {

    @Test
    void rendersOneRowPerModeWithAlignedColumnsAndCounts() {
        ScenarioReport r = new ScenarioReport("fixed-priority", "sim0", Map.of());
        r.add(new ModeResult("standalone").put("fg_p99", 10.123456).counts(new Counts(100, 100, 0, 0)));
        r.add(new ModeResult("xq:hpf").put("fg_p99", 11.0).put("bg_tasks_per_s", 80.25).counts(new Counts(5000, 4997, 1, 0))
                .note("explained"));
        String t = TextTable.render(r);
        String[] lines = t.split("\n");
        assertTrue(lines[1].startsWith("mode"), t);
        assertTrue(lines[1].contains("fg_p99") && lines[1].contains("bg_tasks_per_s") && lines[1].endsWith("lost"), t);
        assertTrue(lines[3].contains("10.123") && lines[3].contains(" - "), t);
        assertTrue(lines[4].contains("80.250"), t);
        // lost = 5000 - 4997 - 1 - 0
        assertTrue(lines[4].endsWith(" 2"), t);
        assertEquals(lines[1].length(), lines[2].length(), t);
        assertTrue(t.contains("xq:hpf: explained"), t);
        assertTrue(t.contains("goal MISSED: no submitted command is lost (lost 2)"), t);
        r.goal("something stated", true, "as measured");
        assertTrue(TextTable.render(r).contains("goal MET:    something stated (as measured)"));
    }

    @Test
    void formatsMissingNumbersAsDash() {
        assertEquals("-", TextTable.format(Double.NaN));
        assertEquals("-", TextTable.format(null));
        assertEquals("3", TextTable.format(3L));
        assertEquals("0.500", TextTable.format(0.5));
    }
}
