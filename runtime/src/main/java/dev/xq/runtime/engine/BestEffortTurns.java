package dev.xq.runtime.engine;

import dev.xq.policy.spi.SchedulerActions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns in time among best-effort processes on one device: of the narrowable processes with work
 * on a device, one at a time runs (on what the policy leaves it: the whole device, or the device
 * less a preferred queue's reserve), the others are held, and the turn passes on after a slice or
 * as soon as its holder has had nothing to do for {@value #PASS_IDLE_NANOS} ns.
 *
 * <p>Why turns and not a split in space: under MPS two best-effort processes on the whole device
 * fight over the multiprocessors and the one with long kernels wins (training beside 21 ms GEMMs at
 * 0.12 of native sharing, Triton at 0.21, H200); split in equal halves they are fair in space and
 * not in time, and a long-kernel tenant whose kernels must fit the gaps of a wide tenant's
 * requests fits one kernel per gap on its half (GEMMs at 0.51-0.53 of native sharing beside Triton
 * at 1.37-1.43). Native sharing time-slices whole contexts; turns do the same among the
 * best-effort processes, and the next one starts while the last one's commands drain (under MPS
 * they overlap), so a switch costs no idle device.
 *
 * <p>Not thread-safe: the deciding thread's ({@link XqCore#policyDecided}).
 */
final class BestEffortTurns {

    /** The shortest turn. */
    static final long SLICE_NANOS = 50_000_000L;
    /** The longest turn: a process whose commands are longer than a quarter of it is not held for more. */
    static final long MAX_SLICE_NANOS = 400_000_000L;
    /** How long a turn's holder may have nothing to do (a host-side step) before the turn passes on. */
    static final long PASS_IDLE_NANOS = 2_000_000L;
    /** How long a process that had work still counts as having work (a training loop between steps). */
    static final long LINGER_NANOS = 100_000_000L;

    /** One queue of a narrowable process, as the decision saw it. */
    record Entry(long pid, String device, long handle, boolean busy, long commandNanos) {
    }

    private static final class Turn {
        long holder;
        long since;
        long idleSince;
    }

    private final Map<String, Turn> turns = new HashMap<>();
    /** When each pid last had a busy queue. */
    private final Map<Long, Long> lastBusy = new HashMap<>();
    private long passes;

    /**
     * Holds the queues of every process whose turn it is not, on each device where more than one
     * has work, and asks for a decision when the turn ends.
     *
     * @return the pids whose turn it is (one per device with turns), for the parts
     */
    Map<String, Long> decide(long now, List<Entry> entries, SchedulerActions actions) {
        Map<String, TreeMap<Long, List<Entry>>> byDevice = new HashMap<>();
        Map<Long, Boolean> busyNow = new HashMap<>();
        for (Entry e : entries) {
            byDevice.computeIfAbsent(e.device(), d -> new TreeMap<>()).computeIfAbsent(e.pid(), p -> new ArrayList<>()).add(e);
            if (e.busy()) {
                lastBusy.put(e.pid(), now);
                busyNow.put(e.pid(), Boolean.TRUE);
            }
        }
        Map<String, Long> holders = new HashMap<>();
        for (Map.Entry<String, TreeMap<Long, List<Entry>>> d : byDevice.entrySet()) {
            List<Long> active = new ArrayList<>();
            for (Long pid : d.getValue().keySet()) {
                Long last = lastBusy.get(pid);
                if (last != null && now - last < LINGER_NANOS) {
                    active.add(pid);
                }
            }
            if (active.size() < 2) {
                turns.remove(d.getKey());
                continue;
            }
            Turn t = turns.get(d.getKey());
            if (t == null) {
                t = new Turn();
                turns.put(d.getKey(), t);
                t.holder = first(active, busyNow);
                t.since = now;
            } else if (!active.contains(t.holder)) {
                pass(t, active, busyNow, now);
            } else {
                long slice = slice(d.getValue().get(t.holder));
                boolean holderBusy = busyNow.containsKey(t.holder);
                if (holderBusy) {
                    t.idleSince = 0;
                } else if (t.idleSince == 0) {
                    t.idleSince = now;
                }
                boolean othersWait = false;
                for (Long pid : active) {
                    othersWait |= pid.longValue() != t.holder && busyNow.containsKey(pid);
                }
                if (othersWait && (now - t.since >= slice || (t.idleSince != 0 && now - t.idleSince >= PASS_IDLE_NANOS))) {
                    pass(t, active, busyNow, now);
                }
            }
            holders.put(d.getKey(), t.holder);
            for (Map.Entry<Long, List<Entry>> p : d.getValue().entrySet()) {
                if (p.getKey() != t.holder) {
                    for (Entry e : p.getValue()) {
                        actions.suspend(e.handle());
                    }
                }
            }
            actions.wakeAt(t.since + slice(d.getValue().get(t.holder)));
            if (t.idleSince != 0) {
                actions.wakeAt(t.idleSince + PASS_IDLE_NANOS);
            }
        }
        turns.keySet().retainAll(byDevice.keySet());
        if (lastBusy.size() > 4 * entries.size() + 64) {
            lastBusy.values().removeIf(at -> now - at >= LINGER_NANOS);
        }
        return holders;
    }

    /** @return how many times a turn passed on (for the trace) */
    long passes() {
        return passes;
    }

    /** The turn goes to the next process after its holder, in pid order, that has work now (else the next one). */
    private void pass(Turn t, List<Long> active, Map<Long, Boolean> busyNow, long now) {
        Long next = null;
        Long anyNext = null;
        int n = active.size();
        int from = 0;
        for (int i = 0; i < n; i++) {
            if (active.get(i) > t.holder) {
                from = i;
                break;
            }
            from = (i + 1) % n;
        }
        for (int k = 0; k < n; k++) {
            long pid = active.get((from + k) % n);
            if (pid == t.holder) {
                continue;
            }
            if (anyNext == null) {
                anyNext = pid;
            }
            if (busyNow.containsKey(pid)) {
                next = pid;
                break;
            }
        }
        Long to = next != null ? next : anyNext;
        if (to != null && to != t.holder) {
            t.holder = to;
            passes++;
        }
        t.since = now;
        t.idleSince = 0;
    }

    private static long first(List<Long> active, Map<Long, Boolean> busyNow) {
        for (Long pid : active) {
            if (busyNow.containsKey(pid)) {
                return pid;
            }
        }
        return active.get(0);
    }

    /** A turn: four of the holder's longest commands, at least {@link #SLICE_NANOS}, at most {@link #MAX_SLICE_NANOS}. */
    private static long slice(List<Entry> queues) {
        long longest = 0;
        if (queues != null) {
            for (Entry e : queues) {
                longest = Math.max(longest, e.commandNanos());
            }
        }
        return Math.min(MAX_SLICE_NANOS, Math.max(SLICE_NANOS, 4 * longest));
    }
}
