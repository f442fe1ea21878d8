package dev.xq.policy.testkit;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Random but plausible scheduler views for property tests. */
public final class RandomViews {

    private static final long NOW = 5_000_000_000L;

    private RandomViews() {
    }

    public static Arbitrary<SchedulerView> views() {
        Arbitrary<List<QueueView>> queues = queue().list().ofMinSize(0).ofMaxSize(24);
        Arbitrary<Long> now = Arbitraries.longs().between(0, 2_000_000_000L).map(d -> NOW + d);
        Arbitrary<List<DeviceView>> devices = device().list().ofSize(3);
        return Combinators.combine(now, queues, devices).as((t, qs, ds) -> {
            List<QueueView> fixed = new ArrayList<>();
            long handle = 1;
            for (QueueView q : qs) {
                // Handles unique, times not after the decision's time.
                fixed.add(new QueueView(handle++, q.name(), q.device(), q.group(), q.ready(), q.suspended(), q.suspendedByApp(),
                        q.ready() ? Math.min(q.readySinceNanos(), t) : 0, q.runNanos(), Math.min(q.lastResumedNanos(), t),
                        q.pending(), q.inFlight(), q.completed(), q.estimatedCommandNanos(), q.hints(), q.level()));
            }
            List<DeviceView> named = new ArrayList<>();
            for (int i = 0; i < ds.size(); i++) {
                DeviceView d = ds.get(i);
                named.add(new DeviceView("d" + i, d.platform(), d.engines(), d.memoryBytes()));
            }
            return new SchedulerView(t, fixed, named);
        });
    }

    private static Arbitrary<DeviceView> device() {
        return Combinators.combine(Arbitraries.integers().between(0, 16), Arbitraries.longs().between(0, 32).map(g -> g * Views.GB))
                .as((e, m) -> new DeviceView("d", "sim", e, m));
    }

    private static Arbitrary<QueueView> queue() {
        Arbitrary<String> device = Arbitraries.of("d0", "d1", "d2");
        Arbitrary<String> group = Arbitraries.of("A", "B", "C");
        Arbitrary<Boolean> bool = Arbitraries.of(true, false);
        Arbitrary<Long> time = Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs().between(1, 7_000_000_000L).map(x -> x + 1_000_000L));
        Arbitrary<Long> run = Arbitraries.longs().between(0, 3_000_000_000L);
        Arbitrary<List<Hint>> hints = hint().list().ofMaxSize(4);
        Arbitrary<boolean[]> flags = Combinators.combine(bool, bool, bool).as((r, s, a) -> new boolean[] {r, s, a});
        // pending, in flight and measured command time (0 = not measured yet)
        Arbitrary<long[]> work = Combinators.combine(Arbitraries.integers().between(1, 40), Arbitraries.integers().between(0, 2),
                Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs().between(1_000, 20_000_000L)))
                .as((p, i, c) -> new long[] {p, i, c});
        return Combinators.combine(device, group, flags, time, run, time, hints, work).as((d, g, f, since, ran, resumed, h, w) ->
                new QueueView(0, "q", d, g, f[0], f[1], f[2], since == 0 ? 1 : since, ran, resumed, f[0] ? (int) w[0] : 0,
                        f[0] ? (int) w[1] : 0, 0, w[2], h, PreemptionLevel.BLOCK));
    }

    private static Arbitrary<Hint> hint() {
        Arbitrary<Hint> priority = Arbitraries.oneOf(Arbitraries.integers().between(-3, 3), Arbitraries.integers().between(Hint.MIN_PRIORITY, Hint.MAX_PRIORITY))
                .map(Hint.Priority::new);
        Arbitrary<Hint> deadline = Arbitraries.longs().between(1, 3_000_000).map(Hint.Deadline::new);
        Arbitrary<Hint> laxity = Combinators.combine(Arbitraries.longs().between(0, 3_000_000), Arbitraries.integers().between(-3, 3),
                Arbitraries.integers().between(0, 4)).as((m, p, extra) -> new Hint.Laxity(m, p, p + extra));
        Arbitrary<Hint> utilization = Arbitraries.integers().between(1, 100).map(Hint.Utilization::new);
        Arbitrary<Hint> timeslice = Arbitraries.longs().between(100, 50_000).map(Hint.Timeslice::new);
        Arbitrary<Hint> demand = Combinators.combine(Arbitraries.integers().between(0, 20), Arbitraries.longs().between(0, 40).map(g -> g * Views.GB / 2))
                .filter((e, m) -> e > 0 || m > 0).as(Hint.Demand::new);
        // Few displays and small marks, so that equal marks and several displays come up often.
        Arbitrary<Hint> window = Combinators.combine(Arbitraries.integers().between(0, 2),
                Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs().between(1, 6))).as(Hint.WindowActive::new);
        return Arbitraries.oneOf(priority, deadline, laxity, utilization, timeslice, demand, window);
    }
}
