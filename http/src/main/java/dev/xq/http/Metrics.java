package dev.xq.http;

import dev.xq.api.DeviceInfo;
import dev.xq.api.QueueState;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import dev.xq.runtime.log.RuntimeLog;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * {@code GET /metrics}: the node's figures in the Prometheus text format, built at each scrape
 * from the queues' and the scheduler's snapshots with Prometheus's own data model and writer.
 * Per queue (labels {@code handle, name, device, group, pid}): commands by outcome, pending,
 * in flight, suspended, device time; per node: decisions, policy swaps, watchdog trips,
 * decision times (recent percentiles, and a histogram of every decision since the node started),
 * the policy in force; per device: open queues, engines and busy time.
 *
 * <p>A device's busy time ({@code xq_device_busy_seconds_total}) is the device time of every
 * queue that ran on it, the closed ones included: this object remembers each queue's last
 * device time and keeps it for the device when the queue goes, so that the counter never falls
 * while the node runs and {@code rate()} of it is the device's utilisation (queues running side
 * by side on several engines add up: divide by {@code xq_device_engines} for a fraction of the
 * whole device). Time a queue used between the last scrape and its close is not seen.
 *
 * <p>What is kept is bounded: a device's series stays while a driver lists the device or a
 * queue on it is listed; of the devices with neither (a process's {@code cuda<N>} on a node
 * without that driver, after its queues closed) the {@value #MAX_IDLE_DEVICES} used last keep
 * theirs, and older ones are forgotten (said once in the log): a local process opening queues on
 * ever new device names cannot make the node remember, and {@code /metrics} repeat, each of them.
 */
final class Metrics {

    static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;
    private static final String[] QUEUE_LABELS = {"handle", "name", "device", "group", "pid"};

    /** Devices no driver lists and no queue uses whose busy time is still kept (the ones used last). */
    static final int MAX_IDLE_DEVICES = 64;

    private final XQueueService xq;
    private final SchedulerControl scheduler;
    private final RuntimeLog log;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.builder().build();
    /** Busy time bookkeeping (under this object's lock): each open queue's device and device time at the last scrape. */
    private final Map<Long, Seen> seen = new HashMap<>();
    /** Device time, in µs, of the queues that closed, per device. */
    private final Map<String, Long> retiredMicros = new HashMap<>();
    /** Busy time last reported per device, in µs: what is reported never falls below it. */
    private final Map<String, Long> reportedMicros = new HashMap<>();
    /** Platform of each device seen, so that a device that went keeps its series' labels. */
    private final Map<String, String> platforms = new java.util.concurrent.ConcurrentHashMap<>();
    /** The scrape at which each kept device was last listed by a driver or used by a listed queue. */
    private final Map<String, Long> lastActive = new HashMap<>();
    private long scrapes;
    private boolean forgotSaid;

    private record Seen(String device, long runMicros) {
    }

    Metrics(XQueueService xq, SchedulerControl scheduler, RuntimeLog log) {
        this.xq = xq;
        this.scheduler = scheduler;
        this.log = log;
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
        List<XQueueStatus> listed = new ArrayList<>();
        for (XQueue q : xq.queues()) {
            XQueueStatus s = q.status();
            listed.add(s);
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
        all.add(gauge("xq_queue_limits", "Launch limits in force (0 configured, 1 widened: alone on its device, 2 widened: on top of it,"
                + " 3 widened: under an arrival guard, 4 widened: narrowed to a part of the device)",
                queues, s -> switch (s.limits()) {
                    case CONFIGURED -> 0;
                    case ALONE -> 1;
                    case ON_TOP -> 2;
                    case GUARDED -> 3;
                    case NARROWED -> 4;
                }));
        all.add(gauge("xq_queue_sm_share_percent",
                "Share of the device's multiprocessors (SMs) the queue's commands may use, in percent (100: the whole device,"
                        + " or not shared in space)",
                queues, s -> s.smSharePercent()));
        all.add(gauge("xq_queue_width_sms", "Multiprocessors (SMs) the queue's recent commands could fill at once, as its process"
                + " tells (its widest launch of the last seconds; a CUDA graph, the whole device): what the node reserves for it"
                + " beside narrowed queues; 0 when not told", queues, s -> s.widthSms()));
        all.add(gauge("xq_queue_stretch_width_sms", "The same for the queue's current stretch of work (its last milliseconds of"
                + " launching): short best-effort work is held in time behind a busy queue while this is over half the device;"
                + " 0 when not told", queues, s -> s.stretchWidthSms()));
        all.add(counter("xq_queue_device_lags", "Busy periods of the queue over which its process timed how long its commands"
                + " ran after their last launch (CUDA processes under ./xq run)", queues, s -> s.deviceLags()));
        all.add(counter("xq_queue_slow_device_lags", "Of xq_queue_device_lags, those of 1 ms or more: the device did not keep up"
                + " with the queue's launches", queues, s -> s.slowDeviceLags()));
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
        all.add(decisionHistogram(scheduler.decisionHistogram()));
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
        GaugeSnapshot.Builder engines = GaugeSnapshot.builder().name("xq_device_engines")
                .help("Engines of the device that can run commands side by side");
        for (DeviceInfo d : xq.devices()) {
            engines.dataPoint(GaugeDataPointSnapshot.builder().labels(Labels.of("device", d.id(), "platform", d.platform()))
                    .value(d.engines()).build());
        }
        all.add(engines.build());
        CounterSnapshot.Builder busy = CounterSnapshot.builder().name("xq_device_busy_seconds").unit(Unit.SECONDS)
                .help("Device time used by the device's queues, closed ones included; rate() is the utilisation "
                        + "(up to xq_device_engines when queues run side by side)");
        for (Map.Entry<String, Long> e : busyMicros(xq.devices(), listed).entrySet()) {
            busy.dataPoint(CounterDataPointSnapshot.builder().labels(Labels.of("device", e.getKey(), "platform",
                    platforms.getOrDefault(e.getKey(), ""))).value(e.getValue() / 1e6).build());
        }
        all.add(busy.build());
        return new MetricSnapshots(all);
    }

    /**
     * {@code xq_scheduler_decision_seconds}: the scheduler's decision times as a Prometheus
     * histogram (bounds in seconds, {@code _bucket} cumulative with {@code le="+Inf"} last,
     * {@code _sum}, {@code _count}).
     */
    static HistogramSnapshot decisionHistogram(SchedulerControl.DecisionHistogram h) {
        List<Double> bounds = new ArrayList<>(h.upperBoundsMicros().size() + 1);
        for (double us : h.upperBoundsMicros()) {
            bounds.add(us / 1e6);
        }
        bounds.add(Double.POSITIVE_INFINITY);
        HistogramSnapshot.HistogramDataPointSnapshot point = HistogramSnapshot.HistogramDataPointSnapshot.builder()
                .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, h.counts()))   // per bucket: the writer accumulates
                .sum(h.sumMicros() / 1e6).build();
        return HistogramSnapshot.builder().name("xq_scheduler_decision_seconds").unit(Unit.SECONDS)
                .help("Time the policies took to decide, every decision since the node started").dataPoint(point).build();
    }

    /**
     * Busy time per device, in µs, from the queues listed now (a closed one that is still listed
     * with its final figure) and the ones that went since this object was made; never lower than
     * what it reported before.
     */
    synchronized Map<String, Long> busyMicros(List<DeviceInfo> devices, List<XQueueStatus> listed) {
        long scrape = ++scrapes;
        for (DeviceInfo d : devices) {
            platforms.put(d.id(), d.platform());
            retiredMicros.putIfAbsent(d.id(), 0L);
            lastActive.put(d.id(), scrape);
        }
        Map<Long, Seen> now = new HashMap<>();
        for (XQueueStatus s : listed) {
            now.put(s.handle(), new Seen(s.device(), s.runMicros()));
            lastActive.put(s.device(), scrape);
        }
        for (Map.Entry<Long, Seen> e : seen.entrySet()) {
            if (!now.containsKey(e.getKey())) {   // closed since the last scrape: its time stays with its device
                retiredMicros.merge(e.getValue().device(), e.getValue().runMicros(), Long::sum);
            }
        }
        seen.clear();
        seen.putAll(now);
        forgetIdle(scrape);
        Map<String, Long> total = new TreeMap<>(retiredMicros);
        for (Seen s : now.values()) {
            total.merge(s.device(), s.runMicros(), Long::sum);
        }
        for (Map.Entry<String, Long> e : total.entrySet()) {
            long reported = Math.max(e.getValue(), reportedMicros.getOrDefault(e.getKey(), 0L));
            reportedMicros.put(e.getKey(), reported);
            e.setValue(reported);
        }
        return total;
    }

    /** Keeps the {@value #MAX_IDLE_DEVICES} idle devices used last; forgets the others' busy time. */
    private void forgetIdle(long scrape) {
        List<Map.Entry<String, Long>> idle = new ArrayList<>();
        for (Map.Entry<String, Long> e : lastActive.entrySet()) {
            if (e.getValue() != scrape) {
                idle.add(e);
            }
        }
        if (idle.size() <= MAX_IDLE_DEVICES) {
            return;
        }
        idle.sort(Map.Entry.comparingByValue());
        List<String> gone = idle.subList(0, idle.size() - MAX_IDLE_DEVICES).stream().map(Map.Entry::getKey).toList();
        for (String d : gone) {
            lastActive.remove(d);
            retiredMicros.remove(d);
            reportedMicros.remove(d);
            platforms.remove(d);
        }
        if (!forgotSaid) {
            forgotSaid = true;
            log.warn("metrics: more than " + MAX_IDLE_DEVICES + " devices that no driver lists and no queue uses; forgot the "
                    + "busy time (xq_device_busy_seconds) of " + gone.size() + " used longest ago, " + gone.getFirst()
                    + " first; the " + MAX_IDLE_DEVICES + " used last are kept (further ones are forgotten without a line)");
        }
    }

    /** The devices whose busy time is kept (drivers' devices, devices of listed queues, idle ones up to the bound). */
    synchronized int keptDevices() {
        return lastActive.size();
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
