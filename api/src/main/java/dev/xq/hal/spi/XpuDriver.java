package dev.xq.hal.spi;

import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A hardware adapter for one platform, registered as an OSGi service. A driver with no
 * usable device stays registered, lists no device, and says why in {@link #status()}.
 */
@ConsumerType
public interface XpuDriver {

    /** @return the platform name, e.g. {@code sim}, {@code cuda}, {@code hip}; also the device id prefix */
    String platform();

    /** @return one line for operators: {@code 1 device}, or {@code no device: <reason>} */
    String status();

    /** @return the devices this driver can open queues on now (may change while running) */
    List<DeviceDescriptor> devices();

    /**
     * Opens a hardware queue on a device.
     *
     * @param deviceId one of {@link #devices()}'s ids
     * @param options per-queue options
     * @param listener receives completions; never {@code null}
     * @throws IllegalArgumentException if the device id is unknown (the message lists the known ones)
     * @throws HalException if the hardware refuses
     */
    HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener);

    /**
     * @return device memory and run-time code loading for this driver's devices, or empty if it
     *         offers none (then host applications cannot allocate or load on them)
     * @since 2.1
     */
    default Optional<XpuMemory> memory() {
        return Optional.empty();
    }
}
