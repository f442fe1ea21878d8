package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwQueue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Injected faults, device loss (configured and through {@code sim:lose}) and closing queues. */
class SimFaultTest extends SimTestSupport {

    @Test
    void everyNthLaunchOnTheDeviceIsRefusedAndNeverRuns() throws Exception {
        SimDevice d = device(Map.of("fault.failLaunchEvery", 3));
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        HwQueue qa = d.open("a", a);
        HwQueue qb = d.open("b", b);
        qa.launch(spin(1, 10));
        qb.launch(spin(1, 10));
        HalException e = assertThrows(HalException.class, () -> qa.launch(spin(2, 10)));
        assertTrue(e.getMessage().contains("fault.failLaunchEvery=3") && e.getMessage().contains("#2"), e.getMessage());
        qa.launch(spin(3, 10));
        qb.launch(spin(2, 10));
        assertThrows(HalException.class, () -> qb.launch(spin(3, 10)));
        a.awaitReported(2);
        b.awaitReported(2);
        Thread.sleep(5);
        assertEquals(List.of(1L, 3L), a.doneSequences());
        assertEquals(List.of(1L, 2L), b.doneSequences());
    }

    @Test
    void everyNthCommandFailsWithACauseInItsTurn() throws Exception {
        SimDevice d = device(Map.of("fault.failCommandEvery", 2));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        for (long i = 1; i <= 4; i++) {
            q.launch(spin(i, 100));
        }
        r.awaitReported(4);
        assertEquals(List.of(1L, 3L), r.doneSequences());
        assertEquals(List.of(2L, 4L), r.failedSequences());
        Throwable cause = r.failed.getFirst().cause();
        assertTrue(cause instanceof HalException && cause.getMessage().contains("fault.failCommandEvery=2"), String.valueOf(cause));
        // the failed one still used its time on the device: #3 started after it
        assertTrue(r.done.get(1).start() >= r.done.get(0).end() + 100 * US, r.done.toString());
    }

    @Test
    void aHungCommandHoldsItsEngineUntilItsQueueCloses() throws Exception {
        SimDevice d = device(Map.of("fault.hangEvery", 2));
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        HwQueue qa = d.open("a", a);
        HwQueue qb = d.open("b", b);
        qa.launch(spin(1, 10));
        a.awaitReported(1);
        qa.launch(spin(2, 10)); // hangs
        qa.launch(spin(3, 10)); // behind it in the stream
        Thread.sleep(2);
        qb.launch(spin(1, 10)); // command 3 of the device: does not hang, but the engine is held
        Thread.sleep(30);
        assertEquals(List.of(1L), a.doneSequences());
        assertEquals(0, b.reports(), "the hung command holds the only engine");
        qa.close();
        qa.close(); // twice is fine
        b.awaitReported(1);
        Thread.sleep(5);
        assertEquals(List.of(1L), a.doneSequences(), "a closed queue's commands are dropped silently");
        assertTrue(a.failed.isEmpty() && a.lost.isEmpty());
        assertThrows(HalException.class, () -> qa.launch(spin(4, 10)));
    }

    @Test
    void aHungCommandLeavesTheEngineThroughInterruptAndHangsOnAfterRestore() throws Exception {
        SimDevice d = device(Map.of("fault.hangEvery", 2, "saveCostMicros", 0, "restoreCostMicros", 0));
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        HwQueue qa = d.open("a", a);
        HwQueue qb = d.open("b", b);
        qa.launch(spin(1, 10));
        a.awaitReported(1);
        qa.launch(spin(2, 10)); // the device's second command: hangs
        Thread.sleep(2);
        qb.launch(spin(1, 100)); // the third: waits for the engine
        Thread.sleep(20);
        assertEquals(0, b.reports(), "the hung command holds the only engine");
        pre(qa).deactivate();
        pre(qa).interrupt();
        b.awaitReported(1);
        assertEquals(List.of(1L), b.doneSequences());
        pre(qa).restore();
        pre(qa).reactivate();
        Thread.sleep(20);
        assertEquals(List.of(1L), a.doneSequences(), "restored, it hangs on");
        assertEquals(0, a.failed.size() + a.lost.size());
        qa.close();
        assertEquals(1, d.openQueues());
    }

    @Test
    void deviceIsLostAfterNCompletedCommands() throws Exception {
        SimDevice d = device(Map.of("fault.loseAfter", 2));
        Recorder a = new Recorder("a");
        Recorder idle = new Recorder("idle");
        HwQueue qa = d.open("a", a);
        HwQueue qi = d.open("idle", idle);
        for (long i = 1; i <= 5; i++) {
            qa.launch(spin(i, 2000));
        }
        a.awaitLost();
        idle.awaitLost();
        Thread.sleep(10);
        assertEquals(List.of(1L, 2L), a.doneSequences());
        assertEquals(1, a.lost.size(), "lost is reported once");
        assertEquals(1, idle.lost.size(), "every queue hears it");
        assertTrue(a.lost.getFirst().getMessage().contains("fault.loseAfter=2"), a.lost.getFirst().getMessage());
        HalException refused = assertThrows(HalException.class, () -> qa.launch(spin(6, 10)));
        assertTrue(refused.getMessage().contains("lost"), refused.getMessage());
        assertThrows(HalException.class, () -> d.open("late", new Recorder("late")));
        assertTrue(d.status().contains("lost"), d.status());
        qa.close(); // never throws, even on a lost device
        qi.close();
    }

    @Test
    void simLoseCommandLosesANamedDevice() throws Exception {
        SimDevice d = device(Map.of("id", "simlose"));
        Recorder a = new Recorder("a");
        HwQueue q = d.open("a", a);
        q.launch(spin(1, 50_000));
        SimCommands commands = new SimCommands();
        SimDeviceComponent.DEVICES.put("simlose", d);
        try {
            assertTrue(commands.devices().contains("simlose  1 device, 1 engine, Lv3"), commands.devices());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> commands.lose("nosuch"));
            assertTrue(e.getMessage().contains("'nosuch'") && e.getMessage().contains("simlose"), e.getMessage());
            assertEquals("sim device simlose lost", commands.lose("simlose"));
            a.awaitLost();
            assertEquals(0, a.done.size() + a.failed.size(), "the running command is never reported after the loss");
            assertEquals("sim device simlose was lost already", commands.lose("simlose"));
            Thread.sleep(5);
            assertEquals(1, a.lost.size());
        } finally {
            SimDeviceComponent.DEVICES.remove("simlose");
        }
    }

    @Test
    void shutdownTellsOpenQueuesTheDeviceIsGone() throws Exception {
        SimDevice d = new SimDevice(SimSettings.from(Map.of(), "simdown"), (what, e) -> { });
        Recorder a = new Recorder("a");
        d.open("a", a).launch(spin(1, 100_000));
        d.shutdown("test");
        assertEquals(1, a.lost.size(), "lost() was delivered before shutdown returned");
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals(SimDevice.threadName("simdown"))));
    }
}
