package dev.xq.hal.sim;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/**
 * Metatype of both PIDs: {@code dev.xq.hal.sim} (the default device) and the factory PID
 * {@code dev.xq.hal.sim.device} (one more device per configuration). {@link SimSettings} reads
 * and checks the values; this only describes them to tools.
 */
@ObjectClassDefinition(name = "XQ simulated device",
        description = "A simulated XPU: engines that commands occupy for their duration in real time, Lv1-3 preemption, "
                + "fault injection. A bad value is logged as an error and no device is made from that configuration.")
@interface SimDeviceConfig {

    @AttributeDefinition(description = "false: no device from this configuration (for dev.xq.hal.sim: no sim0)")
    boolean enabled() default true;

    @AttributeDefinition(required = false, description = "Device id, matching [a-z][a-z0-9-]*; unique on the node. "
            + "Default: sim0 for dev.xq.hal.sim; for a factory configuration sim-<its name> (or sim-<hash of its pid>)")
    String id();

    @AttributeDefinition(required = false, description = "A name for people; default 'simulated XPU (N engines)'")
    String name();

    @AttributeDefinition(min = "1", max = "1000000", description = "Execution engines, 1..1000000")
    int engines() default 1;

    @AttributeDefinition(min = "0", max = "1125899906842624", description = "Device memory in bytes, 0..2^50")
    long memoryBytes() default 17179869184L;

    @AttributeDefinition(min = "1", max = "3", description = "Highest preemption level offered: 1 block, 2 deactivate, 3 interrupt")
    int maxLevel() default 3;

    @AttributeDefinition(options = {
            @Option(label = "stall: launched commands wait in place", value = "stall"),
            @Option(label = "flush: launched commands are handed back for relaunch", value = "flush")},
            description = "What level 2 does with launched commands that have not started: stall or flush")
    String lv2Mode() default "stall";

    @AttributeDefinition(min = "0", max = "10000000", description = "Engine time to save an interrupted command's state (us), 0..10000000")
    long saveCostMicros() default 20;

    @AttributeDefinition(min = "0", max = "10000000", description = "Extra engine time to restore it before it goes on (us), 0..10000000")
    long restoreCostMicros() default 20;

    @AttributeDefinition(min = "0", max = "10000000", description = "Time from launch until the device sees a command (us), 0..10000000")
    long launchCostMicros() default 2;

    @AttributeDefinition(name = "fault.failLaunchEvery", min = "0", description = "Every Nth launch on the device is refused (0 = never)")
    long fault_failLaunchEvery() default 0;

    @AttributeDefinition(name = "fault.failCommandEvery", min = "0", description = "Every Nth command runs and then fails (0 = never)")
    long fault_failCommandEvery() default 0;

    @AttributeDefinition(name = "fault.hangEvery", min = "0",
            description = "Every Nth command never ends by itself, only through interrupt, close or device loss (0 = never)")
    long fault_hangEvery() default 0;

    @AttributeDefinition(name = "fault.loseAfter", min = "0", description = "The device is lost after N completed commands (0 = never)")
    long fault_loseAfter() default 0;
}
