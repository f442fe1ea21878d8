package dev.xq.runtime.shell;

import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import dev.xq.operator.Operator;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The operator's commands in the Gogo shell, scope {@code xq}. Every command checks its
 * arguments first and, when they are wrong, answers with what is allowed and changes nothing.
 * What a command does to the node goes through {@link Operator}, which the HTTP API calls too.
 *
 * <p>Gogo binds the arguments to the typed methods; their {@link Descriptor}s are what
 * {@code help xq:hint} and the like print. Where a command also has a {@code String...}
 * overload, that one only receives what the typed form cannot take (a missing or extra
 * argument, an unknown option) and refuses it with the usage, as Gogo's own "Cannot coerce"
 * would not say what is allowed. The annotations need no Gogo at run time (the import is
 * optional).
 */
@Component(service = XqCommands.class, property = {
        "osgi.command.scope=xq",
        "osgi.command.function=devices",
        "osgi.command.function=queues",
        "osgi.command.function=top",
        "osgi.command.function=policy",
        "osgi.command.function=policies",
        "osgi.command.function=hint",
        "osgi.command.function=config",
        "osgi.command.function=suspend",
        "osgi.command.function=resume"})
public class XqCommands {

    @Reference
    XQueueService xq;

    @Reference
    SchedulerControl scheduler;

    public XqCommands() {
    }

    /** For tests and embedding without DS. */
    public XqCommands(XQueueService xq, SchedulerControl scheduler) {
        this.xq = xq;
        this.scheduler = scheduler;
    }

    /** xq:devices: devices, then drivers and providers with their status. */
    @Descriptor("lists the XPU devices, then the drivers and preemption providers with their status")
    public String devices() {
        Table t = new Table("DEVICE", "PLATFORM", "NAME", "LEVEL", "ENGINES", "MEMORY", "QUEUES");
        for (DeviceInfo d : xq.devices()) {
            t.row(d.id(), d.platform(), d.name(), "Lv" + d.maxLevel().number(), d.engines(), gib(d.memoryBytes()), d.queues());
        }
        Table a = new Table("ADAPTER", "KIND", "STATUS", "DEVICES");
        for (DriverInfo d : xq.drivers()) {
            a.row(d.platform(), d.kind(), d.status(), String.join(",", d.devices()));
        }
        return t + "\n" + a;
    }

    /** xq:queues: one line per open queue. */
    @Descriptor("lists the open XQueues: handle, name, device, group, state, level, counts, timings, SM share, widths (now/widest of the device), device lags, limits, hints")
    public String queues() {
        return queueTable().toString();
    }

    /**
     * xq:top [--once] [--interval MS] [--count N]: the queue table with the scheduler's figures,
     * refreshed until interrupted (Ctrl-C), or once.
     * @param interval milliseconds, checked here so that a bad one is named with the range
     * @param count screens, empty for no limit
     */
    @Descriptor("shows the queue table with the scheduler's figures, refreshed until interrupted (Ctrl-C), or once")
    public String top(
            @Descriptor("show one screen and return it")
            @Parameter(names = {"--once", "-1"}, absentValue = "false", presentValue = "true") boolean once,
            @Descriptor("milliseconds between screens, 100..60000")
            @Parameter(names = "--interval", absentValue = "1000") String interval,
            @Descriptor("screens to show, at least 1; without: until interrupted")
            @Parameter(names = "--count", absentValue = "") String count) throws InterruptedException {
        long ms = number(interval, "--interval", 100, 60_000);
        long screens = count.isEmpty() ? Long.MAX_VALUE : number(count, "--count", 1, Integer.MAX_VALUE);
        if (once) {
            return topScreen();
        }
        PrintStream out = System.out;
        for (long n = 0; n < screens; n++) {
            if (n > 0) {
                Thread.sleep(ms);
            }
            out.print("\u001b[H\u001b[2J");
            out.println(topScreen());
            out.flush();
        }
        return null;
    }

    /** What the typed {@link #top(boolean, String, String)} cannot take, refused naming what is allowed. */
    @Descriptor("with arguments that the form with options does not take: refused, naming the options allowed")
    public String top(@Descriptor("the arguments as typed") String... args) throws InterruptedException {
        if (args.length == 0) {
            return top(false, "1000", "");   // Gogo binds a bare xq:top to this overload
        }
        for (String a : args) {
            if (!TOP_OPTIONS.contains(a)) {
                throw new IllegalArgumentException("xq:top: unknown option '" + a + "'; allowed: " + TOP_ALLOWED);
            }
        }
        throw new IllegalArgumentException("xq:top: '" + String.join(" ", args) + "': --interval and --count need a value; allowed: "
                + TOP_ALLOWED);
    }

    private static final List<String> TOP_OPTIONS = List.of("--once", "-1", "--interval", "--count");
    private static final String TOP_ALLOWED = "--once, --interval MS (100..60000), --count N";

    private String topScreen() {
        SchedulerControl.SchedulerStats s = scheduler.stats();
        String head = String.format("policy %s (selected %s%s)  decisions %d  swaps %d  watchdog %d  decision p50 %.1f us  p99 %.1f us%n",
                scheduler.activePolicy(), scheduler.selectedPolicy(), whyNotActive(scheduler.selectedPolicy(), scheduler.activePolicy()),
                s.decisions(), s.swaps(), s.watchdogTrips(),
                s.decisionP50Micros(), s.decisionP99Micros());
        return head + queueTable();
    }

    private Table queueTable() {
        Table t = new Table("HANDLE", "NAME", "DEVICE", "GROUP", "STATE", "LV", "PEND", "FLIGHT", "DONE", "FAIL", "CANCEL",
                "EST_US", "RUN_MS", "SM%", "WIDTH", "LAG", "LIMITS", "HINTS");
        for (XQueue q : xq.queues()) {
            XQueueStatus st = q.status();
            t.row(st.handle(), st.name(), st.device(), st.group(), st.state() + (st.suspendedByApp() ? "(app)" : ""),
                    st.level().number(), st.pending(), st.inFlight(), st.completed(), st.failed(), st.cancelled(),
                    st.estimatedCommandMicros(), st.runMicros() / 1000, st.smSharePercent(), widthText(st), lagText(st),
                    limitsText(st.limits()),
                    st.hints().stream().map(Hint::text).collect(Collectors.joining(" ")));
        }
        return t;
    }

    /**
     * The WIDTH column: "now/widest of device" multiprocessors, as a process queue's process tells
     * (its current stretch of work, its widest of the last seconds, its device's count); empty for a
     * queue that tells none.
     */
    static String widthText(XQueueStatus st) {
        return st.deviceSms() == 0 ? "" : st.stretchWidthSms() + "/" + st.widthSms() + " of " + st.deviceSms();
    }

    /**
     * The LAG column: "slow/timed" busy periods of a process queue whose process times its device
     * lag (slow: its commands ran 1 ms or more after their last launch); empty for the others.
     */
    static String lagText(XQueueStatus st) {
        return st.deviceLags() == 0 ? "" : st.slowDeviceLags() + "/" + st.deviceLags();
    }

    /** The LIMITS column: empty while the configured limits apply (docs/runtime.md: the alone and on-top rules). */
    static String limitsText(XQueueStatus.Limits l) {
        return switch (l) {
            case CONFIGURED -> "";
            case ALONE -> "alone";
            case ON_TOP -> "on top";
            case GUARDED -> "guarded";
            case NARROWED -> "narrowed";
        };
    }

    /**
     * xq:policy: the selected and the active policy, and why the selected one does not decide when
     * the watchdog set it aside: "active:   native (hpf: decision used more than its deadline of
     * 10000 us of CPU; set aside at 12:00:01, retried in 2 s)".
     */
    @Descriptor("shows the selected and the active scheduling policy")
    public String policy() {
        String selected = scheduler.selectedPolicy();
        String active = scheduler.activePolicy();
        String why = whyNotActive(selected, active);
        return "selected: " + selected + "\nactive:   " + active + (why.isEmpty() ? "" : " (" + why.substring(2) + ")");
    }

    /** "; hpf: decision used ...; set aside at 12:00:01, retried in 2 s" when the selected policy is set aside, else empty. */
    private String whyNotActive(String selected, String active) {
        if (selected.equals(active)) {
            return "";
        }
        for (SchedulerControl.PolicyInfo p : scheduler.policies()) {
            if (p.name().equals(selected) && !p.setAside().isEmpty()) {
                return "; " + selected + ": " + p.setAside();
            }
        }
        return "";
    }

    /** xq:policy NAME selects one. */
    @Descriptor("selects the policy that decides from the next scheduling event")
    public String policy(@Descriptor("the policy's name (xq:policies lists them)") String name) {
        ops().selectPolicy(name);
        return "selected: " + name + " (decides from the next scheduling event)";
    }

    /** More than one name, refused with the names there are. */
    @Descriptor("with more than one name: refused, naming the policies")
    public String policy(@Descriptor("the names as typed") String... names) {
        if (names.length == 0) {
            return policy();
        }
        if (names.length == 1) {
            return policy(names[0]);
        }
        throw new IllegalArgumentException("xq:policy takes at most one name; allowed: " + policyNames());
    }

    /** xq:policies: every selectable policy with its one-line description. */
    @Descriptor("lists every selectable policy with its bundle and description; * marks the active one")
    public String policies() {
        Table t = new Table("", "POLICY", "BUNDLE", "DESCRIPTION");
        for (SchedulerControl.PolicyInfo p : scheduler.policies()) {
            t.row(p.active() ? "*" : "", p.name(), p.bundle(),
                    p.description() + (p.setAside().isEmpty() ? "" : "  [set aside: " + p.setAside() + "]"));
        }
        return t.toString();
    }

    /** xq:hint QUEUE KIND VALUE...: sets a hint, e.g. {@code xq:hint fg priority 2}. */
    @Descriptor("sets a hint of a queue, e.g. xq:hint fg priority 2 (xq:hint alone answers with the kinds and their values)")
    public String hint(
            @Descriptor("the queue: its handle or its name (xq:queues lists them)") String queue,
            @Descriptor("the kind of hint, e.g. priority or deadline") String kind,
            @Descriptor("the kind's values, as many as it takes") String... values) {
        if (values.length == 0) {
            throw hintUsage();
        }
        XQueue q = queue(queue);
        Hint h = ops().hint(q, kind, values);
        return "queue " + q.handle() + ": " + h.text();
    }

    /** Without arguments: refused with the usage and every kind's values. */
    @Descriptor("without arguments: refused with the usage and every kind's values")
    public String hint() {
        throw hintUsage();
    }

    /** A queue alone: refused with the usage (fixed arity, so that Java calls of the typed form stay unambiguous). */
    @Descriptor("with a queue only: refused with the usage and every kind's values")
    public String hint(@Descriptor("the queue") String queue) {
        throw hintUsage();
    }

    private static IllegalArgumentException hintUsage() {
        return new IllegalArgumentException("usage: xq:hint QUEUE KIND VALUE...; kinds: " + Hint.Kind.usages());
    }

    /** xq:config QUEUE: the queue's configuration. */
    @Descriptor("shows how a queue launches: level, threshold, batch, window")
    public String config(@Descriptor("the queue: its handle or its name") String queue) {
        return queue(queue).status().config().toString();
    }

    /** xq:config QUEUE level|threshold|batch|window VALUE: changes how a queue launches. */
    @Descriptor("changes how a queue launches; nothing changes when the value is refused")
    public String config(
            @Descriptor("the queue: its handle or its name") String queue,
            @Descriptor("the setting: level, threshold, batch or window") String setting,
            @Descriptor("its value: level 1..3, threshold N, batch N, window US") String value) {
        XQueue q = queue(queue);
        QueueConfig next = ops().configure(q, Map.of(setting, value));
        return "queue " + q.handle() + ": " + next;
    }

    /** Any other number of arguments, refused with the usage. */
    @Descriptor("with other arguments: refused with the usage")
    public String config(@Descriptor("the arguments as typed") String... args) {
        throw new IllegalArgumentException("usage: xq:config QUEUE [level 1..3 | threshold N | batch N | window US]");
    }

    /** xq:suspend QUEUE: holds a queue back (as its application would). */
    @Descriptor("holds a queue back, as its application would")
    public String suspend(@Descriptor("the queue: its handle or its name") String queue) {
        XQueue q = queue(queue);
        ops().suspend(q);
        return "queue " + q.handle() + " suspended";
    }

    /** No queue or several, refused with the usage. */
    @Descriptor("without one queue: refused with the usage")
    public String suspend(@Descriptor("the arguments as typed") String... args) {
        throw oneQueue("xq:suspend QUEUE");
    }

    /** xq:resume QUEUE: undoes xq:suspend. */
    @Descriptor("undoes xq:suspend; the scheduler's own decision still applies")
    public String resume(@Descriptor("the queue: its handle or its name") String queue) {
        XQueue q = queue(queue);
        ops().resume(q);
        return "queue " + q.handle() + " resumed";
    }

    /** No queue or several, refused with the usage. */
    @Descriptor("without one queue: refused with the usage")
    public String resume(@Descriptor("the arguments as typed") String... args) {
        throw oneQueue("xq:resume QUEUE");
    }

    // ------------------------------------------------------------------ helpers

    private static IllegalArgumentException oneQueue(String usage) {
        return new IllegalArgumentException("usage: " + usage + " (QUEUE is a handle or a name; xq:queues lists them)");
    }

    private Operator ops() {
        return new Operator(xq, scheduler);
    }

    private XQueue queue(String key) {
        return ops().queue(key);
    }

    private String policyNames() {
        return ops().policyNames();
    }

    private static long number(String text, String option, long min, long max) {
        long v;
        try {
            v = Long.parseLong(asciiDigits(text));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " value '" + text + "' is not a whole number; allowed: [" + min + ", " + max + "]");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(option + " " + v + " is out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    private static String gib(long bytes) {
        return bytes >= (1L << 30) ? String.format("%.1fGiB", bytes / (double) (1L << 30))
                : String.format("%.1fMiB", bytes / (double) (1L << 20));
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
