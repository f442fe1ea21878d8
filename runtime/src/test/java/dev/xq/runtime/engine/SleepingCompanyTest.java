package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.external.spi.ExternalCounters;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 41: a process's queues asleep in the scheduler ({@code DormantQueues}: held, idle, out of
 * the decisions) are no company for the contention rule: a tenant beside a user's thousands of
 * held, idle streams gets the limits it gets alone on the device. The moment one of them wakes
 * with work, the tenant's limits apply again, before the woken queue can be let go.
 */
class SleepingCompanyTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    /** Limits that tell the answers apart: window 300 us configured, none (process) or 2,000 us (in-process) alone. */
    private static final QueueConfig WINDOWED = new QueueConfig(PreemptionLevel.BLOCK, 16, 8, 300);
    private static final int FLOOD = 50;

    @BeforeEach
    void start() {
        core.addDriver(new ManualDevice("m0", PreemptionLevel.BLOCK, false));
        core.start();
        core.scheduler().register("hold", new DormantQueuesTest.HoldLower(), "test", 1);
        core.scheduler().select("hold", true);
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    private static ExternalCounters busy() {
        return new ExternalCounters(0, 1, 10, 9, 0, 9_000_000, 1_000_000, System.nanoTime());
    }

    /** A flood stream's owner that notes, each time the node lets it go, the window the victim had then. */
    static final class Noting extends ExternalQueueTest.Owner {
        final List<Integer> victimWindowWhenLetGo = new CopyOnWriteArrayList<>();
        volatile IntSupplier victimWindow = () -> -1;

        @Override
        public void apply(boolean hold, QueueConfig cfg) {
            if (!hold && !held.isEmpty() && held.getLast()) {
                victimWindowWhenLetGo.add(victimWindow.getAsInt());
            }
            super.apply(hold, cfg);
        }
    }

    /** Decisions (one per {@code poke}, every 20 ms) until {@code done}: a queue sleeps after a second of them seeing it held and idle. */
    private static boolean pokeUntil(Runnable poke, java.util.function.BooleanSupplier done) throws InterruptedException {
        long until = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) {
                return false;
            }
            poke.run();
            Thread.sleep(20);
        }
        return true;
    }

    /** Opens the flood (priority 1, another user's group), held while {@code poke} works, and keeps deciding until it sleeps. */
    private List<ExternalQueue> floodAsleep(List<Noting> owners, Runnable poke) throws InterruptedException {
        List<ExternalQueue> flood = new ArrayList<>();
        for (int i = 0; i < FLOOD; i++) {
            Noting o = new Noting();
            owners.add(o);
            flood.add(core.open(new ExternalQueueSpec("flood/s" + i, "m0", "3:flood", 3, List.of(new Hint.Priority(1)), WINDOWED), o));
        }
        poke.run();
        assertTrue(ExternalQueueTest.eventually(() -> owners.stream().allMatch(ExternalQueueTest.Owner::holding)),
                "the flood is held while the victim works");
        assertTrue(pokeUntil(poke, () -> core.scheduler().dormantQueues() == FLOOD), "asleep: " + core.scheduler().dormantQueues());
        return flood;
    }

    @Test
    void aProcessBesideSleepersGetsItsAloneLimitsUntilOneWakes() throws Exception {
        ExternalQueueTest.Owner victim = new ExternalQueueTest.Owner();
        victim.counters = ExternalQueueTest.USED_IDLE; // it had work (one that never had keeps its configured limits until it has)
        ExternalQueue qv = core.open(new ExternalQueueSpec("victim/s0", "m0", "2:victim", 2, List.of(new Hint.Priority(2)), WINDOWED), victim);
        ExternalQueueImpl v = (ExternalQueueImpl) core.find(qv.handle()).orElseThrow();
        assertEquals(0, victim.config.windowMicros(), "alone on the device: no window");
        List<Noting> owners = new ArrayList<>();
        victim.counters = busy();
        List<ExternalQueue> flood = floodAsleep(owners, qv::changed);
        // awake, the flood was company: the victim's limits applied (what the hostile bench saw)
        assertTrue(ExternalQueueTest.eventually(() -> victim.config.windowMicros() == 0 && !v.contended()),
                "beside " + FLOOD + " held, idle, sleeping queues the victim is alone: window " + victim.config.windowMicros()
                        + ", limits " + v.status().limits());
        assertEquals(XQueueStatus.Limits.ALONE, v.status().limits());
        for (Noting o : owners) {
            o.victimWindow = () -> (int) victim.config.windowMicros();
        }

        // the victim goes idle: the sleepers stay held and asleep (nothing to run), the victim alone
        victim.counters = ExternalQueueTest.USED_IDLE;
        qv.changed();
        Thread.sleep(50);
        assertEquals(0, victim.config.windowMicros(), "still alone beside the sleepers");
        assertTrue(owners.stream().allMatch(ExternalQueueTest.Owner::holding), "the sleepers stay held");

        // work comes to one: with the victim idle the policy lets it go at once, and by then the
        // victim's limits apply again (its interposer had them before the woken queue had its go)
        Noting woken = owners.get(7);
        woken.counters = busy();
        flood.get(7).changed();
        assertTrue(ExternalQueueTest.eventually(() -> !woken.holding()), "the woken queue runs: the victim is idle");
        assertEquals(List.of(300), woken.victimWindowWhenLetGo, "the victim's window when the woken queue was let go");
        assertTrue(v.contended(), "company again");
        assertEquals(XQueueStatus.Limits.CONFIGURED, v.status().limits());

        // it goes idle (its counts stay, as an interposer's do), is held again behind the victim's
        // work and falls asleep again: alone again
        woken.counters = new ExternalCounters(0, 0, 10, 10, 0, 9_000_000, 1_000_000, 0);
        flood.get(7).changed();
        victim.counters = busy();
        assertTrue(pokeUntil(qv::changed, () -> victim.config.windowMicros() == 0),
                "alone once the woken queue sleeps again: " + core.scheduler().dormantQueues() + " asleep");

        // one closes while asleep, the others wake with the policy swap: company again at once (the
        // one that worked: those never used fall asleep again at the first decision that holds them)
        flood.get(3).close();
        core.scheduler().register("hold2", new DormantQueuesTest.HoldLower(), "test", 2);
        core.scheduler().select("hold2", true);
        assertTrue(ExternalQueueTest.eventually(() -> v.contended()), "every sleeper woke: the victim has company");
        // held, idle, while the busy victim runs, they yield to it (the on-top rule): the victim is
        // on top of them, its window the alone one and not its configured 300 us
        // (checked together: the one that worked falls asleep again after a second held and idle)
        assertTrue(pokeUntil(qv::changed, () -> v.status().limits() == XQueueStatus.Limits.ON_TOP
                        && victim.config.windowMicros() == XqCore.DEFAULT_ALONE_WINDOW_MICROS),
                "the woken company held behind the busy victim: " + v.status().limits() + ", window " + victim.config.windowMicros());
    }

    @Test
    void anInProcessQueueBesideSleepersKeepsTheAloneWindowUntilOneWakes() throws Exception {
        XQueueImpl app = (XQueueImpl) core.create(QueueOptions.on("m0").inGroup("app").with(WINDOWED).with(new Hint.Priority(2)));
        assertFalse(app.contended(), "alone: its window widened");
        List<Noting> owners = new ArrayList<>();
        ExternalQueueTest.Owner serve = new ExternalQueueTest.Owner();
        serve.counters = busy();
        ExternalQueue busyHigh = core.open(new ExternalQueueSpec("serve/s0", "m0", "app", 0, List.of(new Hint.Priority(2)), WINDOWED), serve);
        // the flood is held behind a busy queue of the app's group and priority (no company of the app's)
        List<ExternalQueue> flood = floodAsleep(owners, busyHigh::changed);
        assertTrue(ExternalQueueTest.eventually(() -> !app.contended()), "beside sleepers only: its alone window, " + app.status().limits());
        assertEquals(XQueueStatus.Limits.ALONE, app.status().limits());
        for (Noting o : owners) {
            o.victimWindow = () -> app.contended() ? 300 : 0;
        }
        serve.counters = ExternalQueueTest.USED_IDLE; // nothing preferred has work: a woken queue is let go at once
        busyHigh.changed();
        Thread.sleep(50);
        assertFalse(app.contended(), "still alone beside the sleepers");
        Noting woken = owners.get(11);
        woken.counters = busy();
        flood.get(11).changed();
        assertTrue(ExternalQueueTest.eventually(() -> !woken.holding()), "the woken queue runs");
        assertEquals(List.of(300), woken.victimWindowWhenLetGo, "the app's limits applied in full when the woken queue was let go");
        assertTrue(app.contended(), "one woke with work: the app's limits apply in full");
        assertEquals(XQueueStatus.Limits.CONFIGURED, app.status().limits());
    }

    private static int priority(XQueue q) {
        for (Hint h : q.hints()) {
            if (h instanceof Hint.Priority p) {
                return p.value();
            }
        }
        return 0;
    }

    /**
     * The rule against brute force through a random run of opens, closes, hints, top changes and
     * process queues falling asleep and waking (told as the scheduler tells it: the core's
     * {@code Scheduler.Source} callbacks): every awake queue has company exactly when an awake
     * queue of another group or priority shares its device; a sleeper's answer is not kept (held,
     * its limits bound nothing) and is right again once it wakes.
     */
    @Test
    void theAnswersMatchTheRuleWithSleepersThroughARandomRun() throws Exception {
        XqCore idle = new XqCore(RuntimeLog.NONE); // not started: the test tells the sleeps itself
        try {
            idle.addDriver(new ManualDevice("m0", PreemptionLevel.BLOCK, false));
            idle.addDriver(new ManualDevice("m1", PreemptionLevel.BLOCK, false));
            Random rnd = new Random(7);
            String[] devices = {"m0", "m1"};
            String[] groups = {"a", "b", "c"};
            Set<Long> asleep = new HashSet<>();
            Set<Long> top = new HashSet<>();
            for (int step = 0; step < 1_500; step++) {
                List<XQueue> open = idle.queues();
                int op = rnd.nextInt(12);
                String device = devices[rnd.nextInt(devices.length)];
                String group = groups[rnd.nextInt(groups.length)];
                List<Hint> hints = rnd.nextBoolean() ? List.of() : List.of(new Hint.Priority(rnd.nextInt(3)));
                XQueue some = open.isEmpty() ? null : open.get(rnd.nextInt(open.size()));
                if (op <= 2 || open.size() < 3) {
                    ExternalQueueTest.Owner owner = new ExternalQueueTest.Owner();
                    owner.counters = ExternalQueueTest.USED_IDLE; // it had work: company (ContentionScaleTest has those that never had)
                    idle.open(new ExternalQueueSpec("p/s" + step, device, group, 1, hints, WINDOWED), owner);
                } else if (op == 3) {
                    QueueOptions o = QueueOptions.on(device).inGroup(group).with(WINDOWED);
                    for (Hint h : hints) {
                        o = o.with(h);
                    }
                    idle.create(o);
                } else if (op == 4 || (op == 5 && open.size() > 30)) {
                    ((NodeQueue) some).close(Duration.ZERO);
                    asleep.remove(some.handle());
                } else if (op == 5) {
                    some.hint(new Hint.Priority(rnd.nextInt(3)));
                } else if (op == 6) {
                    top = new HashSet<>();
                    for (XQueue q : open) {
                        if (!asleep.contains(q.handle()) && rnd.nextInt(4) == 0) {
                            top.add(q.handle()); // the scheduler forgets sleepers: never on top
                        }
                    }
                    idle.topQueuesChanged(Set.copyOf(top));
                    idle.onTop(true); // applies the new top at once
                } else if (op <= 9 && some instanceof ExternalQueueImpl e && !asleep.contains(e.handle())) {
                    idle.queueSlept(e); // as the scheduler tells it (Scheduler.Source)
                    asleep.add(e.handle());
                    top.remove(e.handle());
                    idle.topQueuesChanged(Set.copyOf(top));
                    idle.onTop(true); // counts the sleep at once (slept applies it on a thread of its own)
                } else if (some instanceof ExternalQueueImpl e && asleep.contains(e.handle())) {
                    idle.queueWoke(e);
                    asleep.remove(e.handle());
                } else {
                    idle.aloneWindowMicros(rnd.nextBoolean() ? 1_000 : 2_000);
                }
                for (XQueue x : idle.queues()) {
                    NodeQueue q = (NodeQueue) x;
                    if (asleep.contains(q.handle())) {
                        continue;
                    }
                    List<NodeQueue> company = new ArrayList<>();
                    for (XQueue o : idle.queues()) {
                        if (o != q && !asleep.contains(o.handle()) && o.device().equals(q.device())
                                && (!((NodeQueue) o).group().equals(q.group()) || priority(o) != priority(q))) {
                            company.add((NodeQueue) o);
                        }
                    }
                    boolean contended = !company.isEmpty();
                    boolean isTop = contended && top.contains(q.handle());
                    String at = "step " + step + ", queue " + q.name() + " (" + q.device() + ", " + q.group() + ", priority " + priority(q)
                            + "), asleep " + asleep.size();
                    if (q instanceof ExternalQueueImpl e) {
                        assertEquals(contended, e.contended(), at);
                    } else {
                        XQueueImpl i = (XQueueImpl) q;
                        assertEquals(contended && !isTop, i.contended(), at);
                        assertEquals(isTop ? company : List.of(), i.holdOnArrival(), at);
                    }
                }
            }
        } finally {
            idle.stop();
        }
    }
}
