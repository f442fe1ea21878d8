package dev.xq.hal.hip;

import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.StreamPriorities;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The HIP driver without its OSGi wiring: loads libamdhip64, lists the devices, opens queues.
 * Without a library or a device it stays usable, lists nothing and says why in {@link #status()}.
 */
final class HipPlatform implements XpuDriver, AutoCloseable {

    static final String PLATFORM = "hip";

    private final HipApi api;
    private final List<HipDevice> devices;
    private final String status;
    private final RuntimeLog log;
    private volatile boolean closed;

    private HipPlatform(HipApi api, List<HipDevice> devices, String status, RuntimeLog log) {
        this.api = api;
        this.devices = List.copyOf(devices);
        this.status = status;
        this.log = log;
    }

    /** A driver with no device, for a reason found before any library was touched (bad configuration). */
    static HipPlatform unavailable(String reason, RuntimeLog log) {
        return new HipPlatform(null, List.of(), "no device: " + reason, log);
    }

    /** Finds the library, then the devices. Never throws for a missing library or device. */
    static HipPlatform start(HipSettings settings, RuntimeLog log) {
        LibraryLocator.Found found = LibraryLocator.load(settings.library());
        if (found.api() == null) {
            return new HipPlatform(null, List.of(), found.reason(), log);
        }
        HipApi api = found.api();
        try {
            HipApi.DeviceCount count = api.deviceCount();
            if (count.error() != HipApi.SUCCESS || count.count() <= 0) {
                String why = count.error() != HipApi.SUCCESS
                        ? "hipGetDeviceCount returned " + api.describe(count.error())
                        : "hipGetDeviceCount found 0 devices";
                api.close();
                return new HipPlatform(null, List.of(), "no device: " + why + " (library " + api.library() + ")", log);
            }
            List<HipDevice> devices = new ArrayList<>();
            List<String> skipped = new ArrayList<>();
            for (int i = 0; i < count.count(); i++) {
                try {
                    devices.add(HipDevice.probe(api, i, settings, log));
                } catch (RuntimeException e) {
                    skipped.add(PLATFORM + i + ": " + e.getMessage());
                    log.warn("hip device " + i + " skipped", e);
                }
            }
            if (devices.isEmpty()) {
                api.close();
                return new HipPlatform(null, List.of(), "no device: " + String.join("; ", skipped), log);
            }
            String s = devices.size() + (devices.size() == 1 ? " device" : " devices") + " (library " + api.library() + ")"
                    + (skipped.isEmpty() ? "" : "; skipped " + String.join("; ", skipped));
            return new HipPlatform(api, devices, s, log);
        } catch (RuntimeException e) {
            api.close();
            return new HipPlatform(null, List.of(), "no device: " + e.getMessage() + " (library " + api.library() + ")", log);
        }
    }

    @Override
    public String platform() {
        return PLATFORM;
    }

    @Override
    public String status() {
        return closed ? "no device: driver stopped" : status;
    }

    @Override
    public List<DeviceDescriptor> devices() {
        if (closed) {
            return List.of();
        }
        return devices.stream().map(HipDevice::descriptor).toList();
    }

    /** @return the bound library, or null without a device */
    HipApi api() {
        return api;
    }

    /** The device, for tests and the component; null if unknown. */
    HipDevice device(String id) {
        for (HipDevice d : devices) {
            if (d.id().equals(id)) {
                return d;
            }
        }
        return null;
    }

    /**
     * @return the device, for the host API's memory and code
     * @throws IllegalArgumentException naming the device and the devices known, or why there are none
     */
    HipDevice memoryDevice(String id) {
        HipDevice d = closed ? null : device(id);
        if (d == null) {
            List<String> known = devices().stream().map(DeviceDescriptor::id).toList();
            throw new IllegalArgumentException("device '" + id + "' is unknown to the hip driver; known: "
                    + (known.isEmpty() ? "none (" + status() + ")" : known));
        }
        return d;
    }

    @Override
    public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        HipDevice d = closed ? null : device(deviceId);
        if (d == null) {
            List<String> known = devices().stream().map(DeviceDescriptor::id).toList();
            throw new IllegalArgumentException("unknown hip device '" + deviceId + "'; known: "
                    + (known.isEmpty() ? "none (" + status() + ")" : known));
        }
        if (options.nativePriority() != null) {
            int p = options.nativePriority();
            if (p < StreamPriorities.MIN || p > StreamPriorities.MAX) {
                throw new IllegalArgumentException("native priority " + p + " for queue '" + options.name() + "' is out of range ["
                        + StreamPriorities.MIN + ", " + StreamPriorities.MAX + "] (higher = more urgent)");
            }
        }
        try {
            return d.open(options, listener);
        } catch (HalException e) {
            throw new HalException("opening hip queue '" + options.name() + "' on " + deviceId + ": " + e.getMessage(), e);
        }
    }

    /** Closes every queue (their in-flight commands are reported lost) and unloads the library. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        HalException cause = new HalException("the hip driver stopped");
        for (HipDevice d : devices) {
            try {
                d.close(cause);
            } catch (RuntimeException e) {
                log.warn("closing " + d.id() + " failed", e);
            }
        }
        if (api != null) {
            api.close();
        }
    }
}
