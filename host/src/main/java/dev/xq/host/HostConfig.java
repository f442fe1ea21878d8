package dev.xq.host;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/** Configuration of the process host (PID {@code dev.xq.host}). A change restarts the server. */
@ObjectClassDefinition(id = HostConfig.PID, name = "XQ process host",
        description = "The Unix socket that processes started with the XQ interposer (./xq run) connect to")
@interface HostConfig {

    String PID = "dev.xq.host";

    @AttributeDefinition(name = "Socket path", required = false,
            description = "Absolute path of the node's socket. Empty: the framework property xq.host.socket if set, else "
                    + "$XDG_RUNTIME_DIR/xq/node.sock; as root without XDG_RUNTIME_DIR /run/xq/node.sock; else /tmp/xq-<uid>/node.sock")
    String socketPath() default "";

    @AttributeDefinition(name = "Socket group", required = false,
            description = "Empty: only the node's user may connect (directory 0700, socket 0600). A group name: members of that "
                    + "group may connect too (directory 0750, socket and shared memory 0660, owned by that group)")
    String socketGroup() default "";

    @AttributeDefinition(name = "Slots per process", min = "1", max = "1024",
            description = "Streams one process may register at once (each is one 128-byte slot of its shared memory)")
    int slots() default HostSettings.DEFAULT_SLOTS;

    @AttributeDefinition(name = "Most sessions", min = "1", max = "65536",
            description = "Processes served at once; a process beyond this is refused (and runs unscheduled)")
    int maxSessions() default HostSettings.DEFAULT_MAX_SESSIONS;

    @AttributeDefinition(name = "Most sessions per user", min = "1", max = "65536",
            description = "Processes of one uid served at once; a process of that uid beyond this is refused (and runs "
                    + "unscheduled), so that one user cannot take every session of the node")
    int maxSessionsPerUser() default HostSettings.DEFAULT_MAX_SESSIONS_PER_USER;

    @AttributeDefinition(name = "Most streams per user", min = "1", max = "67108864",
            description = "Streams the processes of one uid may register at once, all their sessions together; a STREAM "
                    + "beyond this is refused and ends that process's session (it runs unscheduled)")
    int maxStreamsPerUser() default HostSettings.DEFAULT_MAX_STREAMS_PER_USER;

    @AttributeDefinition(name = "Enabled", description = "Whether the node serves local processes at all")
    boolean enabled() default true;

    @AttributeDefinition(name = "Interrupt processes (Lv3)",
            description = "Whether a process that offers Lv3 (the HIP interposer, libxq-hip.so, with a KFD debugger API: "
                    + "KFD 1.13+) is asked to stop its stream's GPU queue (SUSPEND) whenever the node holds the stream, and to "
                    + "let it go on (RESUME) when the node lets it go. Off: processes are held at Lv1 only")
    boolean interruptProcesses() default false;

    @AttributeDefinition(name = "MPS (spatial sharing)", options = {
            @Option(value = "auto", label = "auto: where an NVIDIA GPU and nvidia-cuda-mps-control are found"),
            @Option(value = "on", label = "on: as auto, and an error in the log where it cannot"),
            @Option(value = "off", label = "off: processes share the device in time only")},
            description = "Whether the node runs its own NVIDIA MPS control daemon (pipe directory next to the socket) and "
                    + "tells each process it serves, before the process creates its CUDA context, to join it on a share of the "
                    + "device that follows from its priority (docs/processes.md, Space and time)")
    String mps() default "auto";

    @AttributeDefinition(name = "MPS control program", required = false,
            description = "Path of nvidia-cuda-mps-control; empty: looked for in /usr/local/nvidia/bin, /usr/bin, /usr/local/bin, "
                    + "/usr/local/cuda/bin, /opt/nvidia/bin and the PATH")
    String mpsControl() default "";

    @AttributeDefinition(name = "Latency-critical priority", min = "-1000", max = "1000",
            description = "Processes at this XQ priority or above get the whole device under MPS (and are never held nor "
                    + "throttled); processes below, or without a priority, get the best-effort share")
    int mpsLatencyPriority() default SpacePlan.DEFAULT_LATENCY_PRIORITY;

    @AttributeDefinition(name = "Best-effort share (%)", min = "1", max = "100",
            description = "Percent of the device's multiprocessors a best-effort process may use at once under MPS "
                    + "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)")
    int mpsBestEffortShare() default SpacePlan.DEFAULT_BEST_EFFORT_SHARE;

    @AttributeDefinition(name = "Hold best-effort processes in time",
            description = "Whether best-effort processes under MPS are still held while a queue the policy prefers has work "
                    + "(their share already leaves the rest of the device free)")
    boolean mpsHoldBestEffort() default true;

    @AttributeDefinition(name = "Hold best-effort behind commands of (us)", min = "0", max = "1000000",
            description = "A best-effort MPS client is held only behind a preferred queue whose commands average at least this "
                    + "long (a tenant whose kernels fill the device). 0 (the default): behind any preferred queue with work; on the "
                    + "H200 family 50 us gave best-effort tenants more throughput beside light ones and the latency-critical ones "
                    + "less room beside heavy ones (docs/processes.md, Space and time)")
    long mpsHoldBehindMicros() default SpacePlan.DEFAULT_HOLD_BEHIND_MICROS;

    @AttributeDefinition(name = "Narrow best-effort processes",
            description = "Whether a best-effort process that can be narrowed (CUDA 12.4+ green contexts) runs on the whole device "
                    + "and is narrowed, launch by launch, to the multiprocessors the preferred queues leave while they run, instead "
                    + "of running on the fixed best-effort share and being held (docs/processes.md, Space and time)")
    boolean mpsNarrow() default SpacePlan.DEFAULT_NARROW;

    @AttributeDefinition(name = "Latency-critical processes in contexts of their own",
            description = "Whether processes at the latency-critical priority or above keep a CUDA context of their own (not "
                    + "clients of the node's MPS server), which the GPU time-slices against the server's, and are never held "
                    + "nor throttled; best-effort processes stay clients of the server, held in time behind a busy one wider "
                    + "than half the device and let run otherwise. Off: every process the node serves joins the server "
                    + "(docs/processes.md, Space and time)")
    boolean mpsLatencyOwnContext() default SpacePlan.DEFAULT_LATENCY_OWN_CONTEXT;

    @AttributeDefinition(name = "Narrow latency-critical processes below wider ones",
            description = "Whether a latency-critical process that can be narrowed (with Narrow best-effort processes on) runs on "
                    + "the whole device, never held nor throttled, and is narrowed to half of it while a process of a higher "
                    + "priority wider than half the device has work (a CUDA graph above a large batch: in one MPS server they "
                    + "share every multiprocessor). Off: latency-critical processes are never narrowed (docs/processes.md, "
                    + "Latency-critical processes of two priorities)")
    boolean mpsNarrowLatency() default SpacePlan.DEFAULT_NARROW_LATENCY;

    @AttributeDefinition(name = "Best-effort processes at MPS's lower client priority",
            description = "Whether best-effort processes join the node's MPS server at its lower client priority "
                    + "(CUDA_MPS_CLIENT_PRIORITY=1, unless the process set its own): where their queued thread blocks and a "
                    + "latency-critical client's wait for the same multiprocessors, the device starts the latency-critical "
                    + "ones first; running blocks are never cut. On by default; off: every client at the normal priority "
                    + "(docs/processes.md, Space and time)")
    boolean mpsLowPriorityBestEffort() default SpacePlan.DEFAULT_LOW_BEST_EFFORT;

    @AttributeDefinition(name = "Arrival watch (us)", min = "0", max = "10000",
            description = "How often (microseconds) the node looks itself whether a stream at the latency-critical priority or "
                    + "above has gone ready, reading its process's shared memory, instead of only waiting for the process's WAKE "
                    + "line: a thread awake every period while such a stream and a stream of a lower class are registered (every "
                    + "arrivalWatchQuietMicros while every such stream is busy with an arrival told). 0: "
                    + "off; else 10 to 10000; 50 by default (docs/processes.md, The node's arrival watch)")
    long arrivalWatchMicros() default 50;

    @AttributeDefinition(name = "Arrival watch, quiet (us)", min = "0", max = "100000",
            description = "How often (microseconds) the arrival watch looks while every stream it watches is busy with an "
                    + "arrival the node was told of (none can arrive before it goes idle, and its idle line wakes the watch): "
                    + "1000 by default; the watch's own period where that is longer; 0: never quiet, every period (docs/processes.md, "
                    + "The node's arrival watch)")
    long arrivalWatchQuietMicros() default ArrivalWatch.DEFAULT_QUIET_MICROS;
}
