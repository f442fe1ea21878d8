package dev.xq.bench.scenario.processes;

import dev.xq.bench.stats.Percentiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a latency-critical tenant's requests spent their time: its host's part (from the request's
 * start until its last launch was issued: {@code host_ms} of {@code bench/torch/family/tenant.py})
 * and the device's (the rest, the wait at its one synchronize).
 *
 * <p>An eager decoder's request is nearly all host time (about 950 launches): a slow core stretches
 * it with the GPU idle, and no scheduler of the GPU makes that up. Under XQ on the H200 its device
 * part stayed at 0.12-0.14 ms P99 in every mix while its slowest requests were its host's (session
 * 83), so a miss is read with this beside it. A mode's slowest 5 % of requests are counted as
 * host-made where the host's part is over {@value #MADE} x the tenant's median host part over every
 * mode of the run, device-made where the device's part is over {@value #MADE} x its median likewise
 * (both can hold, or neither).
 */
final class HostParts {

    /** How far over the tenant's median a part must be to have made a slow request. */
    static final double MADE = 1.5;

    /** One mode's split; the parts in ms. */
    record Reading(int requests, double hostP50, double hostP99, double deviceP50, double deviceP99, int slowest, int hostMade,
                   int deviceMade) {

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("requests", requests);
            m.put("host_p50_ms", round(hostP50));
            m.put("host_p99_ms", round(hostP99));
            m.put("device_p50_ms", round(deviceP50));
            m.put("device_p99_ms", round(deviceP99));
            m.put("slowest", slowest);
            m.put("slowest_host_made", hostMade);
            m.put("slowest_device_made", deviceMade);
            return m;
        }
    }

    private HostParts() {
    }

    /**
     * @param byMode each mode's latencies and host parts (ms; {@code {lat, host}} of one length; a
     *     negative host part is a request that did not mark its launches, left out)
     * @return each mode's split, in {@code byMode}'s order; empty where no mode has a marked request
     */
    static Map<String, Reading> of(Map<String, double[][]> byMode) {
        List<Double> hosts = new ArrayList<>();
        List<Double> devices = new ArrayList<>();
        Map<String, double[][]> marked = new LinkedHashMap<>();
        byMode.forEach((mode, ld) -> {
            double[] lat = ld[0];
            double[] host = ld[1];
            if (lat.length != host.length) {
                throw new IllegalArgumentException("mode " + mode + ": " + lat.length + " latencies but " + host.length
                        + " host parts; each request needs both");
            }
            List<double[]> rows = new ArrayList<>();
            for (int i = 0; i < lat.length; i++) {
                if (host[i] >= 0) {
                    rows.add(new double[] {lat[i], host[i], Math.max(0, lat[i] - host[i])});
                    hosts.add(host[i]);
                    devices.add(Math.max(0, lat[i] - host[i]));
                }
            }
            if (!rows.isEmpty()) {
                marked.put(mode, rows.toArray(double[][]::new));
            }
        });
        Map<String, Reading> out = new LinkedHashMap<>();
        if (marked.isEmpty()) {
            return out;
        }
        double refHost = Percentiles.of(hosts.stream().mapToDouble(Double::doubleValue).toArray()).at(50);
        double refDevice = Percentiles.of(devices.stream().mapToDouble(Double::doubleValue).toArray()).at(50);
        marked.forEach((mode, rows) -> {
            double[] host = Arrays.stream(rows).mapToDouble(r -> r[1]).toArray();
            double[] device = Arrays.stream(rows).mapToDouble(r -> r[2]).toArray();
            Percentiles h = Percentiles.of(host);
            Percentiles d = Percentiles.of(device);
            double[][] bySlow = rows.clone();
            Arrays.sort(bySlow, Comparator.comparingDouble((double[] r) -> r[0]).reversed());
            int slowest = Math.max(1, rows.length / 20);
            int hostMade = 0;
            int deviceMade = 0;
            for (int i = 0; i < slowest; i++) {
                if (bySlow[i][1] > MADE * refHost) {
                    hostMade++;
                }
                if (bySlow[i][2] > MADE * refDevice) {
                    deviceMade++;
                }
            }
            out.put(mode, new Reading(rows.length, h.at(50), h.at(99), d.at(50), d.at(99), slowest, hostMade, deviceMade));
        });
        return out;
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
