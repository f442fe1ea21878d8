package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
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
                CudaPlatform p = CudaPlatform.start(d.api(), CudaSettings.defaults().withPollWait(spin), RuntimeLog.NONE);
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
                    q.close();
                } finally {
                    p.close();
                }
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
}
