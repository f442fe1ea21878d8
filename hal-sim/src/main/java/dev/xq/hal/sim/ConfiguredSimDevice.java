package dev.xq.hal.sim;

import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/** One more simulated device per configuration of factory PID {@code dev.xq.hal.sim.device}. */
@Component(service = {}, immediate = true, configurationPid = "dev.xq.hal.sim.device", configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = SimDeviceConfig.class, factory = true)
public class ConfiguredSimDevice extends SimDeviceComponent {

    @Reference(cardinality = ReferenceCardinality.OPTIONAL)
    LoggerFactory logs;

    @Activate
    void activate(BundleContext context, Map<String, Object> properties) {
        String pid = String.valueOf(properties.get("service.pid"));
        String fallback = "sim-" + Integer.toHexString(pid.hashCode() & 0xfffff);
        start(context, properties, fallback, logs);
    }

    @Deactivate
    void deactivate() {
        stop();
    }
}
