package dev.xq.host;

import dev.xq.hal.spi.DeviceDescriptor;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the node's device for a stream's PCI bus id (docs/processes.md, "Wire protocol"): the
 * interposer sends the id its driver reports, the node's adapters describe their devices with it
 * (CUDA: property {@code pci}, {@code 0000:3b:00.0}; HIP: {@code hip.pci}, {@code 0000:3b:00}).
 * Both are normalised to {@code dddd:bb:dd.f} in lower case before they are compared.
 */
final class PciDevices {

    /** domain (1-8 hex digits), bus and device (1-2 each), function (0-7, optional: 0). */
    private static final Pattern PCI = Pattern.compile(
            "([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})(?:\\.([0-7]))?");

    /** What a PCI field may look like, for error messages. */
    static final String ALLOWED = "a PCI bus id DOMAIN:BUS:DEVICE[.FUNCTION] in hex, e.g. 0000:3b:00.0";

    private PciDevices() {
    }

    /**
     * @return {@code pci} as {@code dddd:bb:dd.f}, or empty when it is not a PCI bus id
     */
    static Optional<String> normalise(String pci) {
        if (pci == null) {
            return Optional.empty();
        }
        Matcher m = PCI.matcher(pci.trim());
        if (!m.matches()) {
            return Optional.empty();
        }
        return Optional.of(String.format("%04x:%02x:%02x.%s", Long.parseLong(m.group(1), 16),
                Integer.parseInt(m.group(2), 16), Integer.parseInt(m.group(3), 16),
                m.group(4) == null ? "0" : m.group(4)));
    }

    /** The device property that holds the PCI bus id for a runtime: {@code hip.pci} or {@code pci}. */
    static String property(boolean hip) {
        return hip ? "hip.pci" : "pci";
    }

    /**
     * @param pci a normalised PCI bus id
     * @param hip whether the process is a HIP one (its devices' ids are in {@code hip.pci})
     * @return the id of the first device whose PCI property is that bus id
     */
    static Optional<String> find(String pci, boolean hip, List<DeviceDescriptor> devices) {
        String key = property(hip);
        for (DeviceDescriptor d : devices) {
            Optional<String> p = normalise(d.properties().get(key));
            if (p.isPresent() && p.get().equals(pci)) {
                return Optional.of(d.id());
            }
        }
        return Optional.empty();
    }
}
