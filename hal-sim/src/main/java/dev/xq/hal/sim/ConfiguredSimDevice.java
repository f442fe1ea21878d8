package dev.xq.hal.sim;

import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/** One more simulated device per configuration of factory PID {@code dev.xq.hal.sim.device}. */
@Component(service = {}, immediate = true, configurationPid = ConfiguredSimDevice.FACTORY_PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = SimDeviceConfig.class, factory = true)
public class ConfiguredSimDevice extends SimDeviceComponent {

    /** The factory PID: one configuration per extra device. */
    public static final String FACTORY_PID = "dev.xq.hal.sim.device";

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL)
    Logger log;

    @Activate
    void activate(BundleContext context, Map<String, Object> properties) {
        start(context, properties, defaultIdFor(String.valueOf(properties.get("service.pid"))), log);
    }

    @Deactivate
    void deactivate() {
        stop();
    }
}
