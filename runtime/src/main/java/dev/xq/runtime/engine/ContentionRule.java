package dev.xq.runtime.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
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
 *
 * <p>Company that sleeps is no company (issue 41): a process's queue asleep in the scheduler
 * ({@code DormantQueues}: held, idle, out of the decisions until its next work) cannot run and has
 * nothing in flight, so no tenant waits for it and none waits behind another's work on its
 * account; counting it kept a tenant beside a user's 4,096 held, idle streams on its configured
 * limits instead of the alone ones (P99 5.07 ms against 1.73 alone over 300 tasks,
 * {@code bench/hostile}). The scheduler tells the node's core when such a queue falls asleep and
 * when it wakes ({@code Scheduler.Source.queueSlept} and {@code queueWoke}), and the core tells
 * this rule: {@link #slept} (applied on a thread of its own, as it widens limits) and
 * {@link #woke} (applied before the decision that may let it go; why that is safe is written
 * there). A sleeper's own answer is not kept up to date while it sleeps (held, its limits bound
 * nothing); it is given afresh when it wakes. A process's queue that falls asleep let go (never
 * used yet: its first launches go before its wake is decided on) is given its configured limits
 * as it falls asleep, whatever company it has, so that those launches are bounded as a contended
 * queue's are.
 */
final class ContentionRule {

    /** The core's open queues, by handle. */
    private final Map<Long, NodeQueue> queues;
    private volatile long aloneWindowMicros = XqCore.DEFAULT_ALONE_WINDOW_MICROS;
    /** The queues the policy put on top of their device (the scheduler's {@code TopQueues}). */
    private volatile Set<Long> top = Set.of();
    private volatile boolean onTop = true;

    /** {@code recompute(null)}, bound once (a lambda's first use is bootstrapped: not in a decision). */
    private final Runnable recomputeAll = () -> recompute(null);

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
     * changed its hints (null: none did), and after the queues that fell asleep since the last
     * time. The work is linear in the queues whose answer changed (and in those that fell asleep),
     * plus the company of the in-process queues on top (their hold on arrival), never in the square
     * of all queues: a process that opened thousands of streams made each open and close scan every
     * pair of queues, under the core's lock (security issue "trust", item 3).
     */
    void recompute(NodeQueue changed) {
        // Applied outside the core's lock (widening a queue's limits launches its pending
        // commands), under a lock of their own that also orders the computations: a stale answer
        // never overwrites a newer one.
        synchronized (contentionApply) {
            apply(actions(changed));
        }
    }

    private final Object contentionApply = new Object();

    /**
     * {@code q} fell asleep ({@code DormantQueues}; the deciding thread, after its decision was
     * applied, through {@code Scheduler.Source.queueSlept}): it is no company from now on. The
     * others' limits may widen, which launches their pending commands, so it is applied on a
     * thread of its own (the deciding thread may hold a queue's lock), one for all the queues that
     * fell asleep meanwhile. A queue not open here (closed, or never this rule's) is ignored.
     */
    void slept(NodeQueue q) {
        synchronized (this) {
            Member m = members.get(q.handle());
            if (m == null && queues.get(q.handle()) == q) {
                // open, and asleep before its open was counted here (a decision on the loop thread
                // saw it between the core's put and its recompute): counted asleep from the start
                sleptUncounted.add(q);
                return;
            }
            if (m == null || m.q != q) {
                return;
            }
            m.wantAsleep = true;
            sleepNews.add(m);
            if (sleepApplyDue) {
                return;
            }
            sleepApplyDue = true;
        }
        Thread.ofVirtual().name("xq-contention-sleep").start(recomputeAll);
    }

    /**
     * {@code q}, about to open, counts as asleep from its open (no company; its own answer not
     * given: it keeps the limits it opens with, its configured ones) until {@link #woke}: a
     * process's stream that never had work (the core's {@code open}, before the queue is put in
     * its map).
     */
    synchronized void bornAsleep(NodeQueue q) {
        sleptUncounted.add(q);
    }

    /**
     * {@code q} wakes ({@code DormantQueues.begin}, through {@code Scheduler.Source.queueWoke}):
     * it is company again, and the others' limits are tightened before this returns. A queue that
     * is not open here is ignored.
     *
     * <p>Why no queue keeps limits widened for its absence while its work runs: a sleeper is held
     * by the scheduler (its process launches nothing) and no decision sees it, so none can let it
     * go while it sleeps; it leaves its sleep only in {@code DormantQueues.begin}, at the start of
     * a decision, before the policy runs and before any action is applied, and that calls this
     * method on the deciding thread. Here, under {@link #contentionApply} (which orders every
     * computation and application of answers, so a widening computed earlier for its sleep is
     * applied before, never after, this), it is counted again and the new answers are applied:
     * a process queue's interposer has its limits back (its GATE sent) and an in-process queue's
     * gate narrowed before this returns. Only then can this decision, or a later one, let the
     * woken queue go. What the others launched while it slept stays in flight: its first commands
     * may wait for that, once per sleep, as a newcomer's first commands wait for what a queue alone
     * launched. If its sleep was not applied yet ({@link #slept} runs later), it never stopped
     * counting and nothing changes. If this thread is itself applying another computation's
     * answers (a limit change launched, the launch failed and the node decided at once), what that
     * one has not applied yet is applied here too ({@link #unapplied}), and its own rest applies
     * each queue's latest answer, so none is left older than this one when this returns. Locks: the
     * deciding thread holds none that applying an answer waits for (a queue's control lock, which
     * it may hold, is only ever tried there), as a hint's recompute on the hinting thread.
     *
     * <p>Answered under the settings last applied (the on-top set, the rule and the window): a
     * change of those is the next {@link #recompute}'s, on a thread that may launch. Company that
     * comes only narrows the others' limits, so nothing launches here on the deciding thread; the
     * woken queue itself is a process's, whose limits go to its interposer.
     */
    void woke(NodeQueue q) {
        synchronized (contentionApply) {
            apply(wokeActions(q));
        }
    }

    /** What sets a queue apart from its company on a device: its group and its priority. */
    private record Company(String group, int priority) {
    }

    /** An open queue as the contention rule sees it, and the answer it was last given. Guarded by the core. */
    private static final class Member {
        final NodeQueue q;
        final String device;
        Company key;
        /** Asleep as counted: out of its device's company ({@code DormantQueues}). */
        boolean asleep;
        /** Asleep as last heard: {@link #slept} sets it, {@link #woke} clears it, the next computation counts it. */
        boolean wantAsleep;
        boolean told;
        boolean contended;
        boolean onTop;
        long window;
        /** What an in-process queue on top holds on arrival, as last told. */
        List<NodeQueue> under = List.of();

        Member(NodeQueue q, Company key) {
            this.q = q;
            this.device = q.device();
            this.key = key;
        }
    }

    /**
     * The open queues of one device, those awake among them, and how many of the awake have each
     * group and priority. Guarded by the core.
     */
    private static final class DeviceCompany {
        final TreeMap<Long, Member> members = new TreeMap<>();
        final TreeMap<Long, Member> awake = new TreeMap<>();
        final Map<Company, Integer> counts = new HashMap<>();

        /**
         * Every awake queue of the device has company (an awake queue of another group, or of its
         * group at another priority) exactly when the device holds two distinct ones; none has
         * with one.
         */
        boolean contended() {
            return counts.size() >= 2;
        }

        void count(Company key, int delta) {
            counts.merge(key, delta, (a, b) -> a + b == 0 ? null : a + b);
        }

        /** Counts {@code m} as company (it opened or woke), or no longer ({@code false}: it closed or fell asleep). */
        void counted(Member m, boolean in) {
            if (in) {
                awake.put(m.q.handle(), m);
            } else {
                awake.remove(m.q.handle());
            }
            count(m.key, in ? 1 : -1);
        }
    }

    // guarded by this: the open queues by handle and by device, and what the last answers assumed
    private final Map<Long, Member> members = new HashMap<>();
    private final Map<String, DeviceCompany> companies = new HashMap<>();
    private Set<Long> toldTop = Set.of();
    private boolean toldOnTop = true;
    private long toldWindow = XqCore.DEFAULT_ALONE_WINDOW_MICROS;
    /**
     * Answers computed and not applied yet: only while a computation's answers are being applied
     * (under {@link #contentionApply}), so never seen by another thread's; seen by a wake nested in
     * that applying on the same thread, which applies them too ({@link #wokeActions}).
     */
    private final Set<Member> unapplied = new LinkedHashSet<>();
    /** Queues that fell asleep since the last computation ({@link #slept}), and whether one is due to count them. */
    private final List<Member> sleepNews = new ArrayList<>();
    /** Open queues that fell asleep before their open was counted here ({@link #slept}); guarded by this. */
    private final Set<NodeQueue> sleptUncounted = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    private boolean sleepApplyDue;

    private static Company companyOf(NodeQueue q) {
        return new Company(q.group(), XqCore.priority(q.hints()));
    }

    /**
     * The awake company of {@code dc} changed: everyone awake there is asked when the device gained
     * or lost company, else those on top (their hold on arrival names the company).
     */
    private static void companyChanged(DeviceCompany dc, boolean wasContended, Set<Long> tops, Map<Long, Member> ask) {
        if (dc.contended() != wasContended) {
            ask.putAll(dc.awake); // the whole device has company now, or has none any more
        } else {
            for (Long t : tops) { // the company of those on top changed
                Member o = dc.awake.get(t);
                if (o != null) {
                    ask.put(t, o);
                }
            }
        }
    }

    private synchronized List<Member> actions(NodeQueue changed) {
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
            if (!open) {
                sleptUncounted.remove(changed);
            }
            if (!open && m != null && m.q == changed) {
                members.remove(h);
                dc.members.remove(h);
                if (!m.asleep) {
                    dc.counted(m, false);
                }
                if (dc.members.isEmpty()) {
                    companies.remove(m.device);
                }
            } else if (open && m == null) {
                m = new Member(changed, companyOf(changed));
                members.put(h, m);
                dc = companies.computeIfAbsent(m.device, d -> new DeviceCompany());
                wasContended = dc.contended();
                dc.members.put(h, m);
                ask.put(h, m);
                if (sleptUncounted.remove(changed)) {
                    m.asleep = true; // fell asleep before this count (slept): no company, nobody else's answer changes
                    m.wantAsleep = true;
                    dc = null;
                } else {
                    dc.counted(m, true);
                }
            } else if (open && m.q == changed) {
                Company key = companyOf(changed);
                if (key.equals(m.key)) {
                    dc = null; // another kind of hint: nothing changed
                } else if (m.asleep) {
                    m.key = key; // counted under its new key when it wakes
                    dc = null;
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
                companyChanged(dc, wasContended, nowTop, ask);
            }
        }
        List<Member> letGoAsleep = List.of();
        if (!sleepNews.isEmpty()) {
            for (Member m : sleepNews) {
                if (members.get(m.q.handle()) != m || !m.wantAsleep || m.asleep) {
                    continue; // closed, woke, or counted already
                }
                DeviceCompany dc = companies.get(m.device);
                boolean wasContended = dc.contended();
                m.asleep = true;
                dc.counted(m, false);
                ask.remove(m.q.handle());
                companyChanged(dc, wasContended, nowTop, ask);
                if (m.q instanceof ExternalQueueImpl x && !x.isSuspendedByScheduler()) {
                    if (letGoAsleep.isEmpty()) {
                        letGoAsleep = new ArrayList<>();
                    }
                    letGoAsleep.add(m);
                }
            }
            sleepNews.clear();
        }
        sleepApplyDue = false;
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
        List<Member> apply = answers(ask, onTopRule, window, nowTop);
        for (Member m : letGoAsleep) {
            // asleep and let go (never used: DormantQueues), its first launches go before its wake
            // is decided on: they run under its configured limits, whatever company comes meanwhile
            // (its answer is not kept while it sleeps), and its wake gives it its answer afresh
            if (!(m.told && m.contended && !m.onTop)) {
                m.told = true;
                m.contended = true;
                m.onTop = false;
                apply.add(m);
                unapplied.add(m);
            }
        }
        return apply;
    }

    /** {@link #woke}'s computation: {@code q} counted again, under the settings last applied. */
    private synchronized List<Member> wokeActions(NodeQueue q) {
        Member m = members.get(q.handle());
        if (m == null || m.q != q) {
            sleptUncounted.remove(q);
            return List.of();
        }
        m.wantAsleep = false;
        if (!m.asleep) {
            return List.of(); // its sleep was not counted yet: it never stopped being company
        }
        DeviceCompany dc = companies.get(m.device);
        boolean wasContended = dc.contended();
        m.asleep = false;
        dc.counted(m, true);
        Map<Long, Member> ask = new TreeMap<>();
        ask.put(q.handle(), m);
        companyChanged(dc, wasContended, toldTop, ask);
        List<Member> apply = answers(ask, toldOnTop, toldWindow, toldTop);
        // nested in another computation's applying (same thread): what that one has not applied
        // yet is applied now too, so every answer stands when this returns, not only the new ones
        for (Member u : unapplied) {
            if (!apply.contains(u)) {
                apply.add(u);
            }
        }
        return apply;
    }

    /**
     * Gives each asked queue that is awake its answer (a sleeper gets one when it wakes).
     *
     * @return the queues whose answer is to be applied
     */
    private List<Member> answers(Map<Long, Member> ask, boolean onTopRule, long window, Set<Long> nowTop) {
        List<Member> apply = new ArrayList<>();
        for (Member w : ask.values()) {
            if (w.asleep) {
                continue;
            }
            DeviceCompany dc = companies.get(w.device);
            boolean contended = dc.contended();
            boolean onTop = contended && onTopRule && nowTop.contains(w.q.handle());
            boolean same = w.told && w.contended == contended && w.onTop == onTop && w.window == window;
            if (w.q instanceof XQueueImpl && (!same || onTop)) {
                // on top: all of its company (the other awake queues of its device of another
                // group, or of its group at another priority) yields to it; a sleeper is held already
                List<NodeQueue> under = new ArrayList<>();
                if (onTop) {
                    for (Member o : dc.awake.values()) {
                        if (o != w && !o.key.equals(w.key)) {
                            under.add(o.q);
                        }
                    }
                }
                w.under = under;
                apply.add(w);
                unapplied.add(w);
            } else if (w.q instanceof ExternalQueueImpl && !same) {
                apply.add(w);
                unapplied.add(w);
            }
            w.told = true;
            w.contended = contended;
            w.onTop = onTop;
            w.window = window;
        }
        return apply;
    }

    /**
     * Applies each queue's answer as it stands when applied, not as it stood when computed: a
     * computation nested in another's applying (on one thread: a queue whose limits changed
     * launched, a launch failed, the node decided at once and a sleeper woke) gives newer answers,
     * which the outer one's rest must not overwrite with its older ones. Caller holds
     * {@link #contentionApply}, not the core's lock.
     */
    private void apply(List<Member> todo) {
        for (Member w : todo) {
            boolean contended;
            boolean onTop;
            long window;
            List<NodeQueue> under;
            synchronized (this) {
                unapplied.remove(w);
                if (members.get(w.q.handle()) != w) {
                    continue; // closed meanwhile
                }
                contended = w.contended;
                onTop = w.onTop;
                window = w.window;
                under = w.under;
            }
            if (w.q instanceof ExternalQueueImpl x) {
                x.contended(contended, onTop ? window : 0);
            } else if (w.q instanceof XQueueImpl x) {
                x.limits(contended, onTop, window);
                x.holdsOnArrival(under);
            }
        }
    }
}
