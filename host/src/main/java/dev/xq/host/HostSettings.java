package dev.xq.host;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

/**
 * Checked settings of the process host.
 *
 * @param socketPath the socket; its directory holds the shared-memory files too
 * @param group the group that may connect besides the node's user, or null for none
 * @param slots streams one process may register, in [1, 1024]
 * @param maxSessions processes served at once, in [1, 65536]
 * @param enabled whether to serve at all
 * @param unlinkAfter how long a session's file stays linked if the client never says MAPPED
 * @param helloWithin how long a connection may stay without HELLO before it is closed
 * @param interruptProcesses whether a process that offers {@code lv3} (the HIP interposer with a
 *        KFD debugger API) is asked to stop its stream's GPU queue when the node holds the stream
 * @param maxSessionsPerUser sessions one uid may hold at once, in [1, 65536]
 * @param maxStreamsPerUser streams one uid may register at once across its sessions, in [1, 67108864]
 */
record HostSettings(Path socketPath, String group, int slots, int maxSessions, boolean enabled, Duration unlinkAfter,
                    Duration helloWithin, boolean interruptProcesses, int maxSessionsPerUser, int maxStreamsPerUser) {

    static final int DEFAULT_SLOTS = 64;
    static final int MAX_SLOTS = 1024;
    static final int DEFAULT_MAX_SESSIONS = 256;
    static final int MAX_MAX_SESSIONS = 65536;
    static final int DEFAULT_MAX_SESSIONS_PER_USER = 128;
    static final int DEFAULT_MAX_STREAMS_PER_USER = 4096;
    /** maxSessions times the most slots a session has */
    static final int MAX_MAX_STREAMS_PER_USER = MAX_MAX_SESSIONS * MAX_SLOTS;
    static final Duration DEFAULT_UNLINK_AFTER = Duration.ofSeconds(5);
    static final Duration DEFAULT_HELLO_WITHIN = Duration.ofSeconds(10);
    /** Framework or system property that names the socket when the configuration leaves it empty. */
    static final String SOCKET_PROPERTY = "xq.host.socket";

    HostSettings {
        if (socketPath == null || !socketPath.isAbsolute()) {
            throw new IllegalArgumentException("socketPath '" + socketPath + "' is not an absolute path");
        }
        String p = socketPath.toString();
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            // the shared-memory path next to it travels in a space-separated ASCII line
            if (c <= ' ' || c > '~') {
                throw new IllegalArgumentException("socketPath '" + p + "' contains a space, a control or a non-ASCII character;"
                        + " allowed: printable ASCII without spaces");
            }
        }
        int bytes = p.getBytes(StandardCharsets.UTF_8).length;
        if (bytes >= Libc.SUN_PATH_MAX) {
            throw new IllegalArgumentException("socketPath '" + p + "' is " + bytes + " bytes; a Unix socket path must be under "
                    + Libc.SUN_PATH_MAX + " bytes");
        }
        if (socketPath.getParent() == null || socketPath.getFileName() == null) {
            throw new IllegalArgumentException("socketPath '" + p + "' needs a directory and a file name");
        }
        if (group != null && group.isBlank()) {
            group = null;
        }
        if (group != null) {
            group = group.trim();
        }
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots " + slots + " is out of range [1, " + MAX_SLOTS + "]");
        }
        if (maxSessions < 1 || maxSessions > MAX_MAX_SESSIONS) {
            throw new IllegalArgumentException("maxSessions " + maxSessions + " is out of range [1, " + MAX_MAX_SESSIONS + "]");
        }
        if (maxSessionsPerUser < 1 || maxSessionsPerUser > MAX_MAX_SESSIONS) {
            throw new IllegalArgumentException("maxSessionsPerUser " + maxSessionsPerUser + " is out of range [1, " + MAX_MAX_SESSIONS
                    + "]");
        }
        if (maxStreamsPerUser < 1 || maxStreamsPerUser > MAX_MAX_STREAMS_PER_USER) {
            throw new IllegalArgumentException("maxStreamsPerUser " + maxStreamsPerUser + " is out of range [1, "
                    + MAX_MAX_STREAMS_PER_USER + "]");
        }
        if (unlinkAfter == null || unlinkAfter.isNegative() || unlinkAfter.isZero()) {
            throw new IllegalArgumentException("unlinkAfter " + unlinkAfter + " must be positive");
        }
        if (helloWithin == null || helloWithin.isNegative() || helloWithin.isZero()) {
            throw new IllegalArgumentException("helloWithin " + helloWithin + " must be positive");
        }
    }

    /** The per-user caps at their defaults. */
    HostSettings(Path socketPath, String group, int slots, int maxSessions, boolean enabled, Duration unlinkAfter,
                 Duration helloWithin, boolean interruptProcesses) {
        this(socketPath, group, slots, maxSessions, enabled, unlinkAfter, helloWithin, interruptProcesses,
                DEFAULT_MAX_SESSIONS_PER_USER, DEFAULT_MAX_STREAMS_PER_USER);
    }

    /** Settings for {@code socketPath} and the defaults otherwise (tests, embedding). */
    static HostSettings of(Path socketPath) {
        return new HostSettings(socketPath, null, DEFAULT_SLOTS, DEFAULT_MAX_SESSIONS, true, DEFAULT_UNLINK_AFTER, DEFAULT_HELLO_WITHIN,
                false);
    }

    HostSettings withGroup(String g) {
        return new HostSettings(socketPath, g, slots, maxSessions, enabled, unlinkAfter, helloWithin, interruptProcesses,
                maxSessionsPerUser, maxStreamsPerUser);
    }

    HostSettings withSlots(int s) {
        return new HostSettings(socketPath, group, s, maxSessions, enabled, unlinkAfter, helloWithin, interruptProcesses,
                maxSessionsPerUser, maxStreamsPerUser);
    }

    HostSettings withMaxSessions(int m) {
        return new HostSettings(socketPath, group, slots, m, enabled, unlinkAfter, helloWithin, interruptProcesses,
                maxSessionsPerUser, maxStreamsPerUser);
    }

    HostSettings withMaxSessionsPerUser(int m) {
        return new HostSettings(socketPath, group, slots, maxSessions, enabled, unlinkAfter, helloWithin, interruptProcesses,
                m, maxStreamsPerUser);
    }

    HostSettings withMaxStreamsPerUser(int m) {
        return new HostSettings(socketPath, group, slots, maxSessions, enabled, unlinkAfter, helloWithin, interruptProcesses,
                maxSessionsPerUser, m);
    }

    HostSettings withHelloWithin(Duration d) {
        return new HostSettings(socketPath, group, slots, maxSessions, enabled, unlinkAfter, d, interruptProcesses,
                maxSessionsPerUser, maxStreamsPerUser);
    }

    HostSettings withUnlinkAfter(Duration d) {
        return new HostSettings(socketPath, group, slots, maxSessions, enabled, d, helloWithin, interruptProcesses,
                maxSessionsPerUser, maxStreamsPerUser);
    }

    HostSettings withInterruptProcesses(boolean on) {
        return new HostSettings(socketPath, group, slots, maxSessions, enabled, unlinkAfter, helloWithin, on,
                maxSessionsPerUser, maxStreamsPerUser);
    }

    /**
     * @param property framework properties (falling back to system properties)
     * @param env the process environment
     * @param euid the node's effective uid
     * @throws IllegalArgumentException naming the bad value and what is allowed
     */
    static HostSettings from(HostConfig c, Function<String, String> property, Map<String, String> env, int euid) {
        String configured = c.socketPath() == null ? "" : c.socketPath().trim();
        Path path = configured.isEmpty()
                ? defaultSocketPath(property.apply(SOCKET_PROPERTY), env.get("XDG_RUNTIME_DIR"), euid)
                : Path.of(configured);
        return new HostSettings(path, c.socketGroup(), c.slots(), c.maxSessions(), c.enabled(), DEFAULT_UNLINK_AFTER,
                DEFAULT_HELLO_WITHIN, c.interruptProcesses(), c.maxSessionsPerUser(), c.maxStreamsPerUser());
    }

    /** The interposer's default (docs/processes.md, XQ_SOCKET), unless {@code override} names one. */
    static Path defaultSocketPath(String override, String xdgRuntimeDir, int euid) {
        if (override != null && !override.isBlank()) {
            return Path.of(override.trim());
        }
        if (xdgRuntimeDir != null && !xdgRuntimeDir.isBlank()) {
            return Path.of(xdgRuntimeDir, "xq", "node.sock");
        }
        if (euid == 0) {
            return Path.of("/run/xq/node.sock");
        }
        return Path.of("/tmp/xq-" + Integer.toUnsignedString(euid), "node.sock");
    }
}
