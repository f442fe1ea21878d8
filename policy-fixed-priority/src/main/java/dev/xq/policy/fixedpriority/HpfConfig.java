package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.SpaceRule;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Knobs of policy {@code hpf} (PID {@value HighestPriorityFirst#PID}): how it decides space beside time. */
@ObjectClassDefinition(id = HighestPriorityFirst.PID, name = "XQ policy hpf",
        description = "Highest priority first, deciding space and time together for queues that can be narrowed (processes "
                + "under the node's MPS server, CUDA 12.4+): behind a higher-priority queue such a queue runs on the device "
                + "less what the higher one's launches fill (at most half), instead of stopping (docs/processes.md, Narrowing).")
public @interface HpfConfig {

    /** @return whether short commands are held in time behind a busy higher-priority queue wider than half the device */
    @AttributeDefinition(name = "Hold behind wide queues",
            description = "A narrowable queue of short commands (under 1 ms on average) is held in time, not narrowed, while a "
                    + "higher-priority queue with work could fill more than half the device (a CUDA graph, a large batch): "
                    + "narrowed to half, such a tenant runs on half the device. Off: always narrowed.")
    boolean holdBehindWide() default SpaceRule.DEFAULT_HOLD_BEHIND_WIDE;
}
