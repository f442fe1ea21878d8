package dev.xq.hal.kfd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The provider without a KFD device, its settings and its rate limiter. */
class KfdProviderTest {

    @Test
    void withoutDeviceStaysActiveAndAttachesNothing() {
        assumeFalse(Files.exists(Path.of("/dev/kfd")), "this machine has a real /dev/kfd");
        KfdProvider p = new KfdProvider();
        p.activate(TestQueues.config("/dev/kfd", 100, 2000, "auto"), java.util.Map.of());
        assertEquals("kfd", p.name());
        assertEquals("no /dev/kfd", p.status());
        assertTrue(p.attach(TestQueues.queue("hip", 0x1234L)).isEmpty());
        assertThrows(IllegalStateException.class, () -> p.pendingWork(1));
        p.deactivate();
    }

    @Test
    void otherMissingPathIsNamed() {
        KfdProvider p = new KfdProvider();
        p.activate(TestQueues.config("/nonexistent/kfd0", 100, 2000, "auto"), java.util.Map.of());
        assertEquals("no /nonexistent/kfd0", p.status());
        assertTrue(p.attach(TestQueues.queue("hip", 1L)).isEmpty());
        p.deactivate();
    }

    @Test
    void notAKfdDeviceIsReportedWithTheIoctl() {
        KfdProvider p = new KfdProvider();
        p.activate(TestQueues.config("/dev/null", 100, 2000, "auto"), java.util.Map.of());
        assertTrue(p.status().contains("AMDKFD_IOC_GET_VERSION") && p.status().contains("ENOTTY"), p.status());
        assertTrue(p.attach(TestQueues.queue("hip", 1L)).isEmpty());
        p.deactivate();
    }

    @Test
    void badConfigurationNamesValueAndAllowed() {
        KfdProvider p = new KfdProvider();
        p.activate(TestQueues.config("/dev/kfd", 100, 2000, "fast"), java.util.Map.of());
        assertTrue(p.status().contains("mode 'fast'") && p.status().contains("auto, cwsr, preempt, logical"), p.status());
        assertTrue(p.attach(TestQueues.queue("hip", 1L)).isEmpty());
        p.activate(TestQueues.config("/dev/kfd", -5, 2000, "auto"), java.util.Map.of());
        assertTrue(p.status().contains("gracePeriodMicros -5"), p.status());
        p.activate(TestQueues.config("/dev/kfd", 5, -1, "auto"), java.util.Map.of());
        assertTrue(p.status().contains("minSuspendIntervalMicros -1"), p.status());
        p.activate(TestQueues.config(" ", 5, 1, "auto"), java.util.Map.of());
        assertTrue(p.status().contains("device is empty"), p.status());
    }

    @Test
    void modesParseCaseInsensitively() {
        assertEquals(KfdSettings.Mode.CWSR, KfdSettings.mode(" CWSR "));
        assertEquals(KfdSettings.Mode.LOGICAL, KfdSettings.mode("logical"));
        assertThrows(IllegalArgumentException.class, () -> KfdSettings.mode(null));
    }

    @Test
    void gracePeriodConvertsToKernelUnitsAtLeastOne() {
        assertEquals(1, new KfdSettings("/dev/kfd", 0, 0, KfdSettings.Mode.AUTO).gracePeriodUnits());
        assertEquals(210, new KfdSettings("/dev/kfd", 100, 0, KfdSettings.Mode.AUTO).gracePeriodUnits());
        assertEquals(3, new KfdSettings("/dev/kfd", 1, 0, KfdSettings.Mode.AUTO).gracePeriodUnits());
    }

    @Test
    void rateLimiterWaitsOutTheInterval() {
        long[] now = {1_000_000};
        List<Long> sleeps = new ArrayList<>();
        RateLimiter r = new RateLimiter(2_000_000, () -> now[0], n -> {
            sleeps.add(n);
            now[0] += n;
        });
        assertEquals(0, r.acquire(), "first suspend never waits");
        now[0] += 500_000;
        assertEquals(1_500_000, r.acquire());
        now[0] += 5_000_000;
        assertEquals(0, r.acquire(), "an old suspend does not delay");
        assertEquals(List.of(1_500_000L), sleeps);
    }
}
