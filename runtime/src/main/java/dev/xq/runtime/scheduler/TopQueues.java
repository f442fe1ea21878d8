package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.QueueView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Finds the queues that the policy puts on top of their device (the on-top rule, docs/runtime.md):
 * a queue is on top when the policy has never held it back while another queue of its device ran,
 * and every other queue of its device of another group or priority has yielded to it (was held
 * while it ran) at least once. Such a queue's launch limits bound what no other open queue waits
 * for: the queues below it are held whenever it has work, so the node may let it keep more work in
 * flight, as a queue alone on its device does, and a host stall shorter than that work no longer
 * idles the device.
 *
 * <p>A queue yields whether or not it has work when it is held: an idle queue the policy holds while
 * another runs is one it would not let run if its work came then.
 *
 * <p>Learnt from the policy's own decisions, so it holds for any policy: under a priority policy
 * the highest-priority queue is on top once each lower one has yielded to it; a policy that takes
 * turns (shares, deadlines, bandwidth) holds every queue at some point, and then none is. The first
 * time a queue on top is held for another (a newcomer it yields to, a policy that changed its
 * mind), it stops being on top for good: that once, the other queue finds its wider work in flight.
 * A queue that opens, or whose group or priority changes, has yielded to nobody yet, so the queue
 * on top stops being so until it yields; a policy swap forgets everything.
 *
 * <p>Not thread-safe: only the deciding thread calls it (decisions are serialised).
 */
final class TopQueues {

    /**
     * What sets a queue apart from its company: its group and its priority (a record: no string
     * built per view). Its methods, and {@link DeviceKey}'s, are written out: a record's own are
     * bootstrapped at their first call, and the first is in the decision that first holds a queue
     * (the node's first hold took 2-15 ms here on the build VM, {@code xq.trace.slowDecisions}).
     */
    private record Key(String group, int priority) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.priority == priority && java.util.Objects.equals(k.group, group);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(group) * 31 + priority;
        }

        @Override
        public String toString() {
            return "Key[group=" + group + ", priority=" + priority + "]";
        }
    }

    /** A key on a device. */
    private record DeviceKey(String device, Key key) {
        @Override
        public boolean equals(Object o) {
            return o instanceof DeviceKey k && java.util.Objects.equals(k.device, device) && java.util.Objects.equals(k.key, key);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(device) * 31 + java.util.Objects.hashCode(key);
        }

        @Override
        public String toString() {
            return "DeviceKey[device=" + device + ", key=" + key + "]";
        }
    }

    private static final class Track {
        final String device;
        final Key key;
        /** Held once while another queue of its device ran. */
        boolean yielded;
        /** The queues it was held for. */
        final Set<Long> yieldedTo = new HashSet<>(4);

        Track(QueueView v) {
            device = v.device();
            key = key(v);
        }
    }

    /** Bound once: a method reference's first use is bootstrapped (in the first hold's decision otherwise). */
    private static final java.util.function.BinaryOperator<Integer> SUM = Integer::sum;

    private final Map<Long, Track> tracks = new HashMap<>();
    private String policy;
    private Set<Long> top = Set.of();

    private static Key key(QueueView v) {
        return new Key(v.group(), v.priority());
    }

    private static boolean sameKey(Track t, QueueView v) {
        return t.key.priority() == v.priority() && java.util.Objects.equals(t.key.group(), v.group());
    }

    /**
     * Learns from a decision by {@code policyName} (its actions in {@code decided}, true for a suspend;
     * a queue not decided keeps its state).
     *
     * @return the queues on top now, when that set changed; {@code null} when it did not
     */
    Set<Long> update(String policyName, List<QueueView> views, Map<Long, Boolean> decided) {
        boolean dirty = false;
        if (!policyName.equals(policy)) {
            policy = policyName;
            tracks.clear();
            dirty = true;
        }
        Map<String, List<Long>> running = null;
        for (QueueView v : views) {
            Track t = tracks.get(v.handle());
            if (t == null || !t.device.equals(v.device()) || !sameKey(t, v)) {
                if (t != null) {
                    forget(v.handle());
                }
                tracks.put(v.handle(), new Track(v));
                dirty = true;
            }
            if (v.runnable() && !held(v, decided)) {
                if (running == null) {
                    running = new HashMap<>(4);
                }
                running.computeIfAbsent(v.device(), d -> new ArrayList<>(2)).add(v.handle());
            }
        }
        if (tracks.size() != views.size()) { // some closed, or asleep (left out of this decision: DormantQueues)
            Set<Long> open = new HashSet<>(views.size() * 2);
            for (QueueView v : views) {
                open.add(v.handle());
            }
            Set<Long> gone = new HashSet<>();
            for (Iterator<Long> it = tracks.keySet().iterator(); it.hasNext(); ) {
                Long h = it.next();
                if (!open.contains(h)) {
                    it.remove();
                    gone.add(h);
                }
            }
            // in one pass: thousands leave at once when idle queues fall asleep (DormantQueues),
            // and forgetting them one by one went over every track for each (quadratic)
            for (Track t : tracks.values()) {
                t.yieldedTo.removeAll(gone);
            }
            dirty = true;
        }
        if (running != null) {
            for (QueueView v : views) {
                List<Long> ran = running.get(v.device());
                // held while another ran, with work or without: an idle queue the policy holds
                // is one it would not let run if its work came now (hpf resumes an idle queue
                // exactly when it would run), so it yields as much as a busy one; counting only
                // held queues with work left a tenant on top of a company that was idle when it
                // ran (a trainer between steps, a service between requests, every queue that woke
                // from its sleep) on its configured limits: on the build VM an LC process beside an
                // idle one was refused 2,700-2,850 launches by threshold a run, its P50 1.2-1.4 x
                // its own alone. A queue its application holds is held for nobody.
                if (ran == null || v.suspendedByApp() || !held(v, decided)) {
                    continue;
                }
                Track t = tracks.get(v.handle());
                if (!t.yielded) {
                    t.yielded = true;
                    dirty = true;
                }
                dirty |= t.yieldedTo.addAll(ran);
            }
        }
        if (!dirty) {
            return null;
        }
        Set<Long> now = compute(views);
        if (now.equals(top)) {
            return null;
        }
        top = now;
        return now;
    }

    /** @return the queues on top as of the last update */
    Set<Long> top() {
        return top;
    }

    private void forget(long handle) {
        for (Track t : tracks.values()) {
            t.yieldedTo.remove(handle);
        }
    }

    /**
     * O(queues + yields): a queue is on top when the queues of other keys on its device that
     * yielded to it are all the queues of other keys on its device.
     */
    private Set<Long> compute(List<QueueView> views) {
        Map<String, Integer> perDevice = new HashMap<>();
        Map<DeviceKey, Integer> perDeviceKey = new HashMap<>();
        for (QueueView v : views) {
            Track t = tracks.get(v.handle());
            perDevice.merge(t.device, 1, SUM);
            perDeviceKey.merge(new DeviceKey(t.device, t.key), 1, SUM);
        }
        Map<Long, Integer> yieldedToIt = new HashMap<>();
        for (Track o : tracks.values()) {
            for (long h : o.yieldedTo) {
                Track t = tracks.get(h);
                if (t != null && t.device.equals(o.device) && !t.key.equals(o.key)) {
                    yieldedToIt.merge(h, 1, SUM);
                }
            }
        }
        Set<Long> on = null;
        for (QueueView q : views) {
            Track t = tracks.get(q.handle());
            int company = perDevice.get(t.device) - perDeviceKey.get(new DeviceKey(t.device, t.key));
            if (!t.yielded && company > 0 && yieldedToIt.getOrDefault(q.handle(), 0) == company) {
                if (on == null) {
                    on = new HashSet<>(4);
                }
                on.add(q.handle());
            }
        }
        return on == null ? Set.of() : Set.copyOf(on);
    }

    private static boolean held(QueueView v, Map<Long, Boolean> decided) {
        Boolean d = decided.get(v.handle());
        return d != null ? d : v.suspended(); // decided: true = suspend (ActionRecorder)
    }
}
