package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.reflect.Proxy;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Without a library or a GPU the driver stays usable as a service and says why it has no device. */
class NoDeviceTest {

    /** A CudaConfig as Config Admin would hand it in, with some values overridden. */
    static CudaConfig config(Map<String, Object> values) {
        return (CudaConfig) Proxy.newProxyInstance(CudaConfig.class.getClassLoader(), new Class<?>[] {CudaConfig.class},
                (proxy, method, args) -> {
                    if (values.containsKey(method.getName())) {
                        return values.get(method.getName());
                    }
                    Object d = method.getDefaultValue();
                    if (d != null) {
                        return d;
                    }
                    return switch (method.getName()) {
                        case "annotationType" -> CudaConfig.class;
                        case "hashCode" -> 0;
                        case "equals" -> proxy == args[0];
                        case "toString" -> "CudaConfig" + values;
                        default -> throw new UnsupportedOperationException(method.getName());
                    };
                });
    }

    @Test
    void missingLibraryIsReportedByName() {
        CudaDriver driver = new CudaDriver();
        driver.activate(config(Map.of("library", "libcuda-not-here-xq.so.1")), java.util.Map.of());
        try {
            assertEquals("no device: libcuda-not-here-xq.so.1 not found", driver.status());
            assertEquals("cuda", driver.platform());
            assertTrue(driver.devices().isEmpty());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> driver.open("cuda0", new HwQueueOptions("q", null), new RecordingListener()));
            assertTrue(e.getMessage().contains("'cuda0' is unknown") && e.getMessage().contains("known: none"), e.getMessage());
        } finally {
            driver.deactivate();
        }
    }

    @Test
    void defaultLibraryAbsentOnAMachineWithoutTheDriver() {
        CudaPlatform p = CudaPlatform.start(CudaSettings.defaults(), RuntimeLog.NONE);
        try {
            Assumptions.assumeTrue(p.api() == null, "libcuda.so.1 is installed here; this test is for machines without it");
            assertEquals("no device: libcuda.so.1 not found", p.status());
            assertTrue(p.devices().isEmpty());
        } finally {
            p.close();
        }
    }

    @Test
    void cuInitWithoutAGpuIsReportedWithTheErrorName() {
        try (CudaDouble cuda = new CudaDouble()) {
            cuda.initResult = CudaApi.CUDA_ERROR_NO_DEVICE;
            CudaPlatform p = CudaPlatform.start(cuda.api(), CudaSettings.defaults(), RuntimeLog.NONE);
            assertEquals("no device: cuInit returned CUDA_ERROR_NO_DEVICE (100)", p.status());
            assertTrue(p.devices().isEmpty());
            assertEquals(0, cuda.retainedContexts.get());
            p.close();
        }
    }

    @Test
    void zeroDevicesIsNoDevice() {
        try (CudaDouble cuda = new CudaDouble()) {
            cuda.deviceCount = 0;
            CudaPlatform p = CudaPlatform.start(cuda.api(), CudaSettings.defaults(), RuntimeLog.NONE);
            assertEquals("no device: cuDeviceGetCount found no device", p.status());
            p.close();
        }
    }

    @Test
    void aLibraryMissingASymbolIsNamed() {
        try (CudaDouble cuda = new CudaDouble()) {
            cuda.without("cuLaunchHostFunc");
            var e = assertThrows(dev.xq.hal.spi.HalException.class, cuda::api);
            assertTrue(e.getMessage().contains("lacks [cuLaunchHostFunc]"), e.getMessage());
        }
    }

    @Test
    void badConfigurationKeepsTheServiceAndSaysWhatIsWrong() {
        CudaDriver driver = new CudaDriver();
        driver.activate(config(Map.of("modules", new String[] {"gemm"})), java.util.Map.of());
        try {
            assertTrue(driver.status().startsWith("no device: bad configuration (dev.xq.hal.cuda): module entry 'gemm' is not name=path"),
                    driver.status());
            assertTrue(driver.devices().isEmpty());
        } finally {
            driver.deactivate();
        }
        CudaDriver other = new CudaDriver();
        other.activate(config(Map.of("completion", "interrupts")), java.util.Map.of());
        try {
            assertTrue(other.status().contains("completion mode 'interrupts' is unknown; allowed: poll, sync-spin, sync-block, hostfunc"),
                    other.status());
        } finally {
            other.deactivate();
        }
    }
}
