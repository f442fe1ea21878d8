package dev.xq.hal.spi;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Device memory and device code of a driver's devices ({@link XpuDriver#memory()}). The runtime
 * keeps the table of what host bundles own and frees it for them; a driver only allocates,
 * frees, loads and unloads when told. Its data commands come as {@link DeviceOp}s on
 * {@link HwCommand#op()}.
 *
 * @since 2.1
 */
@ConsumerType
public interface XpuMemory {

    /**
     * Allocates {@code bytes} on a device.
     * @throws IllegalArgumentException if the device is unknown or has not that much free
     *         (the message names the size and what is free)
     * @throws HalException if the hardware refuses
     */
    HwBuffer allocate(String deviceId, long bytes);

    /**
     * Loads device code.
     * @throws IllegalArgumentException if the image does not load on the device (the message
     *         carries the device's words: a JIT log, the line of a sim program at fault)
     */
    HwModule load(String deviceId, String name, byte[] image);
}
