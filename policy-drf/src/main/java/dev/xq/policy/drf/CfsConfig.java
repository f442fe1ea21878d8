package dev.xq.policy.drf;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Knobs of policy {@code cfs} (PID {@value CompletelyFair#PID}). */
@ObjectClassDefinition(id = CompletelyFair.PID, name = "XQ policy cfs",
        description = "Weighted fair share of device time by virtual runtime, as Linux's CFS: per device the ready queue that "
                + "has used the least device time per weight runs; weights on Linux's nice scale (nice = -priority hint, "
                + "nice 0 weighs 1024, each step about 1.25 times). A queue's turn lasts cfs.latency times its share of the "
                + "ready weight, at least cfs.min.granularity.")
public @interface CfsConfig {

    /** @return microseconds in which every ready queue of a device gets one turn */
    @AttributeDefinition(name = "Target latency (us)", min = "100", max = "10000000",
            description = "Microseconds in which each ready queue of a device runs once; a queue's turn is this times its weight "
                    + "over the ready queues' total weight; 100 to 10000000.")
    long cfs_latency() default CfsSettings.DEFAULT_LATENCY_MICROS;

    /** @return the shortest turn in microseconds */
    @AttributeDefinition(name = "Minimum granularity (us)", min = "100", max = "10000000",
            description = "Shortest turn a queue gets, however many queues are ready (fewer switches, each costing a "
                    + "preemption); 100 to cfs.latency.")
    long cfs_min_granularity() default CfsSettings.DEFAULT_MIN_GRANULARITY_MICROS;
}
