package dev.xq.runtime.scheduler;

import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Map;

/**
 * When a policy the watchdog set aside decides again. A registration set aside (it threw or ran
 * past its deadline) is retried after a back-off: 1 s after its first trip, doubled at every trip
 * that follows (up to 60 s), started again at 1 s once the policy has decided for 60 s after a
 * retry without being set aside. A node never stays "selected X, active native" for good without
 * an operator: X is tried again, and the log says so each time. An operator's selection of the
 * name forgets the back-off; so does a new registration.
 *
 * <p>A retried policy decides on the scheduler's thread only until its clean period is over
 * (even one registered as bounded): a retry must not be how a policy that blocked gets an
 * application's or a driver's thread. A registration whose abandoned decision is still inside it
 * (a thread Java cannot pull out of a loop) is not retried: that would leave one more thread
 * there at every retry; its retry is put off, with the back-off growing as for a trip.
 *
 * <p>Not thread-safe: {@link PolicySelection} guards it with its monitor.
 */
final class RetryBackoff {

    /** The wait before the first retry. */
    static final long FIRST_NANOS = 1_000_000_000L;
    /** The longest wait before a retry. */
    static final long MAX_NANOS = 60_000_000_000L;
    /** How long a retried policy decides without a trip before its back-off starts again at {@link #FIRST_NANOS}. */
    static final long CLEAN_NANOS = 60_000_000_000L;

    /** The back-off of one registration. */
    static final class Entry {
        final String name;
        String reason;
        long delayNanos;
        long retryAtNanos;
        long trippedAtMillis;
        int trips;
        /** The decision the watchdog took away (its thread may still be inside the policy); null when it threw. */
        Watchdog.InProgress inside;
        /** Whether it was retried since its last trip (then it decides, on probation until the clean period is over). */
        boolean retried;
        long retriedAtNanos;

        Entry(String name) {
            this.name = name;
        }

        /** "retried in 2 s", from {@code now}. */
        String retryText(long now) {
            String in = inText(retryAtNanos - now);
            return !stillInside() ? "retried " + in
                    : "retried " + in + " if the thread of its abandoned decision (" + ThreadClock.name(inside.threadId())
                            + ") has left it by then";
        }

        /** Whether the thread of the decision taken away has not come out of the policy yet. */
        boolean stillInside() {
            return inside != null && !inside.left().get();
        }

        /** "set aside at 12:00:01": the wall-clock time of the last trip. */
        String atText() {
            return "set aside at " + HH_MM_SS.format(LocalTime.ofInstant(Instant.ofEpochMilli(trippedAtMillis), ZoneId.systemDefault()));
        }
    }

    private static final DateTimeFormatter HH_MM_SS = DateTimeFormatter.ofPattern("HH:mm:ss");

    private final Map<Long, Entry> byId = new HashMap<>();

    /**
     * A registration was set aside: the first trip waits {@link #FIRST_NANOS}, each further one
     * (without a clean period between) twice the last wait, up to {@link #MAX_NANOS}.
     * @param inside the decision taken away while its thread stays inside the policy; null when it threw
     */
    Entry tripped(PolicyRegistry.Registered r, String reason, Watchdog.InProgress inside, long now) {
        Entry e = byId.get(r.id());
        if (e == null) {
            e = new Entry(r.name());
            e.delayNanos = FIRST_NANOS;
            byId.put(r.id(), e);
        } else {
            e.delayNanos = Math.min(MAX_NANOS, e.delayNanos * 2);
        }
        e.reason = reason;
        e.trips++;
        e.trippedAtMillis = System.currentTimeMillis();
        e.retryAtNanos = now + e.delayNanos;
        e.inside = inside;
        e.retried = false;
        return e;
    }

    /** The retry found the abandoned decision still inside the policy: tried again after a longer wait. */
    void putOff(Entry e, long now) {
        e.delayNanos = Math.min(MAX_NANOS, e.delayNanos * 2);
        e.retryAtNanos = now + e.delayNanos;
    }

    Entry get(long id) {
        return byId.get(id);
    }

    void remove(long id) {
        byId.remove(id);
    }

    boolean isEmpty() {
        return byId.isEmpty();
    }

    /** @return the earliest retry due among the registrations of {@code name} still set aside; Long.MAX_VALUE for none */
    long nextRetry(String name) {
        long next = Long.MAX_VALUE;
        boolean any = false;
        for (Entry e : byId.values()) {
            if (!e.retried && e.name.equals(name) && (!any || e.retryAtNanos - next < 0)) {
                next = e.retryAtNanos;
                any = true;
            }
        }
        return next;
    }

    /** "in 2 s" (rounded up), "now" when due. */
    static String inText(long nanos) {
        return nanos <= 0 ? "now" : "in " + (nanos + 999_999_999L) / 1_000_000_000L + " s";
    }
}
