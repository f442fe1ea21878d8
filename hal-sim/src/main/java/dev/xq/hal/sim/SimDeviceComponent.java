package dev.xq.hal.sim;

import dev.xq.hal.spi.XpuDriver;
import java.util.Hashtable;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.log.Logger;

/**
 * Shared life of a simulated device component: check the configuration, start the device and
 * register its {@link XpuDriver}; on deactivation, unregister and stop it. The service is
 * registered by hand because a configuration with a bad value must register nothing.
 */
abstract class SimDeviceComponent {

    /** Devices of this bundle by id, for the {@code sim:} shell commands. */
    static final Map<String, SimDevice> DEVICES = new ConcurrentHashMap<>();

    private ServiceRegistration<XpuDriver> registration;
    private SimDevice device;

    /**
     * @param log where to say why no device was made; without a Log Service the reason is thrown
     *        instead, so that SCR reports it
     */
    void start(BundleContext context, Map<String, ?> properties, String defaultId, Logger log) {
        String pid = String.valueOf(properties.get("service.pid"));
        SimSettings s;
        try {
            if (!SimSettings.enabled(properties)) {
                if (log != null) {
                    log.info("simulated device of configuration " + pid + " not created: enabled=false");
                }
                return;
            }
            s = SimSettings.from(properties, defaultId);
            if (DEVICES.containsKey(s.id())) {
                throw new IllegalArgumentException("id '" + s.id() + "' is taken by another simulated device; allowed: an id not in "
                        + new TreeMap<>(DEVICES).keySet());
            }
        } catch (IllegalArgumentException e) {
            String why = "simulated device not created, bad configuration " + pid + ": " + e.getMessage();
            if (log == null) {
                throw new IllegalArgumentException(why, e);
            }
            log.error(why);
            return;
        }
        Set<String> unknown = SimSettings.unknownKeys(properties);
        if (!unknown.isEmpty() && log != null) {
            log.warn("simulated device " + s.id() + ": configuration " + pid + " has keys the sim does not read: " + unknown
                    + "; known keys: " + new java.util.TreeSet<>(SimSettings.KEYS));
        }
        SimDevice d = new SimDevice(s, (what, e) -> {
            if (log != null) {
                log.error(what, e);
            }
        });
        if (DEVICES.putIfAbsent(s.id(), d) != null) {
            d.shutdown("id taken");
            String why = "simulated device not created: id '" + s.id() + "' was taken at the same moment by another configuration";
            if (log == null) {
                throw new IllegalArgumentException(why);
            }
            log.error(why);
            return;
        }
        device = d;
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("xq.device", s.id());
        props.put("xq.platform", "sim");
        registration = context.registerService(XpuDriver.class, new SimDriver(d), props);
        if (log != null) {
            log.info("simulated device " + s.id() + " started: " + d.status());
        }
    }

    void stop() {
        if (registration != null) {
            try {
                registration.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the framework is stopping the bundle and took it away already
            }
            registration = null;
        }
        if (device != null) {
            DEVICES.remove(device.settings().id(), device);
            device.shutdown("its configuration was removed or the sim bundle stopped");
            device = null;
        }
    }

    /** A stable default id for a factory configuration: its name where it has one, else a hash of its pid. */
    static String defaultIdFor(String pid) {
        int tilde = pid.lastIndexOf('~');
        if (tilde >= 0) {
            String name = pid.substring(tilde + 1).toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
            if (!name.isEmpty()) {
                return "sim-" + name;
            }
        }
        return "sim-" + Integer.toHexString(pid.hashCode() & 0xfffffff);
    }
}
