package dev.xq.hal.cuda;

import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The CUDA adapter without OSGi: loads libcuda, initialises it, opens every device. With no
 * library or no device it is still a valid platform that lists nothing and says why, so the
 * driver service can register anyway. The GPU smoke harness uses this class directly.
 */
final class CudaPlatform implements AutoCloseable {

    static final String PLATFORM = "cuda";

    private final String reason;
    private final CudaApi api;
    private final List<CudaDevice> devices;
    private final List<String> unusable;

    private CudaPlatform(String reason, CudaApi api, List<CudaDevice> devices, List<String> unusable) {
        this.reason = reason;
        this.api = api;
        this.devices = List.copyOf(devices);
        this.unusable = List.copyOf(unusable);
    }

    /** A platform with no device; {@code reason} completes "no device: ...". */
    static CudaPlatform unavailable(String reason) {
        return new CudaPlatform(reason, null, List.of(), List.of());
    }

    /** Loads the library named in {@code settings} and opens its devices. Never throws for a missing GPU. */
    static CudaPlatform start(CudaSettings settings, RuntimeLog log) {
        CudaApi api;
        try {
            api = CudaApi.load(settings.library());
        } catch (IllegalArgumentException e) {
            return unavailable(settings.library() + " not found");
        } catch (HalException e) {
            return unavailable(e.getMessage());
        }
        return start(api, settings, log);
    }

    /** Opens the devices of an already bound library (tests bind a double). */
    static CudaPlatform start(CudaApi api, CudaSettings settings, RuntimeLog log) {
        int rc = api.init(0);
        if (rc != CudaApi.CUDA_SUCCESS) {
            return unavailable("cuInit returned " + api.name(rc));
        }
        CudaApi.DeviceCount count = api.deviceCount();
        if (count.error() != CudaApi.CUDA_SUCCESS) {
            return unavailable("cuDeviceGetCount returned " + api.name(count.error()));
        }
        if (count.count() == 0) {
            return unavailable("cuDeviceGetCount found no device");
        }
        int version = api.driverVersion();
        List<CudaDevice> opened = new ArrayList<>();
        List<String> unusable = new ArrayList<>();
        for (int i = 0; i < count.count(); i++) {
            try {
                opened.add(CudaDevice.open(api, i, settings, log, version));
            } catch (RuntimeException e) {
                unusable.add(PLATFORM + i + ": " + e.getMessage());
                log.warn("cuda device " + i + " cannot be used", e);
            }
        }
        if (opened.isEmpty()) {
            return new CudaPlatform("no device could be opened (" + String.join("; ", unusable) + ")", api, opened, unusable);
        }
        return new CudaPlatform(null, api, opened, unusable);
    }

    /** @return {@code N device(s): ...} or {@code no device: <reason>} */
    String status() {
        if (reason != null) {
            return "no device: " + reason;
        }
        List<CudaDevice> usable = devices.stream().filter(d -> d.fault() == null).toList();
        StringBuilder b = new StringBuilder();
        b.append(usable.size()).append(usable.size() == 1 ? " device: " : " devices: ")
                .append(devices.stream().map(CudaDevice::summary).collect(Collectors.joining("; ")));
        if (!unusable.isEmpty()) {
            b.append("; unusable: ").append(String.join("; ", unusable));
        }
        return b.toString();
    }

    /** @return the devices that can take queues now (a device whose context failed is left out) */
    List<DeviceDescriptor> devices() {
        return devices.stream().filter(d -> d.fault() == null).map(CudaDevice::descriptor).toList();
    }

    CudaDevice device(String id) {
        Objects.requireNonNull(id, "device id");
        for (CudaDevice d : devices) {
            if (d.id().equals(id)) {
                return d;
            }
        }
        List<String> known = devices.stream().map(CudaDevice::id).toList();
        throw new IllegalArgumentException("device '" + id + "' is unknown to the cuda driver; known: "
                + (known.isEmpty() ? "none (" + status() + ")" : known));
    }

    HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
        Objects.requireNonNull(listener, "listener");
        return device(deviceId).open(options == null ? new HwQueueOptions("", null) : options, listener);
    }

    /** @return the bound library, or null if it could not be loaded */
    CudaApi api() {
        return api;
    }

    @Override
    public void close() {
        for (CudaDevice d : devices) {
            d.close();
        }
    }
}
