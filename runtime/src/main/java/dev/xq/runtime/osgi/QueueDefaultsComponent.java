package dev.xq.runtime.osgi;

import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.SchedulerControl;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Applies PID {@code dev.xq.queue.defaults} to the node: the configuration new queues get when
 * their application does not give one. A bad value is logged with its range and changes nothing.
 */
@Component(service = QueueDefaultsComponent.class, immediate = true, configurationPid = "dev.xq.queue.defaults",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = QueueDefaultsConfig.class)
public class QueueDefaultsComponent {

    @Reference(target = "(component.name=dev.xq.runtime.osgi.RuntimeComponent)")
    SchedulerControl runtime;

    @Activate
    @Modified
    void apply(QueueDefaultsConfig q, java.util.Map<String, Object> raw) {
        RuntimeComponent rc = (RuntimeComponent) runtime;
        // DS reports a value that is not a number only when its key is read, in words naming
        // neither: read each key on its own and name the one that fails, with what it holds
        for (var key : java.util.List.<java.util.Map.Entry<String, Runnable>>of(java.util.Map.entry("level", q::level),
                java.util.Map.entry("threshold", q::threshold), java.util.Map.entry("batch", q::batch),
                java.util.Map.entry("windowMicros", q::windowMicros))) {
            try {
                key.getValue().run();
            } catch (RuntimeException e) {
                rc.logError("dev.xq.queue.defaults: " + key.getKey() + " '" + raw.get(key.getKey()) + "' is not a whole number"
                        + " (allowed: level 1..3, threshold 1.." + QueueConfig.MAX_THRESHOLD + ", batch 1..threshold, windowMicros 0.."
                        + QueueConfig.MAX_WINDOW_MICROS + "); nothing changed, keeping " + rc.core().defaults());
                return;
            }
        }
        try {
            rc.core().defaults(new QueueConfig(PreemptionLevel.of(q.level()), q.threshold(), q.batch(), q.windowMicros()));
        } catch (RuntimeException e) {
            // IllegalArgumentException: a value out of range; DS's ComponentException: a value that
            // is not a number at all (thrown when the key is read). Either way nothing changes.
            rc.logError("dev.xq.queue.defaults: " + e.getMessage() + " (allowed: level 1..3, threshold 1.." + QueueConfig.MAX_THRESHOLD
                    + ", batch 1..threshold, windowMicros 0.." + QueueConfig.MAX_WINDOW_MICROS + "); keeping " + rc.core().defaults());
        }
    }
}
