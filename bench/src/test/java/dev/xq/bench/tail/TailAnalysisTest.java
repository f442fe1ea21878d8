package dev.xq.bench.tail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.xq.bench.tail.TailAnalysis.Cmd;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TailAnalysisTest {

    private static final long US = 1_000;

    /** Command k of a task at t0: 100 us on the device, back to back, submitted and launched 10 us apart at t0. */
    private static Cmd cmd(long handle, long seq, long t0, long k, long submit, long launchBegin, long launchEnd, long start,
                           long launchThread) {
        return new Cmd(handle, "fg", seq, submit, 1, launchBegin, launchEnd, launchThread, start, start + 100 * US,
                start + 105 * US);
    }

    @Test
    void anIdleSpanIsSplitAtTheCommandsOwnMoments() {
        long t0 = 1_000_000;
        List<Cmd> cs = new ArrayList<>();
        // command 0 starts at t0 + 20 us; command 1 is submitted 30 us after command 0 ended, its
        // launch call begins 50 us later, lasts 5 us, and the device starts it 15 us after that
        cs.add(cmd(1, 0, t0, 0, t0, t0 + 2 * US, t0 + 6 * US, t0 + 20 * US, 1));
        long end0 = t0 + 120 * US;
        cs.add(cmd(1, 1, t0, 1, end0 + 30 * US, end0 + 80 * US, end0 + 85 * US, end0 + 100 * US, 7));
        double[] p = TailAnalysis.task(cs).parts();
        assertEquals(2.0, p[0], 1e-9, "first:held");
        assertEquals(4.0, p[1], 1e-9, "first:call");
        assertEquals(14.0, p[2], 1e-9, "first:after");
        assertEquals(30.0, p[3], 1e-9, "idle:not-submitted");
        assertEquals(50.0, p[4], 1e-9, "idle:held");
        assertEquals(5.0, p[5], 1e-9, "idle:in-call");
        assertEquals(15.0, p[6], 1e-9, "idle:after-launch");
        assertEquals(100.0, p[7], 1e-9, "idle:total is the sum");
        assertEquals(1.0, p[8], 1e-9, "one command launched by another thread");
        assertEquals(150.0, p[9], 1e-9, "submit spread");
    }

    @Test
    void aCommandSubmittedAndLaunchedBeforeThePreviousEndCountsOnlyAfterTheLaunch() {
        long t0 = 0;
        List<Cmd> cs = new ArrayList<>();
        cs.add(cmd(1, 0, t0, 0, t0, t0, t0 + 5 * US, t0 + 10 * US, 1));
        // submitted and launched early; the device started it 40 us after the previous end
        cs.add(cmd(1, 1, t0, 1, t0 + 6 * US, t0 + 7 * US, t0 + 12 * US, t0 + 150 * US, 1));
        double[] p = TailAnalysis.task(cs).parts();
        assertEquals(0.0, p[3] + p[4] + p[5], 1e-9);
        assertEquals(40.0, p[6], 1e-9);
    }

    @Test
    void tasksAreRunsOfConsecutiveSequencesAndTheSlowestAreReported() {
        List<Cmd> cs = new ArrayList<>();
        long t = 0;
        for (int task = 0; task < 200; task++) {
            long gap = task == 150 ? 900 * US : 0; // one slow task: 900 us held before its second command
            for (int k = 0; k < 2; k++) {
                long submit = t + k * US;
                long begin = k == 1 ? t + 100 * US + gap : submit;
                long start = k == 0 ? t : Math.max(t + 100 * US, begin + US);
                cs.add(new Cmd(3, "fg", task * 2 + k + 1, submit, 1, begin, begin + 1, 1, start, start + 100 * US, start + 101 * US));
            }
            t += 10_000 * US;
        }
        assertEquals(200, TailAnalysis.tasks(cs, 2).size());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        TailAnalysis.analyse(cs, List.of(), "fg", 2, 1, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        // 180 tasks after the warm-up tenth; the slowest 1 % are two tasks, one of them the slow one
        org.junit.jupiter.api.Assertions.assertTrue(out.contains("180 tasks"), out);
        org.junit.jupiter.api.Assertions.assertTrue(out.contains("idle 901 us at k=1"), out);
    }
}
