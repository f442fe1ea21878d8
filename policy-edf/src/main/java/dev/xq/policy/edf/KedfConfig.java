package dev.xq.policy.edf;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Knobs of policy {@code kedf} (PID {@value KEarliestDeadlineFirst#PID}). */
@ObjectClassDefinition(id = KEarliestDeadlineFirst.PID, name = "XQ policy kedf",
        description = "K earliest deadlines first: on each device the kedf.k ready queues with the earliest deadlines run together.")
public @interface KedfConfig {

    /** @return how many queues run at once per device */
    @AttributeDefinition(name = "K", min = "1", max = "4096",
            description = "How many ready queues with the earliest deadlines run at once on each device; 1 to 4096.")
    int kedf_k() default KEarliestDeadlineFirst.DEFAULT_K;

    /** @return whether queues that can no longer meet their deadline go behind those that can */
    @AttributeDefinition(name = "Demote hopeless queues",
            description = "When true (default), a queue whose remaining work cannot end by its deadline, even with only the "
                    + "earlier-deadline queues that can still make theirs ahead of it, ranks after every queue that can "
                    + "still make its deadline (the device's work is added up as if it ran one queue at a time). False "
                    + "gives textbook K-EDF.")
    boolean kedf_demote_hopeless() default true;
}
