package dev.xq.bench.args;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The checked parameter values of one run: every parameter of the scenario, defaults filled in. */
public final class Params {

    private final Map<String, Object> values;

    Params(Map<String, Object> values) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** @return the values as given or defaulted, in the scenario's order */
    public Map<String, Object> asMap() {
        return values;
    }

    private Object get(String name) {
        Object v = values.get(name);
        if (v == null) {
            // A scenario asking for a parameter it did not declare is a bug in the suite.
            throw new IllegalStateException("parameter '" + name + "' is not declared; declared: " + values.keySet());
        }
        return v;
    }

    public long longValue(String name) {
        return ((Number) get(name)).longValue();
    }

    public int intValue(String name) {
        return Math.toIntExact(longValue(name));
    }

    public double doubleValue(String name) {
        return ((Number) get(name)).doubleValue();
    }

    public String string(String name) {
        return (String) get(name);
    }

    @SuppressWarnings("unchecked")
    public List<Long> longs(String name) {
        return (List<Long>) get(name);
    }

    @SuppressWarnings("unchecked")
    public List<Double> doubles(String name) {
        return (List<Double>) get(name);
    }

    @SuppressWarnings("unchecked")
    public List<String> strings(String name) {
        return (List<String>) get(name);
    }
}
