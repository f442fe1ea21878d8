package dev.xq.policy.testkit;

import dev.xq.policy.spi.SchedulerActions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Records what a policy asked for, in order. */
public final class RecordingActions implements SchedulerActions {

    public final List<String> log = new ArrayList<>();
    public final Map<Long, Boolean> resumed = new HashMap<>();
    public final Map<Long, Integer> decisions = new HashMap<>();
    /** The queues narrowed ({@link SchedulerActions#narrow}) and what each leaves to others. */
    public final Map<Long, Integer> narrowed = new HashMap<>();
    public Long wake;

    @Override
    public void suspend(long handle) {
        log.add("suspend " + handle);
        resumed.put(handle, false);
        narrowed.remove(handle);
        decisions.merge(handle, 1, Integer::sum);
    }

    @Override
    public void resume(long handle) {
        log.add("resume " + handle);
        resumed.put(handle, true);
        narrowed.remove(handle);
        decisions.merge(handle, 1, Integer::sum);
    }

    /** A narrowed queue runs beside the preferred ones: {@link #runs} says true for it. */
    @Override
    public void narrow(long handle, int leaveSms) {
        log.add("narrow " + handle + " " + leaveSms);
        resumed.put(handle, true);
        narrowed.put(handle, leaveSms);
        decisions.merge(handle, 1, Integer::sum);
    }

    /** @return what the queue was narrowed to leave, or null when it was held or runs on the whole device */
    public Integer leaves(long handle) {
        return narrowed.get(handle);
    }

    @Override
    public void wakeAt(long nanos) {
        log.add("wake " + nanos);
        wake = wake == null ? nanos : Math.min(wake, nanos);
    }

    public boolean runs(long handle) {
        Boolean r = resumed.get(handle);
        if (r == null) {
            throw new AssertionError("policy said nothing about queue " + handle + "; actions: " + log);
        }
        return r;
    }

    /** @return the handles resumed, in the order of the log */
    public List<Long> running() {
        List<Long> out = new ArrayList<>();
        for (String s : log) {
            if (s.startsWith("resume ")) {
                out.add(Long.parseLong(s.substring(7)));
            }
        }
        return out;
    }
}
