package dev.xq.hal.sim;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "XQ simulated device",
        description = "A simulated XPU: engines that commands occupy for their duration in real time, Lv1-3 preemption, fault injection")
@interface SimDeviceConfig {

    @AttributeDefinition(description = "Device id, e.g. sim1: lower-case letters, digits and '-' (the default device is always sim0)", required = false)
    String id();

    @AttributeDefinition(description = "A name for people", required = false)
    String name();

    @AttributeDefinition(min = "1", max = "1000000", description = "Execution engines")
    int engines() default 1;

    @AttributeDefinition(min = "0", description = "Device memory in bytes")
    long memoryBytes() default 17179869184L;

    @AttributeDefinition(min = "1", max = "3", description = "Highest preemption level offered: 1 block, 2 deactivate, 3 interrupt")
    int maxLevel() default 3;

    @AttributeDefinition(options = {
            @org.osgi.service.metatype.annotations.Option(label = "stall: launched commands wait in place", value = "stall"),
            @org.osgi.service.metatype.annotations.Option(label = "flush: launched commands are handed back for relaunch", value = "flush")},
            description = "What level 2 does with launched commands that have not started")
    String lv2Mode() default "stall";

    @AttributeDefinition(min = "0", max = "10000000", description = "Time to save an interrupted command's state (us)")
    long saveCostMicros() default 20;

    @AttributeDefinition(min = "0", max = "10000000", description = "Time to restore it (us)")
    long restoreCostMicros() default 20;

    @AttributeDefinition(min = "0", max = "10000000", description = "Time from launch until the device sees a command (us)")
    long launchCostMicros() default 2;

    @AttributeDefinition(name = "fault.failLaunchEvery", min = "0", description = "Every Nth launch is refused (0 = never)")
    long fault_failLaunchEvery() default 0;

    @AttributeDefinition(name = "fault.failCommandEvery", min = "0", description = "Every Nth command fails (0 = never)")
    long fault_failCommandEvery() default 0;

    @AttributeDefinition(name = "fault.hangEvery", min = "0", description = "Every Nth command never ends by itself (0 = never)")
    long fault_hangEvery() default 0;

    @AttributeDefinition(name = "fault.loseAfter", min = "0", description = "The device is lost after N completed commands (0 = never)")
    long fault_loseAfter() default 0;
}
