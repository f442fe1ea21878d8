package dev.xq.bench.scenario.processes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A latency-critical tenant's requests split into its host's part and the device's. */
class HostPartsTest {

    /** {@code n} requests of {@code host} ms launching and {@code device} ms waiting. */
    private static double[][] requests(int n, double host, double device) {
        double[][] ld = new double[2][n];
        for (int i = 0; i < n; i++) {
            // a little spread, so that no two requests tie
            double h = host + (i % 7) * 0.01;
            ld[1][i] = h;
            ld[0][i] = h + device + (i % 5) * 0.001;
        }
        return ld;
    }

    @Test
    void slowRequestsAreTracedToTheHostOrTheDevice() {
        double[][] hostSlow = requests(200, 25, 0.1);
        for (int i = 50; i < 60; i++) { // a slow core: ten requests whose launching took 2.5 x as long
            hostSlow[1][i] = 62;
            hostSlow[0][i] = 62.1;
        }
        double[][] deviceSlow = requests(200, 25, 0.1);
        for (int i = 100; i < 110; i++) { // ten that waited 20 ms at their synchronize
            deviceSlow[0][i] = 45.1;
        }
        Map<String, double[][]> by = new LinkedHashMap<>();
        by.put("native", deviceSlow);
        by.put("xq", hostSlow);
        Map<String, HostParts.Reading> parts = HostParts.of(by);
        assertEquals(java.util.List.of("native", "xq"), java.util.List.copyOf(parts.keySet()));
        HostParts.Reading xq = parts.get("xq");
        assertEquals(200, xq.requests());
        assertEquals(10, xq.slowest());
        assertEquals(10, xq.hostMade());
        assertEquals(0, xq.deviceMade());
        assertTrue(xq.deviceP99() < 0.2, "the device's part stays small: " + xq.deviceP99());
        assertTrue(xq.hostP99() > 60, "the host's part carries the slow ones: " + xq.hostP99());
        HostParts.Reading nat = parts.get("native");
        assertEquals(0, nat.hostMade());
        assertEquals(10, nat.deviceMade());
        assertTrue(nat.deviceP99() > 19, "the device's part carries the slow ones: " + nat.deviceP99());
        assertEquals(10, nat.json().get("slowest_device_made"));
    }

    @Test
    void unmarkedRequestsAreLeftOutAndNoMarkMeansNoReading() {
        double[][] ld = requests(40, 10, 1);
        ld[1][3] = -1; // a request that did not mark its launches
        Map<String, double[][]> by = new LinkedHashMap<>();
        by.put("xq", ld);
        assertEquals(39, HostParts.of(by).get("xq").requests());
        double[][] none = requests(40, 10, 1);
        java.util.Arrays.fill(none[1], -1);
        assertTrue(HostParts.of(Map.of("native", none)).isEmpty());
        assertTrue(HostParts.of(Map.of()).isEmpty());
    }

    @Test
    void latenciesAndHostPartsOfDifferentLengthsAreRefused() {
        double[][] ld = {new double[] {1, 2, 3}, new double[] {1, 2}};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HostParts.of(Map.of("xq", ld)));
        assertTrue(e.getMessage().contains("3 latencies but 2 host parts"), e.getMessage());
    }
}
