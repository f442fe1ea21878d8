package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** pollWait: how the poll-mode completion thread waits between looks (spin or park). */
class CudaPollWaitTest {

    private static final String THREAD = "xq-cuda-completion-cuda0";

    private static Thread completionThread() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(THREAD)).findFirst()
                .orElseThrow(() -> new AssertionError("no thread " + THREAD));
    }

    /** Samples the completion thread's state for {@code millis}; returns how often it was in a timed park. */
    private static int timedParks(Thread t, int millis) throws InterruptedException {
        int timed = 0;
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < end) {
            if (t.getState() == Thread.State.TIMED_WAITING) {
                timed++;
            }
            Thread.sleep(1);
        }
        return timed;
    }

    @Test
    void aSpinningThreadIsNeverInATimedParkWhileACommandIsInFlightAndAParkingOneIs() throws Exception {
        for (boolean spin : new boolean[] {true, false}) {
            try (CudaDouble d = new CudaDouble()) {
                // the longest spin above the command's length: the thread spins the whole wait
                CudaSettings settings = CudaSettings.defaults().withPollWait(spin).withPollSpinMicros(1_000_000);
                CudaPlatform p = CudaPlatform.start(d.api(), settings, RuntimeLog.NONE);
                try {
                    RecordingListener l = new RecordingListener();
                    HwQueue q = p.open("cuda0", new HwQueueOptions("long", null), l);
                    q.launch(new HwCommand(0, Command.spin(300_000)));
                    Thread.sleep(20);
                    int timed = timedParks(completionThread(), 150);
                    if (spin) {
                        assertEquals(0, timed, "pollWait=spin: the thread must spin, not park, while a command runs");
                    } else {
                        assertTrue(timed > 50, "pollWait=park: the thread parks until the predicted end (" + timed + " samples)");
                    }
                    assertTrue(l.await(1));
                    String said = p.devices().get(0).properties().get("pollWait");
                    assertTrue(said.startsWith(spin ? "spin" : "park"), "the device descriptor says how it waits: " + said);
                    q.close();
                } finally {
                    p.close();
                }
            }
        }
    }

    @Test
    void aWaitLongerThanTheLongestSpinParksFirstAndSpinsOnlyItsEnd() throws Exception {
        // How late the end is seen, and whether the thread is caught in a park just inside the last
        // 20 ms, depend on it getting a CPU: beside two busy loops on 2 vCPUs it lost one for 6.5 ms
        // once (fresh-clone run, 28 Nov), and a park meant to end 20 ms before the end woke 2 ms
        // into the spin window once (CI, 1 Dec). So a try is judged whole and the test passes on the
        // first good one of three: a try the OS took the CPU from does not fail it, and a thread that
        // sleeps through the end, or parks where it should spin, fails all three.
        List<String> tries = new java.util.ArrayList<>();
        for (int attempt = 0; attempt < 3; attempt++) {
            LongWait w = longWait();
            assertTrue(w.far() > 50, "far from the look, the thread parks instead of spinning (" + w.far() + " samples)");
            tries.add(w.near() + " parked samples, seen " + w.late() / 1000 + " us late");
            if (w.near() == 0 && w.late() < TimeUnit.MILLISECONDS.toNanos(5)) {
                return;
            }
        }
        throw new AssertionError("tries " + tries + ": within pollSpinMicros of the look the thread must spin (no samples "
                + "in a timed park) and see the end within 5 ms, not sleep through it");
    }

    /** One try: samples in a timed park far from and near the end of a 300 ms command, and how late its end was seen. */
    private record LongWait(int far, int near, long late) {}

    private LongWait longWait() throws Exception {
        try (CudaDouble d = new CudaDouble()) {
            CudaSettings settings = CudaSettings.defaults().withPollWait(true).withPollSpinMicros(20_000);
            CudaPlatform p = CudaPlatform.start(d.api(), settings, RuntimeLog.NONE);
            try {
                RecordingListener l = new RecordingListener();
                HwQueue q = p.open("cuda0", new HwQueueOptions("long", null), l);
                long launched = System.nanoTime();
                q.launch(new HwCommand(0, Command.spin(300_000)));
                Thread.sleep(20);
                int far = timedParks(completionThread(), 150);
                // 15-7 ms before the end: inside the last 20 ms, where it spins
                Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(launched + TimeUnit.MILLISECONDS.toNanos(285) - System.nanoTime())));
                int near = timedParks(completionThread(), 8);
                assertTrue(l.await(1));
                long late = l.reports.get(0).seenNanos() - d.kernelEnds.get(0);
                q.close();
                return new LongWait(far, near, late);
            } finally {
                p.close();
            }
        }
    }

    @Test
    void aLaunchCutsASpinShortSoAShortCommandOnAnotherQueueIsSeenAtItsEnd() throws Exception {
        try (CudaDouble d = new CudaDouble()) {
            CudaPlatform p = CudaPlatform.start(d.api(), CudaSettings.defaults().withPollWait(true), RuntimeLog.NONE);
            try {
                RecordingListener longOne = new RecordingListener();
                RecordingListener shortOne = new RecordingListener();
                HwQueue a = p.open("cuda0", new HwQueueOptions("long", null), longOne);
                HwQueue b = p.open("cuda0", new HwQueueOptions("short", null), shortOne);
                a.launch(new HwCommand(0, Command.spin(400_000)));
                Thread.sleep(30); // the thread now spins towards the long command's predicted end
                b.launch(new HwCommand(0, Command.spin(2_000)));
                assertTrue(shortOne.await(1));
                RecordingListener.Report r = shortOne.reports.get(0);
                long late = r.seenNanos() - d.kernelEnds.get(0);
                assertTrue(late < TimeUnit.MILLISECONDS.toNanos(50), "the short command was seen " + late / 1000
                        + " us after its end; without the launch cutting the spin short it waits for the long one's end");
                assertTrue(longOne.reports.isEmpty(), "the long command must still be running");
                assertTrue(longOne.await(1));
                a.close();
                b.close();
            } finally {
                p.close();
            }
        }
    }

    @Test
    void aLaunchWhoseCommandCannotEndBeforeTheSpinDoesLeavesTheSpinAlone() throws Exception {
        try (CudaDouble d = new CudaDouble()) {
            CudaPlatform p = CudaPlatform.start(d.api(), CudaSettings.defaults().withPollWait(true), RuntimeLog.NONE);
            try {
                RecordingListener shortOne = new RecordingListener();
                RecordingListener longOnes = new RecordingListener();
                HwQueue a = p.open("cuda0", new HwQueueOptions("short", null), shortOne);
                HwQueue b = p.open("cuda0", new HwQueueOptions("long", null), longOnes);
                a.launch(new HwCommand(0, Command.spin(80_000)));
                Thread.sleep(10); // the thread now spins towards a's end, ~70 ms away
                int before = d.eventQueries.get();
                for (int i = 0; i < 100; i++) {
                    b.launch(new HwCommand(i, Command.spin(200_000))); // none can end within 200 ms
                }
                int during = d.eventQueries.get() - before;
                assertTrue(during < 20, during + " event queries while 100 commands that end after the spin were launched: "
                        + "each launch made the thread look again");
                assertTrue(shortOne.await(1));
                b.close();
                a.close();
            } finally {
                p.close();
            }
        }
    }

    /**
     * Twenty commands launched at once on one queue, under pollWait=park with no early margin, so
     * that every look comes a timer's wake-up late. A command queued behind another is predicted
     * to end one length after its predecessor's end; were that end the late moment it was seen,
     * each look would start from the previous one's lateness and the lateness would add up along
     * the queue (what the H100 showed: a tenant alone 0.3 ms slower per 10 ms task under park).
     */
    @Test
    void lookingLateAtOneCommandDoesNotMakeTheLooksAtTheCommandsBehindItLater() throws Exception {
        try (CudaDouble d = new CudaDouble()) {
            CudaSettings s = CudaSettings.defaults().withPollWait(false).withPolling(0, 200, 1000);
            CudaPlatform p = CudaPlatform.start(d.api(), s, RuntimeLog.NONE);
            try {
                RecordingListener l = new RecordingListener();
                HwQueue q = p.open("cuda0", new HwQueueOptions("burst", null), l);
                int n = 20;
                // A burst to warm up (its first looks are the JIT's), then five judged ones. Each is
                // judged by how much later each command is seen than the one before it (the median
                // step of the lateness along the queue), and the test by the median of those steps
                // over the five: a host taking the looking thread away for a moment makes one or two
                // steps long, not the median. On the build VM with the lateness carried over (the
                // next prediction anchored on the seen end) the bursts' median steps were 17-61 us,
                // without it -13 to +6 us. Until 7 Dec the test compared the tail's lateness with the
                // head's (300 us apart at most), which failed once in a loaded CI run (113 us at the
                // head, 583 at the tail) and passed in 5 of 12 bursts with the lateness carried over.
                long[] steps = new long[5];
                StringBuilder seen = new StringBuilder();
                for (int burst = -1; burst < steps.length; burst++) {
                    int from = (burst + 1) * n;
                    for (int i = 0; i < n; i++) {
                        q.launch(new HwCommand(from + i, Command.spin(2_000)));
                    }
                    assertTrue(l.await(from + n));
                    if (burst < 0) {
                        continue;
                    }
                    long[] late = new long[n];
                    for (int i = 0; i < n; i++) {
                        late[i] = l.reports.get(from + i).seenNanos() - d.kernelEnds.get(from + i);
                    }
                    long[] step = new long[n - 1];
                    for (int i = 1; i < n; i++) {
                        step[i - 1] = late[i] - late[i - 1];
                    }
                    steps[burst] = median(step, 0, n - 1);
                    seen.append(seen.isEmpty() ? "" : "; ").append(median(late, 0, 5) / 1000).append(" us late at the head, ")
                            .append(median(late, n - 5, n) / 1000).append(" us at the tail, ").append(steps[burst] / 1000).append(" us a step");
                }
                long step = median(steps, 0, steps.length);
                assertTrue(step < TimeUnit.MICROSECONDS.toNanos(15), "each command seen " + step / 1000
                        + " us later than the one before it (median over five bursts of 20: " + seen + "): the lateness adds up");
                q.close();
            } finally {
                p.close();
            }
        }
    }

    private static long median(long[] v, int from, int to) {
        long[] c = java.util.Arrays.copyOfRange(v, from, to);
        java.util.Arrays.sort(c);
        return c[c.length / 2];
    }

    /**
     * A waiter's look (HwQueue.poll, which the runtime's spinning await calls): a command that
     * ended while the completion thread was not looking (here: parked in its back-off, 40 ms at a
     * time, for a kernel of unknown length) is reported at once on the waiter's thread, in launch
     * order with the command behind it; the completion thread's own looks go on after.
     */
    @Test
    void aWaitersLookReportsWhatEndedWhileTheCompletionThreadWasAwayInOrder() throws Exception {
        try (CudaDouble d = new CudaDouble()) {
            CudaSettings settings = CudaSettings.defaults().withPollWait(false)
                    .withPolling(CudaSettings.DEFAULT_POLL_EARLY_MICROS, 100_000, CudaSettings.DEFAULT_TIMER_SLACK_NANOS);
            CudaPlatform p = CudaPlatform.start(d.api(), settings, RuntimeLog.NONE);
            try {
                RecordingListener l = new RecordingListener();
                HwQueue q = p.open("cuda0", new HwQueueOptions("waited", null), l);
                Command.Dim3 one = new Command.Dim3(1, 1, 1);
                // a kernel, not a spin command: its length is unknown, so the thread backs off (sleeps of
                // 5 us doubling: looks ~41 and ~82 ms after the launch); 60 ms ends far from both
                q.launch(new HwCommand(0, new Command.Kernel("spin", "xq_spin", one, one, 0, List.of(new Command.Arg.I64(60_000_000L)))));
                q.launch(new HwCommand(1, Command.spin(10)));
                String me = Thread.currentThread().getName();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (l.reports.size() < 2 && System.nanoTime() < until) {
                    q.poll();
                    Thread.sleep(1);
                }
                assertEquals(2, l.reports.size(), "both commands reported");
                assertEquals(List.of(0L, 1L), l.reports.stream().map(r -> r.command().sequence()).toList(), "in launch order");
                assertEquals(List.of(me, me), l.reports.stream().map(RecordingListener.Report::thread).toList(),
                        "seen by the waiter's looks, not by the completion thread's back-off");
                String looks = p.devices().get(0).properties().get("waiterLooks");
                assertTrue(Long.parseLong(looks.substring(0, looks.indexOf(' '))) > 0, "the descriptor counts the waiter's looks: " + looks);
                // without waiters, the thread sees ends by itself as before
                q.launch(new HwCommand(2, Command.spin(200)));
                assertTrue(l.await(3));
                assertEquals(THREAD, l.reports.get(2).thread());
                q.close();
            } finally {
                p.close();
            }
        }
    }
}
