package dev.xq.hal.sim;

import dev.xq.api.PreemptionLevel;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One simulated device's configuration, checked as a whole: a bad value names the key, the
 * value and the allowed range, and no device is made from it.
 */
record SimSettings(String id, String name, int engines, long memoryBytes, PreemptionLevel maxLevel, boolean lv2Flush,
                   long saveCostMicros, long restoreCostMicros, long launchCostMicros,
                   long failLaunchEvery, long failCommandEvery, long hangEvery, long loseAfter) {

    static final long DEFAULT_MEMORY = 16L << 30;
    private static final Pattern ID = Pattern.compile("[a-z][a-z0-9-]*");

    SimSettings {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("id '" + id + "' is not allowed; use lower-case letters, digits and '-', starting with a letter");
        }
        range("engines", engines, 1, 1_000_000);
        range("memoryBytes", memoryBytes, 0, 1L << 50);
        range("saveCostMicros", saveCostMicros, 0, 10_000_000);
        range("restoreCostMicros", restoreCostMicros, 0, 10_000_000);
        range("launchCostMicros", launchCostMicros, 0, 10_000_000);
        range("fault.failLaunchEvery", failLaunchEvery, 0, Long.MAX_VALUE);
        range("fault.failCommandEvery", failCommandEvery, 0, Long.MAX_VALUE);
        range("fault.hangEvery", hangEvery, 0, Long.MAX_VALUE);
        range("fault.loseAfter", loseAfter, 0, Long.MAX_VALUE);
        name = name == null || name.isBlank() ? "simulated XPU (" + engines + (engines == 1 ? " engine)" : " engines)") : name;
    }

    private static void range(String key, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(key + " " + v + " is out of range [" + min + ", " + max + "]");
        }
    }

    /** Defaults of the embedded device {@code sim0}. */
    static SimSettings defaults(String id) {
        return new SimSettings(id, null, 1, DEFAULT_MEMORY, PreemptionLevel.INTERRUPT, false, 20, 20, 2, 0, 0, 0, 0);
    }

    /**
     * Reads Config Admin properties; absent keys take the defaults.
     * @throws IllegalArgumentException naming the key, the value and what is allowed
     */
    static SimSettings from(Map<String, ?> p, String defaultId) {
        String id = text(p, "id", defaultId);
        int level = (int) number(p, "maxLevel", 3);
        PreemptionLevel maxLevel;
        try {
            maxLevel = PreemptionLevel.of(level);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("maxLevel " + level + " is out of range [1, 3]", e);
        }
        String lv2 = text(p, "lv2Mode", "stall");
        if (!lv2.equals("stall") && !lv2.equals("flush")) {
            throw new IllegalArgumentException("lv2Mode '" + lv2 + "' is not allowed; allowed: stall, flush");
        }
        long engines = number(p, "engines", 1);
        if (engines < 1 || engines > 1_000_000) {
            throw new IllegalArgumentException("engines " + engines + " is out of range [1, 1000000]");
        }
        return new SimSettings(id, text(p, "name", null), (int) engines, number(p, "memoryBytes", DEFAULT_MEMORY), maxLevel,
                lv2.equals("flush"), number(p, "saveCostMicros", 20), number(p, "restoreCostMicros", 20),
                number(p, "launchCostMicros", 2), number(p, "fault.failLaunchEvery", 0), number(p, "fault.failCommandEvery", 0),
                number(p, "fault.hangEvery", 0), number(p, "fault.loseAfter", 0));
    }

    private static String text(Map<String, ?> p, String key, String dflt) {
        Object v = p.get(key);
        return v == null ? dflt : v.toString().trim();
    }

    private static long number(Map<String, ?> p, String key, long dflt) {
        Object v = p.get(key);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Number n) {
            return n.longValue();
        }
        try {
            return Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " '" + v + "' is not a whole number", e);
        }
    }
}
