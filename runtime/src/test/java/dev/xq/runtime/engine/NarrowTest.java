package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueShare;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.spi.SpaceRule;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Space decided launch by launch: a best-effort queue whose process can be narrowed is narrowed,
 * not held, behind a preferred queue, leaving it the multiprocessors its launches fill; it gets
 * the whole device back when that queue is idle, unless its own commands are long; holds that
 * are not about a preferred queue stay holds.
 */
class NarrowTest {

    /** What the core logged at info. */
    private final List<String> logged = new CopyOnWriteArrayList<>();
    private final XqCore core = new XqCore(new RuntimeLog() {
        @Override
        public void info(String message) {
            logged.add(message);
        }

        @Override
        public void warn(String message) {
        }

        @Override
        public void error(String message, Throwable cause) {
        }
    });

    /** A process on the whole device under MPS: the latency-critical one (never held) or a narrowable one. */
    static class SpaceOwner extends ExternalQueueTest.Owner implements ExternalQueueShare {
        final boolean narrows;
        volatile int width;
        final List<Integer> reserves = new CopyOnWriteArrayList<>();
        final List<String> parts = new CopyOnWriteArrayList<>();

        @Override
        public void part(int index, int count) {
            parts.add(index + "/" + count);
        }

        @Override
        public void share(int offset, int width) {
            parts.add(offset + "+" + width + "/16");
        }

        String part() {
            return parts.isEmpty() ? "0/1" : parts.getLast();
        }

        SpaceOwner(boolean narrows, int width) {
            this.narrows = narrows;
            this.width = width;
        }

        @Override
        public int smSharePercent() {
            return 100;
        }

        @Override
        public boolean heldInTime() {
            return narrows; // the latency-critical one: never held
        }

        @Override
        public long holdBehindMicros() {
            return 0;
        }

        @Override
        public boolean narrows() {
            return narrows;
        }

        @Override
        public void narrow(int reserveSms) {
            reserves.add(reserveSms);
        }

        @Override
        public int widthSms() {
            return width;
        }

        @Override
        public int deviceSms() {
            return 132;
        }

        int reserve() {
            return reserves.isEmpty() ? 0 : reserves.getLast();
        }
    }

    /**
     * A latency-critical process the node narrows below wider ones of a higher priority
     * ({@code dev.xq.host} {@code mpsNarrowLatency}): never held in time, but narrowable.
     */
    static final class RankedOwner extends SpaceOwner {
        RankedOwner(int width) {
            super(true, width);
        }

        @Override
        public boolean heldInTime() {
            return false;
        }
    }

    @BeforeEach
    void start() {
        core.start();
        core.scheduler().register("hi", new SchedulerTest.Highest(), "test", 1);
        core.scheduler().select("hi", true);
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    private static ExternalCounters busy(long estimateNanos) {
        return new ExternalCounters(1, 4, 10, 9, 0, 9_000_000, estimateNanos, System.nanoTime());
    }

    private static boolean eventually(BooleanSupplier c) throws InterruptedException {
        return ExternalQueueTest.eventually(c);
    }

    /** Opens a best-effort and a preferred queue and gives both work: {best-effort, preferred}. */
    private ExternalQueue[] busyPair(String be, SpaceOwner beOwner, long beEstimate, String lc, SpaceOwner lcOwner, int lcPriority,
                                     long lcEstimate) {
        ExternalQueue b = open(be, 11, 1, beOwner);
        ExternalQueue l = open(lc, 12, lcPriority, lcOwner);
        beOwner.counters = busy(beEstimate);
        b.changed();
        lcOwner.counters = busy(lcEstimate);
        l.changed();
        return new ExternalQueue[] {b, l};
    }

    private ExternalQueue open(String name, long pid, int priority, ExternalQueueTest.Owner owner) {
        return core.open(new ExternalQueueSpec(name + "/default", "cuda0", pid + ":" + name, pid, List.of(new Hint.Priority(priority)), null),
                owner);
    }

    /**
     * {@code holdBesideNarrow} through the node, under a policy that decides space as hpf does: a
     * best-effort process named there ("triton"), narrowed beside an eager decoder (21
     * multiprocessors), is held in time while the decoder has
     * a request and narrowed again once the request is over; with nothing named it stays narrowed
     * through the requests, as before.
     */
    @Test
    void aProcessNamedToHoldBesideANarrowTenantIsHeldThroughItsRequests() throws Exception {
        use(new SpaceHighest(false, 24)); // as hpf beside a decoder: narrowed to leave 24 (the wide beats act on its narrowings)
        for (boolean named : new boolean[] {true, false}) {
            core.scheduler().holdBesideNarrow(named ? "triton" : "");
            SpaceOwner tri = new SpaceOwner(true, 132);
            SpaceOwner dec = new SpaceOwner(false, 21);
            ExternalQueue[] q = busyPair("triton", tri, 150_000, "decode", dec, 2, 20_000);
            int heldInRequest = 0;
            int narrowedInRequest = 0;
            int runningBetween = 0;
            for (int i = 0; i < 8; i++) {
                dec.counters = new ExternalCounters(1, 4, 10 + i, 9 + i, 0, 9_000_000, 20_000, System.nanoTime()); // a request arrives
                q[1].changed();
                if (eventually(() -> named ? tri.holding() && tri.reserve() == 0 : tri.reserve() == 24 && !tri.holding())) {
                    heldInRequest += tri.holding() && tri.reserve() == 0 ? 1 : 0;
                    narrowedInRequest += tri.reserve() == 24 && !tri.holding() ? 1 : 0;
                }
                dec.counters = new ExternalCounters(0, 0, 20 + i, 20 + i, 0, 9_000_000, 20_000, 0); // its request is over
                q[1].changed();
                Thread.sleep(15); // past the 10 ms an arrival counts as a request for (ArrivalGuards.RESERVE_REQUEST_NANOS)
                tri.counters = busy(150_000);
                q[0].changed();
                if (eventually(() -> !tri.holding())) {
                    runningBetween++; // on its part or (this policy, the decoder idle) on the whole device
                }
            }
            if (named) {
                assertEquals(8, heldInRequest, "named: held within each request: " + tri.held + " " + tri.reserves);
                assertTrue(tri.reserves.isEmpty() || !tri.reserves.contains(24), "named: never narrowed within a request: " + tri.reserves);
            } else {
                assertEquals(8, narrowedInRequest, "unnamed: narrowed within each request, not held: " + tri.held + " " + tri.reserves);
            }
            assertEquals(8, runningBetween, "let go between requests: " + tri.held + " " + tri.reserves);
            q[0].close();
            q[1].close();
        }
        core.scheduler().holdBesideNarrow("");
    }

    /**
     * {@code bestEffortBalanceRegion}: a GEMM process (20 ms commands) stays narrowed by a wide
     * preferred tenant's reserve (half of 132, 64) while that one is open, idle or not, so the
     * measured cut weighs its share kept by the 64 of 132 multiprocessors its rate alone is
     * measured on; Triton's short commands run on the whole device with the tenant idle and weigh
     * 1. Off (the default), nobody's share is weighed.
     */
    @Test
    void withTheRegionWeighedALongCommandProcessNarrowedByAReserveWeighsItsRegion() throws Exception {
        assertTrue(core.bestEffortBalanceRegion(), "on by default");
        try {
            SpaceOwner serve = new SpaceOwner(false, 132);
            SpaceOwner g = new SpaceOwner(true, 132);
            SpaceOwner t = new SpaceOwner(true, 132);
            ExternalQueue qs = open("serve", 13, 2, serve);
            ExternalQueue qg = open("gemm", 11, 1, g);
            ExternalQueue qt = open("triton", 12, 1, t);
            serve.counters = ExternalQueueTest.USED_IDLE;
            g.counters = new ExternalCounters(1, 1, 10, 10, 0, 200_000_000, 20_000_000, System.nanoTime());
            t.counters = new ExternalCounters(1, 1, 10, 10, 0, 1_600_000, 160_000, System.nanoTime());
            qs.changed();
            qg.changed();
            qt.changed();
            assertTrue(eventually(() -> g.reserve() == 64), "long commands narrowed beside the idle wide tenant: " + g.reserves);
            assertTrue(eventually(() -> {
                qg.changed();
                BestEffortBalance b = core.balance("cuda0");
                return b != null && Math.abs(b.regionWeight(11) - 64 / 132.0) < 1e-9 && b.regionWeight(12) == 1.0;
            }), "the GEMM's region weighed 64/132, Triton's 1: " + (core.balance("cuda0") == null ? "no balance"
                    : core.balance("cuda0").regionWeight(11) + " " + core.balance("cuda0").regionWeight(12)));
            core.bestEffortBalanceRegion(false);
            assertTrue(eventually(() -> {
                qg.changed();
                return core.balance("cuda0").regionWeight(11) == 1.0;
            }), "off: nothing weighed");
        } finally {
            core.bestEffortBalanceRegion(true);
        }
    }

    /**
     * {@code bestEffortBalanceRegionShort} (on by default): beside a busy eager decoder (21
     * multiprocessors, a reserve of 24) a training process of short commands is narrowed as well
     * as the GEMM process beside it, so its rate alone is measured on the same region for the time
     * it is narrowed (here all of it): it weighs 104/132 as the GEMM does, where session 118 weighed
     * it 1 and the cut favoured the GEMM. Off, it weighs 1 again.
     */
    @Test
    void aShortCommandProcessNarrowedBesideABusyTenantWeighsItsRegionForItsTimeNarrowed() throws Exception {
        assertTrue(core.bestEffortBalanceRegionShort(), "on by default");
        try {
            SpaceOwner serve = new SpaceOwner(false, 21);
            SpaceOwner g = new SpaceOwner(true, 132);
            SpaceOwner t = new SpaceOwner(true, 132);
            ExternalQueue qs = open("serve", 13, 2, serve);
            ExternalQueue qg = open("gemm", 11, 1, g);
            ExternalQueue qt = open("train", 12, 1, t);
            serve.counters = busy(50_000);
            g.counters = new ExternalCounters(1, 1, 10, 10, 0, 200_000_000, 20_000_000, System.nanoTime());
            t.counters = busy(200_000);
            qs.changed();
            qg.changed();
            qt.changed();
            assertTrue(eventually(() -> g.reserve() == 24 && t.reserve() == 24), "both narrowed beside the busy decoder: " + g.reserves + " " + t.reserves);
            double region = 104 / 132.0;
            assertTrue(eventually(() -> {
                qg.changed();
                BestEffortBalance b = core.balance("cuda0");
                return b != null && Math.abs(b.regionWeight(11) - region) < 1e-9 && Math.abs(b.regionWeight(12) - region) < 0.02;
            }), "the GEMM and the trainer both weighed about 104/132: " + (core.balance("cuda0") == null ? "no balance"
                    : core.balance("cuda0").regionWeight(11) + " " + core.balance("cuda0").regionWeight(12)));
            core.bestEffortBalanceRegionShort(false);
            assertTrue(eventually(() -> {
                qg.changed();
                BestEffortBalance b = core.balance("cuda0");
                return Math.abs(b.regionWeight(11) - region) < 1e-9 && b.regionWeight(12) == 1.0;
            }), "off: the trainer weighs 1, the GEMM its region: " + core.balance("cuda0").regionWeight(11) + " "
                    + core.balance("cuda0").regionWeight(12));
        } finally {
            core.bestEffortBalanceRegionShort(true);
        }
    }

    /**
     * {@code bestEffortOneFrame} (off by default): a GEMM process narrowed by an idle wide tenant's
     * reserve (64 of 132) and Triton without one (short commands, nothing to hold them behind)
     * get halves laid out one after the other: the GEMM, of long commands, first, on half its
     * region (multiprocessors 0-31), Triton from there to the end of the device (4 of its 16
     * sixteenths on: 32-127), whatever their pids' order. Off, each is given its sixteenths of its
     * own region in pid order: Triton 0-63 over the GEMM's 32-63, 64-131 idle.
     */
    @Test
    void partsBesideDifferentReservesAreLaidOutInOneFrame() throws Exception {
        assertFalse(core.bestEffortOneFrame(), "off by default");
        core.bestEffortOneFrame(true);
        core.bestEffortDeviceFrame(false); // it goes before one frame
        try {
            SpaceOwner serve = new SpaceOwner(false, 132);
            SpaceOwner g = new SpaceOwner(true, 132);
            SpaceOwner t = new SpaceOwner(true, 132);
            ExternalQueue qs = open("serve", 13, 2, serve);
            ExternalQueue qt = open("triton", 11, 1, t);
            ExternalQueue qg = open("gemm", 12, 1, g);
            serve.counters = ExternalQueueTest.USED_IDLE;
            g.counters = new ExternalCounters(1, 1, 10, 10, 0, 200_000_000, 20_000_000, System.nanoTime());
            t.counters = new ExternalCounters(1, 1, 10, 10, 0, 1_600_000, 160_000, System.nanoTime());
            qs.changed();
            qg.changed();
            qt.changed();
            assertTrue(eventually(() -> {
                qg.changed();
                return g.reserve() == 64 && t.reserve() == 0;
            }), "the GEMM narrowed, Triton not: " + g.reserves + " " + t.reserves);
            // the GEMM on 32 of 132 (24 %), Triton on 96 (72 %), as the interposer reckons them
            assertTrue(eventually(() -> {
                qg.changed();
                return g.part().equals("0+8/16") && t.part().equals("4+12/16")
                        && core.find(qg.handle()).orElseThrow().status().smSharePercent() == 24
                        && core.find(qt.handle()).orElseThrow().status().smSharePercent() == 72;
            }), "one frame: " + g.parts + " " + t.parts);
            core.bestEffortOneFrame(false);
            assertTrue(eventually(() -> {
                qg.changed();
                return t.part().equals("0+8/16") && g.part().equals("8+8/16");
            }), "off: each its own region's sixteenths, in pid order: " + g.parts + " " + t.parts);
        } finally {
            core.bestEffortOneFrame(false);
            core.bestEffortDeviceFrame(true);
        }
    }

    /**
     * The cut read in sixteenths of the device ({@link XqCore#bestEffortDeviceFrame}): beside a
     * wide tenant's reserve, a GEMM process and Triton at equal parts get 0-63 (the whole of what
     * the reserve leaves the GEMM, 48 % of the device) and 64-131 (over the reserve), where each
     * one's own sixteenths gave the GEMM 24 %.
     */
    @Test
    void partsInSixteenthsOfTheDeviceGiveTheNarrowedProcessItsWholeRegion() throws Exception {
        assertTrue(core.bestEffortDeviceFrame(), "on by default");
        try {
            SpaceOwner serve = new SpaceOwner(false, 132);
            SpaceOwner g = new SpaceOwner(true, 132);
            SpaceOwner t = new SpaceOwner(true, 132);
            ExternalQueue qs = open("serve", 13, 2, serve);
            ExternalQueue qt = open("triton", 11, 1, t);
            ExternalQueue qg = open("gemm", 12, 1, g);
            serve.counters = ExternalQueueTest.USED_IDLE;
            g.counters = new ExternalCounters(1, 1, 10, 10, 0, 200_000_000, 20_000_000, System.nanoTime());
            t.counters = new ExternalCounters(1, 1, 10, 10, 0, 1_600_000, 160_000, System.nanoTime());
            qs.changed();
            qg.changed();
            qt.changed();
            assertTrue(eventually(() -> {
                qg.changed();
                return g.reserve() == 64 && t.reserve() == 0;
            }), "the GEMM narrowed, Triton not: " + g.reserves + " " + t.reserves);
            assertTrue(eventually(() -> {
                qg.changed();
                return g.part().equals("0+16/16") && t.part().equals("8+8/16")
                        && core.find(qg.handle()).orElseThrow().status().smSharePercent() == 48
                        && core.find(qt.handle()).orElseThrow().status().smSharePercent() == 48;
            }), "the device's sixteenths: " + g.parts + " " + t.parts);
            core.bestEffortDeviceFrame(false);
            assertTrue(eventually(() -> {
                qg.changed();
                return t.part().equals("0+8/16") && g.part().equals("8+8/16");
            }), "off: each its own region's sixteenths, in pid order: " + g.parts + " " + t.parts);
        } finally {
            core.bestEffortDeviceFrame(true);
        }
    }

    @Test
    void behindAPreferredQueueTheBestEffortOneIsNarrowedNotHeld() throws Exception {
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner serve = new SpaceOwner(false, 21);
        ExternalQueue[] q = busyPair("train", train, 200_000, "serve", serve, 2, 50_000);
        ExternalQueue qt = q[0];
        ExternalQueue qs = q[1];
        assertTrue(eventually(() -> train.reserve() == 24), "narrowed to leave serve its 21 SMs, rounded up to 24: " + train.reserves);
        // the limits of the same decision reach the owner just after the narrowing (ExternalQueueImpl.narrowTo)
        eventually(() -> train.config.threshold() == dev.xq.api.QueueConfig.MAX_THRESHOLD);
        assertFalse(train.holding(), "narrowed, not held: " + train.held);
        assertEquals(dev.xq.api.QueueConfig.MAX_THRESHOLD, train.config.threshold(), "no threshold while narrowed");
        assertEquals(core.aloneWindowMicros(), train.config.windowMicros(),
                "no wider queue above it: the alone window (nobody waits for its work)");
        assertEquals(XQueueStatus.Limits.NARROWED, core.find(qt.handle()).orElseThrow().status().limits());
        XQueueStatus st = core.find(qt.handle()).orElseThrow().status();
        assertEquals(QueueState.READY, st.state(), "it runs on");
        assertFalse(st.suspendedByScheduler());
        assertEquals(78, st.smSharePercent(), "(132 - 24) rounded down to 8s: 104 of 132 SMs");
        assertEquals(100, core.find(qs.handle()).orElseThrow().status().smSharePercent());

        serve.counters = ExternalQueueTest.USED_IDLE;
        qs.changed();
        assertTrue(eventually(() -> train.reserve() == 0), "the whole device again while serve is idle: " + train.reserves);
        assertEquals(100, core.find(qt.handle()).orElseThrow().status().smSharePercent());
        assertFalse(train.holding());
        assertEquals(core.defaults().threshold(), train.config.threshold(), "bounded again on the whole device beside serve");
    }

    /**
     * Two latency-critical processes of two priorities in one MPS server, the lower one narrowable
     * (a large batch below a CUDA graph): while the graph, wider than half the device, has work,
     * the batch runs on the device less half of it, and on the whole device again once the graph
     * is idle; it is never held nor throttled, whatever the policy decides for it. Below a narrow
     * one of a higher priority (an eager decoder) it is never narrowed.
     */
    @Test
    void aLatencyCriticalQueueBelowAWideBusyOneIsNarrowedToHalfAndNeverHeld() throws Exception {
        RankedOwner batch = new RankedOwner(132);
        SpaceOwner graph = new SpaceOwner(false, 132);
        ExternalQueue qb = open("batch", 11, 2, batch);
        ExternalQueue qg = open("graph", 12, 3, graph);
        assertTrue(((ExternalQueueImpl) core.find(qb.handle()).orElseThrow()).ranked());
        assertFalse(((ExternalQueueImpl) core.find(qb.handle()).orElseThrow()).narrows(), "not narrowed as a best-effort queue");
        batch.counters = busy(300_000);
        qb.changed();
        graph.counters = busy(1_700_000);
        qg.changed();
        assertTrue(eventually(() -> "8+8/16".equals(batch.part())), "the upper half of the device, the graph has the rest too: " + batch.parts);
        assertEquals(0, batch.reserve(), "no reserve: the device less one starts at its first multiprocessor, where best-effort queues run");
        assertEquals(48, core.find(qb.handle()).orElseThrow().status().smSharePercent(), "64 of 132");
        assertFalse(batch.holding(), "never held: " + batch.held);
        assertEquals(QueueConfig.MAX_THRESHOLD, batch.config.threshold(), "never throttled");
        assertEquals(0, batch.config.windowMicros(), "no window");
        assertTrue(batch.parts.stream().allMatch(p -> p.equals("8+8/16") || p.equals("0/1")), "no part among best-effort processes: " + batch.parts);

        graph.counters = ExternalQueueTest.USED_IDLE;
        qg.changed();
        assertTrue(eventually(() -> "0/1".equals(batch.part())), "the whole device again while the graph is idle: " + batch.parts);
        assertEquals(100, core.find(qb.handle()).orElseThrow().status().smSharePercent());
        assertFalse(batch.holding());
        assertTrue(batch.held.stream().noneMatch(h -> h), "held at no point: " + batch.held);

        // below a narrow latency-critical queue of a higher priority: the whole device throughout
        SpaceOwner decoder = new SpaceOwner(false, 24);
        ExternalQueue qd = open("decoder", 13, 3, decoder);
        decoder.counters = busy(40_000);
        qd.changed();
        batch.counters = new ExternalCounters(1, 4, 12, 11, 0, 9_000_000, 300_000, System.nanoTime());
        qb.changed();
        Thread.sleep(100);
        qd.changed();
        assertEquals("0/1", batch.part(), "a narrow queue above it leaves it the whole device: " + batch.parts);
        assertTrue(batch.held.stream().noneMatch(h -> h), "held at no point: " + batch.held);
        // the wide one back with work beside the decoder: narrowed again
        graph.counters = new ExternalCounters(1, 4, 11, 10, 0, 9_000_000, 1_700_000, System.nanoTime());
        qg.changed();
        assertTrue(eventually(() -> "8+8/16".equals(batch.part())), "narrowed for the graph again: " + batch.parts);
        assertFalse(batch.holding());
        // a narrow latency-critical queue below the wide one (a decoder of its own): never narrowed
        RankedOwner small = new RankedOwner(24);
        ExternalQueue qs = open("small", 14, 2, small);
        small.counters = busy(30_000);
        qs.changed();
        Thread.sleep(100);
        qg.changed();
        assertTrue(small.parts.stream().noneMatch(p -> p.equals("8+8/16")), "narrow itself: left on the whole device: " + small.parts);
        assertTrue(small.held.stream().noneMatch(h -> h), "held at no point: " + small.held);
    }

    /**
     * A latency-critical process stopped in its request (a debugger, job control: its counters,
     * frozen with it, still say it has work) holds no one for as long as it stays stopped: once its
     * counters have stood still for {@link ExternalQueueImpl#FROZEN_LOOK_NANOS} the node looks at
     * its state, on its own (no event comes from anyone), and takes it as idle; back, and its
     * counters moving, it has work again. A real process stands in for it, stopped and continued.
     */
    @Test
    void aLatencyCriticalProcessStoppedInItsRequestHoldsNoOne() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/self/stat")), "Linux /proc");
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            long pid = sleeper.pid();
            SpaceOwner train = new SpaceOwner(true, 132);
            SpaceOwner serve = new SpaceOwner(false, 21);
            ExternalQueue qt = open("train", 11, 1, train);
            ExternalQueue qs = open("serve", pid, 2, serve);
            train.counters = busy(200_000);
            qt.changed();
            serve.counters = busy(50_000);
            qs.changed();
            assertTrue(eventually(() -> train.reserve() == 24), "narrowed beside serve's request: " + train.reserves);
            Thread.sleep(2 * ExternalQueueImpl.FROZEN_LOOK_NANOS / 1_000_000);
            assertEquals(24, train.reserve(), "serve's counters standing still, its process running: still narrowed");
            ProcessStateTest.signal("-STOP", pid);
            assertTrue(eventually(() -> train.reserve() == 0), "serve stopped in its request: the whole device: " + train.reserves);
            assertEquals(QueueState.READY, core.find(qs.handle()).orElseThrow().status().state(), "its status shows its counters as they are");
            ProcessStateTest.signal("-CONT", pid);
            serve.counters = new ExternalCounters(1, 4, 11, 10, 0, 9_000_000, 50_000, System.nanoTime()); // back: one more done
            qs.changed();
            assertTrue(eventually(() -> train.reserve() == 24), "back and working: narrowed again: " + train.reserves);
        } finally {
            sleeper.destroyForcibly();
            sleeper.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * A best-effort process narrowed beside a preferred one and then stopped with work is held in
     * time, not left narrowed: continued, a narrowed queue launches what it had announced at once,
     * onto multiprocessors another process's turn may be using; held, it waits for the decision
     * after the loop's look finds it back, which narrows it again.
     */
    @Test
    void aStoppedNarrowedProcessIsHeldInTimeUntilItIsBack() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/self/stat")), "Linux /proc");
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            long pid = sleeper.pid();
            SpaceOwner train = new SpaceOwner(true, 132);
            SpaceOwner serve = new SpaceOwner(false, 21);
            ExternalQueue qt = open("train", pid, 1, train);
            ExternalQueue qs = open("serve", 12, 2, serve);
            train.counters = busy(200_000);
            qt.changed();
            serve.counters = busy(50_000);
            qs.changed();
            assertTrue(eventually(() -> train.reserve() == 24 && !train.holding()), "narrowed beside serve: " + train.reserves + " " + train.held);
            ProcessStateTest.signal("-STOP", pid);
            assertTrue(eventually(() -> {
                qs.changed();
                return train.holding() && train.reserve() == 0;
            }), "stopped with work: held in time on the whole device, not narrowed: " + train.reserves + " " + train.held);
            ProcessStateTest.signal("-CONT", pid);
            assertTrue(eventually(() -> {
                qs.changed();
                return train.reserve() == 24 && !train.holding();
            }), "back: narrowed again: " + train.reserves + " " + train.held + " seen stopped "
                    + ((ExternalQueueImpl) core.find(qt.handle()).orElseThrow()).seenStopped() + " asleep " + core.scheduler().dormantQueues()
                    + " view " + core.find(qt.handle()).orElseThrow().status());
        } finally {
            sleeper.destroyForcibly();
            sleeper.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * Narrowed beside a narrow preferred queue, a queue has the alone window while nothing wider
     * than half the device is open above it, and the narrowed window (500 us) once such a queue is
     * open, idle or not: that one holds it when it arrives and waits for what it left in flight.
     * 0 leaves it unbounded; a bad value is refused and changes nothing.
     */
    @Test
    void aNarrowedQueueKeepsLittleInFlightWhileAWideQueueAboveItMayArrive() throws Exception {
        assertEquals(XqCore.DEFAULT_NARROWED_WINDOW_MICROS, core.narrowedWindowMicros());
        assertThrows(IllegalArgumentException.class, () -> core.narrowedWindowMicros(-1));
        assertThrows(IllegalArgumentException.class, () -> core.narrowedWindowMicros(100_001));
        assertEquals(XqCore.DEFAULT_NARROWED_WINDOW_MICROS, core.narrowedWindowMicros(), "a bad value changes nothing");
        use(new SpaceHighest(true, 0)); // as hpf: space decided by the policy, placed at every decision
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner decode = new SpaceOwner(false, 16);
        ExternalQueue[] q = busyPair("train", train, 200_000, "decode", decode, 3, 40_000);
        assertTrue(eventually(() -> train.reserve() == 16), "narrowed beside the decoder: " + train.reserves);
        // the narrowing reaches the owner just before the window of the same decision (ExternalQueueImpl.narrowTo):
        // read at once, the window could still be the one before (CI, session 57: 300 for 2000)
        assertTrue(eventually(() -> train.config.windowMicros() == core.aloneWindowMicros()),
                "nothing wide above it: the alone window (" + train.config.windowMicros() + ")");

        SpaceOwner graph = new SpaceOwner(false, 132);
        ExternalQueue g = open("graph", 13, 2, graph);
        graph.counters = ExternalQueueTest.USED_IDLE;
        g.changed();
        q[1].changed();
        assertTrue(eventually(() -> train.config.windowMicros() == XqCore.DEFAULT_NARROWED_WINDOW_MICROS),
                "a graph of the whole device above it, idle: the narrowed window; " + train.config);
        assertEquals(dev.xq.api.QueueConfig.MAX_THRESHOLD, train.config.threshold());
        assertTrue(train.reserve() > 0 && !train.holding(), "still narrowed, not held: " + train.reserves);
        assertEquals(XQueueStatus.Limits.NARROWED, core.find(q[0].handle()).orElseThrow().status().limits());

        core.narrowedWindowMicros(0);
        decode.counters = ExternalQueueTest.USED_IDLE;
        q[1].changed();
        assertTrue(eventually(() -> train.reserve() == 0), "widened while the decoder is idle: " + train.reserves);
        decode.counters = busy(40_000);
        q[1].changed();
        assertTrue(eventually(() -> train.reserve() > 0), "narrowed again: " + train.reserves);
        assertTrue(eventually(() -> train.config.windowMicros() == 0), "0: unbounded while narrowed; " + train.config);

        g.close();
        core.narrowedWindowMicros(XqCore.DEFAULT_NARROWED_WINDOW_MICROS);
        q[1].changed();
        assertTrue(eventually(() -> train.config.windowMicros() == core.aloneWindowMicros()),
                "the graph gone: the alone window again; " + train.config);
    }

    @Test
    void behindABusyTenantThatFillsTheDeviceShortCommandsAreHeldLongOnesLeftHalf() throws Exception {
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner graph = new SpaceOwner(false, 132);
        busyPair("train", train, 200_000, "graph", graph, 2, 800_000);
        assertTrue(eventually(train::holding), "held in time behind a busy graph of the whole device: " + train.held);
        assertTrue(train.reserves.isEmpty() || train.reserve() == 0, "not narrowed: " + train.reserves);
        assertEquals(core.defaults().threshold(), train.config.threshold(), "its in-flight bound applies while held");

        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner graph2 = new SpaceOwner(false, 132);
        busyPair("gemm", gemm, 21_000_000, "graph2", graph2, 2, 800_000);
        assertTrue(eventually(() -> gemm.reserve() == 64), "long commands: at most half of 132, in 8s: " + gemm.reserves);
        assertFalse(gemm.holding(), "narrowed, not held: a hold cannot cut a 21 ms kernel: " + gemm.held);
    }

    /** A narrowable owner that also takes arrival guards (as the process host's sessions do). */
    static final class GuardedSpaceOwner extends SpaceOwner implements dev.xq.external.spi.ExternalQueueGuard {
        final List<long[]> guards = new CopyOnWriteArrayList<>();

        GuardedSpaceOwner() {
            super(true, 132);
        }

        @Override
        public void guard(long horizonNanos, long untilNanos) {
            guards.add(new long[] {horizonNanos, untilNanos});
        }
    }

    /**
     * The wide beats through the node: long commands (20 ms) behind a queue of the whole device
     * that arrives every 60 ms and works 3 ms are, once its beat is known, held while it works and
     * let go on the whole device, under its guard, between its requests; with wideBeats off they
     * stay narrowed to half the device.
     */
    @Test
    void behindAWideQueueOnABeatLongCommandsRunWholeBetweenItsRequestsAndAreHeldDuringThem() throws Exception {
        use(new SpaceHighest(true, 0)); // as hpf: space decided by the policy
        for (boolean on : new boolean[] {true, false}) {
            core.scheduler().wideBeats(on);
            GuardedSpaceOwner gemm = new GuardedSpaceOwner();
            SpaceOwner graph = new SpaceOwner(false, 132);
            ExternalQueue[] q = busyPair("gemm" + on, gemm, 20_000_000, "graph" + on, graph, 2, 1_500_000);
            ExternalQueue g = q[1];
            int wholeGuarded = 0;
            int heldWhileBusy = 0;
            int narrowed = 0;
            long completed = 9;
            long t0 = System.nanoTime();
            for (int i = 0; i < 16; i++) {
                long due = t0 + i * 60_000_000L;
                while (System.nanoTime() < due) {
                    Thread.sleep(1);
                }
                // its arrival as its owner stamps it: on the beat, however late this thread wakes
                graph.counters = new ExternalCounters(1, 1, 10 + i, 9 + i, 0, 9_000_000, 1_500_000, due);
                g.changed();
                Thread.sleep(3);
                if (i >= 6 && gemm.holding() && gemm.reserve() == 0) {
                    heldWhileBusy++;
                }
                graph.counters = new ExternalCounters(0, 0, 11 + i, 11 + i, 0, 9_000_000, 1_500_000, 0);
                g.changed();
                completed += 2; // the long commands make progress
                gemm.counters = new ExternalCounters(1, 1, completed + 1, completed, 0, 9_000_000, 20_000_000, t0);
                q[0].changed();
                while (System.nanoTime() < due + 30_000_000L) {
                    Thread.sleep(1); // past its longest busy period (at most a quarter of the period): let go between requests
                }
                if (i >= 6) {
                    long[] last = gemm.guards.isEmpty() ? new long[2] : gemm.guards.getLast();
                    if (!gemm.holding() && gemm.reserve() == 0 && last[0] != 0) {
                        wholeGuarded++;
                    }
                    narrowed += gemm.reserve() > 0 ? 1 : 0;
                }
            }
            if (on) {
                assertTrue(wholeGuarded >= 3, "whole and guarded between requests in " + wholeGuarded + " of 10 cycles (held "
                        + heldWhileBusy + ", narrowed " + narrowed + "); reserves " + gemm.reserves);
                assertTrue(heldWhileBusy >= 3, "held, not narrowed, while the graph works in " + heldWhileBusy + " of 10");
            } else {
                assertEquals(0, wholeGuarded, "off: never whole beside the graph");
                assertEquals(10, narrowed, "off: narrowed throughout: " + gemm.reserves);
            }
            q[0].close();
            g.close();
        }
        core.scheduler().wideBeats(true);
    }

    /**
     * As above with an eager decoder beside the graph (as preferred, 20 multiprocessors wide, busy
     * throughout, no beat): between the graph's requests the long commands run on the device less
     * the decoder's reserve (24, in steps of 8), under the graph's guard, and are held while the
     * graph works; before, the decoder kept them narrowed to half the device throughout.
     */
    @Test
    void besideAWideBeatAndAnEagerDecoderLongCommandsLeaveOnlyTheDecodersReserve() throws Exception {
        use(new SpaceHighest(true, 0));
        GuardedSpaceOwner gemm = new GuardedSpaceOwner();
        SpaceOwner graph = new SpaceOwner(false, 132);
        SpaceOwner decoder = new SpaceOwner(false, 20);
        ExternalQueue[] q = busyPair("gemm", gemm, 20_000_000, "graph", graph, 2, 1_500_000);
        ExternalQueue g = q[1];
        long t0 = System.nanoTime();
        ExternalQueue dec = open("decoder", 13, 2, decoder);
        decoder.counters = new ExternalCounters(1, 1, 10, 9, 0, 9_000_000, 300_000, t0);
        dec.changed();
        int reserveGuarded = 0;
        int heldWhileBusy = 0;
        int half = 0;
        long completed = 9;
        for (int i = 0; i < 16; i++) {
            long due = t0 + i * 60_000_000L;
            while (System.nanoTime() < due) {
                Thread.sleep(1);
            }
            graph.counters = new ExternalCounters(1, 1, 10 + i, 9 + i, 0, 9_000_000, 1_500_000, due);
            g.changed();
            Thread.sleep(3);
            if (i >= 6 && gemm.holding() && gemm.reserve() == 0) {
                heldWhileBusy++;
            }
            graph.counters = new ExternalCounters(0, 0, 11 + i, 11 + i, 0, 9_000_000, 1_500_000, 0);
            g.changed();
            completed += 2;
            gemm.counters = new ExternalCounters(1, 1, completed + 1, completed, 0, 9_000_000, 20_000_000, t0);
            q[0].changed();
            decoder.counters = new ExternalCounters(1, 1, 10 + i, 9 + i, 0, 9_000_000, 300_000, t0); // busy throughout, one arrival
            dec.changed();
            while (System.nanoTime() < due + 30_000_000L) {
                Thread.sleep(1);
            }
            if (i >= 6) {
                long[] last = gemm.guards.isEmpty() ? new long[2] : gemm.guards.getLast();
                if (gemm.reserve() == 24 && last[0] != 0) {
                    reserveGuarded++;
                }
                half += gemm.reserve() == 64 ? 1 : 0;
            }
        }
        assertTrue(reserveGuarded >= 3, "on the device less the decoder's 24 and guarded between requests in " + reserveGuarded
                + " of 10 cycles (held " + heldWhileBusy + ", at half " + half + "); reserves " + gemm.reserves);
        assertTrue(heldWhileBusy >= 3, "held while the graph works in " + heldWhileBusy + " of 10; reserves " + gemm.reserves);
        q[0].close();
        g.close();
        dec.close();
    }

    /** hpf as a policy that decides space: SpaceRule with holdBehindWide as given, or a fixed narrowing. */
    static final class SpaceHighest implements Policy {
        final boolean holdBehindWide;
        final int fixedLeave;

        SpaceHighest(boolean holdBehindWide, int fixedLeave) {
            this.holdBehindWide = holdBehindWide;
            this.fixedLeave = fixedLeave;
        }

        @Override
        public String description() {
            return "test: highest priority first, deciding space";
        }

        @Override
        public boolean decidesSpace() {
            return true;
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            Decision d = new Decision(view);
            for (List<QueueView> device : view.queuesByDevice()) {
                int top = device.stream().filter(QueueView::runnable).mapToInt(QueueView::priority).max().orElse(Integer.MIN_VALUE);
                SpaceRule.Above above = new SpaceRule.Above(view, device);
                for (QueueView q : device) {
                    boolean run = q.priority() >= top;
                    if (!run && fixedLeave > 0 && view.space(q.handle()).narrowable()) {
                        d.narrow(q, fixedLeave);
                    } else {
                        SpaceRule.decide(d, view, above, q, !run, holdBehindWide);
                    }
                }
            }
            d.applyTo(view, actions);
        }
    }

    private int policies;

    private void use(Policy p) {
        String name = "space" + ++policies;
        core.scheduler().register(name, p, "test", 1 + policies);
        core.scheduler().select(name, true);
    }

    @Test
    void aPolicyThatDecidesSpaceIsFollowed() throws Exception {
        use(new SpaceHighest(false, 0));
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner graph = new SpaceOwner(false, 132);
        ExternalQueue[] q = busyPair("train", train, 200_000, "graph", graph, 2, 800_000);
        assertTrue(eventually(() -> train.reserve() == 64), "holdBehindWide off: narrowed to leave half: " + train.reserves);
        // settled narrowed, not held (the graph's arrival may hold it until its decision narrows it:
        // a full run of this class once read that hold, just after the narrowing)
        assertTrue(eventually(() -> !train.holding() && train.reserve() == 64), train.held.toString());
        Thread.sleep(50);
        assertFalse(train.holding(), "still narrowed, not held: " + train.held);
        graph.counters = ExternalQueueTest.USED_IDLE;
        q[1].changed();
        assertTrue(eventually(() -> train.reserve() == 0), "the whole device while graph is idle: " + train.reserves);
    }

    @Test
    void aPolicysOwnNarrowingAndHoldsAreTakenAsGiven() throws Exception {
        use(new SpaceHighest(true, 40));
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner serve = new SpaceOwner(false, 8);
        ExternalQueue[] q = busyPair("train", train, 200_000, "serve", serve, 2, 50_000);
        assertTrue(eventually(() -> train.reserve() == 40), "the policy's 40, not the rule's 8: " + train.reserves);
        q[0].close();
        use(new SpaceHighest(true, 0));
        SpaceOwner train2 = new SpaceOwner(true, 132);
        SpaceOwner graph = new SpaceOwner(false, 132);
        busyPair("train2", train2, 200_000, "graph", graph, 3, 800_000);
        assertTrue(eventually(train2::holding), "the policy's hold is a hold: " + train2.held);
        assertTrue(train2.reserves.isEmpty() || train2.reserve() == 0, train2.reserves.toString());
    }

    @Test
    void aQueueOfLongCommandsStaysNarrowedWhileAPreferredQueueIsOpen() throws Exception {
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner serve = new SpaceOwner(false, 0); // no launches yet: the least reserve, 8
        ExternalQueue[] q = busyPair("gemm", gemm, 21_000_000, "serve", serve, 2, 50_000);
        ExternalQueue qg = q[0];
        ExternalQueue qs = q[1];
        assertTrue(eventually(() -> gemm.reserve() == 8), "narrowed: " + gemm.reserves);
        serve.width = 40;
        serve.counters = ExternalQueueTest.USED_IDLE;
        qs.changed();
        assertTrue(eventually(() -> gemm.reserve() == 40 && !core.find(qg.handle()).orElseThrow().status().suspendedByScheduler()),
                "resumed, but 21 ms kernels stay off serve's 40 SMs while serve is open: " + gemm.reserves);
        qs.close();
        serve.counters = ExternalQueueTest.USED_IDLE;
        gemm.counters = busy(21_000_001);
        qg.changed();
        // nothing preferred is open now: the next decision that touches gemm gives it the whole device
        ExternalQueue again = open("serve2", 13, 2, new SpaceOwner(false, 16));
        again.close();
        assertFalse(gemm.holding(), "never held: " + gemm.held);
    }

    @Test
    void anOperatorsSuspendStillHoldsANarrowedQueue() throws Exception {
        SpaceOwner train = new SpaceOwner(true, 64);
        SpaceOwner serve = new SpaceOwner(false, 30);
        ExternalQueue[] q = busyPair("train", train, 200_000, "serve", serve, 2, 50_000);
        ExternalQueue qt = q[0];
        ExternalQueue qs = q[1];
        assertTrue(eventually(() -> train.reserve() == 32), "narrowed: " + train.reserves);
        core.find(qt.handle()).orElseThrow().suspend();
        assertTrue(train.holding(), "held by the operator: " + train.held);
        assertEquals(QueueState.SUSPENDED, core.find(qt.handle()).orElseThrow().status().state());
        core.find(qt.handle()).orElseThrow().resume();
        assertFalse(train.holding(), "let go, still narrowed: " + train.held);
        qt.close();
        assertEquals(0, train.reserve(), "a closed queue is never left narrowed: " + train.reserves);
    }

    @Test
    void bestEffortProcessesWithWorkSplitWhatTheyMayUse() throws Exception {
        core.bestEffortWidths(false); // the equal parts are this test's subject (by width: besideANarrowTenant...)
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        ExternalQueue qt = open("train", 11, 1, train);
        ExternalQueue qg = open("gemm", 12, 1, gemm);
        train.counters = busy(200_000);
        qt.changed();
        gemm.counters = busy(21_000_000);
        qg.changed();
        assertTrue(eventually(() -> train.part().equals("0+8/16") && gemm.part().equals("8+8/16")),
                "halves, in pid order: " + train.parts + " " + gemm.parts);
        assertEquals(48, core.find(qt.handle()).orElseThrow().status().smSharePercent(), "64 of 132 multiprocessors");
        assertEquals(48, core.find(qg.handle()).orElseThrow().status().smSharePercent(), "64 of the 68 left, rounded down to 8");
        qt.close();
        gemm.counters = busy(21_000_000);
        qg.changed();
        assertTrue(eventually(() -> gemm.part().equals("0/1")), "alone again, all of it: " + gemm.parts);
        assertFalse(train.holding() || gemm.holding());
    }

    @Test
    void equalPartsLeaveNoMultiprocessorIdleWhereASplitByCountWould() throws Exception {
        core.bestEffortWidths(false); // equal parts, not parts by width
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner serve = new SpaceOwner(false, 0); // no launches yet: the least reserve, 8
        ExternalQueue qt = open("train", 11, 1, train);
        ExternalQueue qg = open("gemm", 12, 1, gemm);
        ExternalQueue qs = open("serve", 13, 2, serve);
        serve.counters = busy(50_000);
        qs.changed();
        train.counters = busy(200_000);
        qt.changed();
        gemm.counters = busy(21_000_000);
        qg.changed();
        assertTrue(eventually(() -> train.reserve() == 8 && gemm.reserve() == 8), "narrowed beside serve: " + train.reserves);
        // 124 left, 120 in steps of 8: halves by count are 56 and 56; of their own size 56 and 64
        assertTrue(eventually(() -> core.find(qg.handle()).orElseThrow().status().smSharePercent() == 64 * 100 / 132),
                "the last part takes what the first leaves: " + gemm.parts);
        assertEquals(56 * 100 / 132, core.find(qt.handle()).orElseThrow().status().smSharePercent());
        // weights off: the split by count of before
        core.bestEffortWeights(false);
        qt.changed();
        assertTrue(eventually(() -> train.part().equals("0/2") && gemm.part().equals("1/2")), "by count: " + train.parts);
        assertEquals(56 * 100 / 132, core.find(qg.handle()).orElseThrow().status().smSharePercent());
    }

    /**
     * bestEffortWidths: beside a narrow tenant's reserve (no gap), a trainer's short steps and a
     * GEMM's long kernels are cut by their widths, seven sixteenths and nine, not halves (the
     * default); off, halves.
     */
    @Test
    void besideANarrowTenantWithoutAGapTheWidthsCutWhenAsked() throws Exception {
        core.bestEffortBalance(false); // the node's cut by width and by gaps, which the measured cut (on by default) replaces where no gap is found
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner serve = new SpaceOwner(false, 0); // the least reserve, 8
        ExternalQueue qt = open("train", 11, 1, train);
        ExternalQueue qg = open("gemm", 12, 1, gemm);
        ExternalQueue qs = open("serve", 13, 2, serve);
        serve.counters = busy(50_000);
        qs.changed();
        train.counters = busy(200_000);
        qt.changed();
        gemm.counters = busy(21_000_000);
        qg.changed();
        assertTrue(core.bestEffortWidths(), "on by default");
        assertTrue(eventually(() -> train.part().equals("0+7/16") && gemm.part().equals("7+9/16")),
                "by width: seven sixteenths for the trainer, nine for the GEMMs: " + train.parts + " " + gemm.parts);
        // of the 120 multiprocessors the reserve leaves: 7 sixteenths 52 -> 48, the GEMMs the other 72
        // (eventually: the parts can be given a decision before the reserve is)
        assertTrue(eventually(() -> core.find(qt.handle()).orElseThrow().status().smSharePercent() == 48 * 100 / 132
                && core.find(qg.handle()).orElseThrow().status().smSharePercent() == 72 * 100 / 132),
                "48 and 72 of 132: " + core.find(qt.handle()).orElseThrow().status().smSharePercent() + " "
                        + core.find(qg.handle()).orElseThrow().status().smSharePercent());
        core.bestEffortWidths(false);
        qt.changed();
        assertTrue(eventually(() -> train.part().equals("0+8/16") && gemm.part().equals("8+8/16")),
                "off: halves: " + train.parts + " " + gemm.parts);
        core.bestEffortWidths(true);
        qt.changed();
        assertTrue(eventually(() -> train.part().equals("0+7/16") && gemm.part().equals("7+9/16")),
                "on again: by width: " + train.parts + " " + gemm.parts);
    }

    @Test
    void partsAreWeighedByWhatFitsTheGapOfAWideTenant() throws Exception {
        core.bestEffortBalance(false); // the node's cut by width and by gaps, which the measured cut (on by default) replaces where no gap is found
        core.bestEffortWeights(true);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner triton = new SpaceOwner(true, 132);
        ExternalQueue qg = open("gemm", 11, 1, gemm);
        ExternalQueue qt = open("triton", 12, 1, triton);
        gemm.counters = busy(21_300_000);
        qg.changed();
        triton.counters = busy(150_000);
        qt.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+9/16") && triton.part().equals("9+7/16")),
                "nothing above them: by width (the default): " + gemm.parts + " " + triton.parts);
        // a tenant of the whole device opens above them (a large batch on a beat): the cut by width
        // goes at once, kernels in flight or not, and until the wide beats find a gap the parts are
        // equal (by width there the GEMMs did 0.76-0.83 of native sharing, equal and then by the gap
        // 1.00-1.01: H200, session 56)
        SpaceOwner bulk = new SpaceOwner(false, 132);
        ExternalQueue qb = open("bulk", 13, 2, bulk);
        bulk.counters = ExternalQueueTest.USED_IDLE;
        qb.changed();
        qg.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+8/16") && triton.part().equals("8+8/16")),
                "beside a wide tenant, no gap yet: halves: " + gemm.parts + " " + triton.parts);
        // the wide beats found 84 ms between its requests for the GEMMs
        ExternalQueueImpl g = (ExternalQueueImpl) core.find(qg.handle()).orElseThrow();
        g.fitGap(84_000_000L, System.nanoTime());
        qg.changed();
        qt.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+10/16") && triton.part().equals("10+6/16")),
                "ten sixteenths for the GEMMs (two fit the gap), the rest for Triton: " + gemm.parts + " " + triton.parts);
        assertEquals(80 / 132.0, g.partFraction(), 1e-9, "ten sixteenths of 128: 80 of the device's 132 multiprocessors");
        assertFalse(triton.parts.subList(triton.parts.indexOf("8+8/16"), triton.parts.size()).contains("9+7/16"),
                "never by width again beside the wide tenant: " + triton.parts);
        core.bestEffortWeights(false);
        qg.changed();
        assertTrue(eventually(() -> gemm.part().equals("0/2") && triton.part().equals("1/2")), "off: halves again: " + gemm.parts);
    }

    /**
     * A stopped process (SIGSTOP: a batch system's suspend, job control) gives its part up: its
     * counters, frozen with it, still say it has work, but the others split the device without it
     * (one left: all of it) until it is back. A real process stands in for it, stopped and
     * continued.
     */
    @Test
    void aStoppedProcessGivesItsPartUpUntilItIsBack() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/self/stat")), "Linux /proc");
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            long pid = sleeper.pid();
            SpaceOwner train = new SpaceOwner(true, 132);
            SpaceOwner gemm = new SpaceOwner(true, 132);
            ExternalQueue qt = open("train", pid, 1, train);
            ExternalQueue qg = open("gemm", 12, 1, gemm);
            train.counters = busy(200_000);
            qt.changed();
            gemm.counters = busy(21_000_000);
            qg.changed();
            assertTrue(eventually(() -> train.part().endsWith("+7/16") && gemm.part().endsWith("+9/16")),
                    "by width: " + train.parts + " " + gemm.parts);
            ProcessStateTest.signal("-STOP", pid);
            assertTrue(eventually(() -> ProcessState.stopped(pid)), "stopped");
            Thread.sleep(2 * ExternalQueueImpl.STOPPED_LOOK_NANOS / 1_000_000);
            qg.changed();
            assertTrue(eventually(() -> {
                qg.changed();
                return gemm.part().equals("0/1");
            }), "the trainer stopped, its counters still busy: the GEMMs have all of it: " + gemm.parts);
            ProcessStateTest.signal("-CONT", pid);
            Thread.sleep(2 * ExternalQueueImpl.STOPPED_LOOK_NANOS / 1_000_000);
            assertTrue(eventually(() -> {
                qt.changed();
                return train.part().endsWith("+7/16") && gemm.part().endsWith("+9/16");
            }), "back: by width again: " + train.parts + " " + gemm.parts);
        } finally {
            sleeper.destroyForcibly();
            sleeper.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * Without a wide tenant above them, a cut by width in force gives way to a new cut (a process
     * that changes class) once nothing of theirs is in flight, as any new cut for the same
     * processes: a part moved onto multiprocessors where another's kernel still runs slows it (and
     * at the latest after {@link XqCore#UNDRAINED_RECUT_NANOS}: the next test).
     */
    @Test
    void aCutByWidthChangesOnlyWhenTheyAreDrained() throws Exception {
        core.bestEffortBalance(false); // the node's cut by width and by gaps, which the measured cut (on by default) replaces where no gap is found
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner triton = new SpaceOwner(true, 132);
        ExternalQueue qg = open("gemm", 11, 1, gemm);
        ExternalQueue qt = open("triton", 12, 1, triton);
        gemm.counters = busy(21_300_000);
        qg.changed();
        triton.counters = busy(150_000);
        qt.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+9/16") && triton.part().equals("9+7/16")),
                "by width: " + gemm.parts + " " + triton.parts);
        // Triton's commands now read long (2 ms): alike, halves; not while kernels are in flight
        triton.counters = busy(2_000_000);
        qt.changed();
        Thread.sleep(100);
        assertEquals("9+7/16", triton.part(), "not while kernels run on the cut: " + triton.parts);
        gemm.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        triton.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 2_000_000, System.nanoTime());
        qg.changed();
        qt.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+8/16") && triton.part().equals("8+8/16")),
                "drained: halves for two long-command processes: " + gemm.parts + " " + triton.parts);
    }

    /**
     * Processes that are never all drained at once (each always has a kernel in flight: a GEMM,
     * Triton and a trainer beside each other, no wide tenant above) take a new cut by width all the
     * same once it has been wanted for {@link XqCore#UNDRAINED_RECUT_NANOS}: the first cut, weighed
     * on a first estimate, stood for a whole run before (H200, session 77: a trainer on 32
     * multiprocessors at 0.53 of native sharing). Not sooner, and not when it stops being wanted.
     */
    @Test
    void aCutByWidthNeverDrainedIsTakenOnceWantedLongEnough() throws Exception {
        core.bestEffortBalance(false); // the node's cut by width and by gaps, which the measured cut (on by default) replaces where no gap is found
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner triton = new SpaceOwner(true, 132);
        ExternalQueue qg = open("gemm", 11, 1, gemm);
        ExternalQueue qt = open("triton", 12, 1, triton);
        gemm.counters = busy(21_300_000);
        qg.changed();
        triton.counters = busy(150_000);
        qt.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+9/16") && triton.part().equals("9+7/16")),
                "by width: " + gemm.parts + " " + triton.parts);
        // Triton's commands read long for a moment (2 ms), kernels in flight throughout, then short again
        triton.counters = busy(2_000_000);
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < BestEffortSpace.UNDRAINED_RECUT_NANOS / 2) {
            qt.changed();
            Thread.sleep(20);
        }
        assertEquals("9+7/16", triton.part(), "wanted for less than the bound: the cut stands: " + triton.parts);
        triton.counters = busy(150_000);
        qt.changed();
        Thread.sleep(50);
        // long again: the wait begins anew, so half the bound later the cut still stands
        triton.counters = busy(2_000_000);
        t0 = System.nanoTime();
        while (System.nanoTime() - t0 < BestEffortSpace.UNDRAINED_RECUT_NANOS * 6 / 10) {
            qt.changed();
            Thread.sleep(20);
        }
        assertEquals("9+7/16", triton.part(), "wanted anew: the cut stands: " + triton.parts);
        assertFalse(triton.parts.contains("8+8/16"), "never halves so far: " + triton.parts);
        // wanted on, never drained: taken after the bound
        assertTrue(eventually(() -> {
            qt.changed();
            return gemm.part().equals("0+8/16") && triton.part().equals("8+8/16");
        }), "taken with kernels in flight after the bound: halves: " + gemm.parts + " " + triton.parts);
        assertTrue(System.nanoTime() - t0 >= BestEffortSpace.UNDRAINED_RECUT_NANOS, "not before the bound");
    }

    @Test
    void aWeighedCutKeepsAProcesssLastCommandBetweenItsSteps() throws Exception {
        // the cut by the gap taken from halves (with widths on, a cut by width may come first and the
        // gap's waits for a drained moment: partsAreWeighedByWhatFitsTheGapOfAWideTenant)
        core.bestEffortWidths(false);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner train = new SpaceOwner(true, 132);
        ExternalQueue qg = open("gemm", 11, 1, gemm);
        ExternalQueue qt = open("train", 12, 1, train);
        gemm.counters = busy(22_000_000);
        qg.changed();
        train.counters = busy(60_000);
        qt.changed();
        ExternalQueueImpl g = (ExternalQueueImpl) core.find(qg.handle()).orElseThrow();
        g.fitGap(75_000_000L, System.nanoTime());
        qg.changed();
        // two 22 ms GEMMs fit 0.85 x 75 ms at 96 multiprocessors; the trainer's short steps keep most of their rate on 32
        assertTrue(eventually(() -> gemm.part().equals("0+12/16") && train.part().equals("12+4/16")),
                "12/4: " + gemm.parts + " " + train.parts);
        // the trainer between two steps: nothing ready, nothing in flight (its host side); counted as
        // a long-command process it would get ten sixteenths and the GEMMs one kernel a gap
        train.counters = ExternalQueueTest.USED_IDLE;
        qt.changed();
        // the GEMMs held and drained too (a new cut would be taken now)
        gemm.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 22_000_001, System.nanoTime());
        g.fitGap(75_000_000L, System.nanoTime());
        qg.changed();
        Thread.sleep(100);
        assertEquals("12+4/16", train.part(), "the cut stands: " + train.parts);
        assertFalse(train.parts.contains("10+6/16") || train.parts.contains("6+10/16"), "never cut the other way: " + train.parts);
    }

    @Test
    void aNewCutWaitsUntilNothingOfTheProcessesIsInFlight() throws Exception {
        // the cut by the gap taken from halves (with widths on, a cut by width may come first and the
        // gap's waits for a drained moment: partsAreWeighedByWhatFitsTheGapOfAWideTenant)
        core.bestEffortWidths(false);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        SpaceOwner train = new SpaceOwner(true, 132);
        ExternalQueue qg = open("gemm", 11, 1, gemm);
        ExternalQueue qt = open("train", 12, 1, train);
        gemm.counters = busy(22_000_000);
        qg.changed();
        train.counters = busy(60_000);
        qt.changed();
        ExternalQueueImpl g = (ExternalQueueImpl) core.find(qg.handle()).orElseThrow();
        g.fitGap(75_000_000L, System.nanoTime());
        qg.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+12/16")), "12/4: " + gemm.parts);
        // a wider gap: two GEMMs fit at ten sixteenths now, and the trainer would have six; kernels in flight
        gemm.counters = busy(21_300_000);
        g.fitGap(84_000_000L, System.nanoTime());
        qg.changed();
        qt.changed();
        // beside a wide tenant's gap (not a cut by width) the wait has no bound: kernels admitted by
        // their guards' estimates are not slowed by a part moved under them
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < BestEffortSpace.UNDRAINED_RECUT_NANOS + 200_000_000L) {
            g.fitGap(84_000_000L, System.nanoTime());
            qg.changed();
            qt.changed();
            Thread.sleep(20);
        }
        assertEquals("0+12/16", gemm.part(), "not while kernels run on the cut, however long: " + gemm.parts);
        // both held and drained
        gemm.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        train.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 60_000, System.nanoTime());
        g.fitGap(84_000_000L, System.nanoTime());
        qg.changed();
        qt.changed();
        assertTrue(eventually(() -> gemm.part().equals("0+10/16") && train.part().equals("10+6/16")),
                "the new cut, now: " + gemm.parts + " " + train.parts);
    }

    @Test
    void processesAlikeTakeTurnsOnAllOfItOneAGapPassedOnlyWithNothingInFlight() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner b = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        a.counters = busy(21_300_000);
        qa.changed();
        b.counters = busy(21_300_000);
        qb.changed();
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        assertTrue(eventually(() -> a.part().equals("0+8/16") && b.part().equals("8+8/16")), "no gap yet: halves: " + a.parts);
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        // 21.3 ms GEMMs in 0.85 x 85 ms: three fit at the whole width, one and a half each a gap by
        // turns; cut, two at ten sixteenths and one at six: as much, by an estimate scaled to widths
        // they never ran at. Turns at once, but kernels in flight on the halves: all held, none on turn
        assertTrue(eventually(() -> a.part().equals("0/1") && b.part().equals("0/1")), "turns: " + a.parts + " " + b.parts);
        Thread.sleep(150);
        qa.changed();
        qb.changed();
        Thread.sleep(50);
        assertTrue(ga.offTurn() && gb.offTurn(), "none on turn while kernels run on the halves");
        assertTrue(b.held.contains(true), "the other held when the turns began: " + b.held);
        // nothing in flight: the first process's turn, the other held
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        b.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        long asked = System.nanoTime(); // the turn's time begins after this (at the decision these events bring)
        qa.changed();
        qb.changed();
        long began = stableSince(() -> a.part().equals("0/1") && b.part().equals("0/1") && !ga.offTurn() && gb.offTurn(), 5);
        assertTrue(began > 0, "turns on all of it, the first one's: " + a.parts + " " + b.parts + " " + ga.offTurn() + " " + gb.offTurn());
        assertEquals(1.0, ga.partFraction(), 1e-9);
        // its kernels in flight: past its time the turn stays, never passed to the other while they
        // run; long overdue it is given up, the first held too (aTurnLongOverdueIsGivenUpOnceItsWorkEnds).
        // So the kernels go in flight before its time is up (drained then, it passes by rule) and
        // the look comes after its time and before overdue. Until session 123 the look came 140 ms
        // in against 95.5 ms overdue, and passed only because no decision came between the event
        // at ~90 ms and the look; a loaded CI machine (session 122's stop) delayed that event
        long turn = BestEffortSpace.turnNanos(21_300_000L, 85_000_000L);
        long overdue = turn * BestEffortSpace.TURN_OVERDUE_PERCENT / 100;
        a.counters = busy(21_300_000);
        boolean busyInTime = System.nanoTime() - asked < turn - 10_000_000L;
        long wait = asked + turn + 3_000_000L - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
        qa.changed();
        qb.changed();
        Thread.sleep(5);
        boolean othersOff = gb.offTurn();
        boolean kept = !ga.offTurn() && othersOff;
        boolean lookInTime = System.nanoTime() - asked < overdue - 5_000_000L;
        assumeTrue(kept || (busyInTime && (lookInTime || !othersOff)), "the machine too slow to tell");
        assertTrue(othersOff, "no turn for the other while its kernel runs");
        assertTrue(kept, "no turn while its kernel runs, past its time (" + turn / 1_000_000 + " ms), short of overdue");
        // nothing in flight again: the second one's turn, the first held at once
        int heldBefore = (int) a.held.stream().filter(h -> h).count();
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(eventually(() -> ga.offTurn() && !gb.offTurn()), "the second one's turn");
        assertTrue(a.held.stream().filter(h -> h).count() > heldBefore, "the first held when its turn ended: " + a.held);
        // a kernel of the first one's launched as the turn passed (its gate open until the hold):
        // the second one's turn waits until it has ended, however long that takes
        a.counters = busy(21_300_000);
        qa.changed();
        assertTrue(eventually(() -> ga.offTurn() && gb.offTurn()), "the second one's turn waits for the first one's kernel");
        Thread.sleep(BestEffortSpace.ROTATE_NANOS / 1_000_000 + 20);
        qb.changed();
        Thread.sleep(50);
        assertTrue(ga.offTurn() && gb.offTurn(), "still waiting while it runs");
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        qa.changed();
        assertTrue(eventually(() -> ga.offTurn() && !gb.offTurn()), "the second one's turn once it has ended");
        qa.changed();
        Thread.sleep(30);
        assertTrue(ga.offTurn() && !gb.offTurn(), "its time counts from then: not passed on at the next decision");
        // the one whose turn it is idle, the other with work: the other's turn at once
        b.counters = ExternalQueueTest.USED_IDLE;
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        assertTrue(eventually(() -> !ga.offTurn() && gb.offTurn()), "the one with work has the turn");
        assertFalse(a.parts.stream().anyMatch(p -> p.startsWith("0+6") || p.startsWith("0+10") || p.startsWith("0+5")),
                "never cut unequally: " + a.parts);
    }

    /**
     * A long-command process and a short-command one beside a gap its long command fits whole
     * once, not within the split's safety (a 21.5 ms GEMM and Triton beside a graph's 21.8 ms):
     * turns on all of it, where a cut left the GEMM half the device, a 44.5 ms kernel that fits no
     * gap, narrowed beside the graph's requests (0.44 of native sharing, the graph 1.45 x its
     * standalone P99, H200). With a gap shorter than the command: no turns.
     */
    @Test
    void aLongCommandThatFitsATightGapWholeTakesTurnsWithAShortCommandProcess() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        a.counters = busy(21_500_000);
        qa.changed();
        t.counters = busy(80_000);
        qt.changed();
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
        assertTrue(eventually(() -> a.part().equals("0+9/16") && t.part().equals("9+7/16")),
                "no gap yet: by width (the default), nine sixteenths for the long commands: " + a.parts + " " + t.parts);
        // a gap shorter than the GEMM's command: parts as before
        ga.fitGap(21_000_000L, System.nanoTime());
        gt.fitGap(21_000_000L, System.nanoTime());
        qa.changed();
        qt.changed();
        Thread.sleep(150);
        assertFalse(a.part().equals("0/1") || t.part().equals("0/1"), "no turns: " + a.parts + " " + t.parts);
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0/1") && t.part().equals("0/1")), "turns on all of it: " + a.parts + " " + t.parts);
    }

    /**
     * {@code bestEffortTurnsWithoutGap}: two processes for neither of which a gap is found (here no
     * preferred tenant at all) take turns on all of it, one held while the other runs, instead of
     * parts by width; off (the default), parts by width, and off again, parts again and none held.
     */
    @Test
    void withTurnsWithoutAGapTwoProcessesWithNoGapTakeTurnsInsteadOfParts() throws Exception {
        assertFalse(core.bestEffortTurnsWithoutGap(), "off by default");
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
        // work held, nothing in flight: a turn can pass at any decision
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 1_600_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 80_000, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().endsWith("/16") && t.part().endsWith("/16")), "off: parts by width: " + a.parts + " " + t.parts);
        assertFalse(ga.offTurn() || gt.offTurn(), "off: neither held for a turn");
        core.bestEffortTurnsWithoutGap(true);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0/1") && t.part().equals("0/1") && (ga.offTurn() != gt.offTurn())),
                "turns on all of it, one held: " + a.parts + " " + t.parts + " " + ga.offTurn() + " " + gt.offTurn());
        assertTrue(eventually(() -> ga.offTurn() ? a.holding() && !t.holding() : t.holding() && !a.holding()),
                "the one off its turn held on its process, whatever the policy decides: " + a.held + " " + t.held);
        boolean first = ga.offTurn();
        Thread.sleep(BestEffortSpace.ROTATE_NANOS / 1_000_000 + 20);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> ga.offTurn() != first && gt.offTurn() == first), "the turn passes once its time is up");
        core.bestEffortTurnsWithoutGap(false);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().endsWith("/16") && t.part().endsWith("/16") && !ga.offTurn() && !gt.offTurn()),
                "off again: parts by width, none held: " + a.parts + " " + t.parts);
    }

    /**
     * As above under a policy that decides space (its decisions placed every time, as hpf's): the
     * one off its turn is held on its process at every decision, though the policy lets both run.
     */
    @Test
    void underAPolicyThatDecidesSpaceTheOneOffItsTurnIsHeld() throws Exception {
        use(new SpaceHighest(false, 0));
        core.bestEffortTurnsWithoutGap(true);
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 1_600_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 80_000, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> ga.offTurn() ? a.holding() && !t.holding() : t.holding() && !a.holding()),
                "one held for the other's turn: " + a.held + " " + t.held);
        for (int i = 0; i < 20; i++) {
            qa.changed(); // decisions that let both run, by the policy
            qt.changed();
        }
        Thread.sleep(20);
        assertTrue(ga.offTurn() ? a.holding() : t.holding(), "still held while off its turn: " + a.held + " " + t.held);
    }

    /**
     * Off its turn is a hold whatever the policy decides with best-effort company only; beside a
     * preferred tenant (open, busy or not) the wide beats decide a turn's holds, as before.
     */
    @Test
    void offItsTurnHoldsWithBestEffortCompanyOnly() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        NodeQueue na = (NodeQueue) core.find(qa.handle()).orElseThrow();
        assertTrue(core.offTurnHolds(na, System.nanoTime()), "best-effort company only: held");
        SpaceOwner lc = new SpaceOwner(false, 132);
        ExternalQueue ql = open("serve", 13, 2, lc);
        assertFalse(core.offTurnHolds(na, System.nanoTime()), "a preferred queue open: the wide beats decide");
        core.offTurnAlwaysHeld(true);
        assertTrue(core.offTurnHolds(na, System.nanoTime()), "offTurnAlwaysHeld: held beside it too");
        core.offTurnAlwaysHeld(false);
        ql.close();
        assertTrue(core.offTurnHolds(na, System.nanoTime()), "closed again: held");
    }

    /**
     * {@code bestEffortBalance}: two processes with no gap, a device model behind their counters (a
     * compute-bound one that keeps 0.84 of its width's share of its rate alone, a memory-bound one
     * 0.61 on half and the square root of its width's share otherwise; the whole device alone: its
     * rate alone). The node holds each in turn while the other runs alone, then moves sixteenths to
     * the one that keeps less, to about 10/6; off again, the node's own cut by width.
     */
    @Test
    void withBalanceTheNodeMeasuresEachAloneAndMovesWidthToTheOneThatKeepsLeast() throws Exception {
        assertTrue(core.bestEffortBalance(), "on by default");
        core.bestEffortBalance(false);
        // spells and periods long enough that a busy 2-core machine's jitter (the device thread's 2 ms
        // sleeps) stays well inside the 12 % deadband: CI once stopped at 9/7 within 5 s with 40 ms spells
        core.balanceTimes(new BestEffortBalance.Times(100_000_000L, 60_000_000L, 60_000_000_000L, 100_000_000L, 30_000_000L,
                300_000_000L));
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
        a.counters = new ExternalCounters(1, 1, 10, 10, 0, 9_000_000, 60_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 1, 10, 10, 0, 9_000_000, 160_000, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0+8/16") && t.part().equals("8+8/16")), "off: halves by width: " + a.parts);
        core.bestEffortBalance(true);
        AtomicBoolean run = new AtomicBoolean(true);
        AtomicBoolean aloneSeen = new AtomicBoolean();
        AtomicBoolean bothHeld = new AtomicBoolean(true);
        AtomicBoolean spellLimits = new AtomicBoolean();
        Thread device = Thread.ofPlatform().daemon().start(() -> {
            double doneA = 10;
            double doneT = 10;
            long last = System.nanoTime();
            while (run.get()) {
                long now = System.nanoTime();
                double dt = (now - last) / 1e9;
                last = now;
                // held as applied to the process (its owner's hold), not as the node meant it: a
                // spell that only marked the others off their turn held nobody (session 94)
                boolean heldA = a.holding();
                boolean heldT = t.holding();
                int wa = width(a.part());
                int wt = width(t.part());
                if (heldT && !heldA && wa == 16) {
                    aloneSeen.set(true);
                    QueueConfig limits = a.config;
                    if (limits != null && limits.threshold() == QueueConfig.MAX_THRESHOLD) {
                        spellLimits.set(true);
                    }
                }
                bothHeld.compareAndSet(true, heldA && heldT);
                doneA += heldA ? 0 : 1000 * dt * (wa == 16 ? 1 : 0.84 * wa / 16.0);
                doneT += heldT ? 0 : 8000 * dt * (wt == 16 ? 1 : 0.61 * Math.sqrt(wt / 8.0));
                a.counters = new ExternalCounters(1, heldA ? 0 : 1, 10, (long) doneA, 0, 9_000_000, 60_000, System.nanoTime());
                t.counters = new ExternalCounters(1, heldT ? 0 : 1, 10, (long) doneT, 0, 9_000_000, 160_000, System.nanoTime());
                qa.changed();
                qt.changed();
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try {
            assertTrue(ExternalQueueTest.eventually(() -> (a.part().equals("0+10/16") || a.part().equals("0+11/16"))
                    && t.part().equals(a.part().equals("0+10/16") ? "10+6/16" : "11+5/16"), 30_000_000_000L),
                    "toward equal shares: " + a.parts);
            assertTrue(aloneSeen.get(), "the trainer measured alone, Triton held");
            assertTrue(logged.stream().anyMatch(l -> l.startsWith("measured cut on ") && l.contains("rates kept alone")
                    && l.matches(".*sixteenths \\[8, 8\\] -> \\[(9|10|11), .*")), "each move logged with its reason: " + logged);
            assertTrue(spellLimits.get(), "measured alone under a narrowed queue's limits (no threshold), not its own");
            assertFalse(bothHeld.get(), "not held for good");
        } finally {
            run.set(false);
            device.join();
        }
        core.bestEffortBalance(false);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0+8/16") && t.part().equals("8+8/16") && !ga.offTurn() && !gt.offTurn()),
                "off again: the cut by width, none held: " + a.parts);
    }

    /**
     * {@code bestEffortBalance} between two neighbouring cuts each of whose shares kept are more than
     * 12 % apart (after the H100's trainer and Triton, session 97: 0.47 and 0.63 at 11/5, 0.56 and
     * 0.49 at 12/4; here Triton keeps 0.455 at 12/4, 1.23 apart, midway between the deadband and
     * 11/5's 1.34: with the H100's 1.14, 2 % over the deadband, the rates this device thread gives on
     * a loaded 2-vCPU machine read under it at times, no move back was wanted, and the test waited
     * out its 30 s, session 98): the node stops at 12/4, the nearer to equal, logs once why, and
     * stays there.
     */
    @Test
    void withBalanceTheNearerToEqualOfTwoNeighbouringCutsStandsAndIsLoggedOnce() throws Exception {
        core.balanceTimes(new BestEffortBalance.Times(100_000_000L, 60_000_000L, 60_000_000_000L, 100_000_000L, 30_000_000L,
                300_000_000L));
        double[] trainer = {0, .06, .12, .18, .24, .28, .29, .30, .32, .38, .40, .47, .56, .62, .66, .70, .72};
        double[] triton = {0, .20, .30, .38, .455, .63, .70, .74, .75, .76, .77, .78, .79, .80, .80, .80, .80};
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        AtomicBoolean run = new AtomicBoolean(true);
        Thread device = Thread.ofPlatform().daemon().start(() -> {
            double doneA = 10;
            double doneT = 10;
            long last = System.nanoTime();
            while (run.get()) {
                long now = System.nanoTime();
                double dt = (now - last) / 1e9;
                last = now;
                boolean heldA = a.holding();
                boolean heldT = t.holding();
                int wa = width(a.part());
                int wt = width(t.part());
                doneA += heldA ? 0 : 1000 * dt * (wa == 16 ? 1 : trainer[wa]);
                doneT += heldT ? 0 : 8000 * dt * (wt == 16 ? 1 : triton[wt]);
                a.counters = new ExternalCounters(1, heldA ? 0 : 1, 10, (long) doneA, 0, 9_000_000, 60_000, System.nanoTime());
                t.counters = new ExternalCounters(1, heldT ? 0 : 1, 10, (long) doneT, 0, 9_000_000, 160_000, System.nanoTime());
                qa.changed();
                qt.changed();
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try {
            assertTrue(ExternalQueueTest.eventually(() -> logged.stream().anyMatch(l -> l.contains(", stays: at [11, 5]")), 30_000_000_000L),
                    "the move back not taken, logged with its reason: " + logged);
            assertEquals("0+12/16", a.part(), "the nearer to equal: " + a.parts);
            Thread.sleep(2_000); // six weighings or more at 300 ms
            assertEquals("0+12/16", a.part(), "it stands: " + a.parts);
            assertEquals(1, logged.stream().filter(l -> l.contains(", stays: ")).count(), "logged once: " + logged);
        } finally {
            run.set(false);
            device.join();
        }
    }

    /**
     * {@code bestEffortUnbounded}: two best-effort processes on parts of the device with nothing
     * preferred over them open launch without a threshold or window; a latency-critical queue that
     * opens (idle: it has made its context and not yet asked for anything) brings their limits
     * back at that decision; off, their own limits.
     */
    @Test
    void withUnboundedBestEffortProcessesOnPartsLaunchFreelyUntilAPreferredQueueOpens() throws Exception {
        assertTrue(core.bestEffortUnbounded(), "on by default");
        core.bestEffortUnbounded(false);
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        a.counters = new ExternalCounters(1, 1, 10, 10, 0, 9_000_000, 60_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 1, 10, 10, 0, 9_000_000, 160_000, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().endsWith("/16") && t.part().endsWith("/16")), "parts: " + a.parts + " " + t.parts);
        assertTrue(eventually(() -> a.config != null && a.config.windowMicros() > 0), "off: a window of its own: " + a.config);
        core.bestEffortUnbounded(true);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> free(a) && free(t)), "on, best-effort company only: no limits: " + a.config + " " + t.config);
        assertEquals(XQueueStatus.Limits.ON_TOP, core.find(qa.handle()).orElseThrow().status().limits());
        SpaceOwner lc = new SpaceOwner(false, 132);
        ExternalQueue ql = open("serve", 13, 2, lc);
        ql.changed();
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> !free(a) && !free(t)), "a preferred queue open, idle: limits back: " + a.config + " " + t.config);
        ql.close();
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> free(a) && free(t)), "closed again: free: " + a.config);
        core.bestEffortTurnsWithoutGap(true);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0/1") && t.part().equals("0/1")), "turns: " + a.parts);
        assertTrue(eventually(() -> free(a) && free(t)), "in turns, a part in time: free too: " + a.config + " " + t.config);
        core.bestEffortTurnsWithoutGap(false);
        core.bestEffortUnbounded(false);
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> !free(a) && !free(t)), "off again: limits: " + a.config);
    }

    private static boolean free(ExternalQueueTest.Owner o) {
        QueueConfig c = o.config;
        return c != null && c.threshold() == QueueConfig.MAX_THRESHOLD && c.windowMicros() == 0;
    }

    private static int width(String part) {
        int plus = part.indexOf('+');
        return plus < 0 ? 16 : Integer.parseInt(part.substring(plus + 1, part.indexOf('/')));
    }

    /**
     * {@code bestEffortShares}: where every best-effort process on the device has an operator's
     * weight, the cut is in proportion to the weights (3 to 1: twelve sixteenths and four), turns
     * or not; where one has none, the node weighs them itself again. A bad value is refused with
     * its reason and changes nothing.
     */
    @Test
    void anOperatorsWeightsForEveryProcessCutTheirParts() throws Exception {
        assertEquals("", core.bestEffortShares(), "none by default");
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("trainer", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 60_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 160_000, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0+8/16") && t.part().equals("8+8/16")),
                "two short-command processes by width: halves: " + a.parts + " " + t.parts);
        core.bestEffortShares("trainer=3, triton=1");
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0+12/16") && t.part().equals("12+4/16")),
                "3 to 1: twelve sixteenths and four: " + a.parts + " " + t.parts);
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> core.bestEffortShares("trainer=0,triton=1"));
        assertTrue(bad.getMessage().contains("'0'") && bad.getMessage().contains("1 to 100"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> core.bestEffortShares("trainer=2,trainer=1"));
        assertThrows(IllegalArgumentException.class, () -> core.bestEffortShares("trainer"));
        assertThrows(IllegalArgumentException.class, () -> core.bestEffortShares("a/b=2"));
        assertEquals("trainer=3, triton=1", core.bestEffortShares(), "a refused value changes nothing");
        core.bestEffortTurnsWithoutGap(true);
        qa.changed();
        qt.changed();
        Thread.sleep(50);
        qa.changed();
        assertTrue(eventually(() -> a.part().equals("0+12/16") && t.part().equals("12+4/16")),
                "weights are a cut, not turns: " + a.parts + " " + t.parts);
        assertFalse(ga.offTurn() || gt.offTurn(), "neither held for a turn");
        core.bestEffortTurnsWithoutGap(false);
        core.bestEffortShares("trainer=3,serve=5");
        qa.changed();
        qt.changed();
        assertTrue(eventually(() -> a.part().equals("0+8/16") && t.part().equals("8+8/16")),
                "triton has no weight: the node's own cut again: " + a.parts + " " + t.parts);
        core.bestEffortShares("");
        assertEquals("", core.bestEffortShares());
    }

    /**
     * A process that waits for each of its steps (a Triton loop) has nothing ready nor in flight
     * between two of them: its turn stays there, and passes once its time is up at a moment it has
     * work held and nothing in flight, or once it has had none for {@link BestEffortSpace#TURN_IDLE_NANOS}
     * (a decision is made then, with no event to bring one). Passed at the first moment between two
     * steps, Triton's turns beside a GEMM's were 28 ms (median) against the GEMM's 72: Triton 0.59
     * and the GEMM 1.37 of native sharing (H200, session 45).
     */
    @Test
    void aProcessBetweenTwoOfItsStepsKeepsItsTurn() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm", 11, 1, a);
        ExternalQueue qt = open("triton", 12, 1, t);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
        // both with work held, nothing in flight, beside a graph's 21.8 ms gap: turns, the GEMM's first
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_500_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 80_000, System.nanoTime());
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        qt.changed();
        assertTrue(stably(() -> !ga.offTurn() && gt.offTurn(), 20), "the GEMM's turn: " + a.parts + " " + t.parts);
        Thread.sleep(BestEffortSpace.ROTATE_NANOS / 1_000_000 + 20);
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        assertTrue(eventually(() -> ga.offTurn() && !gt.offTurn()), "Triton's turn");
        // its steps: work in flight, then none at all between two of them
        t.counters = busy(80_000);
        qt.changed();
        Thread.sleep(5);
        long between = System.nanoTime();
        t.counters = ExternalQueueTest.USED_IDLE;
        qt.changed();
        qa.changed();
        Thread.sleep(2);
        assumeTrue(System.nanoTime() - between < BestEffortSpace.TURN_IDLE_NANOS - 3_000_000L, "the machine too slow to tell");
        assertTrue(ga.offTurn() && !gt.offTurn(), "its turn stays between two of its steps");
        // its time up between two steps: it stays, and passes once it has had no work for TURN_IDLE_NANOS,
        // no event needed
        t.counters = busy(80_000);
        qt.changed();
        Thread.sleep(BestEffortSpace.ROTATE_NANOS / 1_000_000 + 20);
        between = System.nanoTime();
        t.counters = ExternalQueueTest.USED_IDLE;
        qt.changed();
        Thread.sleep(2);
        boolean stayed = ga.offTurn() && !gt.offTurn();
        boolean inTime = System.nanoTime() - between < BestEffortSpace.TURN_IDLE_NANOS - 3_000_000L;
        assertTrue(eventually(() -> !ga.offTurn() && gt.offTurn()), "the GEMM's turn once Triton has had no work for long enough");
        assumeTrue(inTime, "the machine too slow to tell");
        assertTrue(stayed, "its turn stayed until then");
    }

    /**
     * A process whose work is always in flight (kernels narrowed beside an eager decoder's reserve,
     * which nothing holds) never drains by itself: past its time by half again it is held, and once
     * its work has ended the turn passes.
     */
    @Test
    void aTurnLongOverdueIsGivenUpOnceItsWorkEnds() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm", 11, 1, a);
        ExternalQueue qt = open("trainer", 12, 1, t);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_500_000, System.nanoTime());
        t.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 80_000, System.nanoTime());
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        qt.changed();
        long began = stableSince(() -> !ga.offTurn() && gt.offTurn(), 5);
        assertTrue(began > 0, "the GEMM's turn: " + a.parts + " " + t.parts);
        // its kernels in flight from now on, one after another
        a.counters = busy(21_500_000);
        qa.changed();
        long turn = BestEffortSpace.turnNanos(21_500_000L, 21_849_000L);
        Thread.sleep(turn / 1_000_000 + 5);
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        Thread.sleep(5);
        boolean keptPastItsTime = !ga.offTurn() && gt.offTurn();
        boolean inTime = System.nanoTime() - began < turn * BestEffortSpace.TURN_OVERDUE_PERCENT / 100 - 5_000_000L;
        Thread.sleep(turn * BestEffortSpace.TURN_OVERDUE_PERCENT / 100 / 1_000_000 - turn / 1_000_000);
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        assertTrue(eventually(() -> ga.offTurn() && gt.offTurn()), "long overdue: the GEMM held too, the trainer still waits");
        // its last kernel ends: the trainer's turn
        a.counters = new ExternalCounters(1, 0, 14, 14, 0, 9_000_000, 21_500_000, System.nanoTime());
        ga.fitGap(21_849_000L, System.nanoTime());
        gt.fitGap(21_849_000L, System.nanoTime());
        qa.changed();
        assertTrue(eventually(() -> ga.offTurn() && !gt.offTurn()), "the trainer's turn once the GEMM's work ended");
        assumeTrue(inTime, "the machine too slow to tell");
        assertTrue(keptPastItsTime, "the turn kept past its time while its work was in flight, short of overdue");
    }

    /**
     * A turn given up (overdue, its work in flight) passes once that work ends though no event
     * comes: the wide tenant that brought a decision at each request has stopped (a service gone
     * quiet, or exiting), and the held processes bring none ({@link BestEffortSpace#TURN_DRAIN_LOOK_NANOS}).
     * Before session 107 the turn waited for an event: at a batch's or a graph's exit two
     * best-effort processes in turns stood 0.85-0.98 s on an H100, the last trace line a turn given
     * up (82 of 1,434 recorded best-effort logs of xq runs ran 0.4 s or more long).
     */
    @Test
    void aTurnGivenUpPassesOnceItsWorkEndsWithoutAnEvent() throws Exception {
        // 2-3 ms (a look every TURN_DRAIN_LOOK_NANOS); the bound leaves room for a loaded CI
        // machine and stays under what the turn's staleness would take without the looks (about a
        // second from here). Sessions 114-115's misses here (one class run in sixteen, and the first
        // pass of every cold JVM) were the test's: see turnGivenUpPasses
        assertNull(turnGivenUpPasses(11, BestEffortSpace.TURN_STALE_NANOS * 7 / 10));
    }

    /** Whether {@code c} comes to hold for {@code ms} ms on end (read every millisecond), within the usual wait. */
    private static boolean stably(java.util.function.BooleanSupplier c, long ms) throws InterruptedException {
        return stableSince(c, ms) > 0;
    }

    /**
     * As {@link #stably}: since when (nanoTime) {@code c} has held, -1 where it never held so long.
     * A turn's first holder reads as on its turn for a moment in the turns' first wait (held only
     * as the decision's shares are applied), so a test that acts on the turn having begun waits
     * for it to hold.
     */
    private static long stableSince(java.util.function.BooleanSupplier c, long ms) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        long since = -1;
        while (System.nanoTime() < end) {
            if (!c.getAsBoolean()) {
                since = -1;
            } else if (since < 0) {
                since = System.nanoTime();
            } else if (System.nanoTime() - since >= ms * 1_000_000) {
                return since;
            }
            Thread.sleep(1);
        }
        return -1;
    }

    /** One pass of {@link #aTurnGivenUpPassesOnceItsWorkEndsWithoutAnEvent}: null, or what went wrong. */
    private String turnGivenUpPasses(long pid, long bound) throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner t = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm", pid, 1, a);
        ExternalQueue qt = open("trainer", pid + 1, 1, t);
        try {
            ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
            ExternalQueueImpl gt = (ExternalQueueImpl) core.find(qt.handle()).orElseThrow();
            a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_500_000, System.nanoTime());
            t.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 80_000, System.nanoTime());
            ga.fitGap(21_849_000L, System.nanoTime());
            gt.fitGap(21_849_000L, System.nanoTime());
            qa.changed();
            qt.changed();
            // the GEMM's turn begun, not the turns' first wait: in that wait the trainer is held at
            // once and the GEMM only as the decision's shares are applied, so for a moment the two
            // read as the GEMM's turn; made busy then, the GEMM kept the wait on until its work
            // ended and the test read the wait as the turn given up (the first pass of a cold JVM, and about one in twenty later, missed so)
            assertTrue(stably(() -> !ga.offTurn() && gt.offTurn(), 20), "the GEMM's turn: " + a.parts + " " + t.parts);
            a.counters = busy(21_500_000);
            qa.changed();
            long turn = BestEffortSpace.turnNanos(21_500_000L, 21_849_000L);
            Thread.sleep(turn * BestEffortSpace.TURN_OVERDUE_PERCENT / 100 / 1_000_000 + 5);
            ga.fitGap(21_849_000L, System.nanoTime());
            gt.fitGap(21_849_000L, System.nanoTime());
            qa.changed();
            assertTrue(eventually(() -> ga.offTurn() && gt.offTurn()), "long overdue: the GEMM held too, the trainer still waits");
            // its last kernel ends, and nothing tells the node
            a.counters = new ExternalCounters(1, 0, 14, 14, 0, 9_000_000, 21_500_000, System.nanoTime());
            long ended = System.nanoTime();
            boolean passed = ExternalQueueTest.eventually(() -> ga.offTurn() && !gt.offTurn(), bound);
            long took = System.nanoTime() - ended;
            return passed && took < bound ? null
                    : "the trainer's turn " + (passed ? "after " + took / 1_000_000 + " ms" : "not") + " within " + bound / 1_000_000
                            + " ms of the GEMM's work ending, no event needed: " + a.parts + " " + t.parts;
        } finally {
            qa.close();
            qt.close();
        }
    }

    @Test
    void aTurnOfSeveralGapsIsUpAtTheGapNearestItsTime() {
        // a graph's 21.8 ms gaps, 25 ms apart: a 50 ms turn that began a moment after the graph's
        // request is up as its second gap ends (49.5 ms), not only as the third does (74.5 ms)
        assertEquals(BestEffortSpace.ROTATE_NANOS, BestEffortSpace.turnNanos(21_500_000L, 21_849_000L));
        assertFalse(BestEffortSpace.turnUp(24_500_000L, 21_500_000L, 21_849_000L), "one gap: not yet");
        assertTrue(BestEffortSpace.turnUp(49_500_000L, 21_500_000L, 21_849_000L), "two gaps");
        assertTrue(BestEffortSpace.turnUp(49_500_000L, 150_000L, 21_849_000L), "two gaps for a short-command process too");
        // one gap a turn (an eager batch's 92.5 ms): not before its time, between two of its kernels
        assertFalse(BestEffortSpace.turnUp(64_500_000L, 21_500_000L, 92_500_000L), "between its third and fourth kernel");
        assertTrue(BestEffortSpace.turnUp(71_000_000L, 21_500_000L, 92_500_000L));
        assertFalse(BestEffortSpace.turnUp(49_000_000L, 21_500_000L, 0), "no gap known: ROTATE_NANOS");
        assertTrue(BestEffortSpace.turnUp(BestEffortSpace.ROTATE_NANOS, 21_500_000L, 0));
    }

    @Test
    void aTurnStaysWhileAnotherOfItsCommandsFitsTheGapThoughNothingIsInFlight() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner b = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        // 21.3 ms GEMMs beside a 130 ms gap: turns; both drained, the first one's turn
        ExternalCounters drained = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        a.counters = drained;
        b.counters = drained;
        ga.fitGap(130_000_000L, System.nanoTime());
        gb.fitGap(130_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(stably(() -> !ga.offTurn() && gb.offTurn(), 20), "the first one's turn: " + a.parts + " " + b.parts);
        long since = System.nanoTime();
        // between two of its kernels, past ROTATE_NANOS and short of 130 - 21.3 ms: its next one
        // waits at its gate, nothing in flight; another fits the gap, the turn stays
        a.counters = busy(21_300_000);
        qa.changed();
        Thread.sleep(BestEffortSpace.ROTATE_NANOS / 1_000_000 + 10);
        a.counters = new ExternalCounters(1, 0, 11, 11, 0, 9_000_000, 21_300_000, System.nanoTime());
        ga.fitGap(130_000_000L, System.nanoTime());
        gb.fitGap(130_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        Thread.sleep(20);
        assumeTrue(System.nanoTime() - since < BestEffortSpace.turnNanos(21_300_000L, 130_000_000L) - 5_000_000L, "the machine too slow to tell");
        assertTrue(!ga.offTurn() && gb.offTurn(), "drained between its kernels with another fitting: its turn still");
        // once another no longer fits, the turn passes at the next moment nothing is in flight
        Thread.sleep(BestEffortSpace.turnNanos(21_300_000L, 130_000_000L) / 1_000_000 - BestEffortSpace.ROTATE_NANOS / 1_000_000);
        ga.fitGap(130_000_000L, System.nanoTime());
        gb.fitGap(130_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(eventually(() -> ga.offTurn() && !gb.offTurn()), "the second one's turn");
        assertEquals(BestEffortSpace.ROTATE_NANOS, BestEffortSpace.turnNanos(21_300_000L, 60_000_000L), "a short gap: at least ROTATE_NANOS");
        assertEquals(BestEffortSpace.ROTATE_NANOS, BestEffortSpace.turnNanos(21_300_000L, 0), "no gap known");
    }

    @Test
    void threeProcessesAlikeTakeTurnsToo() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner b = new SpaceOwner(true, 132);
        SpaceOwner c = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        ExternalQueue qc = open("gemm-3", 13, 1, c);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        ExternalQueueImpl gc = (ExternalQueueImpl) core.find(qc.handle()).orElseThrow();
        // three GEMM processes on a third each beside a wide tenant: their kernels (94.7 ms there)
        // do not fit its 90 ms gaps, so they run on beside it and are never all done at once (H200,
        // session 39: 0.32, 0.32 and 0.74 of native sharing). Turns begin all the same, all held
        // until nothing of theirs runs; then the first one's
        for (SpaceOwner o : List.of(a, b, c)) {
            o.counters = busy(31_600_000);
        }
        for (ExternalQueueImpl g : List.of(ga, gb, gc)) {
            g.fitGap(89_000_000L, System.nanoTime());
        }
        qa.changed();
        qb.changed();
        qc.changed();
        assertTrue(eventually(() -> a.part().equals("0/1") && c.part().equals("0/1")), "turns: " + a.parts + " " + c.parts);
        Thread.sleep(50);
        assertTrue(ga.offTurn() && gb.offTurn() && gc.offTurn(), "none on turn while their kernels run");
        // the others done, the first one's own kernel on its third still running: it waits for that too
        b.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 31_600_000, System.nanoTime());
        c.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 31_600_000, System.nanoTime());
        qb.changed();
        qc.changed();
        Thread.sleep(50);
        qa.changed();
        Thread.sleep(50);
        assertTrue(ga.offTurn() && gb.offTurn() && gc.offTurn(), "none on turn while its own kernel runs on its third");
        for (SpaceOwner o : List.of(a, b, c)) {
            o.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 31_600_000, System.nanoTime());
        }
        for (ExternalQueueImpl g : List.of(ga, gb, gc)) {
            g.fitGap(89_000_000L, System.nanoTime());
        }
        qa.changed();
        assertTrue(stably(() -> !ga.offTurn() && gb.offTurn() && gc.offTurn(), 20),
                "the first one's turn once they are done: " + a.parts + " " + b.parts + " " + c.parts);
    }

    @Test
    void turnsWhoseWaitNeverEndsEndAfterASecond() throws Exception {
        // turns begin with kernels of both in flight that never end (a persistent kernel): both
        // are held for the wait, which may not last: after a second, parts again
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner b = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        a.counters = busy(21_300_000);
        b.counters = busy(21_300_000);
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(eventually(() -> ga.offTurn() && gb.offTurn()), "turns, both held for the wait");
        long end = System.nanoTime() + BestEffortSpace.TURN_STALE_NANOS + 400_000_000L;
        while (System.nanoTime() < end && (ga.offTurn() || gb.offTurn())) {
            ga.fitGap(85_000_000L, System.nanoTime());
            gb.fitGap(85_000_000L, System.nanoTime());
            qa.changed();
            qb.changed();
            Thread.sleep(50);
        }
        assertFalse(ga.offTurn() || gb.offTurn(), "held for a wait that never ends: " + a.parts + " " + b.parts);
    }

    @Test
    void aKernelLaunchedAsTheTurnPassesIsWaitedFor() throws Exception {
        // the one whose turn ends launches one last kernel after the passing decision read its
        // counters (nothing in flight), before its hold: the next one is never on turn while that
        // kernel runs (the passing decision itself lets it wait), and is once it has ended
        AtomicBoolean armed = new AtomicBoolean();
        SpaceOwner a = new SpaceOwner(true, 132) {
            @Override
            public void apply(boolean hold, QueueConfig cfg) {
                if (hold && armed.getAndSet(false)) {
                    counters = busy(21_300_000);
                }
                super.apply(hold, cfg);
            }
        };
        SpaceOwner b = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        b.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(stably(() -> !ga.offTurn() && gb.offTurn(), 20), "turns, the first one's");
        Thread.sleep(BestEffortSpace.ROTATE_NANOS / 1_000_000 + 20);
        armed.set(true);
        qa.changed();
        // watch both flags until well after the pass
        int beside = 0;
        boolean passed = false;
        for (long end = System.nanoTime() + 200_000_000L; System.nanoTime() < end;) {
            boolean bOn = !gb.offTurn();
            passed |= ga.offTurn();
            if (bOn && a.counters.inFlight() > 0) {
                beside++;
            }
        }
        assertTrue(passed && !armed.get(), "the turn passed, the first one held");
        assertEquals(0, beside, "reads of the second one on turn while the first one's last kernel ran");
        assertTrue(gb.offTurn(), "the second one waits while the first one's last kernel runs");
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        qa.changed();
        assertTrue(eventually(() -> !gb.offTurn()), "the second one's turn once it has ended");
    }

    @Test
    void turnsNotPassedForASecondEndAndThoseHeldForThemGoBackToParts() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner b = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        b.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(stably(() -> !ga.offTurn() && gb.offTurn(), 20), "turns, the first one's");
        // the first one's kernels in flight at every decision from now on: the turn cannot pass
        a.counters = busy(21_300_000);
        long end = System.nanoTime() + BestEffortSpace.TURN_STALE_NANOS + 300_000_000L;
        while (System.nanoTime() < end) {
            ga.fitGap(85_000_000L, System.nanoTime());
            gb.fitGap(85_000_000L, System.nanoTime());
            qa.changed();
            qb.changed();
            Thread.sleep(50);
            if (!gb.offTurn()) {
                break;
            }
        }
        assertFalse(gb.offTurn(), "after a second without a pass, no longer held for another's turn");
        assertTrue(eventually(() -> !a.part().equals("0/1") && !b.part().equals("0/1")),
                "parts while the first one's kernels run: " + a.parts + " " + b.parts);
        // and no turns again for as long: they would begin by holding both until nothing runs
        long until = System.nanoTime() + BestEffortSpace.TURN_STALE_NANOS / 2;
        while (System.nanoTime() < until) {
            ga.fitGap(85_000_000L, System.nanoTime());
            gb.fitGap(85_000_000L, System.nanoTime());
            qa.changed();
            qb.changed();
            Thread.sleep(50);
            assertFalse(ga.offTurn() || gb.offTurn(), "turns again at once: " + a.parts + " " + b.parts);
        }
    }

    /**
     * Turns whose processes all go away for longer than a turn may last without passing (both idle
     * past the parts' linger here; stopped alike in the paired reading) were paused, not stuck: back,
     * the turns go on at once, not parts for a second as for turns that never passed (H200, session
     * 80: after a continue a GEMM at half the device ran through a graph's requests for that second).
     */
    @Test
    void turnsWhoseProcessesAllWentAwayGoOnWhenTheyAreBack() throws Exception {
        SpaceOwner a = new SpaceOwner(true, 132);
        SpaceOwner b = new SpaceOwner(true, 132);
        ExternalQueue qa = open("gemm-1", 11, 1, a);
        ExternalQueue qb = open("gemm-2", 12, 1, b);
        ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
        ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
        a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        b.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
        ga.fitGap(85_000_000L, System.nanoTime());
        gb.fitGap(85_000_000L, System.nanoTime());
        qa.changed();
        qb.changed();
        assertTrue(eventually(() -> ga.offTurn() != gb.offTurn()), "turns: " + a.parts + " " + b.parts);
        // both away (nothing ready nor in flight) well past the linger and a stale turn's second
        a.counters = new ExternalCounters(0, 0, 11, 11, 0, 9_000_000, 21_300_000, 0);
        b.counters = new ExternalCounters(0, 0, 11, 11, 0, 9_000_000, 21_300_000, 0);
        long away = System.nanoTime() + BestEffortSpace.PART_LINGER_NANOS + BestEffortSpace.TURN_STALE_NANOS + 300_000_000L;
        while (System.nanoTime() < away) {
            qa.changed();
            qb.changed();
            Thread.sleep(50);
        }
        int fromA = a.parts.size();
        int fromB = b.parts.size();
        // back, both with work and nothing in flight
        a.counters = new ExternalCounters(1, 0, 12, 12, 0, 9_000_000, 21_300_000, System.nanoTime());
        b.counters = new ExternalCounters(1, 0, 12, 12, 0, 9_000_000, 21_300_000, System.nanoTime());
        long back = System.nanoTime() + BestEffortSpace.TURN_STALE_NANOS / 2;
        while (System.nanoTime() < back) {
            ga.fitGap(85_000_000L, System.nanoTime());
            gb.fitGap(85_000_000L, System.nanoTime());
            qa.changed();
            qb.changed();
            Thread.sleep(25);
        }
        List<String> sinceA = List.copyOf(a.parts.subList(fromA, a.parts.size()));
        List<String> sinceB = List.copyOf(b.parts.subList(fromB, b.parts.size()));
        assertTrue(sinceA.stream().allMatch("0/1"::equals) && sinceB.stream().allMatch("0/1"::equals),
                "back: turns on all of it, never parts: " + sinceA + " " + sinceB);
        assertTrue(ga.offTurn() != gb.offTurn(), "one of them on turn: " + ga.offTurn() + " " + gb.offTurn());
    }

    /**
     * While their turns are paused (all stopped, as in the paired reading), the ones whose turn it
     * was not stay off their turn, so that the decision that finds them back, made before the turns
     * are weighed again, lets only the one whose turn it is go: left on for all while paused, three
     * GEMM processes continued together all went on the whole device in that decision, their 21.5 ms
     * kernels side by side for 43-63 ms, through a large batch's request (49.6 ms against a median of
     * 9.1; H200, session 81). One that comes back alone, the other still stopped, is not held for the
     * other's turn. Real processes stand in for them, stopped and continued.
     */
    @Test
    void stoppedFromTheirTurnsTheOnesOffTheirTurnStayOffItUntilTheTurnsGoOn() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/self/stat")), "Linux /proc");
        Process sa = new ProcessBuilder("sleep", "60").start();
        Process sb = new ProcessBuilder("sleep", "60").start();
        try {
            SpaceOwner a = new SpaceOwner(true, 132);
            SpaceOwner b = new SpaceOwner(true, 132);
            ExternalQueue qa = open("gemm-1", sa.pid(), 1, a);
            ExternalQueue qb = open("gemm-2", sb.pid(), 1, b);
            ExternalQueueImpl ga = (ExternalQueueImpl) core.find(qa.handle()).orElseThrow();
            ExternalQueueImpl gb = (ExternalQueueImpl) core.find(qb.handle()).orElseThrow();
            a.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
            b.counters = new ExternalCounters(1, 0, 10, 10, 0, 9_000_000, 21_300_000, System.nanoTime());
            ga.fitGap(85_000_000L, System.nanoTime());
            gb.fitGap(85_000_000L, System.nanoTime());
            qa.changed();
            qb.changed();
            assertTrue(eventually(() -> ga.offTurn() != gb.offTurn()), "turns: " + a.parts + " " + b.parts);
            // both stopped with work (their counters frozen): once the loop's looks find them so, the
            // turns are paused, and one of them stays off its turn at every look after that
            ProcessStateTest.signal("-STOP", sa.pid());
            ProcessStateTest.signal("-STOP", sb.pid());
            assertTrue(eventually(() -> ga.seenStopped() && gb.seenStopped()), "both found stopped");
            int looks = 0;
            int bothOn = 0;
            long until = System.nanoTime() + 600_000_000L;
            while (System.nanoTime() < until) {
                qa.changed();
                qb.changed();
                Thread.sleep(20);
                looks++;
                bothOn += !ga.offTurn() && !gb.offTurn() ? 1 : 0;
            }
            assertEquals(0, bothOn, "stopped, one of them kept off its turn at every look: both on at " + bothOn + " of " + looks);
            boolean aOff = ga.offTurn();
            ExternalQueueImpl off = aOff ? ga : gb;
            SpaceOwner offOwner = aOff ? a : b;
            ExternalQueue offQueue = aOff ? qa : qb;
            // the one off its turn comes back alone, its counters moving, the other still stopped:
            // not held for the other's turn
            ProcessStateTest.signal("-CONT", aOff ? sa.pid() : sb.pid());
            offOwner.counters = new ExternalCounters(1, 0, 12, 12, 0, 9_000_000, 21_300_000, System.nanoTime());
            off.fitGap(85_000_000L, System.nanoTime());
            offQueue.changed();
            assertTrue(eventually(() -> {
                offQueue.changed();
                return !off.offTurn();
            }), "back alone: not held for a turn of one still stopped");
        } finally {
            for (Process p : List.of(sa, sb)) {
                p.destroyForcibly();
                p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void withoutPartsEachBestEffortProcessHasAllOfIt() throws Exception {
        core.bestEffortParts(false);
        core.bestEffortWidths(false); // parts on again are equal halves
        SpaceOwner train = new SpaceOwner(true, 132);
        SpaceOwner gemm = new SpaceOwner(true, 132);
        ExternalQueue qt = open("train", 11, 1, train);
        ExternalQueue qg = open("gemm", 12, 1, gemm);
        train.counters = busy(200_000);
        qt.changed();
        gemm.counters = busy(21_000_000);
        qg.changed();
        Thread.sleep(300); // with parts, the other test sees the halves well within this
        assertFalse(train.parts.stream().anyMatch(p -> !p.equals("0/1")), "never split: " + train.parts);
        assertFalse(gemm.parts.stream().anyMatch(p -> !p.equals("0/1")), "never split: " + gemm.parts);
        assertEquals(100, core.find(qt.handle()).orElseThrow().status().smSharePercent(), "all of the device");
        core.bestEffortParts(true);
        qt.changed();
        qg.changed();
        assertTrue(eventually(() -> train.part().equals("0+8/16") && gemm.part().equals("8+8/16")), "on again: halves: " + train.parts + " " + gemm.parts);
    }

    @Test
    void withoutAPreferredQueueAHoldStaysAHold() {
        // a policy that decides nothing: this test plays the policy, and one that decides would race it
        core.scheduler().register("still", new dev.xq.policy.spi.Policy() {
            @Override
            public String description() {
                return "test: no decisions";
            }

            @Override
            public void schedule(dev.xq.policy.spi.SchedulerView view, dev.xq.policy.spi.SchedulerActions actions) {
            }
        }, "test", 2);
        core.scheduler().select("still", true);
        SpaceOwner a = new SpaceOwner(true, 64);
        ExternalQueue qa = open("a", 11, 1, a);
        NodeQueue q = (NodeQueue) core.find(qa.handle()).orElseThrow();
        q.schedule(true, System.nanoTime()); // as a policy holding it for a reason of its own (a budget)
        assertTrue(a.holding(), "held: " + a.held);
        assertTrue(a.reserves.isEmpty() || a.reserve() == 0, "not narrowed: " + a.reserves);
        q.schedule(false, System.nanoTime());
        assertFalse(a.holding());
    }
}
