package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.api.Command;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The device model: stream order, arbitration between queues, engines and memory, threads, re-entrancy. */
class SimDeviceModelTest extends SimTestSupport {

    @Test
    void commandsOfOneQueueRunInLaunchOrderBackToBackForExactlyTheirDuration() throws Exception {
        SimDevice d = device(Map.of("engines", 4, "launchCostMicros", 0));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        long[] launched = new long[5];
        for (int i = 0; i < 5; i++) {
            q.launch(spin(i + 1, 2000));
            launched[i] = System.nanoTime(); // launched by now at the latest
        }
        List<Recorder.Done> done = r.awaitReported(5);
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), r.doneSequences());
        int backToBack = 0;
        for (int i = 0; i < 5; i++) {
            Recorder.Done x = done.get(i);
            assertEquals(2000 * US, x.nanos(), "virtual time: exactly 2000 us");
            assertTrue(x.receivedAt() >= x.end(), "reported only once the real clock passed the end: " + x);
            if (i > 0) {
                long before = done.get(i - 1).end();
                // never beside the one before it; launched before it ended (so on any machine that is
                // not stalled for milliseconds between two launches), the moment it ends
                assertTrue(x.start() >= before, "a stream runs one command at a time: " + done);
                if (launched[i] < before) {
                    assertEquals(before, x.start(), "launched before the previous one ended, started as it ended: " + done);
                    backToBack++;
                }
            }
        }
        assertTrue(backToBack >= 2, "back to back at least twice (launches microseconds apart, commands of 2 ms): " + backToBack + " " + done);
        assertTrue(r.callbackThreads.stream().allMatch(SimDevice.threadName(d.settings().id())::equals), r.callbackThreads.toString());
    }

    @Test
    void startIsLaunchPlusLaunchCostOnAnIdleDevice() throws Exception {
        SimDevice d = device(Map.of("launchCostMicros", 500));
        Recorder r = new Recorder("a");
        HwQueue q = d.open("a", r);
        long before = System.nanoTime();
        q.launch(spin(1, 100));
        long after = System.nanoTime();
        Recorder.Done x = r.awaitReported(1).getFirst();
        assertTrue(x.start() >= before + 500 * US && x.start() <= after + 500 * US, "start " + x.start() + " not in launch + 500 us");
    }

    @Test
    void twoQueuesOnOneEngineTakeTurnsRoundRobin() throws Exception {
        SimDevice d = device(Map.of());
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        Recorder c = new Recorder("c");
        HwQueue qa = d.open("a", a);
        HwQueue qb = d.open("b", b);
        HwQueue qc = d.open("c", c);
        // c holds the engine while a and b fill up, so that both are waiting when it frees
        qc.launch(spin(1, 50_000));
        for (long i = 1; i <= 4; i++) {
            qa.launch(spin(i, 200));
        }
        for (long i = 1; i <= 4; i++) {
            qb.launch(spin(i, 200));
        }
        long launched = System.nanoTime();
        Recorder.Done blocker = c.awaitReported(1).getFirst();
        assumeTrue(launched < blocker.end(), "the test thread was held up for 50 ms; the precondition does not hold");
        List<Recorder.Done> all = new ArrayList<>(a.awaitReported(4));
        all.addAll(b.awaitReported(4));
        all.sort(Comparator.comparingLong(Recorder.Done::start));
        assertEquals(List.of("a", "b", "a", "b", "a", "b", "a", "b"), all.stream().map(Recorder.Done::queue).toList());
        assertEquals(blocker.end(), all.getFirst().start());
        for (int i = 1; i < all.size(); i++) {
            assertEquals(all.get(i - 1).end(), all.get(i).start(), "one engine, always busy: " + all);
        }
    }

    @Test
    void aHeadThatDoesNotFitIsSkippedNotWaitedFor() throws Exception {
        SimDevice d = device(Map.of("engines", 4, "memoryBytes", 8L << 30));
        Recorder x = new Recorder("x");
        Recorder y = new Recorder("y");
        Recorder m = new Recorder("m");
        Recorder z = new Recorder("z");
        HwQueue qx = d.open("x", x);
        HwQueue qy = d.open("y", y);
        HwQueue qm = d.open("m", m);
        HwQueue qz = d.open("z", z);
        qx.launch(spin(1, 30_000, 3, 6L << 30));
        long t0 = System.nanoTime();
        qy.launch(spin(1, 100, 2, 0));          // 2 engines: does not fit beside x
        qm.launch(spin(1, 100, 1, 4L << 30));   // 1 engine but 4 GiB: does not fit beside x
        qz.launch(spin(1, 100, 1, 1L << 30));   // fits: starts beside x although y and m come first
        long launched = System.nanoTime();
        Recorder.Done rx = x.awaitReported(1).getFirst();
        assumeTrue(launched < rx.end(), "the test thread was held up for 30 ms; the precondition does not hold");
        Recorder.Done rz = z.awaitReported(1).getFirst();
        Recorder.Done ry = y.awaitReported(1).getFirst();
        Recorder.Done rm = m.awaitReported(1).getFirst();
        assertTrue(rz.start() >= t0 && rz.end() <= rx.end(), "z ran beside x: " + rz + " " + rx);
        assertTrue(ry.start() >= rx.end(), "y waited for engines: " + ry + " " + rx);
        assertTrue(rm.start() >= rx.end(), "m waited for memory: " + rm + " " + rx);
    }

    @Test
    void commandsShareEnginesAndMemoryAsTheyFitNeverMore() throws Exception {
        // the DRF example's device: 9 engines, 18 GiB; A-type <1, 4 GiB>, B-type <3, 1 GiB>
        long gib = 1L << 30;
        SimDevice d = device(Map.of("engines", 9, "memoryBytes", 18 * gib));
        List<Recorder> recs = new ArrayList<>();
        for (int k = 0; k < 6; k++) {
            Recorder r = new Recorder("q" + k);
            recs.add(r);
            HwQueue q = d.open("q" + k, r);
            for (long i = 1; i <= 4; i++) {
                q.launch(k % 2 == 0 ? spin(i, 2000, 1, 4 * gib) : spin(i, 2000, 3, gib));
            }
        }
        List<Recorder.Done> all = new ArrayList<>();
        List<int[]> demand = new ArrayList<>();
        for (int k = 0; k < recs.size(); k++) {
            for (Recorder.Done x : recs.get(k).awaitReported(4)) {
                all.add(x);
                demand.add(k % 2 == 0 ? new int[] {1, 4} : new int[] {3, 1});
            }
        }
        int maxTogether = 0;
        for (Recorder.Done x : all) {
            int engines = 0;
            int memGib = 0;
            int together = 0;
            for (int j = 0; j < all.size(); j++) {
                Recorder.Done y = all.get(j);
                if (y.start() <= x.start() && x.start() < y.end()) {
                    engines += demand.get(j)[0];
                    memGib += demand.get(j)[1];
                    together++;
                }
            }
            assertTrue(engines <= 9, "engines over-committed at " + x.start() + ": " + engines);
            assertTrue(memGib <= 18, "memory over-committed at " + x.start() + ": " + memGib + " GiB");
            maxTogether = Math.max(maxTogether, together);
        }
        assertTrue(maxTogether >= 3, "spatial sharing: at most " + maxTogether + " commands ran together");
    }

    @Test
    void checkAcceptsOnlySpinsThatFitTheDevice() {
        SimDevice d = device(Map.of("engines", 2, "memoryBytes", 1000));
        HwQueue q = d.open("a", new Recorder("a"));
        q.check(Command.spin(10, 2, 1000));
        IllegalArgumentException kind = assertThrows(IllegalArgumentException.class, () -> q.check(new Command.Copy(0, 0, 8)));
        assertTrue(kind.getMessage().contains("'copy'") && kind.getMessage().contains("accepted on sim: spin, write, read, fill, launch"), kind.getMessage());
        IllegalArgumentException engines = assertThrows(IllegalArgumentException.class, () -> q.check(Command.spin(10, 3, 0)));
        assertTrue(engines.getMessage().contains("3 engines") && engines.getMessage().contains("has 2"), engines.getMessage());
        IllegalArgumentException memory = assertThrows(IllegalArgumentException.class, () -> q.check(Command.spin(10, 1, 1001)));
        assertTrue(memory.getMessage().contains("1001") && memory.getMessage().contains("1000"), memory.getMessage());
        // a launch that skipped check is refused at once instead of waiting forever
        HalException refused = assertThrows(HalException.class, () -> q.launch(new HwCommand(7, Command.spin(10, 3, 0))));
        assertTrue(refused.getMessage().contains("#7") && refused.getMessage().contains("3 engines"), refused.getMessage());
        assertThrows(HalException.class, () -> q.launch(new HwCommand(8, new Command.Memset(0, (byte) 0, 8))));
        assertEquals("sim", q.platform());
        assertEquals(d.settings().id(), q.deviceId());
        assertTrue(q.nativeHandle(dev.xq.hal.spi.StreamHandle.Hip.class).isEmpty());
        assertTrue(q.nativeHandle(dev.xq.hal.spi.StreamHandle.Cuda.class).isEmpty());
    }

    @Test
    void launchFromInsideTheCompletionCallbackWorks() throws Exception {
        SimDevice d = device(Map.of());
        List<Long> seen = new ArrayList<>();
        HwQueue[] q = new HwQueue[2];
        CountDownLatch done = new CountDownLatch(2);
        for (int k = 0; k < 2; k++) {
            int me = k;
            q[k] = d.open("chain" + k, new HwQueueListener() {
                @Override
                public void completed(HwCommand c, long s, long e) {
                    synchronized (seen) {
                        seen.add(c.sequence());
                    }
                    if (c.sequence() < 100) {
                        // launch on this queue and on the other one: both take the device lock from the device thread
                        q[me].launch(spin(c.sequence() + 1, 5));
                        q[1 - me].check(Command.spin(1));
                    } else {
                        done.countDown();
                    }
                }

                @Override
                public void failed(HwCommand c, Throwable cause) {
                }

                @Override
                public void lost(Throwable cause) {
                }
            });
        }
        q[0].launch(spin(1, 5));
        q[1].launch(spin(1, 5));
        assertTrue(done.await(10, TimeUnit.SECONDS), "chains stopped after " + seen.size() + " commands");
        synchronized (seen) {
            assertEquals(200, seen.size());
        }
    }

    @Test
    void aListenerThatThrowsDoesNotStopTheDevice() throws Exception {
        expectDeviceErrors = true;
        SimDevice d = device(Map.of());
        HwQueue bad = d.open("bad", new Recorder("bad") {
            @Override
            public synchronized void completed(HwCommand command, long startNanos, long endNanos) {
                throw new IllegalStateException("listener bug");
            }
        });
        Recorder good = new Recorder("good");
        HwQueue q = d.open("good", good);
        bad.launch(spin(1, 10));
        q.launch(spin(1, 10));
        q.launch(spin(2, 10));
        assertEquals(List.of(1L, 2L), good.awaitReported(2).stream().map(Recorder.Done::sequence).toList());
        synchronized (deviceErrors) {
            assertEquals(1, deviceErrors.size(), deviceErrors.toString());
            assertTrue(deviceErrors.getFirst().contains("listener bug"), deviceErrors.toString());
        }
    }

    @Test
    void thousandQueuesShareOneDeviceThread() throws Exception {
        SimDevice d = device(Map.of("engines", 8));
        String name = SimDevice.threadName(d.settings().id());
        int threadsBefore = Thread.activeCount();
        List<Recorder> recs = new ArrayList<>();
        List<HwQueue> queues = new ArrayList<>();
        for (int k = 0; k < 1000; k++) {
            Recorder r = new Recorder("q" + k);
            recs.add(r);
            queues.add(d.open("q" + k, r));
        }
        for (long i = 1; i <= 100; i++) {
            for (HwQueue q : queues) {
                q.launch(spin(i, 0));
            }
        }
        List<Long> expected = java.util.stream.LongStream.rangeClosed(1, 100).boxed().toList();
        for (Recorder r : recs) {
            r.awaitReported(100);
            assertEquals(expected, r.doneSequences(), r.name);
        }
        long deviceThreads = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).count();
        assertEquals(1, deviceThreads, "one thread per device");
        assertTrue(Thread.activeCount() <= threadsBefore + 1, "no thread per queue: " + threadsBefore + " -> " + Thread.activeCount());
        assertEquals(1000, d.openQueues());
        queues.forEach(HwQueue::close);
        assertEquals(0, d.openQueues());
        assertTrue(d.status().startsWith("1 device, 8 engines, Lv3"), d.status());
    }
}
