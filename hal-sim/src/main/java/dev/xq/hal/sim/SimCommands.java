package dev.xq.hal.sim;

import java.util.Map;
import java.util.TreeMap;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;

/**
 * Gogo commands in scope {@code sim}: list the simulated devices, lose one on purpose. Gogo
 * finds public methods by the {@code osgi.command.function} names; the {@link Descriptor}s are
 * what {@code help sim:lose} prints, and need no Gogo at run time (the import is optional).
 */
@Component(service = SimCommands.class, property = {
        "osgi.command.scope=sim",
        "osgi.command.function=devices",
        "osgi.command.function=lose"})
public class SimCommands {

    /** @return {@code sim:devices}: every simulated device of this bundle and its state, one a line */
    @Descriptor("lists the simulated devices with their state and costs")
    public String devices() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, SimDevice> e : new TreeMap<>(SimDeviceComponent.DEVICES).entrySet()) {
            SimSettings s = e.getValue().settings();
            sb.append(e.getKey()).append("  ").append(e.getValue().status())
                    .append("  lv2Mode=").append(s.lv2Flush() ? "flush" : "stall")
                    .append(" save=").append(s.saveCostMicros()).append("us restore=").append(s.restoreCostMicros())
                    .append("us launch=").append(s.launchCostMicros()).append("us")
                    .append(" buffers=").append(e.getValue().memory().bufferCount())
                    .append(" allocated=").append(e.getValue().memory().allocated())
                    .append(" modules=").append(e.getValue().memory().moduleCount()).append('\n');
        }
        return sb.isEmpty() ? "no simulated devices" : sb.toString();
    }

    /**
     * {@code sim:lose ID}: the device is lost; every queue on it hears so once and launches are
     * refused, until its configuration is changed or the bundle restarts.
     * @throws IllegalArgumentException naming the id and the devices there are, if there is no such device
     */
    @Descriptor("loses a simulated device on purpose: its queues hear so once, launches are refused until it is reconfigured")
    public String lose(@Descriptor("the device's id (sim:devices lists them)") String id) {
        SimDevice d = SimDeviceComponent.DEVICES.get(id);
        if (d == null) {
            Map<String, SimDevice> all = new TreeMap<>(SimDeviceComponent.DEVICES);
            throw new IllegalArgumentException("no simulated device '" + id + "'; devices: "
                    + (all.isEmpty() ? "none" : String.join(", ", all.keySet())));
        }
        return d.lose("lost on purpose by sim:lose") ? "sim device " + id + " lost" : "sim device " + id + " was lost already";
    }
}
