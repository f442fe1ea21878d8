package dev.xq.hal.sim;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.Preemption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;

/** Makes devices straight from settings (no OSGi) and shuts them down after each test. */
abstract class SimTestSupport {

    private final List<SimDevice> devices = new ArrayList<>();
    /** Failures the devices could not hand to a caller; a test ends with none unless it expects them. */
    final List<String> deviceErrors = new ArrayList<>();
    boolean expectDeviceErrors;

    @AfterEach
    void shutdownDevices() {
        devices.forEach(d -> d.shutdown("test over"));
        if (!expectDeviceErrors) {
            synchronized (deviceErrors) {
                assertTrue(deviceErrors.isEmpty(), "device errors: " + deviceErrors);
            }
        }
    }

    SimDevice device(Map<String, Object> props) {
        SimDevice d = new SimDevice(SimSettings.from(props, "simt" + devices.size()), (what, e) -> {
            synchronized (deviceErrors) {
                deviceErrors.add(what + ": " + e);
            }
        });
        devices.add(d);
        return d;
    }

    static HwCommand spin(long seq, long micros) {
        return new HwCommand(seq, Command.spin(micros));
    }

    static HwCommand spin(long seq, long micros, int engines, long memoryBytes) {
        return new HwCommand(seq, Command.spin(micros, engines, memoryBytes));
    }

    static final long US = 1000L;

    /** The queue's own preemption (levels 2 and 3); fails the test when the queue offers none. */
    static Preemption pre(HwQueue q) {
        return q.preemption().orElseThrow(() -> new AssertionError(q + " offers no preemption"));
    }
}
