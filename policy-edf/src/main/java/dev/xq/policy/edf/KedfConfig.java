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
}
