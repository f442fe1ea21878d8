package dev.xq.policy.fixedpriority;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/** Knobs of policy {@code hhpf} (PID {@value HeterogeneousHighestPriorityFirst#PID}). */
@ObjectClassDefinition(id = HeterogeneousHighestPriorityFirst.PID, name = "XQ policy hhpf",
        description = "Heterogeneous highest priority first: one priority order for the whole node. A group's (process's, "
                + "tenant's) queues on every device rank at the group's priority, the highest priority hint among its queues "
                + "on any device; per device the ready queues of the top-ranked groups run, the rest wait.")
public @interface HhpfConfig {

    /** @return which of a group's queues make up its priority */
    @AttributeDefinition(name = "Group priority from", options = {
            @Option(label = "all of the group's open queues", value = HhpfSettings.ALL),
            @Option(label = "the group's queues that have work", value = HhpfSettings.READY)},
            description = "all: a group's priority is the highest hint among all its open queues on any device, so it does not "
                    + "change when queues go idle; ready: among its queues that have work (and that the application does not "
                    + "hold), so a group ranks high on every device only while its high-priority work is ready somewhere. "
                    + "One of all, ready.")
    String hhpf_group_priority() default HhpfSettings.ALL;
}
