package dev.xq.runtime.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Configuration of dev.xq.scheduler: a bad key changes nothing and does not stop the good ones. */
class SchedulerConfigTest {

    private final RuntimeComponent rc = new RuntimeComponent();

    @AfterEach
    void stop() {
        rc.deactivate();
    }

    /** A configuration as DS hands it over: values that cannot be converted throw when read. */
    private static SchedulerConfig config(Object policy, Object micros, Object inline) {
        return config(policy, micros, inline, true);
    }

    private static SchedulerConfig config(Object policy, Object micros, Object inline, Object onTop) {
        return (SchedulerConfig) Proxy.newProxyInstance(SchedulerConfig.class.getClassLoader(), new Class<?>[] {SchedulerConfig.class},
                (proxy, m, args) -> {
                    Object v = switch (m.getName()) {
                        case "policy" -> policy;
                        case "decisionDeadlineMicros" -> micros;
                        case "inlineDecisions" -> inline;
                        case "onTop" -> onTop;
                        default -> throw new UnsupportedOperationException(m.getName());
                    };
                    if (v instanceof RuntimeException e) {
                        throw e;
                    }
                    return v;
                });
    }

    @Test
    void aHugeDeadlineDoesNotWrapIntoATinyOne() {
        rc.activate(config("native", 18446744073710552L, true), Map.of());
        assertEquals(10_000_000L, rc.core().scheduler().deadlineNanos(), "the default deadline is kept");
    }

    @Test
    void anUnreadableValueLeavesTheOtherKeysApplied() {
        rc.activate(config("edf", new IllegalArgumentException("cannot convert 'soon' to long"), true),
                Map.of("policy", "edf", "decisionDeadlineMicros", "soon"));
        assertEquals("edf", rc.core().scheduler().selected(), "the valid policy key still applies");
        assertEquals(10_000_000L, rc.core().scheduler().deadlineNanos());
    }

    @Test
    void inlineDecisionsMaybeIsNotReadAsFalse() {
        rc.activate(config("native", 10_000L, false), Map.of("inlineDecisions", "maybe"));
        assertTrue(rc.core().scheduler().inlineDecisions(), "'maybe' is refused, the default (on) stays");
        rc.modified(config("native", 10_000L, false), Map.of("inlineDecisions", "false"));
        assertEquals(false, rc.core().scheduler().inlineDecisions());
    }

    @Test
    void onTopSwitchesTheRuleAndAnythingButTrueOrFalseChangesNothing() {
        rc.activate(config("native", 10_000L, true, false), Map.of("onTop", "perhaps"));
        assertTrue(rc.core().onTop(), "'perhaps' is refused, the default (on) stays");
        rc.modified(config("native", 10_000L, true, false), Map.of("onTop", "false"));
        assertEquals(false, rc.core().onTop());
        rc.modified(config("native", 10_000L, true, true), Map.of("onTop", true));
        assertEquals(true, rc.core().onTop());
    }
    /** A configuration whose keys are all unreadable but those given. */
    private static SchedulerConfig only(Map<String, Object> values) {
        return (SchedulerConfig) Proxy.newProxyInstance(SchedulerConfig.class.getClassLoader(), new Class<?>[] {SchedulerConfig.class},
                (proxy, m, args) -> {
                    Object v = values.get(m.getName());
                    if (v == null) {
                        throw new UnsupportedOperationException(m.getName());
                    }
                    return v;
                });
    }

    @Test
    void narrowedGuardsSwitchAndAnythingButTrueOrFalseChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertTrue(rc.core().scheduler().narrowedGuards(), "on by default");
        rc.modified(only(Map.of("narrowedGuards", false)), Map.of("narrowedGuards", "no"));
        assertEquals(true, rc.core().scheduler().narrowedGuards(), "'no' is refused, on stays");
        rc.modified(only(Map.of("narrowedGuards", false)), Map.of("narrowedGuards", "false"));
        assertEquals(false, rc.core().scheduler().narrowedGuards());
        rc.modified(only(Map.of("narrowedGuards", true)), Map.of("narrowedGuards", true));
        assertEquals(true, rc.core().scheduler().narrowedGuards());
    }

    @Test
    void fruitlessSpellsSwitchAndAnythingButTrueOrFalseChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertFalse(rc.core().scheduler().fruitlessSpells(), "off by default");
        rc.modified(only(Map.of("fruitlessSpells", true)), Map.of("fruitlessSpells", "yes"));
        assertEquals(false, rc.core().scheduler().fruitlessSpells(), "'yes' is refused, off stays");
        rc.modified(only(Map.of("fruitlessSpells", true)), Map.of("fruitlessSpells", "true"));
        assertEquals(true, rc.core().scheduler().fruitlessSpells());
        rc.modified(only(Map.of("fruitlessSpells", false)), Map.of("fruitlessSpells", false));
        assertEquals(false, rc.core().scheduler().fruitlessSpells());
    }

    @Test
    void wholeBesideReserveSwitchAndAnythingButTrueOrFalseChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertFalse(rc.core().scheduler().wholeBesideReserve(), "off by default");
        rc.modified(only(Map.of("wholeBesideReserve", true)), Map.of("wholeBesideReserve", "yes"));
        assertEquals(false, rc.core().scheduler().wholeBesideReserve(), "'yes' is refused, off stays");
        rc.modified(only(Map.of("wholeBesideReserve", true)), Map.of("wholeBesideReserve", "true"));
        assertEquals(true, rc.core().scheduler().wholeBesideReserve());
        rc.modified(only(Map.of("wholeBesideReserve", false)), Map.of("wholeBesideReserve", false));
        assertEquals(false, rc.core().scheduler().wholeBesideReserve());
    }

    @Test
    void narrowBeatsKeepReserveSwitchAndAnythingButTrueOrFalseChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertTrue(rc.core().scheduler().narrowBeatsKeepReserve(), "on by default");
        rc.modified(only(Map.of("narrowBeatsKeepReserve", false)), Map.of("narrowBeatsKeepReserve", false));
        assertEquals(false, rc.core().scheduler().narrowBeatsKeepReserve());
        rc.modified(only(Map.of("narrowBeatsKeepReserve", true)), Map.of("narrowBeatsKeepReserve", "1"));
        assertEquals(false, rc.core().scheduler().narrowBeatsKeepReserve(), "'1' is refused, off stays");
        rc.modified(only(Map.of("narrowBeatsKeepReserve", true)), Map.of("narrowBeatsKeepReserve", "true"));
        assertEquals(true, rc.core().scheduler().narrowBeatsKeepReserve());
    }

    @Test
    void randomReturnsSwitchAndAnythingButTrueOrFalseChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertTrue(rc.core().scheduler().randomReturns(), "on by default");
        rc.modified(only(Map.of("randomReturns", false)), Map.of("randomReturns", false));
        assertEquals(false, rc.core().scheduler().randomReturns());
        rc.modified(only(Map.of("randomReturns", true)), Map.of("randomReturns", "yes"));
        assertEquals(false, rc.core().scheduler().randomReturns(), "'yes' is refused, off stays");
        rc.modified(only(Map.of("randomReturns", true)), Map.of("randomReturns", "true"));
        assertEquals(true, rc.core().scheduler().randomReturns());
    }

    @Test
    void bestEffortSharesAreSetAndABadEntryChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertEquals("", rc.core().bestEffortShares(), "none by default");
        rc.modified(only(Map.of("bestEffortShares", "trainer=3,triton=1")), Map.of("bestEffortShares", "trainer=3,triton=1"));
        assertEquals("trainer=3,triton=1", rc.core().bestEffortShares());
        rc.modified(only(Map.of("bestEffortShares", "trainer=3,triton=many")), Map.of("bestEffortShares", "trainer=3,triton=many"));
        assertEquals("trainer=3,triton=1", rc.core().bestEffortShares(), "'many' is refused, the shares in force stay");
        rc.modified(only(Map.of("bestEffortShares", "")), Map.of("bestEffortShares", ""));
        assertEquals("", rc.core().bestEffortShares(), "empty: none");
    }

    @Test
    void everySwitchRefusesAnythingButTrueOrFalse() {
        rc.activate(only(Map.of()), Map.of());
        boolean balance = rc.core().bestEffortBalance();
        boolean memory = rc.core().bestEffortBalanceMemory();
        // DS reads 'yes' and 'on' as false: refused instead, the values in force stay
        rc.modified(only(Map.of("bestEffortBalance", !balance, "bestEffortBalanceMemory", !memory)),
                Map.of("bestEffortBalance", balance ? "off" : "on", "bestEffortBalanceMemory", "yes"));
        assertEquals(balance, rc.core().bestEffortBalance());
        assertEquals(memory, rc.core().bestEffortBalanceMemory());
        boolean quick = rc.core().bestEffortBalanceQuick();
        assertTrue(quick, "quick weighings by default");
        rc.modified(only(Map.of("bestEffortBalanceQuick", false)), Map.of("bestEffortBalanceQuick", "no"));
        assertEquals(quick, rc.core().bestEffortBalanceQuick(), "'no' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortBalanceQuick", false)), Map.of("bestEffortBalanceQuick", "false"));
        assertFalse(rc.core().bestEffortBalanceQuick(), "false is read");
        assertTrue(rc.core().bestEffortBalanceEarly(), "early weighings by default");
        rc.modified(only(Map.of("bestEffortBalanceEarly", false)), Map.of("bestEffortBalanceEarly", "off"));
        assertTrue(rc.core().bestEffortBalanceEarly(), "'off' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortBalanceEarly", false)), Map.of("bestEffortBalanceEarly", "false"));
        assertFalse(rc.core().bestEffortBalanceEarly(), "false is read");
        assertTrue(rc.core().bestEffortBalanceCarry(), "counts carried across a stop by default");
        rc.modified(only(Map.of("bestEffortBalanceCarry", false)), Map.of("bestEffortBalanceCarry", "0"));
        assertTrue(rc.core().bestEffortBalanceCarry(), "'0' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortBalanceCarry", false)), Map.of("bestEffortBalanceCarry", "false"));
        assertFalse(rc.core().bestEffortBalanceCarry(), "false is read");
        assertTrue(rc.core().bestEffortBalanceLongCommands(), "long commands weighed by their gaps by default");
        rc.modified(only(Map.of("bestEffortBalanceLongCommands", false)), Map.of("bestEffortBalanceLongCommands", "nein"));
        assertTrue(rc.core().bestEffortBalanceLongCommands(), "'nein' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortBalanceLongCommands", false)), Map.of("bestEffortBalanceLongCommands", "false"));
        assertFalse(rc.core().bestEffortBalanceLongCommands(), "false is read");
        assertTrue(rc.core().bestEffortBalanceRegion(), "the region's weight on by default");
        rc.modified(only(Map.of("bestEffortBalanceRegion", false)), Map.of("bestEffortBalanceRegion", "nein"));
        assertTrue(rc.core().bestEffortBalanceRegion(), "'nein' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortBalanceRegion", false)), Map.of("bestEffortBalanceRegion", "false"));
        assertFalse(rc.core().bestEffortBalanceRegion(), "false is read");
        assertTrue(rc.core().bestEffortBalanceRegionShort(), "short commands weighed by their time narrowed by default");
        rc.modified(only(Map.of("bestEffortBalanceRegionShort", false)), Map.of("bestEffortBalanceRegionShort", "yes"));
        assertTrue(rc.core().bestEffortBalanceRegionShort(), "'yes' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortBalanceRegionShort", false)), Map.of("bestEffortBalanceRegionShort", "false"));
        assertFalse(rc.core().bestEffortBalanceRegionShort(), "false is read");
        assertTrue(rc.core().bestEffortDeviceFrame(), "parts in the device's sixteenths by default");
        rc.modified(only(Map.of("bestEffortDeviceFrame", false)), Map.of("bestEffortDeviceFrame", "nope"));
        assertTrue(rc.core().bestEffortDeviceFrame(), "'nope' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortDeviceFrame", false)), Map.of("bestEffortDeviceFrame", "false"));
        assertFalse(rc.core().bestEffortDeviceFrame(), "false is read");
        assertFalse(rc.core().bestEffortOneFrame(), "parts in their own regions by default");
        rc.modified(only(Map.of("bestEffortOneFrame", true)), Map.of("bestEffortOneFrame", "nope"));
        assertFalse(rc.core().bestEffortOneFrame(), "'nope' refused, the value in force stays");
        rc.modified(only(Map.of("bestEffortOneFrame", true)), Map.of("bestEffortOneFrame", "true"));
        assertTrue(rc.core().bestEffortOneFrame(), "true is read");
        rc.modified(only(Map.of("bestEffortBalance", !balance)), Map.of("bestEffortBalance", Boolean.toString(!balance).toUpperCase()));
        assertEquals(!balance, rc.core().bestEffortBalance(), "TRUE and FALSE in any case are read");
    }

    @Test
    void holdBesideSlowedIsOffByDefaultAndABadValueChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertFalse(rc.core().scheduler().holdBesideSlowed(), "off by default: an experiment");
        rc.modified(only(Map.of("holdBesideSlowed", true)), Map.of("holdBesideSlowed", "yes"));
        assertFalse(rc.core().scheduler().holdBesideSlowed(), "'yes' refused, the value in force stays");
        rc.modified(only(Map.of("holdBesideSlowed", true)), Map.of("holdBesideSlowed", "true"));
        assertTrue(rc.core().scheduler().holdBesideSlowed(), "true is read");
    }

    @Test
    void holdBesideNarrowIsSetAndABadEntryChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertEquals("", rc.core().scheduler().holdBesideNarrow(), "none by default");
        rc.modified(only(Map.of("holdBesideNarrow", "triton, gemm")), Map.of("holdBesideNarrow", "triton, gemm"));
        assertEquals("gemm,triton", rc.core().scheduler().holdBesideNarrow());
        rc.modified(only(Map.of("holdBesideNarrow", "triton,triton/default")), Map.of("holdBesideNarrow", "triton,triton/default"));
        assertEquals("gemm,triton", rc.core().scheduler().holdBesideNarrow(), "a queue's name is refused, the names in force stay");
        rc.modified(only(Map.of("holdBesideNarrow", "")), Map.of("holdBesideNarrow", ""));
        assertEquals("", rc.core().scheduler().holdBesideNarrow(), "empty: none");
    }

    @Test
    void theArrivalLingerIsSetAndAValueOutOfRangeChangesNothing() {
        rc.activate(only(Map.of("arrivalLingerMicros", 150L)), Map.of("arrivalLingerMicros", 150L));
        assertEquals(150L, rc.core().scheduler().arrivalLingerMicros());
        rc.modified(only(Map.of("arrivalLingerMicros", -5L)), Map.of("arrivalLingerMicros", -5L));
        assertEquals(150L, rc.core().scheduler().arrivalLingerMicros(), "-5 is refused, 150 stays");
        rc.modified(only(Map.of("arrivalLingerMicros", 0L)), Map.of("arrivalLingerMicros", 0L));
        assertEquals(0L, rc.core().scheduler().arrivalLingerMicros(), "0: off");
    }

    @Test
    void theArrivalGraceIsSetAndAValueOutOfRangeChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertEquals(1000L, rc.core().scheduler().arrivalGraceMicros(), "the default");
        rc.modified(only(Map.of("arrivalGraceMicros", 400L)), Map.of("arrivalGraceMicros", 400L));
        assertEquals(400L, rc.core().scheduler().arrivalGraceMicros());
        rc.modified(only(Map.of("arrivalGraceMicros", 100_001L)), Map.of("arrivalGraceMicros", 100_001L));
        assertEquals(400L, rc.core().scheduler().arrivalGraceMicros(), "100001 is refused, 400 stays");
    }

    @Test
    void theArrivalGraceFromTheReactionIsSetAndAValueOutOfRangeChangesNothing() {
        rc.activate(only(Map.of()), Map.of());
        assertEquals(5000L, rc.core().scheduler().arrivalReactionGraceMicros(), "the default");
        rc.modified(only(Map.of("arrivalReactionGraceMicros", 0L)), Map.of("arrivalReactionGraceMicros", 0L));
        assertEquals(0L, rc.core().scheduler().arrivalReactionGraceMicros(), "0: off");
        rc.modified(only(Map.of("arrivalReactionGraceMicros", -1L)), Map.of("arrivalReactionGraceMicros", -1L));
        assertEquals(0L, rc.core().scheduler().arrivalReactionGraceMicros(), "-1 is refused, 0 stays");
        rc.modified(only(Map.of("arrivalReactionGraceMicros", 2500L)), Map.of("arrivalReactionGraceMicros", 2500L));
        assertEquals(2500L, rc.core().scheduler().arrivalReactionGraceMicros());
    }
}
