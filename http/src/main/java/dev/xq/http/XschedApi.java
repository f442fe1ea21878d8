package dev.xq.http;

import dev.xq.api.Hint;
import dev.xq.api.QueueState;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import dev.xq.operator.Operator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * XSched 1.2's xserver routes with its JSON shapes, so that an unmodified {@code xcli} drives an
 * XQ node: {@code GET /xqueues}, {@code GET /xqueue/<hex>}, {@code POST /config/<hex>},
 * {@code GET|POST /policy}, {@code POST /hint}. Changes go through {@link Operator}, as the
 * shell's do. Unlike xserver, every refusal says what was wrong and what is allowed.
 */
final class XschedApi {

    /** XSched's policy numbers (XPolicyType), their XSched names, and XQ's policy for each, or null. */
    record XschedPolicy(int number, String xsched, String xq) {
    }

    static final List<XschedPolicy> POLICIES = List.of(
            new XschedPolicy(1, "HPF", "hpf"),
            new XschedPolicy(2, "HHPF", "hhpf"),
            new XschedPolicy(3, "CHPF", "chpf"),
            new XschedPolicy(4, "UP", "bandwidth"),
            new XschedPolicy(5, "PUP", "bandwidth-group"),
            new XschedPolicy(6, "SPUP", null),
            new XschedPolicy(7, "KEDF", "kedf"),
            new XschedPolicy(8, "LAX", "lax"),
            new XschedPolicy(9, "AWF", "awf"),
            new XschedPolicy(10, "CFS", "cfs"),
            new XschedPolicy(11, "MLFQ", "mlfq"));

    /** XSched's hint types (HintType) and their names. */
    private static final Map<Integer, String> HINT_TYPES = Map.of(1, "priority", 2, "utilization", 3, "timeslice",
            4, "deadline", 5, "k-deadline", 6, "laxity", 7, "window active");
    private static final String HINTS_ALLOWED = "1 (priority: handle, priority), 2 (utilization: handle or pid, utilization), "
            + "3 (timeslice: timeslice in us, optional handle), 7 (window active: pid, display)";

    /** XSched's device types (XDeviceType) by XQ platform; others are 0 (unknown). */
    private static final Map<String, Integer> DEVICE_TYPES = Map.of("cuda", 2, "hip", 2, "kfd", 2, "npu", 3, "ascend", 3);

    private final XQueueService xq;
    private final SchedulerControl scheduler;
    private final Operator ops;

    XschedApi(XQueueService xq, SchedulerControl scheduler) {
        this.xq = xq;
        this.scheduler = scheduler;
        this.ops = new Operator(xq, scheduler);
    }

    // ------------------------------------------------------------------ GET /xqueues, GET /xqueue/<hex>

    ApiResponse xqueues() {
        Map<String, String> platforms = platforms();
        List<Object> queues = new ArrayList<>();
        Set<Long> pids = new LinkedHashSet<>();
        for (XQueue q : xq.queues()) {
            XQueueStatus s = q.status();
            if (s.state() == QueueState.CLOSED) {
                continue;
            }
            queues.add(xqueue(s, platforms));
            pids.add(Processes.owner(s.pid()));
        }
        List<Object> processes = new ArrayList<>();
        for (long pid : pids) {
            processes.add(process(pid));
        }
        Map<String, Object> out = Json.object();
        out.put("processes", processes);
        out.put("xqueues", queues);
        return ApiResponse.ok(out);
    }

    ApiResponse xqueue(String hex) {
        long handle = Params.hexHandle(hex);
        XQueue q = byHandle(handle);
        XQueueStatus s = q.status();
        Map<String, Object> out = Json.object();
        out.put("process", process(Processes.owner(s.pid())));
        out.put("xqueue", xqueue(s, platforms()));
        return ApiResponse.ok(out);
    }

    /** One queue in XSched's XQueueStatus shape (keys in jsoncpp's order, which sorts them). */
    static Map<String, Object> xqueue(XQueueStatus s, Map<String, String> platforms) {
        Map<String, Object> m = Json.object();
        m.put("batch_size", s.config().batch());
        m.put("device", new Json.Unsigned(device(s.device(), platforms.getOrDefault(s.device(), ""))));
        m.put("handle", new Json.Unsigned(s.handle()));
        m.put("level", s.level().number());
        m.put("pid", Processes.owner(s.pid()));
        m.put("ready", s.state() == QueueState.READY || s.state() == QueueState.SUSPENDED);
        m.put("suspended", s.suspendedByScheduler() || s.suspendedByApp());
        m.put("threshold", s.config().threshold());
        return m;
    }

    private static Map<String, Object> process(long pid) {
        Map<String, Object> p = Json.object();
        p.put("cmdline", Processes.cmdline(pid));
        p.put("pid", pid);
        return p;
    }

    /**
     * XSched's device number: the device type in the upper 32 bits (GPU 2 for CUDA and HIP, 0 for
     * others such as the simulated XPU), the device's index (the digits its id ends with) below.
     */
    static long device(String id, String platform) {
        int end = id.length();
        int start = end;
        while (start > 0 && id.charAt(start - 1) >= '0' && id.charAt(start - 1) <= '9' && end - start < 9) {
            start--;
        }
        // a device no adapter of the node lists (a process's queue on cuda0 where the node runs no
        // CUDA adapter) is typed by the name's letters, as the process host names it
        String kind = platform.isEmpty() ? id.substring(0, start) : platform;
        int type = DEVICE_TYPES.getOrDefault(kind.toLowerCase(Locale.ROOT), 0);
        long index = start == end ? 0 : Long.parseLong(id.substring(start, end));
        return ((long) type << 32) | index;
    }

    private Map<String, String> platforms() {
        Map<String, String> m = new LinkedHashMap<>();
        xq.devices().forEach(d -> m.put(d.id(), d.platform()));
        return m;
    }

    private XQueue byHandle(long handle) {
        return xq.find(handle).filter(q -> q.status().state() != QueueState.CLOSED)
                .orElseThrow(() -> ApiException.notFound("no XQueue with handle " + Params.hex(handle) + "; open: " + openHandles()));
    }

    private String openHandles() {
        List<XQueue> all = xq.queues();
        return all.isEmpty() ? "none" : all.stream().map(q -> Params.hex(q.handle())).collect(Collectors.joining(", "));
    }

    // ------------------------------------------------------------------ POST /config/<hex>

    /**
     * xcli always sends all three parameters; level 0 and threshold or batch_size -1 mean "no
     * change" (its own convention). Other values go through the shell's checks.
     */
    ApiResponse config(String hex, String query) {
        long handle = Params.hexHandle(hex);
        Map<String, String> p = Params.query(query);
        Params.only(p, List.of("level", "threshold", "batch_size"));
        Map<String, String> settings = new LinkedHashMap<>();
        String level = p.get("level");
        if (level != null && !level.trim().equals("0")) {
            settings.put("level", level.trim());
        }
        String threshold = p.get("threshold");
        if (threshold != null && !threshold.trim().equals("-1")) {
            settings.put("threshold", threshold.trim());
        }
        String batch = p.get("batch_size");
        if (batch != null && !batch.trim().equals("-1")) {
            settings.put("batch", batch.trim());
        }
        XQueue q = byHandle(handle);
        if (settings.isEmpty()) {
            return ApiResponse.ok(Json.object("warning", "no change"));
        }
        try {
            ops.configure(q, settings);
        } catch (IllegalArgumentException e) {
            String msg = e.getMessage();
            // name xcli's parameter, not the shell's word for it
            throw ApiException.badRequest(msg.startsWith("batch ") ? "batch_size " + msg.substring(6) : msg);
        }
        return success();
    }

    // ------------------------------------------------------------------ GET|POST /policy

    ApiResponse policy() {
        // pup is XSched's name for bandwidth-group, selectable under both names
        String selected = "pup".equals(scheduler.selectedPolicy()) ? "bandwidth-group" : scheduler.selectedPolicy();
        int n = POLICIES.stream().filter(p -> selected.equals(p.xq())).mapToInt(XschedPolicy::number).findFirst().orElse(0);
        return ApiResponse.ok(Json.object("policy", n));
    }

    ApiResponse selectPolicy(String query) {
        Map<String, String> p = Params.query(query);
        Params.only(p, List.of("policy"));
        String text = p.get("policy");
        if (text == null || text.isBlank()) {
            throw ApiException.badRequest("query parameter 'policy' is missing; allowed: " + policyList());
        }
        int n;
        try {
            n = Integer.parseInt(asciiDigits(text.trim()));
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("policy '" + text + "' is not a whole number; allowed: " + policyList());
        }
        XschedPolicy x = POLICIES.stream().filter(q -> q.number() == n).findFirst()
                .orElseThrow(() -> ApiException.badRequest("policy " + n + " is not an XSched policy number; allowed: " + policyList()));
        if (x.xq() == null) {
            throw ApiException.badRequest("policy " + n + " (" + x.xsched() + ") has no XQ equivalent; allowed: " + policyList());
        }
        ops.selectPolicy(x.xq());
        return success();
    }

    static String policyList() {
        return POLICIES.stream().filter(p -> p.xq() != null).map(p -> p.number() + " (" + p.xsched() + ": XQ's " + p.xq() + ")")
                .collect(Collectors.joining(", "));
    }

    // ------------------------------------------------------------------ POST /hint

    ApiResponse hint(String body) {
        Map<String, Object> req = Params.object(body);
        if (!req.containsKey("hint_type")) {
            throw ApiException.badRequest("field 'hint_type' is missing; allowed: " + HINTS_ALLOWED);
        }
        java.math.BigInteger typeNumber = Params.whole(req, "hint_type", "one of " + HINTS_ALLOWED);
        // any other whole number is a hint type this route does not serve, refused below by name
        int type = typeNumber.bitLength() < 32 ? typeNumber.intValue() : 0;
        // each value's range is its hint's (HintValues, the ranges of dev.xq.api.Hint's records), named by field
        switch (type) {
            case 1 -> {
                Params.onlyFields(req, List.of("hint_type", "handle", "priority"));
                XQueue q = byHandle(requiredHandle(req));
                long prio = Params.integer(req, "priority", HintValues.PRIORITY.min(), HintValues.PRIORITY.max());
                ops.hint(q, "priority", Long.toString(prio));
            }
            case 2 -> {
                Params.onlyFields(req, List.of("hint_type", "handle", "pid", "utilization"));
                long handle = Params.unsigned64(req, "handle");
                long pid = req.containsKey("pid") ? Params.integer(req, "pid", 0, Integer.MAX_VALUE) : 0;
                if (handle == 0 && pid == 0) {
                    throw ApiException.badRequest("utilization needs a non-zero 'handle' (one XQueue) or 'pid' (every XQueue of that process)");
                }
                if (handle != 0 && pid != 0) {
                    // xcli sends the one it does not use as 0; two non-zero ones say two different things
                    throw ApiException.badRequest("utilization takes a non-zero 'handle' (one XQueue) or 'pid' (every XQueue of that "
                            + "process), not both: handle " + Long.toUnsignedString(handle) + " and pid " + pid
                            + " were given; give one, the other 0 or left out");
                }
                long util = Params.integer(req, "utilization", HintValues.UTILIZATION.min(), HintValues.UTILIZATION.max());
                Hint h = Hint.parse("utilization", Long.toString(util));
                List<XQueue> targets = handle != 0 ? List.of(byHandle(handle)) : ofProcess(pid);
                ops.hint(targets, h);
            }
            case 3 -> {
                Params.onlyFields(req, List.of("hint_type", "handle", "timeslice"));
                long ts = Params.integer(req, "timeslice", HintValues.TIMESLICE.min(), HintValues.TIMESLICE.max());
                Hint h = Hint.parse("timeslice", Long.toString(ts));
                long handle = Params.unsigned64(req, "handle");
                ops.hint(handle != 0 ? List.of(byHandle(handle)) : xq.queues(), h);
            }
            case 7 -> {
                return windowActive(req);
            }
            default -> {
                String name = typeNumber.bitLength() < 32 ? HINT_TYPES.get(type) : null;
                throw ApiException.badRequest(name == null
                        ? "hint_type " + typeNumber + " is unknown; allowed: " + HINTS_ALLOWED
                        : "hint_type " + type + " (" + name + ") has no equivalent on this route; allowed: " + HINTS_ALLOWED
                        + "; XQ's own hints (deadline, laxity, ...): POST /api/v1/hint");
            }
        }
        return success();
    }

    /**
     * XSched's window-active hint ({@code pid}, {@code display}), as its X11 monitor sends it when
     * the focus moves: every open queue of the process gets a {@link Hint.WindowActive} on that
     * display with a mark above every mark on the node, so it owns the display's active window
     * (policy {@code awf}) and the process that had it needs no clearing. A process with no open
     * queue owns the window now (a program that XQ does not schedule): the marks on that display
     * are cleared (set to 0), so no scheduled process keeps the advantage, as under XSched, whose
     * AWF then lets every queue run.
     */
    private ApiResponse windowActive(Map<String, Object> req) {
        Params.onlyFields(req, List.of("hint_type", "pid", "display"));
        long pid = Params.integer(req, "pid", 1, Integer.MAX_VALUE);
        int d = (int) Params.integer(req, "display", 0, Hint.WindowActive.MAX_DISPLAY);
        List<XQueue> mine = new ArrayList<>();
        List<XQueue> markedHere = new ArrayList<>();
        long highest = 0;
        for (XQueue q : xq.queues()) {
            XQueueStatus st = q.status();
            if (st.state() == QueueState.CLOSED) {
                continue;
            }
            if (Processes.owner(st.pid()) == pid) {
                mine.add(q);
            }
            for (Hint h : st.hints()) {
                if (h instanceof Hint.WindowActive w && w.display() == d && w.active()) {
                    markedHere.add(q);
                    highest = Math.max(highest, w.mark());
                }
            }
        }
        if (mine.isEmpty()) {
            ops.hint(markedHere, new Hint.WindowActive(d, 0));
            Map<String, Object> out = Json.object("info", "success");
            out.put("warning", "process " + pid + " has no open XQueue: no XQueue owns display " + d + "'s active window now ("
                    + markedHere.size() + (markedHere.size() == 1 ? " queue's mark" : " queues' marks") + " cleared)");
            return ApiResponse.ok(out);
        }
        long mark = Math.max(Hint.WindowActive.nextMark(), highest == Long.MAX_VALUE ? highest : highest + 1);
        ops.hint(mine, new Hint.WindowActive(d, mark));
        return success();
    }

    private static long requiredHandle(Map<String, Object> req) {
        long h = Params.unsigned64(req, "handle");
        if (h == 0) {
            throw ApiException.badRequest("field 'handle' is missing or 0; the XQueue's handle is expected (GET /xqueues lists them)");
        }
        return h;
    }

    private List<XQueue> ofProcess(long pid) {
        List<XQueue> out = new ArrayList<>();
        for (XQueue q : xq.queues()) {
            if (Processes.owner(q.status().pid()) == pid) {
                out.add(q);
            }
        }
        if (out.isEmpty()) {
            throw ApiException.notFound("no XQueue of process " + pid + " is open");
        }
        return out;
    }

    private static ApiResponse success() {
        return ApiResponse.ok(Json.object("info", "success"));
    }

    /**
     * @return {@code text} when it is a whole number written in ASCII digits (an optional sign, then
     *         0-9 only); Java's own parsing also takes other scripts' digits (Arabic-Indic, Devanagari...)
     * @throws NumberFormatException otherwise
     */
    private static String asciiDigits(String text) {
        // a loop, not a regular expression: the process protocol parses every WAKE line with it
        int n = text == null ? 0 : text.length();
        int i = n > 0 && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        if (i == n) {
            throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
        }
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
            }
        }
        return text;
    }
}
