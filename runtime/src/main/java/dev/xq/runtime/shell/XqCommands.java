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
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The operator's commands in the Gogo shell, scope {@code xq}. Every command checks its
 * arguments first and, when they are wrong, answers with what is allowed and changes nothing.
 * What a command does to the node goes through {@link Operator}, which the HTTP API calls too.
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
    public String queues() {
        return queueTable().toString();
    }

    /**
     * xq:top [--once] [--interval MS] [--count N]: the queue table with the scheduler's figures,
     * refreshed until interrupted (Ctrl-C), or once.
     */
    public String top(String... args) throws InterruptedException {
        boolean once = false;
        long interval = 1000;
        long count = Long.MAX_VALUE;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--once", "-1" -> once = true;
                case "--interval" -> interval = number(args, ++i, "--interval", 100, 60_000);
                case "--count" -> count = number(args, ++i, "--count", 1, Integer.MAX_VALUE);
                default -> throw new IllegalArgumentException("xq:top: unknown option '" + args[i]
                        + "'; allowed: --once, --interval MS (100..60000), --count N");
            }
        }
        if (once) {
            return topScreen();
        }
        PrintStream out = System.out;
        for (long n = 0; n < count; n++) {
            if (n > 0) {
                Thread.sleep(interval);
            }
            out.print("\u001b[H\u001b[2J");
            out.println(topScreen());
            out.flush();
        }
        return null;
    }

    private String topScreen() {
        SchedulerControl.SchedulerStats s = scheduler.stats();
        String head = String.format("policy %s (selected %s)  decisions %d  swaps %d  watchdog %d  decision p50 %.1f us  p99 %.1f us%n",
                scheduler.activePolicy(), scheduler.selectedPolicy(), s.decisions(), s.swaps(), s.watchdogTrips(),
                s.decisionP50Micros(), s.decisionP99Micros());
        return head + queueTable();
    }

    private Table queueTable() {
        Table t = new Table("HANDLE", "NAME", "DEVICE", "GROUP", "STATE", "LV", "PEND", "FLIGHT", "DONE", "FAIL", "CANCEL",
                "EST_US", "RUN_MS", "HINTS");
        for (XQueue q : xq.queues()) {
            XQueueStatus st = q.status();
            t.row(st.handle(), st.name(), st.device(), st.group(), st.state() + (st.suspendedByApp() ? "(app)" : ""),
                    st.level().number(), st.pending(), st.inFlight(), st.completed(), st.failed(), st.cancelled(),
                    st.estimatedCommandMicros(), st.runMicros() / 1000,
                    st.hints().stream().map(XqCommands::hintText).collect(Collectors.joining(" ")));
        }
        return t;
    }

    /** xq:policy: the selected and the active policy; xq:policy NAME selects one. */
    public String policy(String... args) {
        if (args.length == 0) {
            return "selected: " + scheduler.selectedPolicy() + "\nactive:   " + scheduler.activePolicy();
        }
        if (args.length > 1) {
            throw new IllegalArgumentException("xq:policy takes at most one name; allowed: " + policyNames());
        }
        ops().selectPolicy(args[0]);
        return "selected: " + args[0] + " (decides from the next scheduling event)";
    }

    /** xq:policies: every selectable policy with its one-line description. */
    public String policies() {
        Table t = new Table("", "POLICY", "BUNDLE", "DESCRIPTION");
        for (SchedulerControl.PolicyInfo p : scheduler.policies()) {
            t.row(p.active() ? "*" : "", p.name(), p.bundle(),
                    p.description() + (p.setAside().isEmpty() ? "" : "  [set aside: " + p.setAside() + "]"));
        }
        return t.toString();
    }

    /** xq:hint QUEUE KIND VALUE...: sets a hint, e.g. {@code xq:hint fg priority 2}. */
    public String hint(String... args) {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: xq:hint QUEUE KIND VALUE...; kinds: priority N, deadline US, "
                    + "laxity US PRIO CRITICAL_PRIO, utilization PERCENT, timeslice US, demand ENGINES BYTES");
        }
        XQueue q = queue(args[0]);
        Hint h = ops().hint(q, args[1], Arrays.copyOfRange(args, 2, args.length));
        return "queue " + q.handle() + ": " + hintText(h);
    }

    /** xq:config QUEUE level|threshold|batch|window VALUE: changes how a queue launches. */
    public String config(String... args) {
        if (args.length == 1) {
            return queue(args[0]).status().config().toString();
        }
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: xq:config QUEUE [level 1..3 | threshold N | batch N | window US]");
        }
        XQueue q = queue(args[0]);
        QueueConfig next = ops().configure(q, Map.of(args[1], args[2]));
        return "queue " + q.handle() + ": " + next;
    }

    /** xq:suspend QUEUE: holds a queue back (as its application would). */
    public String suspend(String... args) {
        XQueue q = queue(one(args, "xq:suspend QUEUE"));
        ops().suspend(q);
        return "queue " + q.handle() + " suspended";
    }

    /** xq:resume QUEUE: undoes xq:suspend. */
    public String resume(String... args) {
        XQueue q = queue(one(args, "xq:resume QUEUE"));
        ops().resume(q);
        return "queue " + q.handle() + " resumed";
    }

    // ------------------------------------------------------------------ helpers

    private static String one(String[] args, String usage) {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: " + usage + " (QUEUE is a handle or a name; xq:queues lists them)");
        }
        return args[0];
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

    private static long number(String[] args, int i, String option, long min, long max) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value in [" + min + ", " + max + "]");
        }
        long v;
        try {
            v = Long.parseLong(args[i]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " value '" + args[i] + "' is not a whole number; allowed: [" + min + ", " + max + "]");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(option + " " + v + " is out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    static String hintText(Hint h) {
        return switch (h) {
            case Hint.Priority p -> "priority=" + p.value();
            case Hint.Deadline d -> "deadline=" + d.micros() + "us";
            case Hint.Laxity l -> "laxity=" + l.micros() + "us/" + l.priority() + "/" + l.criticalPriority();
            case Hint.Utilization u -> "utilization=" + u.percent() + "%";
            case Hint.Timeslice t -> "timeslice=" + t.micros() + "us";
            case Hint.Demand d -> "demand=" + d.engines() + "e/" + gib(d.memoryBytes());
        };
    }

    private static String gib(long bytes) {
        return bytes >= (1L << 30) ? String.format("%.1fGiB", bytes / (double) (1L << 30))
                : String.format("%.1fMiB", bytes / (double) (1L << 20));
    }
}
