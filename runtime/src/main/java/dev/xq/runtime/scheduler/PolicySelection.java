package dev.xq.runtime.scheduler;

import dev.xq.api.SchedulerControl;
import dev.xq.policy.spi.Policy;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.scheduler.PolicyRegistry.Registered;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Which policy decides: the registrations (with the rule that a name belongs to the first bundle
 * that registers it), the operator's selection, the policies set aside by the watchdog and when
 * they are retried ({@link RetryBackoff}), and whether decisions may run on the thread that posts
 * an event. The {@link Scheduler} asks it for {@link #current()} at every decision, tells it when
 * a policy must be set aside, and asks on its loop thread whether one is due to be retried.
 *
 * <p>Thread-safe: one monitor guards the registry; the fields the decision path reads are
 * volatile and recomputed under it. It never calls back into the scheduler while holding its
 * monitor, so the scheduler may call it under its own lock (lock order: scheduler, then this).
 * Trial decisions run outside the monitor (they may take ten deadlines).
 */
final class PolicySelection {

    private final Object monitor = new Object();
    private final PolicyRegistry registry = new PolicyRegistry(); // guarded by monitor
    private final Scheduler.Source source;
    private final RuntimeLog log;
    private final LongSupplier deadlineNanos;

    private volatile String selected = SchedulerControl.NATIVE;
    /** The registration deciding for the selected name (null: native); kept by refresh. */
    private volatile Registered current;
    private volatile boolean inlineEnabled = true;
    /**
     * The bundles (symbolic names) whose bounded policies may decide on a posting thread; guarded
     * by monitor. A posting thread belongs to an application, a driver or a device, and a policy
     * that blocks there holds it for good (Java cannot pull a thread out of a loop): so only the
     * policies shipped with XQ, whose decisions are tested to be short and never to wait, run
     * there unless the operator names another bundle ({@code inlinePolicyBundles}).
     */
    private volatile java.util.Set<String> inlineBundles = DEFAULT_INLINE_BUNDLES;
    /** Registrations that overran on a posting thread: they never decide inline again (until registered again). */
    private final java.util.Set<Long> inlineRevoked = new java.util.HashSet<>(); // guarded by monitor

    /** XQ's own policy bundles: the default of {@link #inlineBundles(java.util.Set)}. */
    static final java.util.Set<String> DEFAULT_INLINE_BUNDLES =
            java.util.Set.of("dev.xq.policy.fixedpriority", "dev.xq.policy.drf", "dev.xq.policy.edf");
    /** Whether events are decided on the posting thread now: the deciding policy is bounded and inline decisions are on. */
    private volatile boolean inlineNow = true;
    /** When the policies set aside come back; guarded by monitor. */
    private final RetryBackoff backoff = new RetryBackoff();
    /** The clock of the back-off (tests set a manual one). */
    private volatile java.util.function.LongSupplier clock = System::nanoTime;
    /** The earliest retry due for the selected name, Long.MAX_VALUE for none; kept by refresh. */
    private volatile long nextRetryNanos = Long.MAX_VALUE;

    PolicySelection(Scheduler.Source source, RuntimeLog log, LongSupplier deadlineNanos) {
        this.source = source;
        this.log = log;
        this.deadlineNanos = deadlineNanos;
    }

    /** The registration that decides now; null: the built-in policy. */
    Registered current() {
        return current;
    }

    String selected() {
        return selected;
    }

    boolean inlineNow() {
        return inlineNow;
    }

    boolean inlineEnabled() {
        return inlineEnabled;
    }

    void inlineEnabled(boolean on) {
        synchronized (monitor) {
            inlineEnabled = on;
            refresh();
        }
    }

    /**
     * Sets which bundles' bounded policies may decide on a posting thread ({@code *} alone: every
     * bundle's). Takes effect at the next event.
     */
    void inlineBundles(java.util.Set<String> symbolicNames) {
        synchronized (monitor) {
            inlineBundles = java.util.Set.copyOf(symbolicNames);
            refresh();
        }
    }

    java.util.Set<String> inlineBundles() {
        synchronized (monitor) {
            return inlineBundles;
        }
    }

    /**
     * Whether {@code r}'s decisions may run on a posting thread: inline decisions on, the policy
     * registered as bounded, its bundle trusted with posting threads, and it never overran on one.
     * The built-in policy (null) always may.
     */
    boolean mayInline(Registered r) {
        return inlineEnabled && (r == null || r.inline());
    }

    /** Why {@code r}, registered as bounded, does not decide inline; null when it may (or was not bounded). */
    private String notInlineBecause(String bundle) {
        if (inlineBundles.contains("*") || inlineBundles.contains(symbolicName(bundle))) {
            return null;
        }
        return "its bundle is not one whose policies may decide on an application's, driver's or device's thread"
                + " (dev.xq.scheduler inlinePolicyBundles: " + String.join(",", new java.util.TreeSet<>(inlineBundles))
                + "): it decides on the scheduler's thread";
    }

    /**
     * The policy overran while deciding on a posting thread: it decides on the scheduler's thread
     * from now on, even if selected again, until its bundle registers it again.
     */
    void revokeInline(Registered r) {
        synchronized (monitor) {
            inlineRevoked.add(r.id());
            refresh();
        }
    }

    /** Recomputes what the decision path reads after a change of selection, registry or set-aside. Caller holds the monitor. */
    private void refresh() {
        Registered r = SchedulerControl.NATIVE.equals(selected) ? null : registry.lookup(selected);
        if (r != null) {
            r.inline(r.bounded() && !inlineRevoked.contains(r.id()) && !r.probation() && notInlineBecause(r.bundle()) == null);
        }
        current = r;
        inlineNow = mayInline(r);
        nextRetryNanos = backoff.isEmpty() ? Long.MAX_VALUE : backoff.nextRetry(selected);
    }

    /**
     * Registers a policy after a trial decision.
     * @return whether it was registered (the caller then decides again); refusals are logged
     */
    boolean register(String name, Policy policy, String bundle, long id, boolean bounded) {
        if (name == null || name.isBlank() || SchedulerControl.NATIVE.equals(name)) {
            log.warn("policy service " + policy.getClass().getName() + " from " + bundle + " has xq.policy='" + name
                    + "'; a policy needs a name other than '" + SchedulerControl.NATIVE + "': ignored");
            return false;
        }
        if (!name.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) {
            // typed in the shell (xq:policy NAME) and the HTTP API: a name with a space could never be selected
            log.error("policy service " + policy.getClass().getName() + " from " + bundle + " has xq.policy='" + name
                    + "'; a policy name is 1 to 64 of letters, digits, '.', '_', '-' (starting with a letter or digit): ignored", null);
            return false;
        }
        String taken = ownerOfOtherBundle(name, bundle);
        if (taken != null) {
            refuseImpostor(name, bundle, taken);
            return false;
        }
        boolean finished = TrialDecisions.run(name, policy, source, deadlineNanos.getAsLong(), log);
        synchronized (monitor) {
            taken = ownerOfOtherBundle(name, bundle);
            if (taken == null) {
                Registered r = new Registered(name, policy, bundle, id, bounded);
                registry.add(r);
                if (!finished) {
                    registry.stuck(r);
                }
                refresh();
            }
        }
        if (taken != null) {
            refuseImpostor(name, bundle, taken);
            return false;
        }
        String why = bounded ? notInlineBecause(bundle) : null;
        if (why != null) {
            log.warn("policy '" + name + "' from " + bundle + " is registered as bounded, but " + why);
        } else {
            log.info("policy '" + name + "' registered by " + bundle + (bounded ? " (bounded: decides on the posting thread)" : ""));
        }
        return true;
    }

    /**
     * @return the bundle that holds {@code name} when it is not {@code bundle} (its symbolic name
     *         differs: two versions of one bundle may overlap during an update), else null
     */
    private String ownerOfOtherBundle(String name, String bundle) {
        synchronized (monitor) {
            List<Registered> l = registry.all(name);
            if (l.isEmpty() || symbolicName(l.getFirst().bundle()).equals(symbolicName(bundle))) {
                return null;
            }
            return l.getFirst().bundle();
        }
    }

    private static String symbolicName(String bundle) {
        int sp = bundle.indexOf(' ');
        return sp < 0 ? bundle : bundle.substring(0, sp);
    }

    private void refuseImpostor(String name, String bundle, String owner) {
        log.error("policy '" + name + "' from " + bundle + " refused: the name belongs to " + owner
                + " (the first registration keeps a name; another bundle's never takes it over, not even after the first "
                + "leaves); give the policy a name of its own", null);
    }

    /** @return whether a registration went away (the caller then decides again) */
    boolean unregister(long id) {
        String gone;
        synchronized (monitor) {
            gone = registry.remove(id);
            inlineRevoked.remove(id);
            backoff.remove(id);
            refresh();
        }
        if (gone == null) {
            return false;
        }
        if (gone.equals(selected) && lookup(gone) == null) {
            log.warn("policy '" + gone + "' was selected and is gone; the built-in '" + SchedulerControl.NATIVE
                    + "' policy decides until it is back");
        }
        return true;
    }

    /** The registration that decides for {@code name}: the first registered that is not set aside. */
    private Registered lookup(String name) {
        synchronized (monitor) {
            return registry.lookup(name);
        }
    }

    /**
     * Selects a policy by name, after trial decisions of its registrations that were not tried
     * under this selection yet.
     * @param strict whether an unregistered name is refused (shell, API) or accepted and waited for (configuration)
     */
    void select(String name, boolean strict) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("policy name is empty; allowed: " + names());
        }
        String n = name.trim();
        List<Registered> candidates;
        synchronized (monitor) {
            candidates = n.equals(selected) ? List.of() : registry.all(n).stream().filter(r -> !registry.isStuck(r)).toList();
        }
        String threw = null;
        int fine = 0;
        for (Registered r : candidates) {
            TrialDecisions.Outcome o = TrialDecisions.trial(n, r.policy(), source, deadlineNanos.getAsLong(), log);
            if (!o.ended()) {
                synchronized (monitor) {
                    registry.stuck(r);
                    refresh();
                }
            } else if (o.failure() != null) {
                threw = o.failure();
            } else {
                fine++;
            }
        }
        if (strict && threw != null && fine == 0) {
            // it would be set aside at its first real decision: say so now instead of "selected"
            throw new IllegalArgumentException("policy '" + n + "' " + threw + " in a trial decision; not selected ('" + selected
                    + "' still decides); fix or update its bundle");
        }
        synchronized (monitor) {
            if (strict && !SchedulerControl.NATIVE.equals(n) && !registry.contains(n)) {
                throw new IllegalArgumentException("policy '" + n + "' is not registered; allowed: " + names());
            }
            if (strict && registry.allStuck(n)) {
                throw new IllegalArgumentException("policy '" + n + "' " + TrialDecisions.STUCK
                        + "; it is not selectable until its bundle registers it again");
            }
            // the operator gives the name another chance now: its back-off starts again
            for (Registered r : registry.all(n)) {
                backoff.remove(r.id());
                r.probation(false, 0);
            }
            registry.clearSetAside(n);
            selected = n;
            refresh();
        }
    }

    /**
     * Sets a registration aside (it threw or overran): the next one of its name, or the built-in
     * policy, decides until it is retried ({@link RetryBackoff}).
     * @param inside the decision taken away while its thread is still inside the policy; null when it threw
     * @return when it is retried, for the log: "retried in 2 s (set aside 2 times in a row; ...)"
     */
    String setAside(Registered r, String reason, Watchdog.InProgress inside) {
        synchronized (monitor) {
            registry.setAside(r, reason);
            long now = clock.getAsLong();
            RetryBackoff.Entry e = backoff.tripped(r, reason, inside, now);
            r.probation(false, 0);
            refresh();
            return "retried " + RetryBackoff.inText(e.retryAtNanos - now) + (e.trips < 2 ? ""
                    : " (set aside " + e.trips + " times in a row; the wait doubles at each, up to "
                            + RetryBackoff.MAX_NANOS / 1_000_000_000L + " s)");
        }
    }

    /** Sets the clock of the back-off (tests: a manual one). */
    void retryClock(java.util.function.LongSupplier nanos) {
        synchronized (monitor) {
            clock = nanos;
        }
    }

    /**
     * The scheduler's loop thread asks before it decides: brings back the selected name's
     * registrations whose back-off is over (they decide at the next decision, on the loop).
     * @return whether one came back (the caller then decides)
     */
    boolean retryDue() {
        long next = nextRetryNanos;
        if (next == Long.MAX_VALUE) {
            return false;
        }
        long now = clock.getAsLong();
        if (now - next < 0) {
            return false;
        }
        List<String> retried = new ArrayList<>();
        List<String> putOff = new ArrayList<>();
        synchronized (monitor) {
            for (Registered r : registry.all(selected)) {
                RetryBackoff.Entry e = backoff.get(r.id());
                if (e == null || e.retried || now - e.retryAtNanos < 0) {
                    continue;
                }
                if (registry.isStuck(r) || !registry.isSetAside(r)) {
                    backoff.remove(r.id()); // stuck in a trial since (never retried), or back already
                    continue;
                }
                if (e.stillInside()) {
                    String thread = ThreadClock.name(e.inside.threadId());
                    backoff.putOff(e, now);
                    putOff.add("policy '" + r.name() + "' not retried: the thread of its decision taken away by the watchdog ("
                            + thread + ") is still inside it; retried " + RetryBackoff.inText(e.retryAtNanos - now)
                            + " if it has left by then");
                    continue;
                }
                registry.clearSetAside(r);
                e.retried = true;
                e.retriedAtNanos = now;
                r.probation(true, now + RetryBackoff.CLEAN_NANOS);
                retried.add("policy '" + r.name() + "' retried: " + e.atText() + " (" + e.reason + "), it decides again,"
                        + " on the scheduler's thread until it has decided for " + RetryBackoff.CLEAN_NANOS / 1_000_000_000L
                        + " s without being set aside; if set aside again, retried " + RetryBackoff.inText(Math.min(
                                RetryBackoff.MAX_NANOS, 2 * e.delayNanos)));
            }
            refresh();
        }
        for (String m : putOff) {
            log.warn(m);
        }
        for (String m : retried) {
            log.info(m);
        }
        return !retried.isEmpty();
    }

    /**
     * A retried registration decided and was not set aside: once its clean period is over its
     * back-off starts again and it may decide on posting threads again (where it could before).
     */
    void decidedCleanly(Registered r) {
        if (!r.probation() || clock.getAsLong() - r.probationEndsNanos() < 0) {
            return;
        }
        synchronized (monitor) {
            if (!r.probation()) {
                return;
            }
            backoff.remove(r.id());
            r.probation(false, 0);
            refresh();
        }
        log.info("policy '" + r.name() + "' decided for " + RetryBackoff.CLEAN_NANOS / 1_000_000_000L
                + " s after its retry without being set aside: its back-off starts again at "
                + RetryBackoff.FIRST_NANOS / 1_000_000_000L + " s");
    }

    /**
     * Why {@code r} was set aside and when it comes back, for {@link SchedulerControl.PolicyInfo#setAside()}:
     * "decision used more than ...; set aside at 12:00:01, retried in 2 s"; empty when it is not set aside.
     * Caller holds the monitor.
     */
    private String setAsideText(Registered r, long now) {
        String reason = registry.reason(r);
        RetryBackoff.Entry e = backoff.get(r.id());
        if (reason.isEmpty() || e == null || e.retried || registry.isStuck(r)) {
            return reason;
        }
        return reason + "; " + e.atText() + ", " + (r.name().equals(selected) ? e.retryText(now)
                : "not retried while '" + r.name() + "' is not selected (selecting it tries it at once)");
    }

    /** Why {@code r} was set aside, or null. */
    String reason(Registered r) {
        synchronized (monitor) {
            return registry.reason(r);
        }
    }

    List<String> names() {
        synchronized (monitor) {
            return registry.names();
        }
    }

    /** Every policy the node knows, the built-in one first, marked active where its name is {@code active}. */
    List<SchedulerControl.PolicyInfo> infos(String active) {
        List<SchedulerControl.PolicyInfo> out = new ArrayList<>();
        out.add(new SchedulerControl.PolicyInfo(SchedulerControl.NATIVE, NativePolicy.DESCRIPTION, "dev.xq.runtime",
                active.equals(SchedulerControl.NATIVE), ""));
        synchronized (monitor) {
            long now = clock.getAsLong();
            for (SchedulerControl.PolicyInfo p : registry.infos(active)) {
                String text = p.setAside().isEmpty() ? "" : setAsideText(registry.all(p.name()).getFirst(), now);
                out.add(new SchedulerControl.PolicyInfo(p.name(), p.description(), p.bundle(), p.active(), text));
            }
        }
        return out;
    }
}
