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

/**
 * The embedded default device {@code sim0}: present with no configuration at all, tuned by PID
 * {@code dev.xq.hal.sim}, removed by {@code enabled=false}.
 */
@Component(service = {}, immediate = true, configurationPid = "dev.xq.hal.sim", configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = SimDeviceConfig.class)
public class DefaultSimDevice extends SimDeviceComponent {

    @Reference(cardinality = ReferenceCardinality.OPTIONAL)
    LoggerFactory logs;

    @Activate
    void activate(BundleContext context, Map<String, Object> properties) {
        if ("false".equalsIgnoreCase(String.valueOf(properties.get("enabled")))) {
            return;
        }
        Map<String, Object> p = new java.util.HashMap<>(properties);
        p.put("id", "sim0");
        start(context, p, "sim0", logs);
    }

    @Deactivate
    void deactivate() {
        stop();
    }
}
