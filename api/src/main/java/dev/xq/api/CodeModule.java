package dev.xq.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Device code loaded at run time by {@link XQueueService#load(String, String, byte[])}: PTX or a
 * cubin on CUDA, a code object on HIP, a program of built-in operations on the simulated device
 * ({@code docs/host-api.md} describes its format). Owned like a {@link DeviceBuffer}: unloaded
 * when closed or when its bundle stops, once the launches that use it have ended. Thread-safe.
 *
 * @since 1.5
 */
@ProviderType
public interface CodeModule extends AutoCloseable {

    /** @return the device it was loaded on */
    String device();

    /** @return the name it was loaded under */
    String name();

    /**
     * Looks up a kernel of this module.
     * @throws IllegalArgumentException naming the function and the module if it has no such kernel
     * @throws IllegalStateException if the module was closed
     */
    KernelFunction function(String name);

    /** @return false once closed or its owner stopped */
    boolean isOpen();

    /** Unloads the module (once the launches that use it have ended). Idempotent. */
    @Override
    void close();
}
