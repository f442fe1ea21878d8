package dev.xq.policy.fixedpriority;

/**
 * A process's CPU scheduling priority as Linux reports it in {@code /proc/<pid>/stat}.
 *
 * @param nice the nice value, -20 to 19 (field 19)
 * @param policy the scheduling policy (field 41): 0 SCHED_OTHER, 1 SCHED_FIFO, 2 SCHED_RR,
 *        3 SCHED_BATCH, 5 SCHED_IDLE, 6 SCHED_DEADLINE
 * @param rtPriority the real-time priority, 1 to 99 under SCHED_FIFO and SCHED_RR, else 0 (field 40)
 */
record CpuPriority(int nice, int policy, int rtPriority) {

    static final int SCHED_OTHER = 0;
    static final int SCHED_FIFO = 1;
    static final int SCHED_RR = 2;
    static final int SCHED_IDLE = 5;
    static final int SCHED_DEADLINE = 6;

    /** Real-time processes rank at this plus their rt_priority, above every nice value. */
    static final int REAL_TIME_BASE = 1000;

    /** Fields of /proc/<pid>/stat (counted from 1) that the policy uses. */
    private static final int NICE_FIELD = 19;
    private static final int RT_PRIORITY_FIELD = 40;
    private static final int POLICY_FIELD = 41;
    /** The first field after the command, the state. */
    private static final int FIRST_FIELD_AFTER_COMMAND = 3;

    CpuPriority {
        if (nice < -20 || nice > 19) {
            throw new IllegalArgumentException("nice " + nice + " is out of range [-20, 19]");
        }
        if (policy < 0) {
            throw new IllegalArgumentException("scheduling policy " + policy + " is negative");
        }
        if (rtPriority < 0 || rtPriority > 99) {
            throw new IllegalArgumentException("rt_priority " + rtPriority + " is out of range [0, 99]");
        }
    }

    /**
     * The queue priority this process's queues get: {@code -nice} (nice -20 is 20, the highest;
     * 19 is -19); under SCHED_FIFO or SCHED_RR {@code 1000 + rt_priority}, above every
     * non-real-time process; under SCHED_DEADLINE (which Linux runs before every real-time
     * task) {@code 1100}; under SCHED_IDLE (below every nice value) {@code -20}.
     */
    int rank() {
        return switch (policy) {
            case SCHED_FIFO, SCHED_RR -> REAL_TIME_BASE + rtPriority;
            case SCHED_DEADLINE -> REAL_TIME_BASE + 100;
            case SCHED_IDLE -> -20;
            default -> -nice;
        };
    }

    /**
     * Parses the text of {@code /proc/<pid>/stat}. The command (field 2) is in parentheses and
     * may itself contain spaces and parentheses, so fields are counted from the last {@code ')'}.
     * Kernels before 2.5.19 have no fields 40 and 41; their processes are taken as SCHED_OTHER.
     *
     * @throws IllegalArgumentException saying what is wrong with the text
     */
    static CpuPriority parse(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("no ')' ends the command field");
        }
        String rest = stat.substring(close + 1).strip();
        String[] f = rest.isEmpty() ? new String[0] : rest.split("\\s+");
        int nice = field(f, NICE_FIELD);
        boolean hasPolicy = f.length > POLICY_FIELD - FIRST_FIELD_AFTER_COMMAND;
        int rt = hasPolicy ? field(f, RT_PRIORITY_FIELD) : 0;
        int policy = hasPolicy ? field(f, POLICY_FIELD) : SCHED_OTHER;
        return new CpuPriority(nice, policy, rt);
    }

    private static int field(String[] f, int number) {
        int i = number - FIRST_FIELD_AFTER_COMMAND;
        if (i >= f.length) {
            throw new IllegalArgumentException("only " + (f.length + FIRST_FIELD_AFTER_COMMAND - 1) + " fields, no field " + number);
        }
        try {
            return Integer.parseInt(f[i]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("field " + number + " '" + f[i] + "' is not an integer");
        }
    }
}
