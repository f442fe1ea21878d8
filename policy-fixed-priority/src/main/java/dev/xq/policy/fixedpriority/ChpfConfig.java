package dev.xq.policy.fixedpriority;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Knobs of policy {@code chpf} (PID {@value CpuHighestPriorityFirst#PID}). */
@ObjectClassDefinition(id = CpuHighestPriorityFirst.PID, name = "XQ policy chpf",
        description = "Highest priority first where a process queue's priority follows its process's CPU scheduling priority: "
                + "-nice (nice -20 is 20, nice 19 is -19), and SCHED_FIFO/SCHED_RR processes above every other (1000 + rt_priority). "
                + "Queues that belong to no process, or whose process cannot be read, use their priority hint. "
                + "Per device the ready queues at the top priority run, the rest wait.")
public @interface ChpfConfig {

    /** @return how long a process's CPU priority is kept before /proc is read again, in microseconds */
    @AttributeDefinition(name = "Refresh period (us)", min = "1000", max = "3600000000",
            description = "Microseconds a process's CPU priority, once read from /proc/<pid>/stat, is used before it is read "
                    + "again (a renice takes effect within this time); 1000 to 3600000000.")
    long chpf_refresh() default ChpfSettings.DEFAULT_REFRESH_MICROS;
}
