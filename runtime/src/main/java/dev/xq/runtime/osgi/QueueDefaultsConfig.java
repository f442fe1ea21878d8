package dev.xq.runtime.osgi;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(id = "dev.xq.queue.defaults", name = "XQ queue defaults",
        description = "How new XQueues launch work when the application does not say")
public @interface QueueDefaultsConfig {

    @AttributeDefinition(name = "Preemption level", min = "1", max = "3",
            description = "Highest level to use: 1 block launching, 2 also deactivate, 3 also interrupt; capped by the hardware")
    int level() default 3;

    @AttributeDefinition(name = "Threshold", min = "1", max = "1048576", description = "Most commands in flight per queue")
    int threshold() default 16;

    @AttributeDefinition(name = "Batch", min = "1", description = "After reaching the threshold, launch again once this many have completed")
    int batch() default 8;

    @AttributeDefinition(name = "Window (us)", min = "0", max = "60000000",
            description = "Time budget: keep the estimated device time in flight under this; 0 = off. Not applied at preemption "
                    + "level 3: a suspend there stops the launched work, and the threshold alone bounds it")
    long windowMicros() default 300;
}
