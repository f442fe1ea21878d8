package dev.xq.runtime.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The contention rule: tells each open queue whether its limits matter now, that is whether its
 * device has another open queue of another group, or of its group at another priority (the
 * tenant-alone rule, issue 13; see {@link ExternalQueueImpl#contended(boolean, long)} and
 * {@link XQueueImpl#alone}), and whether the policy put it on top of those (the on-top rule,
 * docs/runtime.md), with the company an in-process queue on top holds on arrival
 * ({@link HoldOnArrival}). "The core's lock" below is this object's monitor.
 */
final class ContentionRule {

    /** The core's open queues, by handle. */
    private final Map<Long, NodeQueue> queues;
    private volatile long aloneWindowMicros = XqCore.DEFAULT_ALONE_WINDOW_MICROS;
    /** The queues the policy put on top of their device (the scheduler's {@code TopQueues}). */
    private volatile Set<Long> top = Set.of();
    private volatile boolean onTop = true;

    ContentionRule(Map<Long, NodeQueue> queues) {
        this.queues = queues;
    }

    /** Sets the alone window (us, 0: the rule is off); the caller recomputes. */
    void aloneWindowMicros(long micros) {
        aloneWindowMicros = micros;
    }

    long aloneWindowMicros() {
        return aloneWindowMicros;
    }

    /** Switches the on-top rule; the caller recomputes. */
    void onTop(boolean on) {
        onTop = on;
    }

    boolean onTop() {
        return onTop;
    }

    /** The queues the policy put on top of their device now; the caller recomputes. */
    void top(Set<Long> nowTop) {
        top = nowTop;
    }

    /**
     * Tells each queue whether its limits matter now, after {@code changed} opened, closed or
     * changed its hints (null: none did). The work is linear in the queues whose answer changed,
     * plus the company of the in-process queues on top (their hold on arrival), never in the square
     * of all queues: a process that opened thousands of streams made each open and close scan every
     * pair of queues, under the core's lock (security issue "trust", item 3).
     */
    void recompute(NodeQueue changed) {
        // Applied outside the core's lock (widening a queue's limits launches its pending
        // commands), under a lock of their own that also orders the computations: a stale answer
        // never overwrites a newer one.
        synchronized (contentionApply) {
            for (Runnable r : actions(changed)) {
                r.run();
            }
        }
    }

    private final Object contentionApply = new Object();

    /** What sets a queue apart from its company on a device: its group and its priority. */
    private record Company(String group, int priority) {
    }

    /** An open queue as the contention rule sees it, and the answer it was last given. Guarded by the core. */
    private static final class Member {
        final NodeQueue q;
        final String device;
        Company key;
        boolean told;
        boolean contended;
        boolean onTop;
        long window;

        Member(NodeQueue q, Company key) {
            this.q = q;
            this.device = q.device();
            this.key = key;
        }
    }

    /** The open queues of one device, and how many of them have each group and priority. Guarded by the core. */
    private static final class DeviceCompany {
        final TreeMap<Long, Member> members = new TreeMap<>();
        final Map<Company, Integer> counts = new HashMap<>();

        /**
         * Every queue of the device has company (a queue of another group, or of its group at
         * another priority) exactly when the device holds two distinct ones; none has with one.
         */
        boolean contended() {
            return counts.size() >= 2;
        }

        void count(Company key, int delta) {
            counts.merge(key, delta, (a, b) -> a + b == 0 ? null : a + b);
        }
    }

    // guarded by this: the open queues by handle and by device, and what the last answers assumed
    private final Map<Long, Member> members = new HashMap<>();
    private final Map<String, DeviceCompany> companies = new HashMap<>();
    private Set<Long> toldTop = Set.of();
    private boolean toldOnTop = true;
    private long toldWindow = XqCore.DEFAULT_ALONE_WINDOW_MICROS;

    private static Company companyOf(NodeQueue q) {
        return new Company(q.group(), XqCore.priority(q.hints()));
    }

    private synchronized List<Runnable> actions(NodeQueue changed) {
        // the queues whose answer may have changed
        Map<Long, Member> ask = new TreeMap<>();
        boolean onTopRule = this.onTop;
        long window = aloneWindowMicros;
        Set<Long> nowTop = top;
        if (changed != null) {
            long h = changed.handle();
            Member m = members.get(h);
            boolean open = queues.get(h) == changed;
            DeviceCompany dc = m != null ? companies.get(m.device) : null;
            boolean wasContended = dc != null && dc.contended();
            if (!open && m != null && m.q == changed) {
                members.remove(h);
                dc.members.remove(h);
                dc.count(m.key, -1);
                if (dc.members.isEmpty()) {
                    companies.remove(m.device);
                }
            } else if (open && m == null) {
                m = new Member(changed, companyOf(changed));
                members.put(h, m);
                dc = companies.computeIfAbsent(m.device, d -> new DeviceCompany());
                wasContended = dc.contended();
                dc.members.put(h, m);
                dc.count(m.key, 1);
                ask.put(h, m);
            } else if (open && m.q == changed) {
                Company key = companyOf(changed);
                if (key.equals(m.key)) {
                    dc = null; // another kind of hint: nothing changed
                } else {
                    dc.count(m.key, -1);
                    dc.count(key, 1);
                    m.key = key;
                    ask.put(h, m);
                }
            } else {
                dc = null;
            }
            if (dc != null) {
                if (dc.contended() != wasContended) {
                    ask.putAll(dc.members); // the whole device has company now, or has none any more
                } else {
                    for (Long t : nowTop) { // the company of those on top changed
                        Member o = dc.members.get(t);
                        if (o != null) {
                            ask.put(t, o);
                        }
                    }
                }
            }
        }
        if (onTopRule != toldOnTop || window != toldWindow) {
            ask.putAll(members);
        } else if (!nowTop.equals(toldTop)) {
            for (Set<Long> s : List.of(toldTop, nowTop)) {
                for (Long t : s) {
                    Member o = members.get(t);
                    if (o != null) {
                        ask.put(t, o);
                    }
                }
            }
        }
        toldOnTop = onTopRule;
        toldWindow = window;
        toldTop = nowTop;
        List<Runnable> actions = new ArrayList<>();
        for (Member w : ask.values()) {
            DeviceCompany dc = companies.get(w.device);
            boolean contended = dc.contended();
            boolean onTop = contended && onTopRule && nowTop.contains(w.q.handle());
            boolean same = w.told && w.contended == contended && w.onTop == onTop && w.window == window;
            if (w.q instanceof ExternalQueueImpl x) {
                if (!same) {
                    actions.add(() -> x.contended(contended, onTop ? window : 0));
                }
            } else if (w.q instanceof XQueueImpl x && (!same || onTop)) {
                // on top: all of its company (the other queues of its device of another group, or
                // of its group at another priority) yields to it
                List<NodeQueue> under = new ArrayList<>();
                if (onTop) {
                    for (Member o : dc.members.values()) {
                        if (o != w && !o.key.equals(w.key)) {
                            under.add(o.q);
                        }
                    }
                }
                actions.add(() -> {
                    x.limits(contended, onTop, window);
                    x.holdsOnArrival(under);
                });
            }
            w.told = true;
            w.contended = contended;
            w.onTop = onTop;
            w.window = window;
        }
        return actions;
    }
}
