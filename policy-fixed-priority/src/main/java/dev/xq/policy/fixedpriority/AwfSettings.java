package dev.xq.policy.fixedpriority;

/**
 * Checked values of {@link AwfConfig}, in the units the decision uses.
 *
 * @param order how queues are ordered within the active window's groups and among the others
 * @param guardWaitNanos how long a ready queue may be held back at a stretch before the guard
 *        lets it run; 0 = no guard
 * @param guardRunNanos how long the guard then lets it run
 */
record AwfSettings(Order order, long guardWaitNanos, long guardRunNanos) {

    /** How the policy orders queues besides "active window first". */
    enum Order {
        /** By priority hint within the active window's groups and among the others (as {@code hpf}). */
        PRIORITY("priority"),
        /** Hints not read: the active window's ready queues run together, the others together when it has none (XSched's AWF). */
        TOGETHER("together");

        final String word;

        Order(String word) {
            this.word = word;
        }

        /**
         * @throws IllegalArgumentException naming the value and the allowed ones
         */
        static Order of(String word) {
            for (Order o : values()) {
                if (o.word.equals(word)) {
                    return o;
                }
            }
            throw new IllegalArgumentException("awf.order '" + word + "' is not allowed; allowed: priority, together");
        }
    }

    static final String DEFAULT_ORDER = "priority";
    static final long DEFAULT_GUARD_WAIT_MICROS = 0;
    static final long DEFAULT_GUARD_RUN_MICROS = 10_000;
    static final long MIN_GUARD_MICROS = 100;
    static final long MAX_MICROS = 3_600_000_000L;

    static final AwfSettings DEFAULTS = of(Order.of(DEFAULT_ORDER), DEFAULT_GUARD_WAIT_MICROS, DEFAULT_GUARD_RUN_MICROS);

    /**
     * @throws IllegalArgumentException naming the first bad value and what is allowed
     */
    static AwfSettings of(Order order, long guardWaitMicros, long guardRunMicros) {
        if (order == null) {
            throw new IllegalArgumentException("awf.order is missing; allowed: priority, together");
        }
        if (guardWaitMicros != 0 && (guardWaitMicros < MIN_GUARD_MICROS || guardWaitMicros > MAX_MICROS)) {
            throw new IllegalArgumentException("awf.guard.wait " + guardWaitMicros + " us is out of range; allowed: 0 (no guard) or ["
                    + MIN_GUARD_MICROS + ", " + MAX_MICROS + "] us");
        }
        if (guardRunMicros < MIN_GUARD_MICROS || guardRunMicros > MAX_MICROS) {
            throw new IllegalArgumentException("awf.guard.run " + guardRunMicros + " us is out of range [" + MIN_GUARD_MICROS + ", "
                    + MAX_MICROS + "] us");
        }
        return new AwfSettings(order, guardWaitMicros * 1000, guardRunMicros * 1000);
    }

    static AwfSettings from(AwfConfig config) {
        return of(Order.of(config.awf_order()), config.awf_guard_wait(), config.awf_guard_run());
    }

    /** @return whether the starvation guard is on */
    boolean guarded() {
        return guardWaitNanos > 0;
    }

    @Override
    public String toString() {
        return "awf.order=" + order.word + " awf.guard.wait=" + guardWaitNanos / 1000 + "us awf.guard.run=" + guardRunNanos / 1000 + "us";
    }
}
