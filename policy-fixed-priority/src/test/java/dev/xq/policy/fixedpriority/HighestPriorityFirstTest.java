package dev.xq.policy.fixedpriority;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.QueueSpace;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HighestPriorityFirstTest {

    private final HighestPriorityFirst hpf = new HighestPriorityFirst();

    private RecordingActions decide(SchedulerView view) {
        RecordingActions a = new RecordingActions();
        hpf.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    @Test
    void highestReadyPriorityRunsAndTiesRunTogether() {
        RecordingActions a = decide(view(100,
                queue(1).priority(2).readySince(10).build(),
                queue(2).priority(1).readySince(5).build(),
                queue(3).priority(2).readySince(20).suspended().build(),
                queue(4).priority(-1).readySince(1).build()));
        assertTrue(a.runs(1));
        assertFalse(a.runs(2));
        assertTrue(a.runs(3));
        assertFalse(a.runs(4));
        assertEquals(null, a.wake, "hpf needs no timer");
    }

    @Test
    void missingPriorityCountsAsZero() {
        RecordingActions a = decide(view(100,
                queue(1).readySince(10).build(),
                queue(2).priority(-1).readySince(10).build()));
        assertTrue(a.runs(1));
        assertFalse(a.runs(2));
    }

    @Test
    void devicesAreDecidedSeparately() {
        RecordingActions a = decide(view(100,
                queue(1).priority(5).readySince(10).build(),
                queue(2).priority(1).device("d1").readySince(10).build(),
                queue(3).priority(0).device("d1").readySince(10).build()));
        assertTrue(a.runs(1));
        assertTrue(a.runs(2), "the top queue of d1 runs although d0 has a higher one");
        assertFalse(a.runs(3));
    }

    @Test
    void idleQueuesRunOnlyIfTheyWouldWinOnArrival() {
        RecordingActions a = decide(view(100,
                queue(1).priority(2).readySince(10).build(),
                queue(2).priority(3).build(),
                queue(3).priority(2).build(),
                queue(4).priority(1).build()));
        assertTrue(a.runs(2), "a higher idle queue launches the moment work arrives");
        assertTrue(a.runs(3));
        assertFalse(a.runs(4), "a lower idle queue must not slip work in before the next decision");
    }

    @Test
    void allIdleDeviceResumesEverything() {
        RecordingActions a = decide(view(100,
                queue(1).priority(2).suspended().build(),
                queue(2).priority(-5).suspended().build()));
        assertTrue(a.runs(1));
        assertTrue(a.runs(2));
    }

    @Test
    void queueHeldByItsApplicationDoesNotBlockTheDevice() {
        RecordingActions a = decide(view(100,
                queue(1).priority(9).readySince(10).suspendedByApp().build(),
                queue(2).priority(1).readySince(10).suspended().build()));
        assertTrue(a.runs(2), "the app-held top queue cannot run, so the next one must");
        assertTrue(a.runs(1), "the held queue may run as soon as its application lets it");
    }

    @Test
    void describesItself() {
        assertFalse(hpf.description().isBlank());
        assertFalse(hpf.description().contains("\n"));
    }

    private static SchedulerView spaced(SchedulerView v, Map<Long, QueueSpace> spaces) {
        return new SchedulerView(v.nowNanos(), v.queues(), v.devices(), spaces);
    }

    @Test
    void narrowableQueuesAreNarrowedBehindANarrowTenantAndHeldBehindABusyWideOne() {
        assertTrue(hpf.decidesSpace());
        SchedulerView base = view(100,
                queue(1).priority(2).readySince(10).work(1, 1, 50_000).build(),
                queue(2).priority(1).readySince(5).work(4, 2, 200_000).build(),
                queue(3).priority(1).readySince(5).work(4, 2, 21_000_000).build(),
                queue(4).priority(0).readySince(5).work(4, 2, 200_000).build());
        RecordingActions a = decide(spaced(base, Map.of(1L, new QueueSpace(false, 21, 132), 2L, new QueueSpace(true, 132, 132),
                3L, new QueueSpace(true, 132, 132))));
        assertTrue(a.runs(1));
        assertEquals(24, a.leaves(2), "behind 21 SMs of a decoder: narrowed to leave 24");
        assertEquals(24, a.leaves(3));
        assertFalse(a.runs(4), "not narrowable: held as before");

        RecordingActions wide = decide(spaced(base, Map.of(1L, new QueueSpace(false, 132, 132), 2L, new QueueSpace(true, 132, 132),
                3L, new QueueSpace(true, 132, 132))));
        assertFalse(wide.runs(2), "short commands behind a busy graph of the whole device: held in time");
        assertEquals(64, wide.leaves(3), "long commands: narrowed to leave half, a hold cannot cut them");

        RecordingActions off = new RecordingActions();
        new HighestPriorityFirst(false).schedule(spaced(base, Map.of(1L, new QueueSpace(false, 132, 132),
                2L, new QueueSpace(true, 132, 132))), off);
        assertEquals(64, off.leaves(2), "holdBehindWide off: narrowed to leave half");
    }

    @Test
    void withoutSpacesTheDecisionIsTimeOnly() {
        SchedulerView v = view(100,
                queue(1).priority(2).readySince(10).work(1, 1, 50_000).build(),
                queue(2).priority(1).readySince(5).work(4, 2, 21_000_000).build());
        RecordingActions a = decide(v);
        assertTrue(a.runs(1));
        assertFalse(a.runs(2));
        assertTrue(a.narrowed.isEmpty(), a.log.toString());
    }

    /** A switch spelt otherwise than true or false (DS reads 'yes' as false) is refused: the value in force stays. */
    @org.junit.jupiter.api.Test
    void holdBehindWideYesIsRefusedNotReadAsFalse() {
        HighestPriorityFirst hpf = new HighestPriorityFirst(true);
        HpfConfig off = (HpfConfig) java.lang.reflect.Proxy.newProxyInstance(HpfConfig.class.getClassLoader(), new Class<?>[] {HpfConfig.class},
                (proxy, m, args) -> m.getName().equals("holdBehindWide") ? Boolean.FALSE : m.getDefaultValue());
        hpf.configure(off, java.util.Map.of("holdBehindWide", "yes"));
        org.junit.jupiter.api.Assertions.assertTrue(hpf.holdBehindWide(), "'yes' refused, on stays");
        hpf.configure(off, java.util.Map.of("holdBehindWide", "false"));
        org.junit.jupiter.api.Assertions.assertFalse(hpf.holdBehindWide());
    }

    /** A key no setting has (a misspelling) is named with the keys allowed; the policy's own service properties are not. */
    @org.junit.jupiter.api.Test
    void anUnknownKeyIsNamedWithTheKeysAllowed() {
        HighestPriorityFirst hpf = new HighestPriorityFirst(true);
        java.util.List<String> warned = new java.util.ArrayList<>();
        hpf.log = (org.osgi.service.log.Logger) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {org.osgi.service.log.Logger.class}, (proxy, m, args) -> {
                    if (m.getName().equals("warn") && args != null && args.length == 1 && args[0] instanceof String line) {
                        warned.add(line);
                    }
                    return m.getReturnType() == boolean.class ? false : m.getReturnType() == String.class ? "test" : null;
                });
        HpfConfig on = (HpfConfig) java.lang.reflect.Proxy.newProxyInstance(HpfConfig.class.getClassLoader(), new Class<?>[] {HpfConfig.class},
                (proxy, m, args) -> m.getDefaultValue());
        hpf.configure(on, java.util.Map.of("holdBehindWde", "false", "xq.policy", "hpf", "xq.policy.bounded", true));
        org.junit.jupiter.api.Assertions.assertEquals(java.util.List.of(
                "dev.xq.policy.hpf: holdBehindWde is no setting here, ignored; allowed: holdBehindWide"), warned);
        org.junit.jupiter.api.Assertions.assertTrue(hpf.holdBehindWide(), "nothing changed");
        warned.clear();
        hpf.configure(on, java.util.Map.of("holdBehindWide", "true", "xq.policy", "hpf"));
        org.junit.jupiter.api.Assertions.assertEquals(java.util.List.of(), warned, "its own keys say nothing");
    }
}
