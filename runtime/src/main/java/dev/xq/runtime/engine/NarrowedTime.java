package dev.xq.runtime.engine;

import java.util.HashMap;
import java.util.Map;

/**
 * How much of the last seconds each best-effort process of short commands spent narrowed by a
 * latency-critical tenant's reserve, and the widest reserve it met: the region its rate alone was
 * measured on, on average ({@link XqCore}'s region weights). Short commands are narrowed off the
 * reserve only while the tenant works (held or narrowed), and run on the whole device between its
 * requests: beside a seldom-busy wide tenant that is nearly always the whole device, beside an
 * eager decoder busy half the time it is the region half the time. A time-weighted mean with a
 * time constant of {@link #TAU_NANOS}, fed at each decision pass with whether the process is
 * narrowed now; safe from any thread.
 */
final class NarrowedTime {

    /** The mean's time constant: about the balance's spell alone and a few of its rounds. */
    static final long TAU_NANOS = 2_000_000_000L;
    /** A process not seen for this long is forgotten. */
    static final long FORGET_NANOS = 10_000_000_000L;

    /** Per pid: {mean narrowed, last update (ns), narrowed since then (0/1), widest reserve seen while narrowed}. */
    private final Map<Long, double[]> byPid = new HashMap<>();

    /**
     * Records that process {@code pid} is narrowed now by a reserve of {@code reserve}
     * multiprocessors (0: not narrowed), the state it had since the last call counted up to now.
     */
    synchronized void observe(long pid, int reserve, long now) {
        double[] s = byPid.get(pid);
        if (s == null) {
            s = new double[] {reserve > 0 ? 1 : 0, now, reserve > 0 ? 1 : 0, Math.max(0, reserve)};
            byPid.put(pid, s);
        } else {
            long dt = now - (long) s[1];
            if (dt > 0) {
                double a = 1 - Math.exp(-(double) dt / TAU_NANOS);
                s[0] += a * (s[2] - s[0]);
                s[1] = now;
            }
            s[2] = reserve > 0 ? 1 : 0;
            if (reserve > 0) {
                s[3] = reserve;
            }
        }
        if (byPid.size() > 64) {
            byPid.values().removeIf(v -> now - (long) v[1] > FORGET_NANOS);
        }
    }

    /** @return the share of the last seconds process {@code pid} spent narrowed, in [0, 1] (0: never seen) */
    synchronized double fraction(long pid) {
        double[] s = byPid.get(pid);
        return s == null ? 0 : Math.max(0, Math.min(1, s[0]));
    }

    /** @return the reserve it last met while narrowed, 0 if never */
    synchronized int reserve(long pid) {
        double[] s = byPid.get(pid);
        return s == null ? 0 : (int) s[3];
    }

    synchronized void forget(long pid) {
        byPid.remove(pid);
    }

    /**
     * The share of the device process {@code pid}'s rate was measured on, on average: its region
     * (what the reserve leaves, {@code region} of {@code sms}) for the share of the time it was
     * narrowed, the whole device the rest.
     */
    double weight(long pid, int region, int sms) {
        if (sms <= 0 || region >= sms) {
            return 1;
        }
        return 1 - fraction(pid) * (1 - (double) region / sms);
    }
}
