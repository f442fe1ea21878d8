package dev.xq.bench.tail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.bench.tail.ArrivalAnalysis.Arrival;
import dev.xq.bench.tail.ArrivalAnalysis.Cmd;
import dev.xq.bench.tail.ArrivalAnalysis.Switch;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ArrivalAnalysisTest {

    private static final long US = 1_000;

    /**
     * bg runs 100 us commands back to back from t = 0; fg's two-command tasks arrive at 1050 us
     * (bg's command 10 running), 2050 and 3050, and their first commands end 140 us later. Task 1:
     * bg suspended at 1070, its command 11 started at 1100 all the same (held: it escaped the hold).
     * Task 2: suspended at 2070, command 21 started at 2100, launched unheld. Task 3: suspended at
     * 3120, after command 31 had started at 3100 (before the suspend).
     */
    @Test
    void eachTaskSaysWhichBgCommandsRanInItsWayAndWhy() {
        List<Cmd> bg = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            long s = i * 100 * US;
            bg.add(new Cmd(2, "bg", i, s - 300 * US, s - 290 * US, s, s + 100 * US, i == 21));
        }
        List<Cmd> fg = new ArrayList<>();
        long seq = 0;
        for (long t0 : new long[] {1050 * US, 2050 * US, 3050 * US}) {
            // fg's first command ends at t0 + 140: bg's running command and the next one were in its way
            fg.add(new Cmd(1, "fg", seq++, t0, t0 + 10 * US, t0 + 5 * US, t0 + 140 * US, false));
            fg.add(new Cmd(1, "fg", seq++, t0 + 20 * US, t0 + 25 * US, t0 + 140 * US, t0 + 240 * US, false));
        }
        List<Switch> sw = List.of(new Switch(2, 1070 * US, true), new Switch(2, 2070 * US, true), new Switch(2, 3120 * US, true),
                new Switch(1, 1060 * US, true));
        List<Arrival> a = ArrivalAnalysis.arrivals(fg, bg, sw, 2);
        assertEquals(3, a.size());
        assertEquals(20 * US, a.get(0).suspend(), "the suspend of bg, not of fg");
        assertEquals(10 * US, a.get(0).firstLaunched());
        assertEquals(140 * US, a.get(0).firstEnd());
        assertEquals(240 * US, a.get(0).latency());
        // bg 10 (1000-1100) began before the arrival; bg 11 (1100-1200) after the suspend at 1070, held
        assertEquals(List.of(1, 1, 0), List.of(a.get(0).before(), a.get(0).afterHeld(), a.get(0).afterUnheld()));
        // bg 21 (2100-2200) after the suspend at 2030, launched unheld
        assertEquals(List.of(1, 0, 1), List.of(a.get(1).before(), a.get(1).afterHeld(), a.get(1).afterUnheld()));
        // the suspend at 3120 came after bg 31 began (3100): it went before the suspend could hold it
        assertEquals(List.of(2, 0, 0), List.of(a.get(2).before(), a.get(2).afterHeld(), a.get(2).afterUnheld()));

        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        List<ArrivalAnalysis.Cmd> all = new ArrayList<>(fg);
        all.addAll(bg);
        ArrivalAnalysis.analyse(all, sw, "fg", "bg", 2, new PrintStream(buf, true, StandardCharsets.UTF_8));
        String text = buf.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("pair 1: 3 fg tasks"), text);
        assertTrue(text.contains("none 0, one 0, two 3, three or more 0 tasks; of the commands: 4 began before the suspend, 1 after it held "
                + "(escaped the hold), 1 after it unheld"), text);
    }
}
