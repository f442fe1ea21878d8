package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.SchedulerControl;
import dev.xq.example.host.MatmulExample;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.hal.spi.XpuMemory;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * example-host's program ({@code xq:example --device hip code=FILE}) on a HIP device, which here
 * is the double: the double's stand-in for the code object (matmul.hipdouble) is loaded in place of
 * one built with hipcc, and every foreground result is checked against the CPU's, bit for bit.
 */
class ExampleOnHipDoubleTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private HipPlatform platform;
    private int devicesBefore;

    @BeforeEach
    void start() {
        HipDouble.reset();
        devicesBefore = HipDouble.liveAllocations(false);
        platform = HipPlatform.start(HipDouble.settings(), RuntimeLog.NONE);
        HipMemory memory = new HipMemory(() -> platform);
        core.addDriver(new XpuDriver() {
            @Override
            public String platform() {
                return HipPlatform.PLATFORM;
            }

            @Override
            public String status() {
                return platform.status();
            }

            @Override
            public List<DeviceDescriptor> devices() {
                return platform.devices();
            }

            @Override
            public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
                return platform.open(deviceId, options, listener);
            }

            @Override
            public Optional<XpuMemory> memory() {
                return Optional.of(memory);
            }
        });
        core.start();
    }

    @AfterEach
    void stop() {
        core.stop();
        platform.close();
        assertEquals(devicesBefore, HipDouble.liveAllocations(false), "the example's buffers were freed");
    }

    @Test
    void theExampleComputesAndChecksOnAHipDevice() throws Exception {
        List<String> progress = new ArrayList<>();
        MatmulExample.Report r = new MatmulExample(core, core, resource -> null, progress::add)
                .run(new MatmulExample.Settings("hip0", 32, 48, 4, 2, 0, List.of(SchedulerControl.NATIVE), HipDouble.matmulModule()));
        assertTrue(r.passed(), "the check: " + r.modes());
        assertEquals(List.of("alone", "shared"), r.modes().stream().map(MatmulExample.Mode::name).toList());
        for (MatmulExample.Mode m : r.modes()) {
            assertEquals(4, m.correct(), m.name() + ": " + m.firstMismatch());
        }
    }

    @Test
    void withoutACodeObjectTheExampleSaysHowToBuildOne() {
        String e = assertThrows(IllegalStateException.class, () -> new MatmulExample(core, core, resource -> null, line -> { })
                .run(new MatmulExample.Settings("hip0", 32, 48, 4, 2, 0, List.of(SchedulerControl.NATIVE), null))).getMessage();
        assertTrue(e.startsWith("hip/matmul.co is not in the example bundle: no HIP code object is shipped"), e);
        assertTrue(e.contains("hipcc --genco --offload-arch=<gfx target> -o matmul.co"), e);
    }
}
