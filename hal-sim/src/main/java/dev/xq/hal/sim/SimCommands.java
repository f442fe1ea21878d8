package dev.xq.hal.sim;

import java.util.Map;
import java.util.TreeMap;
import org.osgi.service.component.annotations.Component;

/** Gogo commands in scope {@code sim}: list the simulated devices, lose one on purpose. */
@Component(service = SimCommands.class, property = {
        "osgi.command.scope=sim",
        "osgi.command.function=devices",
        "osgi.command.function=lose"})
public class SimCommands {

    /** sim:devices: every simulated device and its state. */
    public String devices() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, SimDevice> e : new TreeMap<>(SimDeviceComponent.DEVICES).entrySet()) {
            SimSettings s = e.getValue().settings();
            sb.append(e.getKey()).append("  ").append(e.getValue().status())
                    .append("  lv2Mode=").append(s.lv2Flush() ? "flush" : "stall")
                    .append(" save=").append(s.saveCostMicros()).append("us restore=").append(s.restoreCostMicros())
                    .append("us launch=").append(s.launchCostMicros()).append("us\n");
        }
        return sb.isEmpty() ? "no simulated devices" : sb.toString();
    }

    /** sim:lose ID: the device is lost; its queues fail their outstanding commands. */
    public String lose(String id) {
        SimDevice d = SimDeviceComponent.DEVICES.get(id);
        if (d == null) {
            throw new IllegalArgumentException("no simulated device '" + id + "'; devices: "
                    + String.join(", ", new TreeMap<>(SimDeviceComponent.DEVICES).keySet()));
        }
        d.lose("lost on purpose by sim:lose");
        return "sim device " + id + " lost";
    }
}
