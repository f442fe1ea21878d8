package dev.xq.hal.spi;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Device code a driver loaded ({@link XpuMemory#load}).
 *
 * @since 2.1
 */
@ConsumerType
public interface HwModule {

    /** @return the name it was loaded under */
    String name();

    /**
     * @return the kernel of that name
     * @throws IllegalArgumentException naming the function and the module if there is none
     */
    HwFunction function(String name);

    /** Unloads the code; called once, when no launched command uses it any more. */
    void unload();
}
