package dev.xq.host;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

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

    @AttributeDefinition(name = "Enabled", description = "Whether the node serves local processes at all")
    boolean enabled() default true;

    @AttributeDefinition(name = "Interrupt processes (Lv3)",
            description = "Whether a process that offers Lv3 (the HIP interposer, libxq-hip.so, with a KFD debugger API: "
                    + "KFD 1.13+) is asked to stop its stream's GPU queue (SUSPEND) whenever the node holds the stream, and to "
                    + "let it go on (RESUME) when the node lets it go. Off: processes are held at Lv1 only")
    boolean interruptProcesses() default false;
}
