package dev.xq.operator;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The operator's actions on a node, with their checks. Every method checks everything first
 * and changes nothing when a value is wrong: it throws an {@link IllegalArgumentException}
 * naming the value and what is allowed ({@link NoSuchQueueException} for an unknown queue).
 * Stateless and thread-safe; make one where the two services are at hand.
 */
public final class Operator {

    /** The queue settings {@link #configure} accepts, in the order it applies them. */
    public static final List<String> SETTINGS = List.of("level", "threshold", "batch", "window");

    private final XQueueService xq;
    private final SchedulerControl scheduler;

    public Operator(XQueueService xq, SchedulerControl scheduler) {
        this.xq = Objects.requireNonNull(xq, "xq");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    }

    /**
     * Finds an open queue by its handle (decimal) or by its name, which must then be unique.
     * @throws NoSuchQueueException when none matches (the message lists the open queues)
     * @throws IllegalArgumentException when the name is shared by several queues (it lists their handles)
     */
    public XQueue queue(String key) {
        Objects.requireNonNull(key, "key");
        List<XQueue> all = xq.queues();
        try {
            long h = Long.parseLong(asciiDigits(key));
            for (XQueue q : all) {
                if (q.handle() == h) {
                    return q;
                }
            }
        } catch (NumberFormatException notAHandle) {
            List<XQueue> named = new ArrayList<>();
            for (XQueue q : all) {
                if (q.status().name().equals(key)) {
                    named.add(q);
                }
            }
            if (named.size() == 1) {
                return named.getFirst();
            }
            if (named.size() > 1) {
                throw new IllegalArgumentException("queue name '" + key + "' is ambiguous; use a handle: "
                        + named.stream().map(q -> Long.toString(q.handle())).collect(Collectors.joining(", ")));
            }
        }
        throw new NoSuchQueueException("no open queue '" + key + "'; open queues: "
                + (all.isEmpty() ? "none" : all.stream().map(q -> q.handle() + " (" + q.status().name() + ")")
                .collect(Collectors.joining(", "))));
    }

    /**
     * Parses a hint in the shell's form ({@code priority 2}, {@code laxity 1000 1 5}) and sets it.
     * @return the hint set
     */
    public Hint hint(XQueue queue, String kind, String... values) {
        Hint h = Hint.parse(kind, values);
        queue.hint(h);
        return h;
    }

    /**
     * Sets one hint on several queues (a process's, say). The hint was checked when it was made,
     * so a bad value never reaches the first queue.
     * @return the hint set
     */
    public Hint hint(List<XQueue> queues, Hint hint) {
        Objects.requireNonNull(hint, "hint");
        for (XQueue q : queues) {
            q.hint(hint);
        }
        return hint;
    }

    /**
     * Changes how a queue launches: every setting ({@link #SETTINGS}, shell form: {@code level
     * 1..3}, {@code threshold N}, {@code batch N}, {@code window US}) is checked against the
     * queue's current configuration, in the order of {@link #SETTINGS}, and the result is applied
     * once, or not at all.
     * @return the configuration now in force
     */
    public QueueConfig configure(XQueue queue, Map<String, String> settings) {
        for (String key : settings.keySet()) {
            if (!SETTINGS.contains(key)) {
                throw new IllegalArgumentException("queue setting '" + key + "' is unknown; allowed: " + String.join(", ", SETTINGS));
            }
        }
        if (settings.isEmpty()) {
            throw new IllegalArgumentException("no queue setting given; allowed: " + String.join(", ", SETTINGS));
        }
        QueueConfig next = queue.status().config();
        for (String key : SETTINGS) {
            String value = settings.get(key);
            if (value != null) {
                next = next.with(key, value);
            }
        }
        queue.configure(next);
        return next;
    }

    /** Holds a queue back, as its application would. */
    public void suspend(XQueue queue) {
        queue.suspend();
    }

    /** Undoes {@link #suspend}; the scheduler's own decision still applies. */
    public void resume(XQueue queue) {
        queue.resume();
    }

    /**
     * Selects the policy that decides from the next scheduling event.
     * @throws IllegalArgumentException for a name that no registered policy has (the message lists them)
     */
    public void selectPolicy(String name) {
        scheduler.selectPolicy(Objects.requireNonNull(name, "name"));
    }

    /** @return the names of the policies that can be selected, comma-separated */
    public String policyNames() {
        return scheduler.policies().stream().map(SchedulerControl.PolicyInfo::name).collect(Collectors.joining(", "));
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
