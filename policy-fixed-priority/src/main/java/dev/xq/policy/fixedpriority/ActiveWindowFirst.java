package dev.xq.policy.fixedpriority;

import dev.xq.api.Hint;
import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code awf} (active window first, XSched's AWF): the process that owns the active window
 * of a desktop goes first. XQ cannot see a desktop, so the active window comes as a hint,
 * {@link Hint.WindowActive} ({@code xq:hint QUEUE window-active DISPLAY MARK}, the HTTP API, or
 * XSched's window-active hint on {@code POST /hint}, which marks every queue of a pid).
 *
 * <ul>
 * <li><b>Who owns the active window.</b> A group (the node names a process's queues' group
 * {@code <pid>:<name>}; a host application names its own) is marked by the hints of its open
 * queues, on any device, whatever their state; one marked queue marks the group. Per display,
 * the group with the highest positive mark owns that display's active window: the most recently
 * marked one when marks grow with time (the shell's {@code now}), so the group marked before needs
 * no clearing. Mark 0 clears a queue's mark. Equal marks on one display make both groups active.
 * Each display has its own active group, and all of them count as active. When the owner's marked
 * queues close, the next highest mark on that display owns it again (as focus returns to the
 * previous window). A queue without a group is a group of its own.</li>
 * <li><b>Order.</b> Per device, a ready queue of an active group goes before every queue of the
 * others, as under {@code hpf}: the ready queues of the top rank run together, the other ready
 * queues are suspended; idle queues and queues their application holds are resumed when their
 * rank is at least the device's top ready rank, so the active window's work launches the moment it
 * arrives. Within the active groups and among the others, priority hints order the queues
 * ({@code awf.order=priority}, the default), or are not read ({@code together}: XSched's AWF,
 * where all of the others run together whenever the active window's process has no ready queue).
 * Unlike XSched, which holds every other queue on every device while the active process has a
 * ready queue anywhere, the order is per device: a device where the active group has no work
 * serves the others.</li>
 * <li><b>Background.</b> By default (XSched's rule) the other queues run on a device only while no
 * queue of an active group is ready there, so an active window that keeps a device busy all the
 * time starves the rest there. With {@code awf.guard.wait} set, no ready queue is held back longer
 * than that at a stretch: it then runs beside the others for {@code awf.guard.run} (timers are set
 * for both moments), and may be held again.</li>
 * </ul>
 *
 * <p>Without the guard the decision depends on the view alone. With it, the policy keeps per held
 * queue when its hold began and when its run ends; entries of queues that run by rank, are idle or
 * are gone are dropped at each decision. Decisions are serialised on the instance; each is
 * O(queues).
 */
@Component(configurationPid = ActiveWindowFirst.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + ActiveWindowFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = AwfConfig.class)
public final class ActiveWindowFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "awf";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.awf";

    /** Added to the rank of an active group's queue: above every priority hint. */
    static final int ACTIVE = 1_000_000;

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile AwfSettings settings;

    /** A ready queue the guard watches: held since {@code since}, or let run until {@code until}. */
    private static final class Held {
        long since;
        boolean running;
        long until;
    }

    // Guarded by this.
    private final Map<Long, Held> held = new HashMap<>();

    /** For Declarative Services. */
    public ActiveWindowFirst() {
        this.settings = AwfSettings.DEFAULTS;
    }

    ActiveWindowFirst(AwfSettings settings, Logger log) {
        this.settings = settings;
        this.log = log;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(AwfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(AwfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, AwfConfig.class, raw, log::warn);
            settings = AwfSettings.from(config);
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        log.info("policy {} configured: {}", NAME, settings);
    }

    /** A bad update is refused and the running values stay. */
    @Modified
    void modified(AwfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(AwfConfig.class, raw); // a value DS would misread or fail on, named
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, AwfConfig.class, raw, log::warn);
            settings = AwfSettings.from(config);
            log.info("policy {} configured: {}", NAME, settings);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping {}: {}", NAME, settings, e.getMessage());
        }
    }

    AwfSettings settings() {
        return settings;
    }

    /** @return how many held queues the guard keeps state for (for tests) */
    synchronized int watched() {
        return held.size();
    }

    @Override
    public String description() {
        AwfSettings s = settings;
        return "active window first: per display the group with the highest window-active mark goes first on every device; the others "
                + (s.order() == AwfSettings.Order.PRIORITY ? "by priority hint" : "together (hints not read)")
                + (s.guarded() ? "; none held back over " + s.guardWaitNanos() / 1000 + " us (awf.guard.wait)" : "");
    }

    @Override
    public synchronized void schedule(SchedulerView view, SchedulerActions actions) {
        AwfSettings s = settings;
        long now = view.nowNanos();
        Set<String> active = activeGroups(view);
        Set<Long> watched = new HashSet<>();
        Decision decision = new Decision(view);
        for (List<QueueView> queues : view.queuesByDevice()) {
            int n = queues.size();
            int[] ranks = new int[n];
            int top = Integer.MIN_VALUE;
            for (int i = 0; i < n; i++) {
                QueueView q = queues.get(i);
                ranks[i] = rank(q, active.contains(groupKey(q)), s.order());
                if (q.runnable()) {
                    top = Math.max(top, ranks[i]);
                }
            }
            for (int i = 0; i < n; i++) {
                QueueView q = queues.get(i);
                boolean run = ranks[i] >= top;
                if (!run && q.runnable() && s.guarded()) {
                    watched.add(q.handle());
                    run = guard(q.handle(), now, s, decision);
                }
                decision.set(q, run);
            }
        }
        held.keySet().retainAll(watched);
        decision.applyTo(view, actions);
    }

    /** @return whether the guard lets a ready queue that its rank would hold run now; sets the timer for its next change */
    private boolean guard(long handle, long now, AwfSettings s, Decision decision) {
        Held h = held.get(handle);
        if (h == null) {
            h = new Held();
            h.since = now;
            held.put(handle, h);
        }
        if (h.running) {
            if (now - h.until < 0) {
                decision.wakeAt(h.until);
                return true;
            }
            h.running = false;
            h.since = now;
        }
        if (now - h.since >= s.guardWaitNanos()) {
            h.running = true;
            h.until = now + s.guardRunNanos();
            decision.wakeAt(h.until);
            return true;
        }
        decision.wakeAt(h.since + s.guardWaitNanos());
        return false;
    }

    /**
     * @return the groups ({@link #groupKey}) that own a display's active window: per display, those
     *         whose queues carry the highest positive mark
     */
    static Set<String> activeGroups(SchedulerView view) {
        Map<Integer, Long> topMark = new HashMap<>();
        Map<Integer, Set<String>> owners = new HashMap<>();
        for (QueueView q : view.queues()) {
            Hint.WindowActive w = q.hint(Hint.WindowActive.class).orElse(null);
            if (w == null || !w.active()) {
                continue;
            }
            Long top = topMark.get(w.display());
            if (top == null || w.mark() > top) {
                topMark.put(w.display(), w.mark());
                Set<String> only = new HashSet<>();
                only.add(groupKey(q));
                owners.put(w.display(), only);
            } else if (w.mark() == top) {
                owners.get(w.display()).add(groupKey(q));
            }
        }
        Set<String> active = new HashSet<>();
        owners.values().forEach(active::addAll);
        return active;
    }

    /** @return the queue's group, or for a queue without one a key of its own */
    static String groupKey(QueueView q) {
        String g = q.group();
        return g == null || g.isEmpty() ? "#" + q.handle() : "g:" + g;
    }

    /** @return the queue's rank: {@link #ACTIVE} for an active group's queue, plus its priority hint under {@code awf.order=priority} */
    static int rank(QueueView q, boolean active, AwfSettings.Order order) {
        return (active ? ACTIVE : 0) + (order == AwfSettings.Order.PRIORITY ? q.priority() : 0);
    }
}
