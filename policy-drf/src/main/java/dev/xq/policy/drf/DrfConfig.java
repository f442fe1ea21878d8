package dev.xq.policy.drf;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Knobs of policy {@code drf} (PID {@value DominantResourceFairness#PID}). */
@ObjectClassDefinition(id = DominantResourceFairness.PID, name = "XQ policy drf",
        description = "Dominant resource fairness over the engines and memory of each device: tenants (queue groups) get "
                + "tasks (queues) by progressive filling, lowest weighted dominant share first.")
public @interface DrfConfig {

    /** @return tenant weights, {@code name=weight} pairs separated by commas */
    @AttributeDefinition(name = "Weights",
            description = "Tenant weights as name=weight pairs separated by commas, e.g. A=1,B=2; weights in (0, 1000000]; "
                    + "tenants not named weigh 1. A tenant's dominant share is divided by its weight.")
    String drf_weights() default "";

    /** @return engines a queue without a Demand hint occupies */
    @AttributeDefinition(name = "Default engines", min = "0", max = "1000000",
            description = "Engines one task of a queue without a demand hint occupies (and no memory); 0 to 1000000.")
    int drf_default_engines() default DrfSettings.DEFAULT_ENGINES;
}
