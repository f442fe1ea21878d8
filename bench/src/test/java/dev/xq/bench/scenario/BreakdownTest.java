package dev.xq.bench.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.Submission;
import dev.xq.bench.workload.TaskRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Where the slowest tasks' time goes: launch delay, device gaps between commands, device time. */
class BreakdownTest {

    /** A completed submission with a given result. */
    private record Done(CommandResult result) implements Submission {
        @Override
        public long sequence() {
            return result.sequence();
        }

        @Override
        public Command command() {
            return Command.spin(100);
        }

        @Override
        public CompletionStage<CommandResult> stage() {
            return CompletableFuture.completedFuture(result);
        }

        @Override
        public boolean isDone() {
            return true;
        }

        @Override
        public CommandResult await() {
            return result;
        }

        @Override
        public CommandResult await(Duration timeout) {
            return result;
        }
    }

    /** A task of 4 commands of 100 us submitted at t0, launched after {@code launchUs}, with {@code gapUs} idle before the third. */
    private static TaskRecord task(long t0, long launchUs, long gapUs) {
        return task(t0, launchUs, gapUs, -1);
    }

    private static TaskRecord task(long t0, long launchUs, long gapUs, long cpuUs) {
        List<Submission> subs = new ArrayList<>();
        long start = t0 + launchUs * 1000;
        for (int i = 0; i < 4; i++) {
            if (i == 2) {
                start += gapUs * 1000;
            }
            subs.add(new Done(new CommandResult(i + 1, t0, start, start + 100_000)));
            start += 100_000;
        }
        return new TaskRecord("fg", t0, subs, cpuUs < 0 ? -1 : cpuUs * 1000);
    }

    @Test
    void theSlowestTasksShowTheGapThatGrew() {
        List<TaskRecord> tasks = new ArrayList<>();
        for (int i = 0; i < 198; i++) {
            tasks.add(task(i * 1_000_000L, 20, 0));
        }
        tasks.add(task(300_000_000L, 20, 500)); // two slow tasks: a 500 us hole between commands
        tasks.add(task(301_000_000L, 20, 500));
        double[] b = Measures.breakdownMicros(tasks, 0, Long.MAX_VALUE);
        assertEquals(20.0, b[0], 1e-9, "slow launch");
        assertEquals(500.0, b[1], 1e-9, "slow gaps");
        assertEquals(400.0, b[2], 1e-9, "slow device");
        assertEquals(0.0, b[3], 1e-9, "slow submit (all four at t0)");
        assertEquals(20.0, b[5], 1e-9, "median launch");
        assertEquals(0.0, b[6], 1e-9, "median gaps");
        assertTrue(Double.isNaN(b[4]), "slow cpu: not measured");
        assertTrue(Double.isNaN(Measures.breakdownMicros(List.of(), 0, 1)[0]));
    }

    @Test
    void theSubmittingThreadsCpuTimeIsAveragedLikeTheRest() {
        List<TaskRecord> tasks = new ArrayList<>();
        for (int i = 0; i < 198; i++) {
            tasks.add(task(i * 1_000_000L, 20, 0, 40));
        }
        tasks.add(task(300_000_000L, 20, 500, 30));
        tasks.add(task(301_000_000L, 20, 700, 50));
        double[] b = Measures.breakdownMicros(tasks, 0, Long.MAX_VALUE);
        assertEquals(600.0, b[1], 1e-9, "slow gaps");
        assertEquals(40.0, b[4], 1e-9, "slow cpu: mean of 30 and 50");
        assertEquals(40.0, b[9], 1e-9, "median cpu");
        tasks.add(task(302_000_000L, 20, 900));
        assertTrue(Double.isNaN(Measures.breakdownMicros(tasks, 0, Long.MAX_VALUE)[4]),
                "a slow task without a measurement makes the mean unknown, not smaller");
    }

    /** A task of 4 commands of 100 us whose second command is submitted {@code firstUs} after the first, the rest with it. */
    private static TaskRecord lateSecond(long t0, long firstUs) {
        List<Submission> subs = new ArrayList<>();
        long start = t0 + 20_000;
        for (int i = 0; i < 4; i++) {
            long submit = i == 0 ? t0 : t0 + firstUs * 1000;
            start = Math.max(start, submit + 10_000);
            subs.add(new Done(new CommandResult(i + 1, submit, start, start + 100_000)));
            start += 100_000;
        }
        return new TaskRecord("fg", t0, subs);
    }

    @Test
    void theFirstSubmitIsTheSecondCommandsSubmitAfterTheFirst() {
        List<TaskRecord> tasks = new ArrayList<>();
        for (int i = 0; i < 198; i++) {
            tasks.add(lateSecond(i * 1_000_000L, 30));
        }
        tasks.add(lateSecond(300_000_000L, 600)); // the device had only the first command for 600 us
        tasks.add(lateSecond(301_000_000L, 800));
        double[] b = Measures.breakdownMicros(tasks, 0, Long.MAX_VALUE);
        assertEquals(700.0, b[10], 1e-9, "slow first submit: mean of 600 and 800");
        assertEquals(30.0, b[11], 1e-9, "median first submit");
        assertEquals(700.0, b[3], 1e-9, "slow submit: all after the second's");
        List<TaskRecord> single = List.of(new TaskRecord("fg", 0, List.of(new Done(new CommandResult(1, 0, 10, 20)))));
        assertTrue(Double.isNaN(Measures.breakdownMicros(single, 0, Long.MAX_VALUE)[11]), "one command: no second submit");
    }

    /** A task of commands given as {start, end} pairs in µs, released at its first start. */
    private static TaskRecord spans(String tenant, long... us) {
        List<Submission> subs = new ArrayList<>();
        for (int i = 0; i < us.length; i += 2) {
            subs.add(new Done(new CommandResult(i / 2 + 1, us[0] * 1000, us[i] * 1000, us[i + 1] * 1000)));
        }
        return new TaskRecord(tenant, us[0] * 1000, subs);
    }

    @Test
    void eachIdleSpanIsChargedToWhatEndedBeforeItAndWhatStartsAfter() {
        // bg task 1: 0-100, 110-200 (10 us: bg's next command late); bg task 2: 230-300 (30 us
        // between bg's tasks); fg: 320-400 (20 us before fg); bg task 2 goes on at 440 (40 us: bg
        // resumed late after fg's end); fg 500-600 overlaps bg's 480-520 (no idle)
        List<TaskRecord> bg = List.of(spans("bg", 0, 100, 110, 200), spans("bg", 230, 300, 440, 480, 480, 520));
        List<TaskRecord> fg = List.of(spans("fg", 320, 400), spans("fg", 500, 600));
        double[] idle = Measures.deviceIdle(fg, bg, 0, 1_000_000);
        assertEquals(1.0, idle[1], 1e-9, "bg within a task: 10 us of 1000");
        assertEquals(3.0, idle[2], 1e-9, "bg between tasks: 30 us");
        assertEquals(4.0, idle[3], 1e-9, "fg then bg: 40 us");
        assertEquals(2.0, idle[4], 1e-9, "before fg: 20 us");
        assertEquals(10.0, idle[0], 1e-9, "the total is the sum");
        assertEquals(70.0, idle[5], 1e-9, "bg's median command: 100, 90, 70, 40, 40 us");
        assertTrue(Double.isNaN(Measures.deviceIdle(List.of(), List.of(), 0, 1)[0]));
    }
    @Test
    void aSlowTasksTimelineShowsTheBgCommandThatRanInItsWay() {
        List<TaskRecord> fg = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fg.add(spans("fg", i * 10_000L, i * 10_000L + 100)); // 100 us each
        }
        fg.add(spans("fg", 300_000, 300_150)); // the slowest: 150 us
        // bg: one command in the slow task's way, one long before it (left out), one around a median task
        List<TaskRecord> bg = List.of(spans("bg", 299_900, 300_050), spans("bg", 100_000, 100_010),
                spans("bg", 99_950, 100_000));
        String text = Measures.timelines(fg, bg, 0, Long.MAX_VALUE, 1, 300_000, -200_000_000L);
        String slow = text.substring(0, text.indexOf("median"));
        assertTrue(slow.contains("task latency 150.0 us"), text);
        assertTrue(slow.contains("released at 0.500 s"), "released at 0.3 s, the origin at -0.2 s: " + text);
        assertTrue(slow.contains("bg task 1    submit    -100.0  start    -100.0  end      50.0"), text);
        assertTrue(!slow.contains("bg task 2"), "a bg command far from the task is left out: " + text);
        assertTrue(slow.indexOf("bg task 1") < slow.indexOf("fg 0"), "rows in device order: " + text);
        assertTrue(text.substring(text.indexOf("median")).contains("task latency 100.0 us"), text);
        assertEquals("", Measures.timelines(List.of(), null, 0, 1, 1, 0, 0));
    }

    /**
     * A host stall (Measures.hostStalled): a task charged 2 ms or more, and 5 x the median's CPU,
     * for its submits; tasks without a CPU reading and ones a little over the median are not.
     */
    @Test
    void onlyTasksChargedFarOverTheMedianAndTwoMillisecondsAreHostStalls() {
        List<TaskRecord> tasks = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            tasks.add(task(i * 1_000_000L, 20, 0, 300));
        }
        tasks.add(task(60_000_000L, 20, 0, 3_100)); // stalled
        tasks.add(task(61_000_000L, 20, 0, 1_400)); // slow, under 2 ms: not a stall
        tasks.add(task(62_000_000L, 20, 0, -1));    // no reading
        tasks.add(task(63_000_000L, 20, 0, 2_000)); // exactly the bar
        boolean[] st = Measures.hostStalled(tasks, 0, Long.MAX_VALUE);
        assertEquals(54, st.length);
        int n = 0;
        for (boolean b : st) {
            n += b ? 1 : 0;
        }
        assertEquals(2, n, "the 3.1 ms and the 2.0 ms task");
        assertTrue(st[50] && !st[51] && !st[52] && st[53]);
        // the bar follows the median where submits are slow anyway: 5 x 600 us
        List<TaskRecord> slow = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            slow.add(task(i * 1_000_000L, 20, 0, 600));
        }
        slow.add(task(60_000_000L, 20, 0, 2_500));
        slow.add(task(61_000_000L, 20, 0, 3_000));
        boolean[] s2 = Measures.hostStalled(slow, 0, Long.MAX_VALUE);
        assertTrue(!s2[50] && s2[51], "2.5 ms is under 5 x 600 us; 3.0 ms is at it");
        // outside [from, to): not counted
        assertEquals(0, Measures.hostStalled(tasks, 70_000_000L, Long.MAX_VALUE).length);
    }
}
