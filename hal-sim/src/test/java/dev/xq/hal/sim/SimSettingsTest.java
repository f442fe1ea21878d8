package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Configuration values: defaults, and every bad value named with its key and what is allowed. */
class SimSettingsTest {

    @Test
    void absentKeysTakeTheDocumentedDefaults() {
        SimSettings s = SimSettings.from(Map.of(), "sim0");
        assertEquals("sim0", s.id());
        assertEquals(1, s.engines());
        assertEquals(17179869184L, s.memoryBytes());
        assertEquals(PreemptionLevel.INTERRUPT, s.maxLevel());
        assertFalse(s.lv2Flush());
        assertEquals(20, s.saveCostMicros());
        assertEquals(20, s.restoreCostMicros());
        assertEquals(2, s.launchCostMicros());
        assertEquals(0, s.failLaunchEvery() + s.failCommandEvery() + s.hangEvery() + s.loseAfter());
        assertEquals("simulated XPU (1 engine)", s.name());
        assertTrue(SimSettings.enabled(Map.of()));
    }

    @Test
    void valuesAreReadFromNumbersAndStrings() {
        Map<String, Object> p = new HashMap<>();
        p.put("id", "sim-big");
        p.put("name", "big one");
        p.put("engines", "9");
        p.put("memoryBytes", 18L << 30);
        p.put("maxLevel", 2);
        p.put("lv2Mode", "flush");
        p.put("saveCostMicros", 5L);
        p.put("fault.hangEvery", "7");
        p.put("enabled", "false");
        SimSettings s = SimSettings.from(p, "x");
        assertEquals("sim-big", s.id());
        assertEquals("big one", s.name());
        assertEquals(9, s.engines());
        assertEquals(18L << 30, s.memoryBytes());
        assertEquals(PreemptionLevel.DEACTIVATE, s.maxLevel());
        assertTrue(s.lv2Flush());
        assertEquals(5, s.saveCostMicros());
        assertEquals(7, s.hangEvery());
        assertFalse(SimSettings.enabled(p));
    }

    @Test
    void badValuesNameKeyValueAndAllowedRange() {
        assertMessage(Map.of("engines", 0), "engines 0", "[1, 1000000]");
        assertMessage(Map.of("engines", "many"), "engines 'many'", "whole number", "[1, 1000000]");
        assertMessage(Map.of("engines", 2.5), "engines '2.5'", "whole number");
        assertMessage(Map.of("memoryBytes", -1L), "memoryBytes -1", "[0, 1125899906842624]");
        assertMessage(Map.of("maxLevel", 4), "maxLevel 4", "[1, 3]");
        assertMessage(Map.of("maxLevel", 0), "maxLevel 0", "[1, 3]");
        assertMessage(Map.of("lv2Mode", "drain"), "lv2Mode 'drain'", "stall, flush");
        assertMessage(Map.of("id", "Sim 1"), "id 'Sim 1'", "[a-z][a-z0-9-]*");
        assertMessage(Map.of("id", "1sim"), "id '1sim'", "[a-z][a-z0-9-]*");
        assertMessage(Map.of("saveCostMicros", -1), "saveCostMicros -1", "[0, 10000000]");
        assertMessage(Map.of("restoreCostMicros", 10_000_001), "restoreCostMicros 10000001", "[0, 10000000]");
        assertMessage(Map.of("launchCostMicros", "x"), "launchCostMicros 'x'", "[0, 10000000]");
        for (String k : new String[] {"fault.failLaunchEvery", "fault.failCommandEvery", "fault.hangEvery", "fault.loseAfter"}) {
            assertMessage(Map.of(k, -2), k + " -2", ">= 0");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SimSettings.enabled(Map.of("enabled", "yes")));
        assertTrue(e.getMessage().contains("enabled 'yes'") && e.getMessage().contains("true, false"), e.getMessage());
    }

    @Test
    void unknownKeysAreFoundButFrameworkKeysAreNot() {
        Map<String, Object> p = new HashMap<>();
        p.put("engine", 4);
        p.put("service.pid", "dev.xq.hal.sim");
        p.put("component.id", 3L);
        p.put("felix.fileinstall.filename", "file:/x.cfg");
        p.put("engines", 4);
        assertEquals(Set.of("engine"), SimSettings.unknownKeys(p));
    }

    private static void assertMessage(Map<String, Object> props, String... parts) {
        Executable e = () -> SimSettings.from(props, "x");
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        for (String p : parts) {
            assertTrue(x.getMessage().contains(p), "'" + x.getMessage() + "' should contain '" + p + "'");
        }
    }
}
