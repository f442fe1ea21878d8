package dev.xq.runtime.scheduler;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Throwaway decisions run on a policy's behalf when it registers or is selected, before the
 * scheduler decides with it: a freshly installed or updated bundle loads and initialises its
 * classes there instead of in the first real decision (which took 6 ms in the hot-swap
 * scenario, against a decision p50 of a few us). The view is the live one plus a few made-up
 * ready queues (negative handles) on every device, with the usual hints, so that the policy's
 * paths for ready queues run even on an idle node. The actions are discarded; a policy that
 * fails here is left to the watchdog's normal path.
 */
final class TrialDecisions {

    private TrialDecisions() {
    }

    /** What a trial leaves behind when the policy did not return: its thread (Java cannot stop it). */
    static final String STUCK = "did not finish a trial decision within ten deadlines; its thread is stuck in the policy";

    /** How a trial ended: {@code failure} is null when the policy returned, else what it threw, or {@link #STUCK}. */
    record Outcome(boolean ended, String failure) {
        boolean finished() {
            return ended && failure == null;
        }
    }

    /** @return whether the trial ended (returned or threw); false: the policy is stuck in it */
    static boolean run(String name, Policy policy, Scheduler.Source source, long deadlineNanos, RuntimeLog log) {
        return trial(name, policy, source, deadlineNanos, log).ended();
    }

    /** Runs the trial decisions. @return how they ended */
    static Outcome trial(String name, Policy policy, Scheduler.Source source, long deadlineNanos, RuntimeLog log) {
        List<QueueView> views = new ArrayList<>();
        for (ScheduledQueue q : source.schedulerQueues()) {
            QueueView v = q.view();
            if (v != null) {
                views.add(v);
            }
        }
        List<DeviceView> devices = source.deviceViews();
        long now = System.nanoTime();
        long handle = -1;
        for (DeviceView d : devices) {
            for (int i = 0; i < 3; i++) {
                List<Hint> hints = List.of(new Hint.Priority(i), new Hint.Deadline(10_000L * (i + 1)), new Hint.Utilization(25 * (i + 1)));
                views.add(new QueueView(handle--, "warm-up", d.id(), "warm-up-" + i, true, i == 0, false, now - 1_000_000L * i,
                        100_000L * i, i == 1 ? 0 : now - 500_000L, 4, 1, 10, 100_000L, hints, PreemptionLevel.BLOCK));
            }
        }
        SchedulerView view = new SchedulerView(now, views, devices);
        // On a thread of its own, bounded: a policy that never returns must not hang registration.
        java.util.concurrent.atomic.AtomicReference<String> threw = new java.util.concurrent.atomic.AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                for (int i = 0; i < 3 && !Thread.currentThread().isInterrupted(); i++) {
                    policy.schedule(view, new ActionRecorder(Set.of()));
                }
            } catch (Throwable e) {
                // any Throwable, Errors too: one line naming the policy, not a raw stack trace from the thread's end
                threw.set("threw " + e);
                log.warn("policy '" + name + "' failed a trial decision: " + e);
            }
        }, "xq-policy-warmup");
        t.setDaemon(true);
        t.start();
        try {
            t.join(Math.max(1, 10 * deadlineNanos / 1_000_000L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            t.interrupt();
            try {
                t.join(100); // a policy that blocks interruptibly (a sleep, a lock) ends here: no thread is left behind
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (!t.isAlive()) {
                log.warn("policy '" + name + "' did not finish a trial decision within ten deadlines; it ended when interrupted");
            }
        }
        if (t.isAlive()) {
            log.error("policy '" + name + "' " + STUCK + " (" + t.getName() + "); it is set aside and not selectable until registered again", null);
            return new Outcome(false, STUCK);
        }
        return new Outcome(true, threw.get());
    }
}
