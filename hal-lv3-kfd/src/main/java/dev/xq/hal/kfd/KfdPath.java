package dev.xq.hal.kfd;

/** Which way of stopping a queue a {@code /dev/kfd} offers, as found by {@link KfdDevice#probe()}. */
public enum KfdPath {
    /** KFD 1.13+ debugger API: DBG_TRAP SUSPEND_QUEUES / RESUME_QUEUES (CWSR where enabled). */
    DEBUGGER,
    /** The undocumented patched-driver PREEMPT_QUEUE / RESUME_QUEUE ioctls answered something other than EINVAL. */
    PATCHED,
    /** Neither: only GET_VERSION (and snapshots, if the debugger API exists without the runtime) work. */
    NONE
}
