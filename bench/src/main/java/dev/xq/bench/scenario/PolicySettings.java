package dev.xq.bench.scenario;

import java.util.Dictionary;
import java.util.Enumeration;
import java.util.Hashtable;
import java.util.Map;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Knobs of a policy set through Config Admin for one run; closing puts back what was there
 * before (or deletes the configuration if there was none).
 */
public final class PolicySettings implements AutoCloseable {

    private final Configuration configuration;
    private final Dictionary<String, Object> previous;

    private PolicySettings(Configuration configuration, Dictionary<String, Object> previous) {
        this.configuration = configuration;
        this.previous = previous;
    }

    /**
     * Sets {@code values} on {@code pid}, keeping its other properties.
     * @throws IllegalStateException if Config Admin is missing
     */
    public static PolicySettings apply(ScenarioContext ctx, String pid, Map<String, Object> values) throws Exception {
        ServiceReference<ConfigurationAdmin> ref;
        try {
            ref = ctx.bundles().getServiceReference(ConfigurationAdmin.class);
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException("Config Admin is not installed; it is needed to configure " + pid, e);
        }
        ConfigurationAdmin cm = ref == null ? null : ctx.bundles().getService(ref);
        if (cm == null) {
            throw new IllegalStateException("Config Admin is not running; it is needed to configure " + pid);
        }
        try {
            // "?" so that the policy's bundle, not this one, receives a configuration created here.
            Configuration c = cm.getConfiguration(pid, "?");
            Dictionary<String, Object> before = c.getProperties();
            Hashtable<String, Object> next = new Hashtable<>();
            if (before != null) {
                for (Enumeration<String> keys = before.keys(); keys.hasMoreElements(); ) {
                    String k = keys.nextElement();
                    next.put(k, before.get(k));
                }
            }
            next.putAll(values);
            c.update(next);
            return new PolicySettings(c, before);
        } finally {
            ctx.bundles().ungetService(ref);
        }
    }

    @Override
    public void close() throws Exception {
        if (previous == null) {
            configuration.delete();
        } else {
            configuration.update(previous);
        }
    }
}
