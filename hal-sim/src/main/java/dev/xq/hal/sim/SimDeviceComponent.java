package dev.xq.hal.sim;

import dev.xq.hal.spi.XpuDriver;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;

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

    void start(BundleContext context, Map<String, ?> properties, String defaultId, LoggerFactory logs) {
        Logger log = logs == null ? null : logs.getLogger(getClass());
        SimSettings s;
        try {
            s = SimSettings.from(properties, defaultId);
        } catch (IllegalArgumentException e) {
            if (log != null) {
                log.error("simulated device not created, bad configuration " + properties.get("service.pid") + ": " + e.getMessage());
            }
            return;
        }
        if (DEVICES.containsKey(s.id())) {
            if (log != null) {
                log.error("simulated device not created: id " + s.id() + " is taken; choose another id");
            }
            return;
        }
        device = new SimDevice(s);
        DEVICES.put(s.id(), device);
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("xq.device", s.id());
        props.put("xq.platform", "sim");
        registration = context.registerService(XpuDriver.class, new SimDriver(device), props);
        if (log != null) {
            log.info("simulated device " + s.id() + " started: " + device.status());
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
}
