package dev.xq.hal.spi;

import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Adds preemption levels to hardware queues that another driver opened (hal-lv3-kfd raises HIP
 * queues to Lv3 with CWSR). Registered as an OSGi service; when it appears the runtime offers
 * it every live queue, and when it goes away the runtime undoes what it did through it, with
 * no command lost.
 */
@ConsumerType
public interface PreemptionProvider {

    /** @return a short name, e.g. {@code kfd} */
    String name();

    /** @return one line for operators, e.g. {@code 2 queues raised} or {@code no /dev/kfd} */
    String status();

    /**
     * @return preemption for this queue (its {@link Preemption#detach()} lets go of it), or empty
     *         if this provider cannot handle it (other platform, other device, no rights)
     */
    Optional<Preemption> attach(HwQueue queue);
}
