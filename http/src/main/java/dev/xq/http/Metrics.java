package dev.xq.http;

import dev.xq.api.DeviceInfo;
import dev.xq.api.QueueState;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * {@code GET /metrics}: the node's figures in the Prometheus text format, built at each scrape
 * from the queues' and the scheduler's snapshots with Prometheus's own data model and writer.
 * Per queue (labels {@code handle, name, device, group, pid}): commands by outcome, pending,
 * in flight, suspended, device time; per node: decisions, policy swaps, watchdog trips,
 * decision times, the policy in force; per device: open queues.
 */
final class Metrics {

    static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;
    private static final String[] QUEUE_LABELS = {"handle", "name", "device", "group", "pid"};

    private final XQueueService xq;
    private final SchedulerControl scheduler;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.builder().build();

    Metrics(XQueueService xq, SchedulerControl scheduler) {
        this.xq = xq;
        this.scheduler = scheduler;
    }

    ApiResponse scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        try {
            writer.write(out, snapshots(), EscapingScheme.UNDERSCORE_ESCAPING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (IllegalArgumentException e) {
            // the library refusing what we built is our bug, not the client's: a 500, not a 400
            throw new IllegalStateException("writing the metrics failed", e);
        }
        return new ApiResponse(200, CONTENT_TYPE, out.toString(StandardCharsets.UTF_8), java.util.Map.of());
    }

    MetricSnapshots snapshots() {
        List<XQueueStatus> queues = new ArrayList<>();
        for (XQueue q : xq.queues()) {
            XQueueStatus s = q.status();
            if (s.state() != QueueState.CLOSED) {
                queues.add(s);
            }
        }
        List<MetricSnapshot> all = new ArrayList<>();
        all.add(counter("xq_queue_commands_submitted", "Commands submitted to the queue", queues, s -> s.submitted()));
        all.add(counter("xq_queue_commands_completed", "Commands of the queue that completed", queues, s -> s.completed()));
        all.add(counter("xq_queue_commands_failed", "Commands of the queue that failed", queues, s -> s.failed()));
        all.add(counter("xq_queue_commands_cancelled", "Commands of the queue cancelled by its close", queues, s -> s.cancelled()));
        all.add(gauge("xq_queue_pending", "Commands XQ holds back (not yet launched)", queues, s -> s.pending()));
        all.add(gauge("xq_queue_in_flight", "Commands launched to the hardware queue, not yet ended", queues, s -> s.inFlight()));
        all.add(gauge("xq_queue_suspended", "1 while the scheduler or the application holds the queue back", queues,
                s -> s.suspendedByScheduler() || s.suspendedByApp() ? 1 : 0));
        all.add(gauge("xq_queue_level", "Preemption level in use (1 block, 2 deactivate, 3 interrupt)", queues, s -> s.level().number()));
        CounterSnapshot.Builder device = CounterSnapshot.builder().name("xq_queue_device_seconds").unit(Unit.SECONDS)
                .help("Device time the queue's commands used");
        GaugeSnapshot.Builder estimate = GaugeSnapshot.builder().name("xq_queue_estimated_command_seconds").unit(Unit.SECONDS)
                .help("Measured device time per command that the queue's time budget uses (0 before the first completion)");
        for (XQueueStatus s : queues) {
            device.dataPoint(CounterDataPointSnapshot.builder().labels(labels(s)).value(s.runMicros() / 1e6).build());
            estimate.dataPoint(GaugeDataPointSnapshot.builder().labels(labels(s)).value(s.estimatedCommandMicros() / 1e6).build());
        }
        all.add(device.build());
        all.add(estimate.build());

        SchedulerControl.SchedulerStats st = scheduler.stats();
        all.add(single(CounterSnapshot.builder().name("xq_scheduler_decisions").help("Policy invocations"), st.decisions()));
        all.add(single(CounterSnapshot.builder().name("xq_scheduler_policy_swaps").help("Times the deciding policy changed"), st.swaps()));
        all.add(single(CounterSnapshot.builder().name("xq_scheduler_watchdog_trips")
                .help("Times a policy was set aside for throwing or overrunning its deadline"), st.watchdogTrips()));
        all.add(gauge1("xq_scheduler_decision_p50_seconds", "Median decision time (recent decisions)", st.decisionP50Micros() / 1e6));
        all.add(gauge1("xq_scheduler_decision_p99_seconds", "99th percentile decision time (recent decisions)", st.decisionP99Micros() / 1e6));
        all.add(gauge1("xq_scheduler_max_decision_gap_seconds", "Longest time from an event to the decision that handled it",
                st.maxDecisionGapMicros() / 1e6));
        all.add(InfoSnapshot.builder().name("xq_policy").help("The policy selected and the one deciding now")
                .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder()
                        .labels(Labels.of("selected", scheduler.selectedPolicy(), "active", scheduler.activePolicy())).build()).build());

        GaugeSnapshot.Builder devices = GaugeSnapshot.builder().name("xq_device_queues").help("XQueues open on the device");
        for (DeviceInfo d : xq.devices()) {
            devices.dataPoint(GaugeDataPointSnapshot.builder().labels(Labels.of("device", d.id(), "platform", d.platform()))
                    .value(d.queues()).build());
        }
        all.add(devices.build());
        return new MetricSnapshots(all);
    }

    private static Labels labels(XQueueStatus s) {
        return Labels.of(QUEUE_LABELS, new String[] {Long.toUnsignedString(s.handle()), s.name(), s.device(), s.group(),
                Long.toString(Processes.owner(s.pid()))});
    }

    private static CounterSnapshot counter(String name, String help, List<XQueueStatus> queues, ToDoubleFunction<XQueueStatus> f) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        for (XQueueStatus s : queues) {
            b.dataPoint(CounterDataPointSnapshot.builder().labels(labels(s)).value(f.applyAsDouble(s)).build());
        }
        return b.build();
    }

    private static GaugeSnapshot gauge(String name, String help, List<XQueueStatus> queues, ToDoubleFunction<XQueueStatus> f) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
        for (XQueueStatus s : queues) {
            b.dataPoint(GaugeDataPointSnapshot.builder().labels(labels(s)).value(f.applyAsDouble(s)).build());
        }
        return b.build();
    }

    private static CounterSnapshot single(CounterSnapshot.Builder b, double v) {
        return b.dataPoint(CounterDataPointSnapshot.builder().value(v).build()).build();
    }

    private static GaugeSnapshot gauge1(String name, String help, double v) {
        return GaugeSnapshot.builder().name(name).help(help).dataPoint(GaugeDataPointSnapshot.builder().value(v).build()).build();
    }
}
