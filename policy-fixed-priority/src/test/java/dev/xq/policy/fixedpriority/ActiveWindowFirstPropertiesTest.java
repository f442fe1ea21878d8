package dev.xq.policy.fixedpriority;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RandomViews;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * {@code awf} against an oracle written from the rule, not from the code: per display the highest
 * positive mark, its groups active; per device exactly the queues of the top rank run. Views come
 * from {@link RandomViews}, whose hints include window-active marks on three displays.
 */
class ActiveWindowFirstPropertiesTest {

    @Provide
    Arbitrary<SchedulerView> views() {
        return RandomViews.views();
    }

    @Provide
    Arbitrary<AwfSettings.Order> orders() {
        return Arbitraries.of(AwfSettings.Order.class);
    }

    private static RecordingActions decide(ActiveWindowFirst p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
        return a;
    }

    private static ActiveWindowFirst unguarded(AwfSettings.Order order) {
        return new ActiveWindowFirst(AwfSettings.of(order, 0, 10_000), new RecordingLogger().logger);
    }

    /** The oracle: is {@code group} active in {@code view}? */
    private static boolean active(SchedulerView view, String group) {
        for (int display = 0; display <= 2; display++) {
            long top = 0;
            for (QueueView q : view.queues()) {
                Hint.WindowActive w = q.hint(Hint.WindowActive.class).orElse(null);
                if (w != null && w.display() == display) {
                    top = Math.max(top, w.mark());
                }
            }
            for (QueueView q : view.queues()) {
                Hint.WindowActive w = q.hint(Hint.WindowActive.class).orElse(null);
                if (top > 0 && w != null && w.display() == display && w.mark() == top && q.group().equals(group)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Property(tries = 400)
    void safeRepeatableAndExactlyTheTopRankRuns(@ForAll("views") SchedulerView view, @ForAll("orders") AwfSettings.Order order) {
        ActiveWindowFirst p = unguarded(order);
        RecordingActions a = decide(p, view);
        PolicyChecks.assertSafe(view, a);
        assertEquals(a.log, decide(p, view).log, "same view, same actions");
        assertEquals(a.log, decide(unguarded(order), view).log, "a freshly swapped-in instance decides the same");
        assertEquals(null, a.wake, "no timer without the guard");
        for (QueueView q : view.queues()) {
            long rank = rank(view, q, order);
            long top = view.queuesOn(q.device()).stream().filter(QueueView::runnable).mapToLong(o -> rank(view, o, order)).max().orElse(Long.MIN_VALUE);
            assertEquals(rank >= top, a.runs(q.handle()), "queue " + q.handle() + " of " + q.group() + " rank " + rank + " top " + top);
        }
    }

    private static long rank(SchedulerView view, QueueView q, AwfSettings.Order order) {
        long base = active(view, q.group()) ? 1L << 20 : 0;
        return base + (order == AwfSettings.Order.PRIORITY ? q.priority() : 0);
    }

    @Property(tries = 400)
    void whileTheActiveWindowHasReadyWorkOnADeviceNoOtherReadyQueueRunsThere(@ForAll("views") SchedulerView view,
                                                                           @ForAll("orders") AwfSettings.Order order) {
        RecordingActions a = decide(unguarded(order), view);
        for (QueueView q : view.queues()) {
            boolean activeWorkHere = view.queuesOn(q.device()).stream().anyMatch(o -> o.runnable() && active(view, o.group()));
            if (activeWorkHere && q.runnable() && !active(view, q.group())) {
                assertFalse(a.runs(q.handle()), "queue " + q.handle() + " of inactive " + q.group() + " runs beside the active window's work");
            }
        }
    }

    /**
     * Marking a group later (a higher mark on a display) makes it the display's active group and
     * takes the display from the group that had it, without any clearing; mark 0 never activates.
     */
    @Property(tries = 300)
    void theLatestMarkOnADisplayTakesItFromTheOneBefore(@ForAll("views") SchedulerView random, @ForAll @IntRange(min = 0, max = 2) int display,
                                                     @ForAll @LongRange(min = 1, max = 1_000) long earlier, @ForAll @LongRange(min = 1, max = 1_000) long later) {
        // Only A and B marked, both on one display; A first, B later (a higher mark).
        List<QueueView> qs = new ArrayList<>();
        for (QueueView q : random.queues()) {
            List<Hint> hints = new ArrayList<>();
            for (Hint h : q.hints()) {
                if (!(h instanceof Hint.WindowActive)) {
                    hints.add(h);
                }
            }
            qs.add(new QueueView(q.handle(), q.name(), q.device(), q.group(), q.ready(), q.suspended(), q.suspendedByApp(), q.readySinceNanos(),
                    q.runNanos(), q.lastResumedNanos(), q.pending(), q.inFlight(), q.completed(), q.estimatedCommandNanos(), hints, q.level()));
        }
        long hA = qs.size() + 1;
        long hB = qs.size() + 2;
        qs.add(markQueue(hA, "A", "d0", new Hint.WindowActive(display, earlier)));
        qs.add(markQueue(hB, "B", "d1", new Hint.WindowActive(display, earlier + later)));
        SchedulerView view = new SchedulerView(random.nowNanos(), qs, random.devices());
        Set<String> activeGroups = ActiveWindowFirst.activeGroups(view);
        assertEquals(Set.of("g:B"), activeGroups, "B, marked later, owns display " + display);
        // together: hints not read, so every ready queue of B runs (under priority only B's highest on each device)
        RecordingActions a = decide(unguarded(AwfSettings.Order.TOGETHER), view);
        for (QueueView q : view.queues()) {
            boolean bReadyHere = view.queuesOn(q.device()).stream().anyMatch(o -> o.runnable() && o.group().equals("B"));
            if (q.group().equals("A") && q.runnable() && bReadyHere) {
                assertFalse(a.runs(q.handle()), "A's queue " + q.handle() + " runs although B took the window");
            }
            if (q.group().equals("B") && q.runnable()) {
                assertTrue(a.runs(q.handle()), "B's ready queue " + q.handle() + " is held");
            }
        }
        // B clears its mark: A owns the display again.
        List<QueueView> cleared = new ArrayList<>(qs.subList(0, qs.size() - 1));
        cleared.add(markQueue(hB, "B", "d1", new Hint.WindowActive(display, 0)));
        assertEquals(Set.of("g:A"), ActiveWindowFirst.activeGroups(new SchedulerView(random.nowNanos(), cleared, random.devices())));
    }

    private static QueueView markQueue(long handle, String group, String device, Hint.WindowActive w) {
        return new QueueView(handle, "mark-" + group, device, group, false, false, false, 0, 0, 0, 0, 0, 0, 0, List.of(w),
                dev.xq.api.PreemptionLevel.BLOCK);
    }

    /**
     * The guard's bound: beside an active window that is always ready, queues of other groups
     * that are always ready wait at most {@code awf.guard.wait} at a stretch, and each runs in
     * every stretch of {@code wait + run}; the active window keeps at least the share
     * {@code wait / (wait + run)} of the time to itself.
     */
    @Property(tries = 60)
    void withTheGuardNoReadyQueueWaitsLongerThanTheWait(@ForAll @LongRange(min = 100, max = 50_000) long waitMicros,
                                                        @ForAll @LongRange(min = 100, max = 20_000) long runMicros,
                                                        @ForAll @IntRange(min = 1, max = 4) int others, @ForAll("orders") AwfSettings.Order order,
                                                        @ForAll @LongRange(min = 50_000, max = 3_000_000) long eventPeriodNanos) {
        ActiveWindowFirst p = new ActiveWindowFirst(AwfSettings.of(order, waitMicros, runMicros), new RecordingLogger().logger);
        Simulation sim = new Simulation(1_000_000_000L, new DeviceView("d0", "sim", 1, 0));
        sim.add(1, "d0", "w", new Hint.WindowActive(0, 5), new Hint.Priority(-1));
        sim.ready(1);
        Set<Long> handles = new HashSet<>();
        for (int i = 0; i < others; i++) {
            long h = 10 + i;
            sim.add(h, "d0", "bg" + i, new Hint.Priority(i));
            sim.ready(h);
            handles.add(h);
        }
        sim.decide(p);
        long length = 20 * (waitMicros + runMicros) * 1000;
        sim.run(p, sim.now() + length, eventPeriodNanos);
        for (long h : handles) {
            assertTrue(sim.maxWait(h) <= waitMicros * 1000, "queue " + h + " waited " + sim.maxWait(h) + " ns > awf.guard.wait " + waitMicros + " us");
            assertTrue(sim.queue(h).resumes >= 19, "queue " + h + " let run " + sim.queue(h).resumes + " times in 20 stretches");
        }
        assertTrue(sim.queue(1).runNanos >= length * waitMicros / (waitMicros + runMicros) - (waitMicros + runMicros) * 1000,
                "the active window ran " + sim.queue(1).runNanos + " ns of " + length);
    }
}
