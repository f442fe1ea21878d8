package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueControl;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Queues whose commands a process launches: the node decides, the owner enforces. */
class ExternalQueueTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);

    /** Stands in for the process host: counters set by the test, decisions recorded. */
    static final class Owner implements ExternalQueueControl {
        volatile ExternalCounters counters = ExternalCounters.IDLE;
        final List<Boolean> held = new CopyOnWriteArrayList<>();
        volatile QueueConfig config;

        @Override
        public ExternalCounters counters() {
            return counters;
        }

        @Override
        public void apply(boolean hold, QueueConfig cfg) {
            held.add(hold);
            config = cfg;
        }

        boolean holding() {
            return !held.isEmpty() && held.getLast();
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

    private static ExternalCounters busy(int pending, int inFlight) {
        return new ExternalCounters(pending, inFlight, 10, 9, 0, 9_000_000, 1_000_000, System.nanoTime());
    }

    private static boolean eventually(java.util.function.BooleanSupplier c) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    @Test
    void theSchedulerHoldsTheLowerProcessWhileTheHigherOneHasWork() throws Exception {
        Owner lo = new Owner();
        Owner hi = new Owner();
        ExternalQueue qlo = core.open(new ExternalQueueSpec("train/default", "cuda0", "11:train", 11, List.of(new Hint.Priority(1)), null), lo);
        ExternalQueue qhi = core.open(new ExternalQueueSpec("serve/default", "cuda0", "12:serve", 12, List.of(new Hint.Priority(2)), null), hi);
        assertEquals(List.of(false), lo.held, "opened with its gate open");
        assertEquals(PreemptionLevel.BLOCK, lo.config.level(), "a process's queue works at level 1");
        lo.counters = busy(1, 4);
        qlo.changed();
        hi.counters = busy(0, 1);
        qhi.changed();
        assertTrue(eventually(lo::holding), "lp held while hp has work: " + lo.held);
        assertFalse(hi.holding());
        XQueueStatus st = core.find(qlo.handle()).orElseThrow().status();
        assertEquals(QueueState.SUSPENDED, st.state());
        assertEquals(4, st.inFlight());
        assertEquals("11:train", st.group());
        hi.counters = ExternalCounters.IDLE;
        qhi.changed();
        assertTrue(eventually(() -> !lo.holding()), "lp let go when hp is idle: " + lo.held);
    }

    @Test
    void operatorsWorkOnItAsOnAnyQueueButCannotSubmit() throws Exception {
        Owner o = new Owner();
        ExternalQueue q = core.open(new ExternalQueueSpec("job/s1", "cuda0", "7:job", 7, List.of(), null), o);
        XQueue seen = core.find(q.handle()).orElseThrow();
        seen.suspend();
        assertTrue(o.holding());
        seen.configure(QueueConfig.defaults().withThreshold(4).withBatch(2));
        assertEquals(4, o.config.threshold());
        assertEquals(PreemptionLevel.BLOCK, o.config.level());
        seen.hint(new Hint.Priority(9));
        assertTrue(seen.hints().contains(new Hint.Priority(9)));
        var e = assertThrows(UnsupportedOperationException.class, () -> seen.submit(Command.spin(10)));
        assertTrue(e.getMessage().contains("process 7"), e.getMessage());
        seen.resume();
        assertFalse(o.holding());
    }

    @Test
    void closingOpensTheGateForGoodAndTheQueueLeaves() {
        Owner o = new Owner();
        ExternalQueue q = core.open(new ExternalQueueSpec("job/default", "cuda0", "8:job", 8, List.of(), null), o);
        core.find(q.handle()).orElseThrow().suspend();
        assertTrue(o.holding());
        q.close();
        assertFalse(o.holding(), "a process is never left held by a queue the node forgot");
        assertTrue(core.find(q.handle()).isEmpty());
        q.close(); // idempotent
    }

    @Test
    void anOwnerWhoseCountersFailCountsAsIdle() throws Exception {
        ExternalQueue q = core.open(new ExternalQueueSpec("bad/default", "cuda0", "9:bad", 9, List.of(), null), new ExternalQueueControl() {
            @Override
            public ExternalCounters counters() {
                throw new IllegalStateException("unmapped");
            }

            @Override
            public void apply(boolean held, QueueConfig config) {
            }
        });
        q.changed();
        assertEquals(QueueState.IDLE, core.find(q.handle()).orElseThrow().status().state());
    }

    @Test
    void aBadSpecNamesTheValue() {
        var e = assertThrows(IllegalArgumentException.class, () -> new ExternalQueueSpec("x", "cuda0", "g", -3, List.of(), null));
        assertTrue(e.getMessage().contains("-3"), e.getMessage());
    }
}
