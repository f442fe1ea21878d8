package dev.xq.policy.edf;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Knobs of policy {@code edf} (PID {@value EarliestDeadlineFirst#PID}). */
@ObjectClassDefinition(id = EarliestDeadlineFirst.PID, name = "XQ policy edf",
        description = "Earliest deadline first: on each device the ready queue with the earliest deadline runs.")
public @interface EdfConfig {

    /** @return whether queues that can no longer meet their deadline go behind those that can */
    @AttributeDefinition(name = "Demote hopeless queues",
            description = "When true (default), a queue whose remaining work (pending and in-flight commands x its measured "
                    + "command time) cannot end by its deadline, even with only the earlier-deadline queues that can still "
                    + "make theirs ahead of it, runs after every queue that can still make its deadline. This keeps one "
                    + "missed deadline from dragging later ones past theirs in a burst (fewer misses, longer tails for the "
                    + "missed). False gives textbook EDF.")
    boolean edf_demote_hopeless() default true;
}
