package dev.xq.policy.fixedpriority;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/** Knobs of policy {@code mlfq} (PID {@value MultiLevelFeedback#PID}). */
@ObjectClassDefinition(id = MultiLevelFeedback.PID, name = "XQ policy mlfq",
        description = "Multi-level feedback queue: queues start on the top level; a queue that uses its level's slice of device "
                + "time sinks one level; per device the ready queues on the highest occupied level run; every "
                + "mlfq.boost.period queues return to the top (mlfq.boost.scope: those without work and those kept waiting a whole period, "
                + "or all). Priority hints are ignored.")
public @interface MlfqConfig {

    /** @return the number of levels */
    @AttributeDefinition(name = "Levels", min = "1", max = "16",
            description = "Number of levels, the top one included; 1 to 16 (1: all queues always run together).")
    int mlfq_levels() default MlfqSettings.DEFAULT_LEVELS;

    /** @return the top level's slice in microseconds */
    @AttributeDefinition(name = "Top slice (us)", min = "100", max = "10000000",
            description = "Device time in microseconds a queue may use on the top level before it sinks one level; 100 to 10000000.")
    long mlfq_slice() default MlfqSettings.DEFAULT_SLICE_MICROS;

    /** @return how much longer each level's slice is than the one above */
    @AttributeDefinition(name = "Slice growth per level", min = "1", max = "16",
            description = "Each level's slice is this many times the slice of the level above (level n: mlfq.slice * growth^n); "
                    + "1 to 16, and the lowest level's slice at most 3600000000 us.")
    int mlfq_slice_growth() default MlfqSettings.DEFAULT_GROWTH;

    /** @return the boost period in microseconds */
    @AttributeDefinition(name = "Boost period (us)", min = "101", max = "3600000000",
            description = "Every this many microseconds queues return to the top level (which ones: mlfq.boost.scope) and all "
                    + "queues' used time is cleared "
                    + "(anti-starvation: no ready queue waits much longer than this); longer than mlfq.slice, at most 3600000000.")
    long mlfq_boost_period() default MlfqSettings.DEFAULT_BOOST_PERIOD_MICROS;

    /** @return which queues a boost lifts */
    @AttributeDefinition(name = "Boost scope",
            description = "Which queues return to the top: waiting (the default): a boost lifts the queues without work (idle, or "
                    + "held by their application) and leaves a queue with work where it is, and a queue kept waiting is lifted by "
                    + "its own timer once it has waited a whole mlfq.boost.period at a stretch, so that long-running work is not "
                    + "lifted beside short work just because a boost fell within a short burst; all: a boost lifts every queue "
                    + "(textbook MLFQ). Used time is cleared for all either way; no ready queue waits longer than "
                    + "mlfq.boost.period under both.",
            options = {@Option(label = "waiting: queues without work now, queues kept waiting a whole period", value = "waiting"),
                       @Option(label = "all: every queue (textbook MLFQ)", value = "all")})
    String mlfq_boost_scope() default MlfqSettings.DEFAULT_BOOST_SCOPE;
}
