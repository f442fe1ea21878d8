package dev.xq.policy.drf;

import java.util.Map;
import java.util.TreeMap;

/**
 * Checked values of {@link DrfConfig}.
 *
 * @param weights weight per tenant; tenants not in the map weigh 1
 * @param defaultEngines engines a task without a {@code Demand} hint occupies
 */
record DrfSettings(Map<String, Double> weights, int defaultEngines) {

    static final int DEFAULT_ENGINES = 1;
    static final int MAX_ENGINES = 1_000_000;
    static final double MAX_WEIGHT = 1_000_000;
    static final DrfSettings DEFAULTS = of("", DEFAULT_ENGINES);

    DrfSettings {
        weights = Map.copyOf(weights);
    }

    /**
     * @throws IllegalArgumentException naming the bad entry or value and what is allowed
     */
    static DrfSettings of(String weights, int defaultEngines) {
        if (defaultEngines < 0 || defaultEngines > MAX_ENGINES) {
            throw new IllegalArgumentException("drf.default.engines " + defaultEngines + " is out of range [0, " + MAX_ENGINES + "]");
        }
        return new DrfSettings(parseWeights(weights), defaultEngines);
    }

    static DrfSettings from(DrfConfig config) {
        return of(config.drf_weights(), config.drf_default_engines());
    }

    double weight(String tenant) {
        return weights.getOrDefault(tenant, 1.0);
    }

    static Map<String, Double> parseWeights(String text) {
        Map<String, Double> out = new TreeMap<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String entry : text.split(",", -1)) {
            int eq = entry.indexOf('=');
            if (eq < 0 || eq != entry.lastIndexOf('=')) {
                throw new IllegalArgumentException("drf.weights entry '" + entry.strip() + "' is not name=weight (expected e.g. A=1,B=2)");
            }
            String name = entry.substring(0, eq).strip();
            String value = entry.substring(eq + 1).strip();
            if (name.isEmpty()) {
                throw new IllegalArgumentException("drf.weights entry '" + entry.strip() + "' has no tenant name (expected e.g. A=1,B=2)");
            }
            double w;
            try {
                w = Double.parseDouble(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("drf.weights weight '" + value + "' of tenant " + name + " is not a number", e);
            }
            if (!(w > 0 && w <= MAX_WEIGHT)) {
                throw new IllegalArgumentException("drf.weights weight " + value + " of tenant " + name + " is out of range (0, " + (long) MAX_WEIGHT + "]");
            }
            if (out.put(name, w) != null) {
                throw new IllegalArgumentException("drf.weights names tenant " + name + " twice");
            }
        }
        return out;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("drf.weights=");
        String sep = "";
        for (Map.Entry<String, Double> e : new TreeMap<>(weights).entrySet()) {
            sb.append(sep).append(e.getKey()).append('=').append(e.getValue());
            sep = ",";
        }
        return sb.append(" drf.default.engines=").append(defaultEngines).toString();
    }
}
