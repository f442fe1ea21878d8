package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueControl;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Who has company on its device (the contention rule, docs/runtime.md) is worked out at every
 * open, close and hint: a process that opens thousands of streams must not make each of those
 * scan every queue, let alone every pair (security issue "trust", item 3). The work is counted,
 * not timed: reads of the queues' counters, which every status read of a process's queue does.
 */
class ContentionScaleTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE); // not started: no decision reads a counter
    private static final QueueConfig WINDOWED = new QueueConfig(PreemptionLevel.BLOCK, 16, 8, 200);

    @AfterEach
    void stop() {
        core.stop();
    }

    /** A process's stream whose counter reads the test counts. */
    static final class Counted implements ExternalQueueControl {
        final AtomicLong reads;
        volatile QueueConfig config;
        /** Whether it had work (a stream that never had any is no one's company until it does). */
        volatile boolean used;

        Counted(AtomicLong reads) {
            this(reads, false);
        }

        Counted(AtomicLong reads, boolean used) {
            this.reads = reads;
            this.used = used;
        }

        @Override
        public ExternalCounters counters() {
            reads.incrementAndGet();
            return used ? ExternalQueueTest.USED_IDLE : ExternalCounters.IDLE;
        }

        @Override
        public void apply(boolean held, QueueConfig cfg) {
            config = cfg;
        }
    }

    @Test
    void aFloodOfStreamsCostsWorkLinearInItsSize() {
        int n = 2_000;
        AtomicLong reads = new AtomicLong();
        Counted serve = new Counted(reads, true);
        ExternalQueue qs = core.open(new ExternalQueueSpec("serve/default", "cuda0", "12:serve", 12, List.of(new Hint.Priority(2)), WINDOWED), serve);
        List<ExternalQueue> flood = new ArrayList<>();
        List<Counted> owners = new ArrayList<>();
        reads.set(0);
        for (int i = 0; i < n; i++) {
            Counted o = new Counted(reads, true);
            owners.add(o);
            flood.add(core.open(new ExternalQueueSpec("flood/s" + i, "cuda0", "66:flood", 66, List.of(), WINDOWED), o));
        }
        long opening = reads.get();
        assertTrue(opening <= 4L * n, n + " opens read the queues' counters " + opening + " times: not linear");
        assertTrue(owners.stream().allMatch(o -> o.config.windowMicros() == 200), "the flood has company: its limits apply");
        assertEquals(200, serve.config.windowMicros());

        reads.set(0);
        core.aloneWindowMicros(1_000); // one recompute over the whole node
        assertTrue(reads.get() <= 10, "one recompute read the counters " + reads.get() + " times");

        reads.set(0);
        core.find(qs.handle()).orElseThrow().close();
        assertTrue(owners.stream().allMatch(o -> o.config.windowMicros() == 0), "alone in its group: the flood's limits are lifted");
        assertTrue(reads.get() <= 4L * n, "the close read the counters " + reads.get() + " times");

        qs = core.open(new ExternalQueueSpec("serve/default", "cuda0", "12:serve", 12, List.of(new Hint.Priority(2)), WINDOWED), serve);
        assertTrue(owners.stream().allMatch(o -> o.config.windowMicros() == 200), "company again: the limits apply again");

        reads.set(0);
        for (ExternalQueue q : flood) {
            q.close();
        }
        long closing = reads.get();
        assertTrue(closing <= 4L * n, n + " closes read the queues' counters " + closing + " times: not linear");
        assertEquals(0, serve.config.windowMicros(), "alone again once the flood is gone");
        assertEquals(1, core.externalQueues().size());
    }

    /** The process queues that count as company: opened after work, or told of their first work since. */
    private final Set<Long> counted = new HashSet<>();

    /**
     * Brute force, as the rule reads: another queue on the device of another group, or of its
     * group at another priority; a process's queue only once it had work.
     */
    private List<NodeQueue> company(NodeQueue q) {
        List<NodeQueue> c = new ArrayList<>();
        for (XQueue o : core.queues()) {
            if (o instanceof ExternalQueueImpl && !counted.contains(o.handle())) {
                continue;
            }
            if (o != q && o.device().equals(q.device())
                    && (!((NodeQueue) o).group().equals(q.group()) || priority(o) != priority(q))) {
                c.add((NodeQueue) o);
            }
        }
        return c;
    }

    private static int priority(XQueue q) {
        for (Hint h : q.hints()) {
            if (h instanceof Hint.Priority p) {
                return p.value();
            }
        }
        return 0;
    }

    /** Every queue's answer equals the brute-force one after each of a random run of opens, closes, hints and top changes. */
    @Test
    void theAnswersMatchTheRuleThroughARandomRun() {
        core.addDriver(new ManualDevice("m0", PreemptionLevel.BLOCK, false));
        core.addDriver(new ManualDevice("m1", PreemptionLevel.BLOCK, false));
        Random rnd = new Random(42);
        AtomicLong reads = new AtomicLong();
        String[] devices = {"m0", "m1"};
        String[] groups = {"a", "b", "c"};
        Set<Long> top = new HashSet<>();
        boolean onTop = true;
        List<Object[]> unused = new ArrayList<>();
        for (int step = 0; step < 1_500; step++) {
            List<XQueue> open = core.queues();
            int op = rnd.nextInt(10);
            String device = devices[rnd.nextInt(devices.length)];
            String group = groups[rnd.nextInt(groups.length)];
            List<Hint> hints = rnd.nextBoolean() ? List.of() : List.of(new Hint.Priority(rnd.nextInt(3)));
            if (op <= 2 || open.size() < 3) {
                boolean used = rnd.nextBoolean();
                Counted owner = new Counted(reads, used);
                ExternalQueue h = core.open(new ExternalQueueSpec("p/s" + step, device, group, 1, hints, WINDOWED), owner);
                if (used) {
                    counted.add(h.handle());
                } else {
                    unused.add(new Object[] {h, owner});
                }
            } else if (op == 3 && !unused.isEmpty() && rnd.nextBoolean()) {
                // the first work of a stream that had none: company from now on
                Object[] u = unused.remove(rnd.nextInt(unused.size()));
                ((Counted) u[1]).used = true;
                ExternalQueue h = (ExternalQueue) u[0];
                counted.add(h.handle());
                h.changed();
            } else if (op == 3) {
                QueueOptions o = QueueOptions.on(device).inGroup(group).with(WINDOWED);
                for (Hint h : hints) {
                    o = o.with(h);
                }
                core.create(o);
            } else if (op == 4 || (op == 5 && open.size() > 30)) {
                ((NodeQueue) open.get(rnd.nextInt(open.size()))).close(Duration.ZERO);
            } else if (op == 5) {
                open.get(rnd.nextInt(open.size())).hint(new Hint.Priority(rnd.nextInt(3)));
            } else if (op <= 7) {
                top = new HashSet<>();
                for (XQueue q : open) {
                    if (rnd.nextInt(4) == 0) {
                        top.add(q.handle());
                    }
                }
                core.topQueuesChanged(Set.copyOf(top));
                core.onTop(onTop); // applies the new top at once (the call above applies it on a thread of its own)
            } else if (op == 8) {
                onTop = !onTop;
                core.onTop(onTop);
            } else {
                core.aloneWindowMicros(rnd.nextBoolean() ? 0 : 1_000 + rnd.nextInt(2) * 1_000);
            }
            for (XQueue x : core.queues()) {
                NodeQueue q = (NodeQueue) x;
                List<NodeQueue> company = company(q);
                boolean contended = !company.isEmpty();
                boolean isTop = contended && onTop && top.contains(q.handle());
                String at = "step " + step + ", queue " + q.name() + " (" + q.device() + ", " + q.group() + ", priority " + priority(q) + ")";
                if (q instanceof ExternalQueueImpl e && !counted.contains(e.handle())) {
                    // never had work: no one's company, and its limits the configured ones until it does
                    assertTrue(e.contended(), at);
                    assertEquals(XQueueStatus.Limits.CONFIGURED, e.status().limits(), at);
                } else if (q instanceof ExternalQueueImpl e) {
                    assertEquals(contended, e.contended(), at);
                    XQueueStatus.Limits limits = !contended ? XQueueStatus.Limits.ALONE
                            : isTop && core.aloneWindowMicros() > 200 ? XQueueStatus.Limits.ON_TOP : XQueueStatus.Limits.CONFIGURED;
                    assertEquals(limits, e.status().limits(), at);
                } else {
                    XQueueImpl i = (XQueueImpl) q;
                    assertEquals((contended && !isTop) || core.aloneWindowMicros() == 0, i.contended(), at);
                    assertEquals(isTop ? company : List.of(), i.holdOnArrival(), at);
                }
            }
        }
    }
}
