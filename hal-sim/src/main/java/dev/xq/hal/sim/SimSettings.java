package dev.xq.hal.sim;

import dev.xq.api.PreemptionLevel;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One simulated device's configuration, checked as a whole: a bad value names the key, the
 * value and the allowed range, and no device is made from it.
 */
record SimSettings(String id, String name, int engines, long memoryBytes, PreemptionLevel maxLevel, boolean lv2Flush,
                   long saveCostMicros, long restoreCostMicros, long launchCostMicros,
                   long failLaunchEvery, long failCommandEvery, long hangEvery, long loseAfter) {

    static final long DEFAULT_MEMORY = 16L << 30;
    static final int MAX_ENGINES = 1_000_000;
    /** 1 PiB: far above any device, and far enough from overflow for sums of command demands. */
    static final long MAX_MEMORY = 1L << 50;
    /** Ten seconds: costs beyond that are typing mistakes, not models of hardware. */
    static final long MAX_COST_MICROS = 10_000_000;

    /** Every key this bundle reads; the rest of a configuration's keys are Config Admin's or a typo. */
    static final Set<String> KEYS = Set.of("enabled", "id", "name", "engines", "memoryBytes", "maxLevel", "lv2Mode",
            "saveCostMicros", "restoreCostMicros", "launchCostMicros",
            "fault.failLaunchEvery", "fault.failCommandEvery", "fault.hangEvery", "fault.loseAfter");

    private static final Pattern ID = Pattern.compile("[a-z][a-z0-9-]*");

    SimSettings {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("id '" + id + "' is not allowed; allowed: [a-z][a-z0-9-]* (a lower-case letter, "
                    + "then lower-case letters, digits and '-')");
        }
        range("engines", engines, 1, MAX_ENGINES);
        range("memoryBytes", memoryBytes, 0, MAX_MEMORY);
        range("saveCostMicros", saveCostMicros, 0, MAX_COST_MICROS);
        range("restoreCostMicros", restoreCostMicros, 0, MAX_COST_MICROS);
        range("launchCostMicros", launchCostMicros, 0, MAX_COST_MICROS);
        range("fault.failLaunchEvery", failLaunchEvery, 0, Long.MAX_VALUE);
        range("fault.failCommandEvery", failCommandEvery, 0, Long.MAX_VALUE);
        range("fault.hangEvery", hangEvery, 0, Long.MAX_VALUE);
        range("fault.loseAfter", loseAfter, 0, Long.MAX_VALUE);
        name = name == null || name.isBlank() ? "simulated XPU (" + engines + (engines == 1 ? " engine)" : " engines)") : name;
    }

    private static void range(String key, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(key + " " + v + " is out of range " + describe(min, max));
        }
    }

    private static String describe(long min, long max) {
        return max == Long.MAX_VALUE ? "[" + min + ", ...] (a whole number >= " + min + ")" : "[" + min + ", " + max + "]";
    }

    /**
     * Reads Config Admin properties; absent keys take the defaults.
     * @throws IllegalArgumentException naming the key, the value and what is allowed
     */
    static SimSettings from(Map<String, ?> p, String defaultId) {
        String id = text(p, "id", defaultId);
        long level = number(p, "maxLevel", 3, 1, 3);
        String lv2 = text(p, "lv2Mode", "stall");
        if (!lv2.equals("stall") && !lv2.equals("flush")) {
            throw new IllegalArgumentException("lv2Mode '" + lv2 + "' is not allowed; allowed: stall, flush");
        }
        return new SimSettings(id, text(p, "name", null),
                (int) number(p, "engines", 1, 1, MAX_ENGINES),
                number(p, "memoryBytes", DEFAULT_MEMORY, 0, MAX_MEMORY),
                PreemptionLevel.of((int) level),
                lv2.equals("flush"),
                number(p, "saveCostMicros", 20, 0, MAX_COST_MICROS),
                number(p, "restoreCostMicros", 20, 0, MAX_COST_MICROS),
                number(p, "launchCostMicros", 2, 0, MAX_COST_MICROS),
                number(p, "fault.failLaunchEvery", 0, 0, Long.MAX_VALUE),
                number(p, "fault.failCommandEvery", 0, 0, Long.MAX_VALUE),
                number(p, "fault.hangEvery", 0, 0, Long.MAX_VALUE),
                number(p, "fault.loseAfter", 0, 0, Long.MAX_VALUE));
    }

    /**
     * @return whether the configuration asks for a device at all ({@code enabled}, default true)
     * @throws IllegalArgumentException if {@code enabled} is neither true nor false
     */
    static boolean enabled(Map<String, ?> p) {
        Object v = p.get("enabled");
        if (v == null || v instanceof Boolean) {
            return v == null || (Boolean) v;
        }
        String s = v.toString().trim();
        if (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(s);
        }
        throw new IllegalArgumentException("enabled '" + v + "' is not allowed; allowed: true, false");
    }

    /** @return keys of {@code p} that this bundle does not know, leaving out the framework's own */
    static Set<String> unknownKeys(Map<String, ?> p) {
        Set<String> unknown = new TreeSet<>();
        for (String k : p.keySet()) {
            if (!KEYS.contains(k) && !k.startsWith("service.") && !k.startsWith("component.") && !k.startsWith("felix.")
                    && !k.startsWith("osgi.") && !k.startsWith(".")) {
                unknown.add(k);
            }
        }
        return unknown;
    }

    private static String text(Map<String, ?> p, String key, String dflt) {
        Object v = p.get(key);
        return v == null ? dflt : v.toString().trim();
    }

    private static long number(Map<String, ?> p, String key, long dflt, long min, long max) {
        Object v = p.get(key);
        if (v == null) {
            return dflt;
        }
        long n;
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            n = ((Number) v).longValue();
        } else {
            try {
                n = Long.parseLong(v.toString().trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + " '" + v + "' is not a whole number; allowed: " + describe(min, max), e);
            }
        }
        range(key, n, min, max);
        return n;
    }
}
