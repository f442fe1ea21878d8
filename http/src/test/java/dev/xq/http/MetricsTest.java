package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.QueueState;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueueStatus;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import org.junit.jupiter.api.Test;

/** GET /metrics: Prometheus text, the names and labels dashboards and alerts rely on. */
class MetricsTest {

    @Test
    void perQueueAndNodeMetrics() {
        Fakes.Service xq = new Fakes.Service();
        Fakes.Queue q = xq.add(0xfedcba9876543210L, "serve/default", "cuda0", "4242:serve", 4242);
        q.submitted = 12;
        q.completed = 9;
        q.failed = 1;
        q.pending = 2;
        q.inFlight = 1;
        q.runMicros = 2_500_000;
        q.suspendedByScheduler = true;
        q.limits = XQueueStatus.Limits.ON_TOP;
        q.smSharePercent = 50;
        q.deviceLags = 40;
        q.widthSms = 132;
        q.stretchWidthSms = 24;
        q.deviceSms = 132;
        q.slowDeviceLags = 3;
        Fakes.Queue closed = xq.add(9, "gone", "sim0", "", 0);
        closed.state = QueueState.CLOSED;
        Api api = new Api(xq, new Fakes.Scheduler("hpf"), Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        ApiResponse r = api.handle(ApiRequest.of("GET", "/metrics"));
        assertEquals(200, r.status(), r.body());
        assertEquals("text/plain; version=0.0.4; charset=utf-8", r.contentType());
        String labels = "{device=\"cuda0\",group=\"4242:serve\",handle=\"18364758544493064720\",name=\"serve/default\",pid=\"4242\"}";
        for (String line : List.of(
                "# TYPE xq_queue_commands_submitted_total counter",
                "xq_queue_commands_submitted_total" + labels + " 12.0",
                "xq_queue_commands_completed_total" + labels + " 9.0",
                "xq_queue_commands_failed_total" + labels + " 1.0",
                "# TYPE xq_queue_pending gauge",
                "xq_queue_pending" + labels + " 2.0",
                "xq_queue_in_flight" + labels + " 1.0",
                "xq_queue_suspended" + labels + " 1.0",
                "xq_queue_limits" + labels + " 2.0",
                "# TYPE xq_queue_sm_share_percent gauge",
                "xq_queue_sm_share_percent" + labels + " 50.0",
                "# TYPE xq_queue_width_sms gauge",
                "xq_queue_width_sms" + labels + " 132.0",
                "xq_queue_stretch_width_sms" + labels + " 24.0",
                "# TYPE xq_queue_device_lags_total counter",
                "xq_queue_device_lags_total" + labels + " 40.0",
                "xq_queue_slow_device_lags_total" + labels + " 3.0",
                "# HELP xq_queue_device_seconds_total Device time the queue's commands used",
                "xq_queue_device_seconds_total" + labels + " 2.5",
                "xq_scheduler_decisions_total 42.0",
                "xq_scheduler_policy_swaps_total 3.0",
                "xq_scheduler_watchdog_trips_total 1.0",
                "xq_scheduler_decision_p99_seconds 1.2E-4",
                "xq_policy_info{active=\"hpf\",selected=\"hpf\"} 1",
                "xq_device_queues{device=\"sim0\",platform=\"sim\"} 0.0")) {
            assertTrue(r.body().lines().anyMatch(line::equals), "missing line: " + line + "\n" + r.body());
        }
        assertTrue(!r.body().contains("gone"), "closed queues are not reported");
    }

    @Test
    void decisionTimesAreAPrometheusHistogramInSeconds() {
        Fakes.Scheduler scheduler = new Fakes.Scheduler("hpf");
        Api api = new Api(new Fakes.Service(), scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        String body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        // bounds 1, 2, 5, 10 us and beyond; 3, 4, 0, 2, 1 decisions per bucket: cumulative in the text
        assertLines(body,
                "# TYPE xq_scheduler_decision_seconds histogram",
                "xq_scheduler_decision_seconds_bucket{le=\"1.0E-6\"} 3",
                "xq_scheduler_decision_seconds_bucket{le=\"2.0E-6\"} 7",
                "xq_scheduler_decision_seconds_bucket{le=\"5.0E-6\"} 7",
                "xq_scheduler_decision_seconds_bucket{le=\"1.0E-5\"} 9",
                "xq_scheduler_decision_seconds_bucket{le=\"+Inf\"} 10",
                "xq_scheduler_decision_seconds_count 10",
                "xq_scheduler_decision_seconds_sum 5.05E-5");

        scheduler.histogram = SchedulerControl.DecisionHistogram.EMPTY;   // a runtime before API 1.2: no decisions counted
        body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body, "xq_scheduler_decision_seconds_bucket{le=\"+Inf\"} 0", "xq_scheduler_decision_seconds_count 0",
                "xq_scheduler_decision_seconds_sum 0.0");
        assertFalse(body.contains("le=\"1.0E-6\""), body);
    }

    @Test
    void deviceBusySecondsAddUpTheQueuesAndNeverFallWhenOneCloses() {
        Fakes.Service xq = new Fakes.Service();
        Fakes.Queue a = xq.add(1, "a", "sim0", "", 0);
        Fakes.Queue b = xq.add(2, "b", "sim0", "", 0);
        Fakes.Queue c = xq.add(3, "c", "cuda0", "", 0);
        a.runMicros = 1_500_000;
        b.runMicros = 250_000;
        c.runMicros = 4_000_000;
        Api api = new Api(xq, new Fakes.Scheduler("hpf"), Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        String body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body,
                "# TYPE xq_device_busy_seconds_total counter",
                "xq_device_busy_seconds_total{device=\"sim0\",platform=\"sim\"} 1.75",
                "xq_device_busy_seconds_total{device=\"cuda0\",platform=\"cuda\"} 4.0",
                "xq_device_engines{device=\"sim0\",platform=\"sim\"} 1.0",
                "xq_device_engines{device=\"cuda0\",platform=\"cuda\"} 132.0");

        // b runs on, then closes and is gone from the list: its time stays with sim0
        b.runMicros = 750_000;
        body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body, "xq_device_busy_seconds_total{device=\"sim0\",platform=\"sim\"} 2.25");
        xq.queues.remove(b);
        a.runMicros = 2_000_000;
        body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body, "xq_device_busy_seconds_total{device=\"sim0\",platform=\"sim\"} 2.75");

        // a closed queue still listed counts with its final figure, once
        a.runMicros = 2_100_000;
        a.state = QueueState.CLOSED;
        body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body, "xq_device_busy_seconds_total{device=\"sim0\",platform=\"sim\"} 2.85");
        xq.queues.remove(a);
        body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body, "xq_device_busy_seconds_total{device=\"sim0\",platform=\"sim\"} 2.85");

        // a device that went keeps its series (and labels) with what its queues used
        xq.devices.removeIf(d -> d.id().equals("cuda0"));
        xq.queues.remove(c);
        body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        assertLines(body, "xq_device_busy_seconds_total{device=\"cuda0\",platform=\"cuda\"} 4.0");
        assertFalse(body.contains("xq_device_engines{device=\"cuda0\""), body);
    }

    @Test
    void devicesNoDriverListsAndNoQueueUsesAreForgottenBeyondTheBound() {
        Fakes.Service xq = new Fakes.Service();
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        RuntimeLog log = new RuntimeLog() {
            @Override
            public void info(String message) {
            }

            @Override
            public void warn(String message) {
                warnings.add(message);
            }

            @Override
            public void error(String message, Throwable cause) {
            }
        };
        Api api = new Api(xq, new Fakes.Scheduler("hpf"), Securities.loopback(), log, Securities.SAME_USER);
        Fakes.Queue steady = xq.add(1, "steady", "cuda7", "", 0);   // open all along: its device stays
        steady.runMicros = 1_000_000;
        int size = api.handle(ApiRequest.of("GET", "/metrics")).body().length();
        // a process opens queues on ever new made-up devices, 100 at a time, and closes them
        long handle = 100;
        for (int round = 0; round < 10; round++) {
            List<Fakes.Queue> made = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                Fakes.Queue q = xq.add(handle, "ghost", "cuda" + (1000 + handle), "", 0);
                q.runMicros = 1;
                made.add(q);
                handle++;
            }
            api.handle(ApiRequest.of("GET", "/metrics"));
            xq.queues.removeAll(made);
            api.handle(ApiRequest.of("GET", "/metrics"));
        }
        String body = api.handle(ApiRequest.of("GET", "/metrics")).body();
        long series = body.lines().filter(l -> l.startsWith("xq_device_busy_seconds_total{")).count();
        // the drivers' devices (sim0, cuda0), cuda7 of the open queue, the 64 idle devices used last
        assertEquals(2 + 1 + Metrics.MAX_IDLE_DEVICES, series, body);
        assertLines(body, "xq_device_busy_seconds_total{device=\"cuda7\",platform=\"\"} 1.0",
                "xq_device_busy_seconds_total{device=\"cuda0\",platform=\"cuda\"} 0.0",
                "xq_device_busy_seconds_total{device=\"cuda2099\",platform=\"\"} 1.0E-6");
        assertFalse(body.contains("device=\"cuda1100\""), "the device used longest ago is forgotten");
        assertTrue(body.length() < size + 100 * 80, () -> "metrics grew from " + size + " to " + body.length() + " bytes");
        assertEquals(1, warnings.size(), () -> "warnings: " + warnings);
        assertTrue(warnings.getFirst().contains("forgot the busy time (xq_device_busy_seconds)")
                && warnings.getFirst().contains("the 64 used last are kept"), warnings::toString);
    }

    private static void assertLines(String body, String... lines) {
        for (String line : lines) {
            assertTrue(body.lines().anyMatch(line::equals), "missing line: " + line + "\n" + body);
        }
    }
}
