package dev.xq.bench.scenario;

import dev.xq.api.DeviceInfo;
import java.util.Hashtable;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * A sim device created for one scenario through Config Admin (factory PID
 * {@value #FACTORY_PID}); closing it deletes the configuration, which removes the device.
 */
public final class SimDevice implements AutoCloseable {

    /** The sim HAL's factory PID for extra devices. */
    public static final String FACTORY_PID = "dev.xq.hal.sim.device";

    private final ScenarioContext ctx;
    private final String id;
    private final Configuration configuration;
    private final DeviceInfo info;

    private SimDevice(ScenarioContext ctx, String id, Configuration configuration, DeviceInfo info) {
        this.ctx = ctx;
        this.id = id;
        this.configuration = configuration;
        this.info = info;
    }

    /** What to create; a cost below 0 leaves the sim's default. */
    public record Spec(String id, int engines, long memoryBytes, int maxLevel, String lv2Mode,
                       long saveCostMicros, long restoreCostMicros, long launchCostMicros) { }

    /**
     * Creates the device and waits until the node lists it.
     * @throws IllegalStateException if Config Admin is missing or the device does not appear in time
     */
    public static SimDevice create(ScenarioContext ctx, Spec spec) throws Exception {
        ConfigurationAdmin cm;
        ServiceReference<ConfigurationAdmin> ref;
        try {
            ref = ctx.bundles().getServiceReference(ConfigurationAdmin.class);
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException("Config Admin is not installed; it is needed to create sim device " + spec.id(), e);
        }
        if (ref == null || (cm = ctx.bundles().getService(ref)) == null) {
            throw new IllegalStateException("Config Admin is not running; it is needed to create sim device " + spec.id());
        }
        // "?" lets the sim HAL bundle receive a configuration that this bundle creates.
        Configuration c = cm.getFactoryConfiguration(FACTORY_PID, "bench-" + spec.id(), "?");
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("id", spec.id());
        props.put("engines", spec.engines());
        props.put("memoryBytes", spec.memoryBytes());
        props.put("maxLevel", spec.maxLevel());
        props.put("lv2Mode", spec.lv2Mode());
        putIfSet(props, "saveCostMicros", spec.saveCostMicros());
        putIfSet(props, "restoreCostMicros", spec.restoreCostMicros());
        putIfSet(props, "launchCostMicros", spec.launchCostMicros());
        c.update(props);
        SimDevice d = null;
        try {
            DeviceInfo info = awaitDevice(ctx, spec, 15_000);
            d = new SimDevice(ctx, spec.id(), c, info);
            return d;
        } finally {
            if (d == null) {
                c.delete();
            }
            ctx.bundles().ungetService(ref);
        }
    }

    private static void putIfSet(Hashtable<String, Object> props, String key, long value) {
        if (value >= 0) {
            props.put(key, value);
        }
    }

    private static DeviceInfo awaitDevice(ScenarioContext ctx, Spec spec, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < deadline) {
            for (DeviceInfo d : ctx.service().devices()) {
                if (d.id().equals(spec.id()) && d.engines() == spec.engines() && d.memoryBytes() == spec.memoryBytes()) {
                    return d;
                }
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("sim device " + spec.id() + " (" + spec.engines() + " engines, " + spec.memoryBytes()
                + " bytes) did not appear within " + millis + " ms after configuring factory PID " + FACTORY_PID
                + "; " + ScenarioContext.describeDevices(ctx.service()));
    }

    /** @return the device id */
    public String id() {
        return id;
    }

    /** @return the device as listed when it appeared */
    public DeviceInfo info() {
        return info;
    }

    @Override
    public void close() throws Exception {
        configuration.delete();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < deadline && ctx.service().devices().stream().anyMatch(d -> d.id().equals(id))) {
            Thread.sleep(20);
        }
    }
}
