package dev.xq.policy.fixedpriority;

/**
 * Checked values of {@link HhpfConfig}.
 *
 * @param readyOnly whether a group's priority comes from its ready queues only ({@code ready})
 *        rather than from all its open queues ({@code all})
 */
record HhpfSettings(boolean readyOnly) {

    static final String ALL = "all";
    static final String READY = "ready";

    static final HhpfSettings DEFAULTS = of(ALL);

    /**
     * @throws IllegalArgumentException naming the bad value and what is allowed
     */
    static HhpfSettings of(String groupPriority) {
        if (ALL.equals(groupPriority)) {
            return new HhpfSettings(false);
        }
        if (READY.equals(groupPriority)) {
            return new HhpfSettings(true);
        }
        throw new IllegalArgumentException("hhpf.group.priority '" + groupPriority + "' is not one of " + ALL + ", " + READY);
    }

    static HhpfSettings from(HhpfConfig config) {
        return of(config.hhpf_group_priority());
    }

    @Override
    public String toString() {
        return "hhpf.group.priority=" + (readyOnly ? READY : ALL);
    }
}
