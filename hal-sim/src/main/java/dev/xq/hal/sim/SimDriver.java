package dev.xq.hal.sim;

import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.hal.spi.XpuMemory;
import java.util.List;
import java.util.Optional;

/** The {@link XpuDriver} of one simulated device. */
final class SimDriver implements XpuDriver {
    private final SimDevice device;

    SimDriver(SimDevice device) {
        this.device = device;
    }

    SimDevice device() {
        return device;
    }

    @Override
    public String platform() {
        return "sim";
    }

    @Override
    public String status() {
        return device.status();
    }

    @Override
    public List<DeviceDescriptor> devices() {
        return List.of(device.descriptor());
    }

    @Override
    public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
        if (!device.settings().id().equals(deviceId)) {
            throw new IllegalArgumentException("device '" + deviceId + "' is not this sim driver's; known: " + device.settings().id());
        }
        return device.open(options == null ? "" : options.name(), listener);
    }

    @Override
    public Optional<XpuMemory> memory() {
        return Optional.of(device.memory());
    }
}
