package dev.xq.runtime.config;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks a configuration's raw properties (as Config Admin gives them to a component: typed
 * values from a {@code .cfg} file are strings) against its configuration type, the annotation
 * interface whose methods Declarative Services turns them into.
 *
 * <p>Why: Declarative Services converts a string to a boolean as {@link Boolean#parseBoolean}
 * does, so {@code tokenOnLoopback=yes} is read as false without a word (the HTTP API then took
 * requests from loopback without the token it was meant to require), and fails on a number it
 * cannot parse with an exception that names neither the key nor what is allowed. A component
 * calls {@link #problems} first and refuses what it returns; {@link #unknown} names the keys no
 * setting has (a misspelt {@code prot=50001} changed nothing and said nothing).
 */
public final class ConfigCheck {

    private ConfigCheck() { }

    /**
     * @param type the component's configuration type (its methods: the settings)
     * @param raw the configuration's properties
     * @return each value that Declarative Services would not read as written: a boolean other than
     *     {@code true} or {@code false} (any case), a whole number or a number that does not parse
     *     or does not fit, each as a sentence naming the key, the value and what is allowed; empty
     *     where every value reads as written
     */
    public static List<String> problems(Class<?> type, Map<String, ?> raw) {
        return new ArrayList<>(problemsByKey(type, raw).values());
    }

    /**
     * For a component that refuses a configuration as a whole: throws where {@link #problems}
     * finds any, so that the component's own handling of a bad value (refused at start, the
     * values in force kept on an update) takes it.
     *
     * @throws IllegalArgumentException naming each key, its value and what is allowed
     */
    public static void require(Class<?> type, Map<String, ?> raw) {
        List<String> p = problems(type, raw);
        if (!p.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", p));
        }
    }

    /**
     * As {@link #problems}, by key, for a component that applies each key on its own.
     * @return key to the sentence naming its value and what is allowed, sorted by key
     */
    public static Map<String, String> problemsByKey(Class<?> type, Map<String, ?> raw) {
        Map<String, String> out = new java.util.TreeMap<>();
        for (Method m : settings(type)) {
            String key = key(m);
            Object v = raw.get(key);
            if (v == null) {
                continue;
            }
            String p = problem(key, m.getReturnType(), v);
            if (p != null) {
                out.put(key, p);
            }
        }
        return out;
    }

    /**
     * @param type the component's configuration type
     * @param raw the configuration's properties
     * @param others keys the component reads itself beside its settings (none is said)
     * @return the keys of {@code raw} that name no setting of {@code type}, sorted; the framework's
     *     own ({@code service.*}, {@code component.*}, {@code felix.*}, {@code osgi.*},
     *     {@code objectClass}) are left out
     */
    public static Set<String> unknown(Class<?> type, Map<String, ?> raw, Set<String> others) {
        Set<String> known = new TreeSet<>(others);
        for (Method m : settings(type)) {
            known.add(key(m));
        }
        Set<String> out = new TreeSet<>();
        for (String k : raw.keySet()) {
            if (!known.contains(k) && !framework(k)) {
                out.add(k);
            }
        }
        return out;
    }

    /**
     * Says, through {@code warn}, the keys of {@code raw} that name no setting of {@code type} (a
     * misspelt key changes nothing and would otherwise say nothing); says nothing where there are none.
     *
     * @param pid the configuration's PID, named in the line
     */
    public static void warnUnknown(String pid, Class<?> type, Map<String, ?> raw, java.util.function.Consumer<String> warn) {
        Set<String> u = unknown(type, raw, Set.of("felix.fileinstall.filename"));
        if (!u.isEmpty()) {
            warn.accept(pid + ": " + String.join(", ", u) + (u.size() == 1 ? " is" : " are") + " no setting here, ignored; allowed: "
                    + String.join(", ", keys(type)));
        }
    }

    /** @return the settings' keys of {@code type}, sorted (for "allowed: ..." in a message) */
    public static Set<String> keys(Class<?> type) {
        Set<String> out = new TreeSet<>();
        for (Method m : settings(type)) {
            out.add(key(m));
        }
        return out;
    }

    /**
     * @return one line for a log: the problems and unknown keys of a configuration, or null where
     *     there are none; {@code pid} names the configuration
     */
    public static String describe(String pid, Class<?> type, Map<String, ?> raw, Set<String> others) {
        List<String> p = problems(type, raw);
        Set<String> u = unknown(type, raw, others);
        if (p.isEmpty() && u.isEmpty()) {
            return null;
        }
        StringBuilder b = new StringBuilder(pid).append(": ");
        b.append(String.join("; ", p));
        if (!u.isEmpty()) {
            b.append(p.isEmpty() ? "" : "; ").append(u.size() == 1 ? "key " : "keys ").append(String.join(", ", u))
                    .append(u.size() == 1 ? " is" : " are").append(" no setting here; allowed: ").append(String.join(", ", keys(type)));
        }
        return b.toString();
    }

    private static List<Method> settings(Class<?> type) {
        List<Method> out = new ArrayList<>();
        for (Method m : type.getDeclaredMethods()) {
            if (m.getParameterCount() == 0 && !Modifier.isStatic(m.getModifiers()) && m.getReturnType() != void.class
                    && !m.isSynthetic()) {
                out.add(m);
            }
        }
        return out;
    }

    /** The property a method reads, as Declarative Services names it: '__' is '_', '_' is '.', '$$' is '$', a lone '$' nothing. */
    static String key(Method m) {
        String n = m.getName();
        StringBuilder b = new StringBuilder(n.length());
        for (int i = 0; i < n.length(); i++) {
            char c = n.charAt(i);
            if (c == '_') {
                if (i + 1 < n.length() && n.charAt(i + 1) == '_') {
                    b.append('_');
                    i++;
                } else {
                    b.append('.');
                }
            } else if (c == '$') {
                if (i + 1 < n.length() && n.charAt(i + 1) == '$') {
                    b.append('$');
                    i++;
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean framework(String k) {
        // xq.*: our components' own service properties (xq.policy, xq.policy.bounded, xq.platform),
        // which Declarative Services hands over with the configuration; no setting's key begins so
        return k.startsWith("service.") || k.startsWith("component.") || k.startsWith("felix.") || k.startsWith("osgi.")
                || k.startsWith("xq.") || k.equals("objectClass");
    }

    private static String problem(String key, Class<?> t, Object v) {
        if (v.getClass().isArray() || v instanceof java.util.Collection<?>) {
            return null; // multi-valued: Declarative Services takes the first for a scalar; not judged here
        }
        if (t == boolean.class || t == Boolean.class) {
            if (v instanceof Boolean) {
                return null;
            }
            String s = v.toString().trim().toLowerCase(Locale.ROOT);
            return s.equals("true") || s.equals("false") ? null : key + " '" + v + "' is not true or false";
        }
        long min;
        long max;
        if (t == int.class || t == Integer.class) {
            min = Integer.MIN_VALUE;
            max = Integer.MAX_VALUE;
        } else if (t == long.class || t == Long.class) {
            min = Long.MIN_VALUE;
            max = Long.MAX_VALUE;
        } else if (t == short.class || t == Short.class) {
            min = Short.MIN_VALUE;
            max = Short.MAX_VALUE;
        } else if (t == byte.class || t == Byte.class) {
            min = Byte.MIN_VALUE;
            max = Byte.MAX_VALUE;
        } else if (t == double.class || t == Double.class || t == float.class || t == Float.class) {
            if (v instanceof Number) {
                return null;
            }
            try {
                double d = Double.parseDouble(v.toString().trim());
                return Double.isFinite(d) ? null : key + " '" + v + "' is not a finite number";
            } catch (NumberFormatException e) {
                return key + " '" + v + "' is not a number";
            }
        } else {
            return null; // strings, enums, classes: the component checks its own
        }
        long n;
        if (v instanceof Number num) {
            if (v instanceof Double || v instanceof Float) {
                double d = num.doubleValue();
                if (d != Math.rint(d)) {
                    return key + " '" + v + "' is not a whole number";
                }
            }
            n = num.longValue();
        } else {
            try {
                n = Long.parseLong(v.toString().trim());
            } catch (NumberFormatException e) {
                return key + " '" + v + "' is not a whole number";
            }
        }
        return n < min || n > max ? key + " '" + v + "' does not fit: allowed: a whole number in [" + min + ", " + max + "]" : null;
    }
}
