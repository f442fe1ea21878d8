package dev.xq.hal.kfd;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/** Configuration of the {@code kfd} preemption provider (PID {@value #PID}). */
@ObjectClassDefinition(id = KfdConfig.PID, name = "XQ AMD KFD preemption provider",
        description = "Raises HIP queues to level 3 by suspending their KFD queues (debugger API, CWSR)")
public @interface KfdConfig {

    /** The configuration PID. */
    String PID = "dev.xq.hal.kfd";

    @AttributeDefinition(description = "KFD device file")
    String device() default "/dev/kfd";

    @AttributeDefinition(description = "Grace period before waves are saved, in microseconds; converted to KFD units"
            + " of about 1000 GPU clocks at an assumed 2.1 GHz (unverified); 0 lets KFD use its minimum", min = "0")
    int gracePeriodMicros() default 100;

    @AttributeDefinition(description = "Minimum time between two suspends on this device, in microseconds: each"
            + " suspend unmaps every user queue of the GPU, and a preemption timeout resets the GPU", min = "0")
    int minSuspendIntervalMicros() default 2000;

    @AttributeDefinition(description = "auto: debugger API, else patched ioctls; cwsr: debugger API only;"
            + " preempt: patched ioctls only; logical: never suspend, only read pending work",
            options = {@Option(value = "auto"), @Option(value = "cwsr"), @Option(value = "preempt"),
                @Option(value = "logical")})
    String mode() default "auto";
}
