package dev.xq.hal.cuda;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of the CUDA adapter (PID {@code dev.xq.hal.cuda}). */
@ObjectClassDefinition(id = CudaConfig.PID, name = "XQ CUDA adapter",
        description = "Where libcuda is, which PTX/cubin modules kernel commands may name, and how completions are detected")
@interface CudaConfig {

    String PID = "dev.xq.hal.cuda";

    @AttributeDefinition(name = "Library", required = false,
            description = "Path or file name of the CUDA driver library")
    String library() default CudaSettings.DEFAULT_LIBRARY;

    @AttributeDefinition(name = "Kernel modules", required = false,
            description = "Modules that kernel commands may name, each as name=path (.ptx text, else cubin/fatbin). "
                    + "The name 'spin' is the built-in module with xq_spin(u64 ns) and xq_probe")
    String[] modules() default {};

    @AttributeDefinition(name = "Completion detection", options = {
            @org.osgi.service.metatype.annotations.Option(value = "poll", label = "poll events, sleep until the predicted end"),
            @org.osgi.service.metatype.annotations.Option(value = "sync-spin", label = "cuEventSynchronize, spinning"),
            @org.osgi.service.metatype.annotations.Option(value = "sync-block", label = "cuEventSynchronize, blocking"),
            @org.osgi.service.metatype.annotations.Option(value = "hostfunc", label = "cuLaunchHostFunc callback")},
            description = "How the per-device completion thread waits for commands")
    String completion() default CudaSettings.DEFAULT_COMPLETION;

    @AttributeDefinition(name = "Poll: wake early (us)", min = "0", max = "100000",
            description = "poll mode: the thread wakes this long before a command's predicted end and spins from there")
    int pollEarlyMicros() default CudaSettings.DEFAULT_POLL_EARLY_MICROS;

    @AttributeDefinition(name = "Poll: longest sleep (us)", min = "1", max = "100000",
            description = "poll mode: without a prediction the sleep doubles up to this; bounds how late a completion is seen")
    int pollMaxSleepMicros() default CudaSettings.DEFAULT_POLL_MAX_SLEEP_MICROS;

    @AttributeDefinition(name = "Timer slack (ns)", min = "0", max = "50000",
            description = "Linux timer slack of the completion thread (prctl PR_SET_TIMERSLACK); 0 keeps the OS default (50 us)")
    int timerSlackNanos() default CudaSettings.DEFAULT_TIMER_SLACK_NANOS;

    @AttributeDefinition(name = "Level 2 (stall launched commands)", options = {
            @org.osgi.service.metatype.annotations.Option(value = "adaptive", label = "guard the queues the scheduler holds"),
            @org.osgi.service.metatype.annotations.Option(value = "always", label = "guard every command"),
            @org.osgi.service.metatype.annotations.Option(value = "off", label = "level 1 only")},
            description = "Level 2: a launched command waits on its stream behind a flag a deactivate raises "
                    + "(cuStreamWaitValue32, ~1.5 us of device time per guarded command); poll and hostfunc completion only")
    String stall() default CudaSettings.DEFAULT_STALL;

    @AttributeDefinition(name = "Level 2: guard hold (ms)", min = "1", max = "3600000",
            description = "adaptive stall: a queue's launches stay guarded this long after the scheduler last let it go")
    int stallHoldMillis() default CudaSettings.DEFAULT_STALL_HOLD_MILLIS;

    @AttributeDefinition(name = "Level 2: flag memory", options = {
            @org.osgi.service.metatype.annotations.Option(value = "host", label = "page-locked host memory, written by a store"),
            @org.osgi.service.metatype.annotations.Option(value = "device", label = "device memory, written on a side stream")},
            description = "Where a queue's level-2 flag lives. host: a deactivate is one store of the deciding thread, seen by the "
                    + "device within microseconds, with no driver call (which can take tens of microseconds on a busy host, while "
                    + "the held queue's next command may start); device: cuStreamWriteValue32 on the device's side stream. Host "
                    + "memory falls back to device memory where it cannot be had")
    String stallFlags() default CudaSettings.DEFAULT_STALL_FLAGS;

    @AttributeDefinition(name = "Start events", options = {
            @org.osgi.service.metatype.annotations.Option(value = "chained", label = "only where the stream was idle"),
            @org.osgi.service.metatype.annotations.Option(value = "every", label = "before every command")},
            description = "chained: a command queued behind another on its stream starts where that one ended (or where a "
                    + "level-2 hold let it go), saving a timing event (~1.5 us of device time) per command; every: each "
                    + "command's start is the device's own timestamp")
    String startEvents() default CudaSettings.DEFAULT_START_EVENTS;

    @AttributeDefinition(name = "End times", options = {
            @org.osgi.service.metatype.annotations.Option(value = "auto", label = "seen under poll completion, else the device's"),
            @org.osgi.service.metatype.annotations.Option(value = "device", label = "the device's timestamp (timing event)"),
            @org.osgi.service.metatype.annotations.Option(value = "seen", label = "when the completion was seen")},
            description = "device: a command's end is the device's own timestamp (a timing event, ~1.9 us of device time per "
                    + "command); seen: its end is when the completion thread saw it (an event without timing, which costs the "
                    + "device nothing), microseconds late under poll completion, whose thread spins at each predicted end; "
                    + "auto: seen under poll, device under the other completion modes")
    String timing() default CudaSettings.DEFAULT_TIMING;

    @AttributeDefinition(name = "Poll: wait between looks", options = {
            @org.osgi.service.metatype.annotations.Option(value = "auto", label = "spin on hosts with 8 or more hardware threads, else park"),
            @org.osgi.service.metatype.annotations.Option(value = "spin", label = "spin (one core busy while commands are in flight)"),
            @org.osgi.service.metatype.annotations.Option(value = "park", label = "park until the next look (a timer wakes the thread)")},
            description = "poll mode: how the completion thread waits until a command's predicted end while commands are in "
                    + "flight. A parked thread is woken by a timer, and on a shared virtual machine that wake-up is now and then "
                    + "milliseconds late, which delays every command the completion launches; spinning costs one core while the "
                    + "device has work. auto spins where the host has 8 or more hardware threads (CUDA's own default spins "
                    + "where it has more cores than contexts); with nothing in flight the thread always parks")
    String pollWait() default CudaSettings.DEFAULT_POLL_WAIT;

    @AttributeDefinition(name = "Poll: longest spin (us)", min = "1", max = "1000000",
            description = "pollWait=spin: the completion thread spins for at most this long before a look; a longer wait (a "
                    + "long command) parks until this long before the look, so a wake-up late by less than this costs nothing "
                    + "and a long command costs the core only this much per look")
    int pollSpinMicros() default CudaSettings.DEFAULT_POLL_SPIN_MICROS;
}
