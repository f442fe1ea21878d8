package dev.xq.policy.drf;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Knobs of policies {@code bandwidth} (PID {@value BandwidthPartition#PID}) and
 * {@code bandwidth-group} (PID {@value GroupBandwidthPartition#PID}); each PID has its own values.
 */
@ObjectClassDefinition(id = BandwidthPartition.PID, name = "XQ policy bandwidth / bandwidth-group",
        description = "Weighted time-slice partition: the ready queues (or groups) of a device take turns; in each round of "
                + "bandwidth.timeslice each gets a slice in proportion to its utilization hint.")
public @interface BandwidthConfig {

    /** @return the length of one round in microseconds */
    @AttributeDefinition(name = "Round length (us)", min = "100", max = "10000000",
            description = "Microseconds of one round, shared among the ready queues by utilization; a timeslice hint on a "
                    + "ready queue overrides it (the smallest wins); 100 to 10000000.")
    long bandwidth_timeslice() default BandwidthSettings.DEFAULT_TIMESLICE_MICROS;

    /** @return the share of a queue without a Utilization hint */
    @AttributeDefinition(name = "Default utilization (%)", min = "1", max = "100",
            description = "Utilization counted for a queue (or group) without a utilization hint; 1 to 100.")
    int bandwidth_default_utilization() default BandwidthSettings.DEFAULT_UTILIZATION;
}
