package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.Preemption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Levels 2 (stall, flush) and 3 (interrupt with save and restore cost). */
class SimPreemptionTest extends SimTestSupport {

    @Test
    void level2StallHoldsLaunchedCommandsInPlaceWhileTheRunningOneGoesOn() throws Exception {
        // no launch cost: #1 starts at its launch, so it is running when deactivate comes
        SimDevice d = device(Map.of("maxLevel", 2, "launchCostMicros", 0));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        assertEquals(PreemptionLevel.DEACTIVATE, pre(q).level());
        for (long i = 1; i <= 3; i++) {
            q.launch(spin(i, 20_000));
        }
        assertEquals(List.of(), pre(q).deactivate());
        long deactivated = System.nanoTime();
        Recorder.Done first = r.awaitReported(1).getFirst();
        assumeTrue(deactivated < first.end(), "the test thread was held up for 20 ms; the precondition does not hold");
        Thread.sleep(30); // #2 would have run its 20 ms by now
        assertEquals(List.of(1L), r.doneSequences(), "nothing starts while deactivated");
        long reactivated = System.nanoTime();
        pre(q).reactivate();
        List<Recorder.Done> all = r.awaitReported(3);
        assertEquals(List.of(1L, 2L, 3L), r.doneSequences());
        assertEquals(20_000 * US, first.nanos(), "the running command went on");
        assertTrue(all.get(1).start() >= reactivated, "#2 started after reactivate, not in the past: " + all.get(1).start() + " < " + reactivated);
        assertEquals(all.get(1).end(), all.get(2).start());
    }

    @Test
    void level2FlushHandsBackUnstartedCommandsInOrderAndNeverReportsThem() throws Exception {
        SimDevice d = device(Map.of("maxLevel", 2, "lv2Mode", "flush", "launchCostMicros", 0));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        for (long i = 1; i <= 4; i++) {
            q.launch(spin(i, 20_000));
        }
        List<HwCommand> back = pre(q).deactivate();
        long deactivated = System.nanoTime();
        Recorder.Done first = r.awaitReported(1).getFirst();
        assumeTrue(deactivated < first.end(), "the test thread was held up for 20 ms; the precondition does not hold");
        assertEquals(List.of(2L, 3L, 4L), back.stream().map(HwCommand::sequence).toList());
        pre(q).reactivate();
        Thread.sleep(30); // #2 would have run by now if it were still on the device
        assertEquals(List.of(1L), r.doneSequences(), "flushed commands are gone from the device");
        assertTrue(r.failed.isEmpty() && r.lost.isEmpty());
        // the runtime relaunches them once; each then runs exactly once
        for (HwCommand c : back) {
            q.launch(new HwCommand(c.sequence(), dev.xq.api.Command.spin(100)));
        }
        r.awaitReported(4);
        Thread.sleep(5);
        assertEquals(List.of(1L, 2L, 3L, 4L), r.doneSequences());
    }

    @Test
    void level3InterruptFreesTheEngineAfterTheSaveAndRestoreKeepsProgress() throws Exception {
        SimDevice d = device(Map.of("saveCostMicros", 100, "restoreCostMicros", 300));
        Recorder bg = new Recorder("bg");
        Recorder fg = new Recorder("fg");
        HwQueue qb = d.open("bg", bg);
        HwQueue qf = d.open("fg", fg);
        long launched = System.nanoTime();
        qb.launch(spin(1, 60_000));
        Thread.sleep(5);
        qf.launch(spin(1, 1000)); // waits for the engine
        pre(qb).deactivate();
        long t0 = System.nanoTime();
        pre(qb).interrupt();
        long t1 = System.nanoTime();
        assumeTrue(t0 < launched + 60_000 * US, "the test thread was held up for 60 ms; bg was no longer running");
        assertTrue(t1 - t0 >= 100 * US, "interrupt returns after the save: " + (t1 - t0) + " ns");
        Recorder.Done f = fg.awaitReported(1).getFirst();
        assertTrue(f.start() >= t0 + 100 * US && f.start() <= t1, "fg starts when the save is done: " + (f.start() - t0) + " ns after interrupt");
        pre(qb).restore();
        pre(qb).reactivate();
        Recorder.Done b = bg.awaitReported(1).getFirst();
        // reported device time = duration + restore (the save occupies the engine, not the command):
        // had the interrupt thrown away progress, it would also hold the 5+ ms that ran before
        assertEquals((60_000 + 300) * US, b.nanos(), "progress kept");
        assertTrue(b.end() >= f.end() + 300 * US, "bg finished after fg and its restore: " + b + " " + f);
    }

    @Test
    void anInterruptedCommandResumesBeforeTheRestOfItsQueue() throws Exception {
        SimDevice d = device(Map.of("saveCostMicros", 0, "restoreCostMicros", 0, "launchCostMicros", 0));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        long launched = System.nanoTime();
        q.launch(spin(1, 50_000));
        q.launch(spin(2, 100));
        pre(q).deactivate();
        pre(q).interrupt();
        assumeTrue(System.nanoTime() < launched + 50_000 * US, "the test thread was held up for 50 ms; #1 was no longer running");
        pre(q).interrupt(); // nothing runs now: no-op
        pre(q).restore();
        pre(q).reactivate();
        List<Recorder.Done> all = r.awaitReported(2);
        assertEquals(List.of(1L, 2L), r.doneSequences());
        assertEquals(50_000 * US, all.get(0).nanos(), "progress kept (no save or restore cost here)");
        assertEquals(all.get(0).end(), all.get(1).start());
    }

    @Test
    void interruptingAQueueWithNothingRunningChangesNothing() throws Exception {
        SimDevice d = device(Map.of());
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        long t0 = System.nanoTime();
        pre(q).interrupt();
        // no save happened, and the queue was not held: a launch runs without restore()
        q.launch(spin(1, 10));
        r.awaitReported(1);
        assertEquals(List.of(1L), r.doneSequences());
        pre(q).restore();
        assertTrue(r.done.getFirst().start() >= t0);
    }

    @Test
    void levelsAboveTheConfiguredOneAreRefused() {
        HwQueue q1 = device(Map.of("maxLevel", 1)).open("a", new Recorder("a"));
        assertTrue(q1.preemption().isEmpty(), "a level-1 sim queue offers no preemption");
        HwQueue q2 = device(Map.of("maxLevel", 2)).open("b", new Recorder("b"));
        Preemption p2 = pre(q2);
        assertEquals(PreemptionLevel.DEACTIVATE, p2.level());
        assertEquals(List.of(), p2.deactivate());
        p2.reactivate();
        UnsupportedOperationException e3 = assertThrows(UnsupportedOperationException.class, p2::interrupt);
        assertTrue(e3.getMessage().contains("level 3"), e3.getMessage());
        assertThrows(UnsupportedOperationException.class, p2::restore);
    }
}
