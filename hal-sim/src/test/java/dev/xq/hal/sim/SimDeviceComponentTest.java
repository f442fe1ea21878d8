package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.log.Logger;

/**
 * The component life without a framework: a stand-in BundleContext records what is registered
 * and a stand-in Logger what is logged.
 */
class SimDeviceComponentTest {

    record Registered(Object service, Map<String, Object> properties) { }

    private final List<Registered> registered = new ArrayList<>();
    private final List<String> logged = new ArrayList<>();
    private final List<SimDeviceComponent> started = new ArrayList<>();

    @AfterEach
    void stopAll() {
        started.forEach(SimDeviceComponent::stop);
        assertTrue(registered.isEmpty(), "stop unregisters: " + registered);
    }

    private BundleContext context() {
        return (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {BundleContext.class}, (p, m, args) -> {
            if (m.getName().equals("registerService") && args.length == 3) {
                Map<String, Object> props = new HashMap<>();
                Dictionary<?, ?> d = (Dictionary<?, ?>) args[2];
                for (var keys = d.keys(); keys.hasMoreElements(); ) {
                    Object k = keys.nextElement();
                    props.put((String) k, d.get(k));
                }
                Registered r = new Registered(args[1], props);
                registered.add(r);
                return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ServiceRegistration.class}, (p2, m2, a2) -> {
                    if (m2.getName().equals("unregister")) {
                        registered.remove(r);
                    }
                    return null;
                });
            }
            throw new UnsupportedOperationException(m.getName());
        });
    }

    private Logger logger() {
        return (Logger) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Logger.class}, (p, m, args) -> {
            if (args != null && args.length > 0 && args[0] instanceof String s) {
                logged.add(m.getName() + ": " + s);
            }
            return m.getReturnType() == boolean.class ? Boolean.TRUE : null;
        });
    }

    private SimDeviceComponent start(Map<String, Object> props, String defaultId) {
        SimDeviceComponent c = new SimDeviceComponent() { };
        started.add(c);
        c.start(context(), props, defaultId, logger());
        return c;
    }

    @Test
    void theDefaultDeviceRegistersOneDriverWithItsDeviceProperty() {
        start(Map.of("service.pid", "dev.xq.hal.sim"), DefaultSimDevice.DEFAULT_ID);
        assertEquals(1, registered.size());
        Registered r = registered.getFirst();
        assertEquals("sim0", r.properties().get("xq.device"));
        XpuDriver driver = (XpuDriver) r.service();
        assertEquals("sim", driver.platform());
        assertTrue(driver.status().startsWith("1 device, 1 engine, Lv3"), driver.status());
        DeviceDescriptor dd = driver.devices().getFirst();
        assertEquals(1, driver.devices().size());
        assertEquals("sim0", dd.id());
        assertEquals(PreemptionLevel.INTERRUPT, dd.maxLevel());
        assertEquals(Set.of("spin", "write", "read", "fill", "launch"), dd.commandKinds());
        assertEquals("stall", dd.properties().get("lv2Mode"));
        assertEquals("20", dd.properties().get("saveCostMicros"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> driver.open("sim9", new HwQueueOptions("q", null), new Recorder("q")));
        assertTrue(e.getMessage().contains("'sim9'") && e.getMessage().contains("sim0"), e.getMessage());
        driver.open("sim0", new HwQueueOptions("q", null), new Recorder("q")).close();
        assertTrue(SimDeviceComponent.DEVICES.containsKey("sim0"));
    }

    @Test
    void aBadValueLogsKeyValueAndRangeAndRegistersNothing() {
        start(Map.of("service.pid", "dev.xq.hal.sim.device~big", "engines", -3), "sim-big");
        assertTrue(registered.isEmpty());
        assertEquals(1, logged.size(), logged.toString());
        String line = logged.getFirst();
        assertTrue(line.startsWith("error: ") && line.contains("engines -3") && line.contains("[1, 1000000]")
                && line.contains("dev.xq.hal.sim.device~big"), line);
        assertTrue(!SimDeviceComponent.DEVICES.containsKey("sim-big"));
    }

    @Test
    void withoutALogServiceTheReasonIsThrownForScrToReport() {
        SimDeviceComponent c = new SimDeviceComponent() { };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.start(context(), Map.of("lv2Mode", "sometimes"), "simx", null));
        assertTrue(e.getMessage().contains("lv2Mode 'sometimes'"), e.getMessage());
        assertTrue(registered.isEmpty());
    }

    @Test
    void aTakenIdIsRefusedAndDisabledConfigurationsMakeNoDevice() {
        start(Map.of("id", "simdup", "engines", 2), "x");
        start(Map.of("id", "simdup"), "y");
        assertEquals(1, registered.size());
        assertTrue(logged.stream().anyMatch(l -> l.startsWith("error: ") && l.contains("'simdup' is taken")), logged.toString());
        start(Map.of("id", "simoff", "enabled", false), "z");
        assertEquals(1, registered.size());
        start(Map.of("id", "simtypo", "engine", 4), "w");
        assertEquals(2, registered.size());
        assertTrue(logged.stream().anyMatch(l -> l.startsWith("warn: ") && l.contains("[engine]")), logged.toString());
    }

    @Test
    void factoryConfigurationsGetStableValidDefaultIds() {
        assertEquals("sim-bench-sim9", SimDeviceComponent.defaultIdFor("dev.xq.hal.sim.device~bench-sim9"));
        assertEquals("sim-my-gpu-", SimDeviceComponent.defaultIdFor("dev.xq.hal.sim.device~My GPU!"));
        String hashed = SimDeviceComponent.defaultIdFor("dev.xq.hal.sim.device.1f2e3d");
        assertEquals(hashed, SimDeviceComponent.defaultIdFor("dev.xq.hal.sim.device.1f2e3d"));
        assertTrue(hashed.matches("sim-[0-9a-f]+"), hashed);
        SimSettings.from(Map.of(), hashed); // a valid id
        assertNull(SimDeviceComponent.DEVICES.get(hashed));
    }
}
