package dev.xq.http;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Keeps a local user whose changes over HTTP are refused often waiting for its next refusals
 * (issue 41, the connection flood). Its client POSTed on each of its 64 places, got the 403 at
 * once and reopened: 220-290 refusals a second on the 2-vCPU VM, each an accept, a kernel query
 * for the peer's user and an answer, which the tenants beside paid for (node 7-13 % of a CPU). A
 * user refused more than {@value #FREE_PER_SECOND} times in the last second gets each further
 * refusal after {@code delay}: the request's thread (a virtual one) sleeps, holding one of that
 * user's connections and nothing else. Other users, and a user refused now and then (a wrong
 * token typed), are answered at once.
 *
 * <p>Thread-safe.
 */
final class RefusalPacer {

    /** Refusals a user gets at once within a second. */
    static final int FREE_PER_SECOND = 10;
    private static final long SECOND = 1_000_000_000L;
    /** Users tracked at most (beyond it the oldest are forgotten: a user is a uid, so few exist). */
    private static final int MAX_USERS = 1024;

    private final long delayNanos;
    private final LongSupplier nanoTime;
    private final Map<Integer, ArrayDeque<Long>> recent = new HashMap<>();

    RefusalPacer(long delayNanos, LongSupplier nanoTime) {
        this.delayNanos = delayNanos;
        this.nanoTime = nanoTime;
    }

    /** Counts a refusal of {@code uid}. @return how long to wait before answering it, ns (0: at once) */
    long refused(int uid) {
        if (delayNanos <= 0) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        synchronized (recent) {
            ArrayDeque<Long> times = recent.get(uid);
            if (times == null) {
                if (recent.size() >= MAX_USERS) {
                    recent.clear();
                }
                times = new ArrayDeque<>(FREE_PER_SECOND + 1);
                recent.put(uid, times);
            }
            while (!times.isEmpty() && now - times.peekFirst() >= SECOND) {
                times.pollFirst();
            }
            boolean often = times.size() >= FREE_PER_SECOND;
            if (!often) {
                times.addLast(now);
            }
            return often ? delayNanos : 0;
        }
    }
}
