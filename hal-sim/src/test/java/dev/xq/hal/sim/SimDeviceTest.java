package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SimDeviceTest {

    private final List<SimDevice> devices = new ArrayList<>();

    @AfterEach
    void shutdown() {
        devices.forEach(d -> d.shutdown("test over"));
    }

    private SimDevice device(Map<String, Object> props) {
        SimDevice d = new SimDevice(SimSettings.from(props, "simt"));
        devices.add(d);
        return d;
    }

    private static HwCommand spin(long seq, long micros) {
        return new HwCommand(seq, Command.spin(micros));
    }

    @Test
    void commandsOfOneQueueRunInOrderOneAtATimeForExactlyTheirDuration() throws Exception {
        SimDevice d = device(Map.of("engines", 4));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        for (long i = 1; i <= 5; i++) {
            q.launch(spin(i, 300));
        }
        List<Recorder.Done> done = r.awaitDone(5);
        for (int i = 0; i < 5; i++) {
            assertEquals(i + 1, done.get(i).sequence());
            assertEquals(300_000, done.get(i).end() - done.get(i).start(), "virtual time: exactly 300 us");
            if (i > 0) {
                assertTrue(done.get(i).start() >= done.get(i - 1).end(), "a stream runs one command at a time");
            }
        }
    }

    @Test
    void twoQueuesOnOneEngineTakeTurns() throws Exception {
        SimDevice d = device(Map.of());
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        HwQueue qa = d.open("a", a);
        HwQueue qb = d.open("b", b);
        for (long i = 1; i <= 4; i++) {
            qa.launch(spin(i, 200));
        }
        for (long i = 1; i <= 4; i++) {
            qb.launch(spin(i, 200));
        }
        List<Recorder.Done> all = new ArrayList<>(a.awaitDone(4));
        all.addAll(b.awaitDone(4));
        all.sort(Comparator.comparingLong(Recorder.Done::start));
        // after the first start (whoever was first), the two queues alternate
        for (int i = 2; i < all.size(); i++) {
            assertTrue(!all.get(i).queue().equals(all.get(i - 1).queue()), "round-robin: " + all);
        }
        for (int i = 1; i < all.size(); i++) {
            assertTrue(all.get(i).start() >= all.get(i - 1).end(), "one engine: no overlap");
        }
    }

    @Test
    void commandsShareEnginesAndMemoryAsTheyFit() throws Exception {
        SimDevice d = device(Map.of("engines", 9, "memoryBytes", 18L << 30));
        List<Recorder> recs = new ArrayList<>();
        for (int k = 0; k < 5; k++) {
            Recorder r = new Recorder("q" + k);
            recs.add(r);
            HwQueue q = d.open("q" + k, r);
            for (long i = 1; i <= 3; i++) {
                q.launch(new HwCommand(i, Command.spin(2000, 3, 1L << 30)));
            }
        }
        List<Recorder.Done> all = new ArrayList<>();
        for (Recorder r : recs) {
            all.addAll(r.awaitDone(3));
        }
        // at any start instant, at most 3 commands of 3 engines overlap on 9 engines
        for (Recorder.Done x : all) {
            long overlapping = all.stream().filter(y -> y.start() <= x.start() && x.start() < y.end()).count();
            assertTrue(overlapping <= 3, "engines over-committed: " + overlapping);
        }
        long maxOverlap = all.stream().mapToLong(x -> all.stream().filter(y -> y.start() <= x.start() && x.start() < y.end()).count()).max().orElse(0);
        assertEquals(3, maxOverlap, "the device is used fully");
    }

    @Test
    void level2StallHoldsLaunchedCommandsInPlace() throws Exception {
        SimDevice d = device(Map.of("maxLevel", 2));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        for (long i = 1; i <= 3; i++) {
            q.launch(spin(i, 2000));
        }
        assertEquals(List.of(), q.deactivate());
        List<Recorder.Done> first = r.awaitDone(1);
        Thread.sleep(20);
        assertEquals(1, r.done.size(), "nothing started while deactivated");
        q.reactivate();
        List<Recorder.Done> all = r.awaitDone(3);
        assertEquals(first.getFirst(), all.getFirst());
        assertTrue(all.get(1).start() - all.get(0).end() >= 15_000_000L, "the second waited for reactivate");
    }

    @Test
    void level2FlushHandsBackUnstartedCommandsInOrderAndNeverReportsThem() throws Exception {
        SimDevice d = device(Map.of("maxLevel", 2, "lv2Mode", "flush"));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        for (long i = 1; i <= 4; i++) {
            q.launch(spin(i, 3000));
        }
        Thread.sleep(1); // let #1 start
        List<HwCommand> back = q.deactivate();
        assertEquals(List.of(2L, 3L, 4L), back.stream().map(HwCommand::sequence).toList());
        r.awaitDone(1);
        q.reactivate();
        Thread.sleep(20);
        assertEquals(1, r.done.size(), "flushed commands are gone from the device");
        assertTrue(r.failed.isEmpty());
    }

    @Test
    void level3InterruptKeepsProgressAndChargesTheRestoreCost() throws Exception {
        SimDevice d = device(Map.of("saveCostMicros", 100, "restoreCostMicros", 300));
        Recorder r = new Recorder("a");
        Recorder other = new Recorder("b");
        HwQueue q = d.open("a", r);
        HwQueue o = d.open("b", other);
        q.launch(spin(1, 20_000));
        Thread.sleep(5);
        q.deactivate();
        long before = System.nanoTime();
        q.interrupt();
        assertTrue(System.nanoTime() - before >= 100_000, "interrupt returns after the save");
        o.launch(spin(1, 1000));
        Recorder.Done fg = other.awaitDone(1).getFirst();
        assertTrue(fg.start() - before < 5_000_000L, "the engine was free soon after the save");
        q.restore();
        q.reactivate();
        Recorder.Done bg = r.awaitDone(1).getFirst();
        assertEquals(20_000 + 300, bg.micros(), "device time = duration + restore, progress kept");
        assertTrue(bg.end() > fg.end(), "the interrupted command finished after the other one");
    }

    @Test
    void levelAboveTheConfiguredOneIsRefused() {
        SimDevice d = device(Map.of("maxLevel", 1));
        HwQueue q = d.open("a", new Recorder("a"));
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, q::deactivate);
        assertTrue(e.getMessage().contains("level 2"), e.getMessage());
        assertEquals(PreemptionLevel.BLOCK, q.maxLevel());
    }

    @Test
    void injectedFaultsFailLaunchesCommandsAndTheDevice() throws Exception {
        SimDevice d = device(Map.of("fault.failLaunchEvery", 3, "fault.failCommandEvery", 2));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        q.launch(spin(1, 10));
        q.launch(spin(2, 10));
        HalException e = assertThrows(HalException.class, () -> q.launch(spin(3, 10)));
        assertTrue(e.getMessage().contains("fault.failLaunchEvery=3"), e.getMessage());
        r.awaitDone(2);
        assertEquals(List.of(2L), r.failed, "every second command fails");

        SimDevice lossy = device(Map.of("id", "lossy", "fault.loseAfter", 2));
        Recorder l = new Recorder("l");
        HwQueue lq = lossy.open("l", l);
        for (long i = 1; i <= 5; i++) {
            lq.launch(spin(i, 5000));
        }
        l.awaitLost();
        assertEquals(2, l.done.size());
        HalException refused = assertThrows(HalException.class, () -> lq.launch(spin(6, 10)));
        assertTrue(refused.getMessage().contains("lost"), refused.getMessage());
    }

    @Test
    void hungCommandNeverEndsUntilItsQueueCloses() throws Exception {
        SimDevice d = device(Map.of("fault.hangEvery", 1, "engines", 2));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        q.launch(spin(1, 10));
        Thread.sleep(30);
        assertTrue(r.done.isEmpty() && r.failed.isEmpty());
        q.close();
        Recorder r2 = new Recorder("b");
        HwQueue q2 = d.open("b", r2);
        q2.launch(new HwCommand(1, Command.spin(10, 2, 0)));
        Thread.sleep(30);
        // the hang fault hits every command, but the engines of the closed queue were freed: it started
        assertTrue(d.status().contains("1 queues"), d.status());
    }

    @Test
    void launchFromInsideTheCompletionCallbackWorks() throws Exception {
        SimDevice d = device(Map.of());
        List<Long> seen = new ArrayList<>();
        HwQueue[] q = new HwQueue[1];
        Object done = new Object();
        q[0] = d.open("chain", new HwQueueListener() {
            @Override
            public void completed(HwCommand c, long s, long e) {
                synchronized (seen) {
                    seen.add(c.sequence());
                }
                if (c.sequence() < 100) {
                    q[0].launch(spin(c.sequence() + 1, 5));
                } else {
                    synchronized (done) {
                        done.notifyAll();
                    }
                }
            }

            @Override
            public void failed(HwCommand c, Throwable cause) {
            }

            @Override
            public void lost(Throwable cause) {
            }
        });
        synchronized (done) {
            q[0].launch(spin(1, 5));
            done.wait(10_000);
        }
        synchronized (seen) {
            assertEquals(100, seen.size());
            assertEquals(100L, seen.getLast());
        }
    }

    @Test
    void thousandQueuesShareOneDeviceThread() throws Exception {
        SimDevice d = device(Map.of("engines", 8));
        int threadsBefore = Thread.activeCount();
        List<Recorder> recs = new ArrayList<>();
        for (int k = 0; k < 1000; k++) {
            Recorder r = new Recorder("q" + k);
            recs.add(r);
            HwQueue q = d.open("q" + k, r);
            for (long i = 1; i <= 100; i++) {
                q.launch(spin(i, 0));
            }
        }
        for (Recorder r : recs) {
            assertEquals(100, r.awaitDone(100).size());
        }
        assertTrue(Thread.activeCount() - threadsBefore <= 1, "no thread per queue");
    }

    @Test
    void badConfigurationNamesKeyValueAndRange() {
        Map<String, Object> bad = new HashMap<>();
        bad.put("engines", 0);
        assertMessage(() -> SimSettings.from(bad, "x"), "engines 0", "[1, 1000000]");
        assertMessage(() -> SimSettings.from(Map.of("maxLevel", 4), "x"), "maxLevel 4", "[1, 3]");
        assertMessage(() -> SimSettings.from(Map.of("lv2Mode", "drain"), "x"), "'drain'", "stall, flush");
        assertMessage(() -> SimSettings.from(Map.of("id", "Sim 1"), "x"), "'Sim 1'", "lower-case");
        assertMessage(() -> SimSettings.from(Map.of("saveCostMicros", -1), "x"), "saveCostMicros -1", "[0, 10000000]");
        assertMessage(() -> SimSettings.from(Map.of("engines", "many"), "x"), "'many'", "whole number");
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable e, String... parts) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        for (String p : parts) {
            assertTrue(x.getMessage().contains(p), "'" + x.getMessage() + "' should contain '" + p + "'");
        }
    }
}
