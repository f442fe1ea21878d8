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

/**
 * The embedded default device {@code sim0}: present with no configuration at all, tuned by PID
 * {@code dev.xq.hal.sim}, removed by {@code enabled=false}.
 */
@Component(service = {}, immediate = true, configurationPid = DefaultSimDevice.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = SimDeviceConfig.class)
public class DefaultSimDevice extends SimDeviceComponent {

    /** The singleton PID of the default device. */
    public static final String PID = "dev.xq.hal.sim";

    /** The default device's id unless its configuration names another. */
    public static final String DEFAULT_ID = "sim0";

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL)
    Logger log;

    @Activate
    void activate(BundleContext context, Map<String, Object> properties) {
        start(context, properties, DEFAULT_ID, log);
    }

    @Deactivate
    void deactivate() {
        stop();
    }
}
