package dev.xq.policy.fixedpriority;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Knobs of policy {@code hpf-aging} (PID {@value AgingHighestPriorityFirst#PID}).
 *
 * <p>Waiting bound: with a queue of priority p_hi always ready, a ready queue of priority
 * p_lo waits at most {@code aging.threshold + (p_hi - p_lo + 1) / aging.rate} ms, plus the
 * in-flight work of the running queues (preemption level 1: the commands already launched),
 * before it runs; it then runs for {@code aging.quantum} and waits again. If a newly ready higher
 * queue cut its last quantum short, add at most one quantum.
 */
@ObjectClassDefinition(id = AgingHighestPriorityFirst.PID, name = "XQ policy hpf-aging",
        description = "Highest priority first with anti-starvation aging. A ready queue that has waited longer than "
                + "aging.threshold gains aging.rate priority levels per ms of further waiting until it reaches the "
                + "device's top ready priority and runs beside the top queues for aging.quantum; then it falls back. "
                + "Bound: a queue of priority p_lo next to an always-ready p_hi waits at most "
                + "aging.threshold + (p_hi - p_lo + 1) / aging.rate ms plus the work already in flight "
                + "(plus at most one aging.quantum if a newly ready higher queue cut its last quantum short).")
public @interface AgingConfig {

    /** @return microseconds a ready queue may wait before it starts to age */
    @AttributeDefinition(name = "Aging threshold (us)", min = "0", max = "3600000000",
            description = "Microseconds a ready, suspended queue waits before its priority starts to rise; 0 to 3600000000.")
    long aging_threshold() default AgingSettings.DEFAULT_THRESHOLD_MICROS;

    /** @return priority levels gained per millisecond of waiting beyond the threshold */
    @AttributeDefinition(name = "Aging rate (levels per ms)", type = AttributeType.DOUBLE, min = "0.000001", max = "1000000",
            description = "Priority levels a waiting queue gains per ms after the threshold; greater than 0, at most 1000000.")
    double aging_rate() default AgingSettings.DEFAULT_RATE_PER_MS;

    /** @return microseconds an aged queue runs before its priority falls back */
    @AttributeDefinition(name = "Aging quantum (us)", min = "1", max = "3600000000",
            description = "Microseconds an aged queue keeps its raised priority after it was resumed; 1 to 3600000000.")
    long aging_quantum() default AgingSettings.DEFAULT_QUANTUM_MICROS;
}
