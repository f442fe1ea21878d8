package dev.xq.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
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

    /**
     * Allocates device memory, owned by the calling bundle: freed by {@link DeviceBuffer#close()}
     * or when the bundle stops. Its contents are undefined until written or filled.
     *
     * @throws IllegalArgumentException if the device is unknown (the message lists the devices),
     *         offers no device memory, or {@code bytes} is not in [1, what the device has free]
     * @since 1.5
     */
    default DeviceBuffer allocate(String device, long bytes) {
        throw new UnsupportedOperationException("this XQueueService offers no device memory");
    }

    /** @return the calling bundle's buffers that are still open, oldest first */
    default List<DeviceBuffer> buffers() {
        return List.of();
    }

    /**
     * Loads device code under {@code name}: PTX or a cubin on CUDA, a code object on HIP, a
     * program of built-in operations on a simulated device. Owned by the calling bundle like a buffer.
     *
     * @throws IllegalArgumentException if the device is unknown or cannot load code, or the image
     *         does not load there (the message carries the device's own words, e.g. the JIT log)
     * @since 1.5
     */
    default CodeModule load(String device, String name, byte[] image) {
        throw new UnsupportedOperationException("this XQueueService loads no code");
    }

    /**
     * Loads device code from a resource, typically {@code bundle.getResource("ptx/matmul.ptx")};
     * the module's name is the resource's file name.
     *
     * @throws IllegalArgumentException as {@link #load(String, String, byte[])}, or if the resource is null
     * @throws UncheckedIOException if it cannot be read
     * @since 1.5
     */
    default CodeModule load(String device, URL resource) {
        if (resource == null) {
            throw new IllegalArgumentException("resource is null; give a URL such as bundle.getResource(\"ptx/matmul.ptx\")"
                    + " (null means the bundle has no such entry)");
        }
        byte[] image;
        try (InputStream in = resource.openStream()) {
            image = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource + ": " + e.getMessage(), e);
        }
        String path = resource.getPath();
        return load(device, path.substring(path.lastIndexOf('/') + 1), image);
    }
}
