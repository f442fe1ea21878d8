package dev.xq.api;

import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Entry point for host applications: find it in the OSGi service registry.
 */
@ProviderType
public interface XQueueService {

    /**
     * Creates an XQueue.
     * @throws IllegalArgumentException if the device is unknown (the message lists the known ones)
     *         or an option is out of range
     */
    XQueue create(QueueOptions options);

    /** @return every open XQueue on the node */
    List<XQueue> queues();

    /** @return the queue with this handle, if it is open */
    Optional<XQueue> find(long handle);

    /** @return the devices queues can be created on */
    List<DeviceInfo> devices();

    /** @return the hardware adapters known to the node, with devices or the reason for none */
    List<DriverInfo> drivers();

    /** @return the node's default queue configuration */
    QueueConfig defaults();
}
