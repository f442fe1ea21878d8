package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.QueueState;
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
        Fakes.Queue closed = xq.add(9, "gone", "sim0", "", 0);
        closed.state = QueueState.CLOSED;
        Api api = new Api(xq, new Fakes.Scheduler("hpf"), Securities.loopback(), RuntimeLog.NONE);
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
}
