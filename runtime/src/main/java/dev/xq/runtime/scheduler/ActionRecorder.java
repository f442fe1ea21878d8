package dev.xq.runtime.scheduler;

import dev.xq.policy.spi.SchedulerActions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Collects one decision's actions; the last word on a queue wins; handles the view does not know are ignored. */
final class ActionRecorder implements SchedulerActions {
    final Map<Long, Boolean> decided = new LinkedHashMap<>();
    private final Set<Long> known;
    long wake = Long.MAX_VALUE;

    ActionRecorder(Set<Long> known) {
        this.known = known;
    }

    @Override
    public void suspend(long handle) {
        if (known.contains(handle)) {
            decided.put(handle, Boolean.TRUE);
        }
    }

    @Override
    public void resume(long handle) {
        if (known.contains(handle)) {
            decided.put(handle, Boolean.FALSE);
        }
    }

    @Override
    public void wakeAt(long nanos) {
        wake = Math.min(wake, nanos);
    }
}
