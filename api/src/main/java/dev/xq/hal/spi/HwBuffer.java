package dev.xq.hal.spi;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Device memory a driver allocated ({@link XpuMemory#allocate}).
 *
 * @since 2.1
 */
@ConsumerType
public interface HwBuffer {

    /** @return the device it is on */
    String deviceId();

    /** @return its device address, as kernels receive it */
    long address();

    /** @return its size in bytes */
    long size();

    /** Gives the memory back; called once, when no launched command uses it any more. */
    void free();
}
