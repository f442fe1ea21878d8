package dev.xq.policy.testkit;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A scheduler on a simulated clock: it keeps the queue states a runtime would keep, applies a
 * policy's actions to them, charges device time to the queues that run (split evenly among the
 * running queues of a device), and measures how long ready queues wait while suspended.
 */
public final class Simulation {

    /** One queue's mutable state. */
    public static final class SimQueue {
        public final long handle;
        public final String device;
        public final String group;
        public final List<Hint> hints;
        public boolean ready;
        public boolean suspended;
        public long readySince;
        public long runNanos;
        public long lastResumed;
        public long waitStart = -1;
        public long maxWait;
        public int waits;
        public long resumes;

        public SimQueue(long handle, String device, String group, List<Hint> hints) {
            this.handle = handle;
            this.device = device;
            this.group = group;
            this.hints = hints;
        }

        public boolean running() {
            return ready && !suspended;
        }
    }

    private final Map<Long, SimQueue> queues = new LinkedHashMap<>();
    private final List<DeviceView> devices;
    private long now;
    private Long wake;
    private int decisions;

    public Simulation(long startNanos, DeviceView... devices) {
        this.now = startNanos;
        this.devices = List.of(devices);
    }

    public SimQueue add(long handle, String device, String group, Hint... hints) {
        SimQueue q = new SimQueue(handle, device, group, List.of(hints));
        queues.put(handle, q);
        return q;
    }

    public SimQueue queue(long handle) {
        return queues.get(handle);
    }

    public long now() {
        return now;
    }

    public int decisions() {
        return decisions;
    }

    public void ready(long handle) {
        SimQueue q = queues.get(handle);
        if (!q.ready) {
            q.ready = true;
            q.readySince = now;
        }
    }

    public void idle(long handle) {
        SimQueue q = queues.get(handle);
        q.ready = false;
        q.readySince = 0;
    }

    public SchedulerView view() {
        List<QueueView> views = new ArrayList<>();
        for (SimQueue q : queues.values()) {
            views.add(new QueueView(q.handle, "q" + q.handle, q.device, q.group, q.ready, q.suspended, false,
                    q.ready ? q.readySince : 0, q.runNanos, q.lastResumed, q.ready ? 1 : 0, 0, 0, 0, q.hints,
                    PreemptionLevel.BLOCK));
        }
        return new SchedulerView(now, views, devices);
    }

    /** Calls the policy once and applies its actions, as the runtime would. */
    public RecordingActions decide(Policy policy) {
        SchedulerView view = view();
        RecordingActions actions = new RecordingActions();
        policy.schedule(view, actions);
        PolicyChecks.assertSafe(view, actions);
        decisions++;
        for (Map.Entry<Long, Boolean> e : actions.resumed.entrySet()) {
            SimQueue q = queues.get(e.getKey());
            if (e.getValue()) {
                if (q.suspended) {
                    q.suspended = false;
                    q.lastResumed = now;
                    q.resumes++;
                }
            } else {
                q.suspended = true;
            }
        }
        wake = actions.wake;
        for (SimQueue q : queues.values()) {
            boolean waiting = q.ready && q.suspended;
            if (waiting && q.waitStart < 0) {
                q.waitStart = now;
            } else if (!waiting && q.waitStart >= 0) {
                q.maxWait = Math.max(q.maxWait, now - q.waitStart);
                q.waits++;
                q.waitStart = -1;
            }
        }
        return actions;
    }

    /** Moves the clock, charging the time to the queues that run. */
    public void advanceTo(long t) {
        if (t < now) {
            throw new IllegalArgumentException("time goes backwards: " + t + " < " + now);
        }
        long dt = t - now;
        Map<String, List<SimQueue>> runningByDevice = new HashMap<>();
        for (SimQueue q : queues.values()) {
            if (q.running()) {
                runningByDevice.computeIfAbsent(q.device, d -> new ArrayList<>()).add(q);
            }
        }
        for (List<SimQueue> running : runningByDevice.values()) {
            for (SimQueue q : running) {
                q.runNanos += dt / running.size();
            }
        }
        now = t;
    }

    /**
     * Runs until {@code end}: decides at every timer the policy asked for and, besides, every
     * {@code eventPeriod} (standing in for command completions).
     */
    public void run(Policy policy, long end, long eventPeriod) {
        while (now < end) {
            long next = Math.min(end, now + eventPeriod);
            if (wake != null && wake > now && wake < next) {
                next = wake;
            }
            advanceTo(next);
            decide(policy);
        }
    }

    /** The longest wait so far, including one still going on. */
    public long maxWait(long handle) {
        SimQueue q = queues.get(handle);
        return q.waitStart >= 0 ? Math.max(q.maxWait, now - q.waitStart) : q.maxWait;
    }
}
