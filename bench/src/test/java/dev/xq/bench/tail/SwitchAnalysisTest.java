package dev.xq.bench.tail;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.bench.tail.TailAnalysis.Cmd;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SwitchAnalysisTest {

    private static final long US = 1_000;

    /** A command on the device [start, end), launched [launchBegin, launchEnd], its end seen 5 us after it. */
    private static Cmd cmd(long handle, String queue, long seq, long launchBegin, long launchEnd, long start, long end) {
        return new Cmd(handle, queue, seq, launchBegin - 2 * US, launchBegin - US, 1, launchBegin, launchEnd, 1, launchEnd + US,
                launchEnd + 2 * US, start, end, end + 5 * US);
    }

    /**
     * Ten rounds of: bg runs 100 us commands back to back with a 2 us gap; fg runs two 100 us
     * commands right after a bg command (no idle); after fg, bg resumes 30 us later, with a command
     * launched before fg ended (held) in odd rounds, launched 12 us after fg's end in even ones.
     */
    private static List<Cmd> rounds(long fgHandle, long bgHandle) {
        List<Cmd> cs = new ArrayList<>();
        long t = 1_000 * US;
        long fgSeq = 0;
        long bgSeq = 0;
        for (int r = 0; r < 10; r++) {
            for (int i = 0; i < 3; i++) {
                cs.add(cmd(bgHandle, "bg", bgSeq++, t - 50 * US, t - 45 * US, t, t + 100 * US));
                t += 102 * US;
            }
            t -= 2 * US; // fg starts as the last bg command ends
            for (int i = 0; i < 2; i++) {
                cs.add(cmd(fgHandle, "fg", fgSeq++, t - 20 * US, t - 15 * US, t, t + 100 * US));
                t += 100 * US;
            }
            long fgEnd = t;
            t += 30 * US;
            if (r % 2 == 1) {
                cs.add(cmd(bgHandle, "bg", bgSeq++, fgEnd - 150 * US, fgEnd - 145 * US, t, t + 100 * US));
            } else {
                cs.add(cmd(bgHandle, "bg", bgSeq++, fgEnd + 12 * US, fgEnd + 17 * US, t, t + 100 * US));
            }
            t += 102 * US;
        }
        return cs;
    }

    @Test
    void idleTimeIsClassifiedByTheCommandsAroundIt() {
        List<Cmd> cs = rounds(1, 2);
        List<Cmd> fg = SwitchAnalysis.instances(cs, "fg").getFirst();
        List<Cmd> bg = SwitchAnalysis.instances(cs, "bg").getFirst();
        SwitchAnalysis.Result r = SwitchAnalysis.measure(fg, bg, 0);
        // the first tenth is left out: rounds 1..9 are inside, less what falls before lo
        assertEquals(0, r.count()[1], "fg starts as bg ends: no bg->fg idle");
        assertEquals(0, r.count()[2], "fg's two commands are back to back");
        assertTrue(r.count()[0] >= 8, "a resume per round: " + r.count()[0]);
        assertEquals(30.0, r.idleNanos()[0] / r.count()[0] / US, 1e-9, "each resume is 30 us");
        assertEquals(2.0, r.idleNanos()[3] / r.count()[3] / US, 1e-9, "bg's own gaps are 2 us");
        assertEquals(r.count()[0], r.heldResumes().size() + r.launchedResumes().size());
        assertTrue(r.heldResumes().size() >= 4 && r.launchedResumes().size() >= 4);
        // held: end seen 5 us after fg's end, then 25 us to the start
        assertArrayEquals(new long[] {30 * US, 5 * US, 25 * US}, r.heldResumes().getFirst());
        // launched after: seen at +5, launch begins at +12 (7 later), call 5 us, start 13 us after it
        assertArrayEquals(new long[] {30 * US, 5 * US, 7 * US, 5 * US, 13 * US}, r.launchedResumes().getFirst());
        assertEquals(r.count()[3], r.queuedGaps().get(3).size(), "bg's own commands were launched 45 us ahead of their start");
        assertEquals(r.heldResumes().size(), r.queuedGaps().get(0).size());
        assertEquals(r.launchedResumes().size(), r.lateGaps().get(0).size());
        double busy = r.busyFraction();
        assertTrue(busy > 0.8 && busy < 0.99, "busy " + busy);
    }

    @Test
    void thePairsAreTheInstancesThatRanTogether() {
        List<Cmd> cs = new ArrayList<>(rounds(1, 2));
        // a second mode later: other handles, far away in time
        for (Cmd c : rounds(3, 4)) {
            long shift = 1_000_000 * US;
            cs.add(new Cmd(c.handle(), c.queue(), c.seq(), c.enter() + shift, c.submit() + shift, c.submitThread(),
                    c.launchBegin() + shift, c.launchEnd() + shift, c.launchThread(), c.pumpEnd() + shift, c.returned() + shift,
                    c.start() + shift, c.end() + shift, c.seenEpochNanos() + shift));
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SwitchAnalysis.analyse(cs, "fg", "bg", new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("pair 1 (fg handle 1, bg handle 2)"), text);
        assertTrue(text.contains("pair 2 (fg handle 3, bg handle 4)"), text);
        assertTrue(!text.contains("pair 3"), text);
        assertTrue(text.contains("resumes held on the device"), text);
        assertTrue(text.contains("bg->bg gaps, us: ms per s by size: [0,2) 0.00 [2,4) "), text);
    }
}
