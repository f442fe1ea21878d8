package dev.xq.hal.hip;

import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.hal.spi.XpuMemory;
import dev.xq.runtime.log.OsgiLog;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The HIP {@link XpuDriver} service (platform {@code hip}). It registers even without a
 * library or a device, listing none and saying why in {@link #status()}. A configuration
 * change restarts it (no modified method): queues of the old instance are reported lost.
 */
@Component(service = XpuDriver.class, immediate = true, configurationPid = HipConfig.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, property = "xq.platform=hip")
@Designate(ocd = HipConfig.class)
public class HipDriver implements XpuDriver {

    private final OsgiLog log = new OsgiLog(HipDriver.class);
    private volatile HipPlatform platform = HipPlatform.unavailable("not started", RuntimeLog.NONE);
    private final HipMemory memory = new HipMemory(() -> platform);

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindLoggerFactory(LoggerFactory factory) {
        log.bind(factory);
    }

    void unbindLoggerFactory(LoggerFactory factory) {
        log.unbind();
    }

    @Activate
    void activate(HipConfig config, java.util.Map<String, Object> raw) {
        HipSettings settings;
        try {
            dev.xq.runtime.config.ConfigCheck.require(HipConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(HipConfig.PID, HipConfig.class, raw, log::warn);
            settings = HipSettings.from(config, System.getenv());
        } catch (IllegalArgumentException e) {
            platform = HipPlatform.unavailable("bad configuration (" + HipConfig.PID + "): " + e.getMessage(), log);
            log.warn("hip driver: " + platform.status(), null);
            return;
        }
        platform = HipPlatform.start(settings, log);
        log.info("hip driver: " + platform.status());
    }

    @Deactivate
    void deactivate() {
        platform.close();
    }

    @Override
    public String platform() {
        return HipPlatform.PLATFORM;
    }

    @Override
    public String status() {
        return platform.status();
    }

    @Override
    public List<DeviceDescriptor> devices() {
        return platform.devices();
    }

    @Override
    public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
        return platform.open(deviceId, options, listener);
    }

    @Override
    public Optional<XpuMemory> memory() {
        return Optional.of(memory);
    }
}
