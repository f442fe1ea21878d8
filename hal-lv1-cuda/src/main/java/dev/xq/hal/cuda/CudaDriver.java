package dev.xq.hal.cuda;

import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.hal.spi.XpuMemory;
import dev.xq.runtime.log.OsgiLog;
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
 * The CUDA {@link XpuDriver} service (platform {@code cuda}, devices {@code cuda0}, ...). It
 * registers even without libcuda or a GPU, listing no device and saying why in
 * {@link #status()}. A configuration change restarts it (no modified method); queues of the old
 * instance are reported lost.
 */
@Component(service = XpuDriver.class, immediate = true, configurationPid = CudaConfig.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, property = "xq.platform=cuda")
@Designate(ocd = CudaConfig.class)
public class CudaDriver implements XpuDriver {

    private final OsgiLog log = new OsgiLog(CudaDriver.class);
    private volatile CudaPlatform platform = CudaPlatform.unavailable("not started");
    private final CudaMemory memory = new CudaMemory(() -> platform);

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindLoggerFactory(LoggerFactory factory) {
        log.bind(factory);
    }

    void unbindLoggerFactory(LoggerFactory factory) {
        log.unbind();
    }

    @Activate
    void activate(CudaConfig config, java.util.Map<String, Object> raw) {
        CudaSettings settings;
        try {
            dev.xq.runtime.config.ConfigCheck.require(CudaConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(CudaConfig.PID, CudaConfig.class, raw, log::warn);
            settings = CudaSettings.from(config);
        } catch (IllegalArgumentException e) {
            platform = CudaPlatform.unavailable("bad configuration (" + CudaConfig.PID + "): " + e.getMessage());
            log.warn("cuda driver: " + platform.status(), null);
            return;
        }
        platform = CudaPlatform.start(settings, log);
        log.info("cuda driver: " + platform.status());
    }

    @Deactivate
    void deactivate() {
        platform.close();
        platform = CudaPlatform.unavailable("stopped");
    }

    @Override
    public String platform() {
        return CudaPlatform.PLATFORM;
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
