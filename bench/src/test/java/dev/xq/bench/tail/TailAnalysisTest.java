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
        return new Cmd(handle, "fg", seq, submit - US, submit, 1, launchBegin, launchEnd, launchThread, launchEnd + US,
                launchEnd + 2 * US, start, start + 100 * US, start + 105 * US);
    }

    @Test
    void anIdleSpanIsSplitAtTheSubmittersAndTheCommandsOwnMoments() {
        long t0 = 1_000_000;
        long end0 = t0 + 120 * US;
        List<Cmd> cs = new ArrayList<>();
        // command 0 starts at t0 + 20 us and ends at end0; its submit's pump returns 10 us after that
        // end and the submit (after announcing) 15 us later; the next submit enters 5 us later, has
        // its command 2 us after, the launch call begins 48 us later, lasts 5 us, and the device
        // starts it 15 us after that
        cs.add(new Cmd(1, "fg", 0, t0 - US, t0, 1, t0 + 2 * US, t0 + 6 * US, 1, end0 + 10 * US, end0 + 25 * US, t0 + 20 * US,
                end0, end0 + 5 * US));
        cs.add(new Cmd(1, "fg", 1, end0 + 30 * US, end0 + 32 * US, 1, end0 + 80 * US, end0 + 85 * US, 7, end0 + 86 * US,
                end0 + 87 * US, end0 + 100 * US, end0 + 200 * US, end0 + 205 * US));
        double[] p = TailAnalysis.task(cs).parts();
        assertEquals(2.0, p[0], 1e-9, "first:held");
        assertEquals(4.0, p[1], 1e-9, "first:call");
        assertEquals(14.0, p[2], 1e-9, "first:after");
        assertEquals(10.0, p[3], 1e-9, "idle:prev-pump");
        assertEquals(15.0, p[4], 1e-9, "idle:prev-announce");
        assertEquals(5.0, p[5], 1e-9, "idle:between-calls");
        assertEquals(2.0, p[6], 1e-9, "idle:check+lock");
        assertEquals(48.0, p[7], 1e-9, "idle:held");
        assertEquals(5.0, p[8], 1e-9, "idle:in-call");
        assertEquals(15.0, p[9], 1e-9, "idle:after-launch");
        assertEquals(100.0, p[10], 1e-9, "idle:total is the sum");
        assertEquals(1.0, p[11], 1e-9, "one command launched by another thread");
        assertEquals(32.0 + 120, p[12], 1e-9, "submit spread");
    }

    @Test
    void aCommandSubmittedAndLaunchedBeforeThePreviousEndCountsOnlyAfterTheLaunch() {
        long t0 = 0;
        List<Cmd> cs = new ArrayList<>();
        cs.add(cmd(1, 0, t0, 0, t0, t0, t0 + 5 * US, t0 + 10 * US, 1));
        // submitted and launched early; the device started it 40 us after the previous end
        cs.add(cmd(1, 1, t0, 1, t0 + 6 * US, t0 + 7 * US, t0 + 12 * US, t0 + 150 * US, 1));
        double[] p = TailAnalysis.task(cs).parts();
        assertEquals(0.0, p[3] + p[4] + p[5] + p[6] + p[7] + p[8], 1e-9);
        assertEquals(40.0, p[9], 1e-9);
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
                cs.add(new Cmd(3, "fg", task * 2 + k + 1, submit, submit, 1, begin, begin + 1, 1, begin + 1, begin + 2, start,
                        start + 100 * US, start + 101 * US));
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

    @Test
    void aCommandSeenLateIsNamedWithTheOneSeenWithIt() {
        List<Cmd> cs = new ArrayList<>();
        long t = 0;
        for (int task = 0; task < 200; task++) {
            long late = task == 150 ? 3_000 * US : 0; // one task: command 1's end seen 3 ms late, command 2 seen with it
            for (int k = 0; k < 3; k++) {
                long start = t + k * 100 * US;
                long end = start + 100 * US;
                if (task == 150 && k == 1) {
                    end += late;
                } else if (task == 150 && k == 2) {
                    start += late;
                    end = start + 5 * US;
                }
                cs.add(new Cmd(4, "fg", task * 3 + k + 1, t, t, 1, t, t + 1, 1, t + 1, t + 2, start, end, end + US));
            }
            t += 10_000 * US;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        TailAnalysis.analyse(cs, List.of(), "fg", 3, 1, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertTrue(out.contains("(median command 100 us)"), out);
        org.junit.jupiter.api.Assertions.assertTrue(out.contains("longest command k=1: 3100 us, and the next one ended 5 us after it"), out);
    }
}
