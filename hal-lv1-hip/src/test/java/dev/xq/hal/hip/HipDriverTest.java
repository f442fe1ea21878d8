package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The DS component's own logic, called as SCR would call it. */
class HipDriverTest {

    @Test
    void aBadConfigurationLeavesARegisteredDriverWithoutDevices() {
        HipDriver d = new HipDriver();
        d.activate(HipSettingsTest.config("", "", new String[0], 5, 0), java.util.Map.of());
        assertEquals("hip", d.platform());
        assertEquals("no device: bad configuration (dev.xq.hal.hip): pollMaxMicros=0 is out of range [1, 100000]", d.status());
        assertEquals(List.of(), d.devices());
        d.deactivate();
    }

    @Test
    void aConfiguredDoubleGivesADevice() {
        HipDouble.reset();
        HipDriver d = new HipDriver();
        d.activate(HipSettingsTest.config(HipDouble.library(), HipDouble.module().toString(), new String[0], 5, 200), java.util.Map.of());
        try {
            assertTrue(d.status().startsWith("1 device"), d.status());
            assertTrue(d.devices().getFirst().commandKinds().contains("spin"));
        } finally {
            d.deactivate();
        }
        assertEquals("no device: driver stopped", d.status());
    }
}
