package dev.xq.hal.kfd;

import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.Preemption;
import dev.xq.hal.spi.PreemptionProvider;
import dev.xq.runtime.log.OsgiLog;
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
 * The {@code kfd} {@link PreemptionProvider}: raises HIP queues to level 3 by suspending their
 * KFD queues through this process's own {@code /dev/kfd}. It stays active without a device,
 * saying so in {@link #status()} and attaching nothing. A configuration change restarts it,
 * which resumes every queue it suspended.
 */
@Component(name = "kfd", service = PreemptionProvider.class, immediate = true, configurationPid = KfdConfig.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = KfdConfig.class)
public class KfdProvider implements PreemptionProvider {

    private final OsgiLog log = new OsgiLog(KfdProvider.class);
    private volatile KfdPreemption core = KfdPreemption.unavailable("not started");

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindLoggerFactory(LoggerFactory factory) {
        log.bind(factory);
    }

    void unbindLoggerFactory(LoggerFactory factory) {
        log.unbind();
    }

    @Activate
    void activate(KfdConfig config, java.util.Map<String, Object> raw) {
        KfdSettings settings;
        try {
            dev.xq.runtime.config.ConfigCheck.require(KfdConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(KfdConfig.PID, KfdConfig.class, raw, log::warn);
            settings = KfdSettings.from(config);
        } catch (IllegalArgumentException e) {
            core = KfdPreemption.unavailable("bad configuration (" + KfdConfig.PID + "): " + e.getMessage());
            log.warn("kfd: " + core.status(), null);
            return;
        }
        core = KfdPreemption.start(settings, log);
        log.info("kfd: " + core.status());
    }

    @Deactivate
    void deactivate() {
        core.close();
    }

    @Override
    public String name() {
        return "kfd";
    }

    @Override
    public String status() {
        return core.status();
    }

    @Override
    public Optional<Preemption> attach(HwQueue queue) {
        return core.attach(queue);
    }

    /**
     * Logical priority: packets queued on one of this process's KFD queues and not yet taken by
     * the GPU (write index − read index of its AQL ring). Zero means nothing queued, not idle.
     */
    public long pendingWork(int queueId) {
        return core.pendingWork(queueId);
    }
}
