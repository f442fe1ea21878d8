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
    void theShortTableFitsATerminalAndWideShowsEveryFigure() {
        ScenarioReport r = new ScenarioReport("demo", "sim0", Map.of());
        for (String mode : new String[] {"standalone", "native", "xq:hpf", "live:before", "live:after"}) {
            ModeResult m = new ModeResult(mode).put("fg_p50", 10.5).put("fg_p99", 12.25).put("fg_p99_over_standalone", 1.125)
                    .put("bg_tasks_per_s", 812.5).put("bg_vs_native", 0.975).put("fg_tasks", 400).put("fg_slow_launch_us", 12.5)
                    .put("fg_slow_first_submit_us", 3.5).put("fg_med_device_us", 9000.0).put("idle_bg_task_pct", 1.5)
                    .put("idle_pct", 2.5).put("bg_cmd_us", 500.0).put("fg_window", 1234.0).put("fg_period_ms", 50.0)
                    .put("xq_decisions_per_s", 123456.0).put("xq_swaps", 2.0).counts(new Counts(100000, 99990, 10, 0));
            r.add(m);
        }
        r.note("a note of more words than one line of a terminal holds, which the short output folds at a space so that the screen "
                + "stays readable at a hundred columns");
        String shortTable = TextTable.render(r);
        int at = shortTable.indexOf("note: a note of");
        String folded = shortTable.substring(at, shortTable.indexOf("hundred columns\n", at) + "hundred columns".length());
        assertTrue(folded.contains("\n    "), "folded, the rest indented: " + folded);
        assertEquals("note: a note of more words than one line of a terminal holds, which the short output folds at a space so that the "
                + "screen stays readable at a hundred columns", folded.replace("\n    ", " "), "nothing lost in the fold");
        for (String line : shortTable.split("\n")) {
            if (!line.startsWith("scenario ") && !line.startsWith("(")) {
                assertTrue(line.length() <= TextTable.WIDTH, "over " + TextTable.WIDTH + " columns: " + line + "\n" + shortTable);
            }
        }
        String head = shortTable.split("\n")[1];
        assertTrue(head.startsWith("mode") && head.contains("fg_p99_over_standalone") && head.contains("bg_vs_native")
                && head.endsWith("lost"), shortTable);
        assertTrue(!head.contains("fg_slow_launch_us") && !head.contains("idle_pct") && !head.contains("submitted"), shortTable);
        assertTrue(shortTable.contains("with --wide and in --json"), shortTable);
        String wide = TextTable.render(r, true);
        String wideHead = wide.split("\n")[1];
        assertTrue(wideHead.contains("fg_slow_launch_us") && wideHead.contains("idle_bg_task_pct") && wideHead.contains("submitted")
                && wideHead.contains("xq_swaps"), wide);
        assertTrue(!wide.contains("with --wide"), wide);
    }

    @Test
    void formatsMissingNumbersAsDash() {
        assertEquals("-", TextTable.format(Double.NaN));
        assertEquals("-", TextTable.format(null));
        assertEquals("3", TextTable.format(3L));
        assertEquals("0.500", TextTable.format(0.5));
    }
}
