package dev.xq.http;

import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.Hint;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import dev.xq.operator.Operator;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * XQ's own API under {@code /api/v1}: what {@code xq:queues}, {@code xq:devices},
 * {@code xq:policies}, {@code xq:policy}, {@code xq:hint}, {@code xq:config},
 * {@code xq:suspend} and {@code xq:resume} show and do, as JSON, through the same
 * {@link Operator} the shell uses. A queue is named as in the shell: its handle or its name.
 */
final class XqApi {

    static final String PREFIX = "/api/v1";

    private final XQueueService xq;
    private final SchedulerControl scheduler;
    private final Operator ops;

    XqApi(XQueueService xq, SchedulerControl scheduler) {
        this.xq = xq;
        this.scheduler = scheduler;
        this.ops = new Operator(xq, scheduler);
    }

    // ------------------------------------------------------------------ reading

    ApiResponse queues() {
        List<Object> out = new ArrayList<>();
        for (XQueue q : xq.queues()) {
            out.add(queue(q.status()));
        }
        return ApiResponse.ok(Json.object("queues", out));
    }

    ApiResponse queue(String key) {
        return ApiResponse.ok(Json.object("queue", queue(ops.queue(key).status())));
    }

    static Map<String, Object> queue(XQueueStatus s) {
        Map<String, Object> m = Json.object();
        m.put("handle", new Json.Unsigned(s.handle()));
        m.put("name", s.name());
        m.put("device", s.device());
        m.put("group", s.group());
        m.put("pid", Processes.owner(s.pid()));
        m.put("state", s.state().name());
        m.put("suspended_by_scheduler", s.suspendedByScheduler());
        m.put("suspended_by_app", s.suspendedByApp());
        m.put("level", s.level().number());
        m.put("available_level", s.availableLevel().number());
        Map<String, Object> c = Json.object();
        c.put("level", s.config().level().number());
        c.put("threshold", s.config().threshold());
        c.put("batch", s.config().batch());
        c.put("window", s.config().windowMicros());
        m.put("config", c);
        m.put("pending", s.pending());
        m.put("in_flight", s.inFlight());
        m.put("submitted", s.submitted());
        m.put("completed", s.completed());
        m.put("failed", s.failed());
        m.put("cancelled", s.cancelled());
        m.put("estimated_command_us", s.estimatedCommandMicros());
        m.put("limits", s.limits().name().toLowerCase(java.util.Locale.ROOT));
        m.put("sm_share_percent", s.smSharePercent());
        m.put("device_lags", s.deviceLags());
        m.put("slow_device_lags", s.slowDeviceLags());
        m.put("width_sms", s.widthSms());
        m.put("stretch_width_sms", s.stretchWidthSms());
        m.put("device_sms", s.deviceSms());
        m.put("run_us", s.runMicros());
        List<Object> hints = new ArrayList<>();
        for (Hint h : s.hints()) {
            hints.add(hint(h));
        }
        m.put("hints", hints);
        m.put("error", s.error());
        return m;
    }

    /**
     * A hint as {@code {"kind": ..., "values": [...], "text": ...}}: kind and values are what
     * POST /api/v1/hint takes, text is how xq:queues shows it ({@link Hint#text()}).
     */
    static Map<String, Object> hint(Hint h) {
        Map<String, Object> m = Json.object();
        m.put("kind", h.kind());
        m.put("values", h.values());
        m.put("text", h.text());
        return m;
    }

    /** The kinds of hint POST /api/v1/hint takes ({@link Hint.Kind}), with their values' names and an example. */
    ApiResponse hints() {
        List<Object> kinds = new ArrayList<>();
        for (Hint.Kind k : Hint.Kind.values()) {
            Map<String, Object> m = Json.object();
            m.put("kind", k.kind());
            m.put("values", k.valueNames());
            m.put("example", k.example());
            m.put("usage", k.usage());
            kinds.add(m);
        }
        Map<String, Object> out = Json.object();
        out.put("hints", kinds);
        return ApiResponse.ok(out);
    }

    ApiResponse devices() {
        List<Object> devices = new ArrayList<>();
        for (DeviceInfo d : xq.devices()) {
            Map<String, Object> m = Json.object();
            m.put("id", d.id());
            m.put("platform", d.platform());
            m.put("name", d.name());
            m.put("max_level", d.maxLevel().number());
            m.put("engines", d.engines());
            m.put("memory_bytes", d.memoryBytes());
            m.put("queues", d.queues());
            devices.add(m);
        }
        List<Object> drivers = new ArrayList<>();
        for (DriverInfo d : xq.drivers()) {
            Map<String, Object> m = Json.object();
            m.put("platform", d.platform());
            m.put("kind", d.kind());
            m.put("status", d.status());
            m.put("devices", d.devices());
            drivers.add(m);
        }
        Map<String, Object> out = Json.object();
        out.put("devices", devices);
        out.put("drivers", drivers);
        return ApiResponse.ok(out);
    }

    ApiResponse policies() {
        List<Object> list = new ArrayList<>();
        for (SchedulerControl.PolicyInfo p : scheduler.policies()) {
            Map<String, Object> m = Json.object();
            m.put("name", p.name());
            m.put("description", p.description());
            m.put("bundle", p.bundle());
            m.put("active", p.active());
            m.put("set_aside", p.setAside());
            list.add(m);
        }
        Map<String, Object> out = policySelection();
        out.put("policies", list);
        return ApiResponse.ok(out);
    }

    ApiResponse policy() {
        return ApiResponse.ok(policySelection());
    }

    private Map<String, Object> policySelection() {
        Map<String, Object> out = Json.object();
        out.put("selected", scheduler.selectedPolicy());
        out.put("active", scheduler.activePolicy());
        return out;
    }

    ApiResponse scheduler() {
        SchedulerControl.SchedulerStats s = scheduler.stats();
        Map<String, Object> out = policySelection();
        out.put("decisions", s.decisions());
        out.put("swaps", s.swaps());
        out.put("watchdog_trips", s.watchdogTrips());
        out.put("decision_p50_us", s.decisionP50Micros());
        out.put("decision_p99_us", s.decisionP99Micros());
        out.put("max_decision_gap_us", s.maxDecisionGapMicros());
        return ApiResponse.ok(out);
    }

    // ------------------------------------------------------------------ changing

    /** {@code {"name": "edf"}}: as {@code xq:policy edf}. */
    ApiResponse selectPolicy(String body) {
        Map<String, Object> req = Params.object(body);
        Params.onlyFields(req, List.of("name"));
        ops.selectPolicy(Params.string(req, "name", "a policy name, a JSON string (GET " + PREFIX + "/policies lists them)"));
        return policy();
    }

    /** {@code {"queue": "fg", "kind": "priority", "values": [2]}}: as {@code xq:hint fg priority 2}. */
    ApiResponse hint(String body) {
        Map<String, Object> req = Params.object(body);
        Params.onlyFields(req, List.of("queue", "kind", "values"));
        String key = queueKey(req);
        String kind = Params.text(req, "kind", "a hint kind: " + Hint.Kind.names());
        String expected = "an array of the hint's values is expected, e.g. [2] for priority 2 (GET " + PREFIX + "/hints lists each kind's)";
        if (!req.containsKey("values")) {
            throw ApiException.badRequest("field 'values' is missing; " + expected);
        }
        if (!(req.get("values") instanceof List<?> values)) {
            // a scalar is not taken as a one-value array: the client meant something else, or sent the wrong field
            throw ApiException.badRequest("field 'values' is " + Params.describe(req.get("values")) + ", not an array; " + expected);
        }
        String[] words = new String[values.size()];
        for (int i = 0; i < words.length; i++) {
            Object v = values.get(i);
            if (v instanceof BigDecimal d) {
                words[i] = Params.numberText(d); // 1e3 as written: the hint's integer fields refuse it by name
            } else if (v instanceof String s) {
                words[i] = s;
            } else {
                throw ApiException.badRequest("values[" + i + "] is " + Params.describe(v) + "; numbers are expected");
            }
        }
        XQueue q = ops.queue(key);
        ops.hint(List.of(q), HintValues.parse(kind, words)); // as the shell's, but naming a bad value by its place and range
        return ApiResponse.ok(Json.object("queue", queue(q.status())));
    }

    /** {@code {"queue": "fg", "threshold": 8, "batch": 4}}: as {@code xq:config} with each setting, applied at once. */
    ApiResponse config(String body) {
        Map<String, Object> req = Params.object(body);
        List<String> allowed = new ArrayList<>(List.of("queue"));
        allowed.addAll(Operator.SETTINGS);
        Params.onlyFields(req, allowed);
        String key = queueKey(req);
        Map<String, String> settings = new LinkedHashMap<>();
        for (String k : Operator.SETTINGS) {
            if (req.containsKey(k)) {
                settings.put(k, Params.text(req, k, "a whole number"));
            }
        }
        XQueue q = ops.queue(key);
        ops.configure(q, settings);
        return ApiResponse.ok(Json.object("queue", queue(q.status())));
    }

    /** {@code {"queue": "fg"}}: as {@code xq:suspend fg}. */
    ApiResponse suspend(String body) {
        XQueue q = ops.queue(queueKey(onlyQueue(body)));
        ops.suspend(q);
        return ApiResponse.ok(Json.object("queue", queue(q.status())));
    }

    /** {@code {"queue": "fg"}}: as {@code xq:resume fg}. */
    ApiResponse resume(String body) {
        XQueue q = ops.queue(queueKey(onlyQueue(body)));
        ops.resume(q);
        return ApiResponse.ok(Json.object("queue", queue(q.status())));
    }

    private static Map<String, Object> onlyQueue(String body) {
        Map<String, Object> req = Params.object(body);
        Params.onlyFields(req, List.of("queue"));
        return req;
    }

    private static String queueKey(Map<String, Object> req) {
        return Params.text(req, "queue", "a queue's handle or name (GET " + PREFIX + "/queues lists them)");
    }
}
