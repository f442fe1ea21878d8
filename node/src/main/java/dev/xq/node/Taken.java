package dev.xq.node;

import java.io.IOException;
import java.io.Reader;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

/**
 * Before a node that serves starts (modes {@code node} and {@code serve}): is what it would listen
 * on held by another node, or another program? The process socket (a socket file there that
 * accepts connections) and the HTTP API's address (a bind that fails: in use). A second node
 * started on the same machine used to print Jetty's stack traces, say "serving" and serve
 * neither (issue 41, item 11); it now says in one line what is taken and exits 1.
 *
 * <p>Where each listens is found as the bundles find it: the hot-deploy folder's
 * {@code dev.xq.host.cfg} and {@code dev.xq.http.cfg} ({@code socketPath}, {@code port},
 * {@code bindAddress}, {@code enabled}), else the properties {@code xq.host.socket},
 * {@code xq.http.port} and {@code xq.http.enabled}, else the defaults (the socket under
 * {@code $XDG_RUNTIME_DIR/xq}, {@code /run/xq} for root, {@code /tmp/xq-UID}; 127.0.0.1:50000). A
 * value these cannot read is left to the bundle, which refuses it by name; this check then
 * passes. The bundles check again when they start (another program may take the port in between).
 */
final class Taken {

    static final String HTTP_CFG = "dev.xq.http.cfg";
    static final String HOST_CFG = "dev.xq.host.cfg";

    private Taken() {
    }

    /**
     * @param hotDeploy the node's hot-deploy folder
     * @param property the node's properties (the launcher's system properties)
     * @param env the environment
     * @param euid the node's effective uid
     * @return one line naming what is taken and what to do, or null when nothing is
     */
    static String check(Path hotDeploy, Function<String, String> property, Map<String, String> env, int euid) {
        List<String> taken = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        Path socket = socket(read(hotDeploy.resolve(HOST_CFG)), property, env, euid);
        if (socket != null && accepts(socket)) {
            taken.add("the process socket " + socket + " accepts connections");
            fixes.add("socketPath (" + HOST_CFG + ")");
        }
        InetSocketAddress http = http(read(hotDeploy.resolve(HTTP_CFG)), property);
        if (http != null && inUse(http)) {
            taken.add("the HTTP API's address " + http.getHostString() + ":" + http.getPort() + " is in use");
            fixes.add("port (" + HTTP_CFG + ")");
        }
        if (taken.isEmpty()) {
            return null;
        }
        return "not started: another node (or another program) already serves here: " + String.join(", and ", taken)
                + "; stop it, or give this node another " + String.join(" and ", fixes) + " in " + hotDeploy;
    }

    /** @return the process host's socket, or null when the host is off or its configuration is one the host will refuse */
    static Path socket(Properties cfg, Function<String, String> property, Map<String, String> env, int euid) {
        String enabled = cfg.getProperty("enabled", "true").trim();
        if (enabled.equalsIgnoreCase("false")) {
            return null;
        }
        String configured = cfg.getProperty("socketPath", "").trim();
        try {
            if (!configured.isEmpty()) {
                return Path.of(configured);
            }
            String override = property.apply("xq.host.socket");
            if (override != null && !override.isBlank()) {
                return Path.of(override.trim());
            }
            String xdg = env.get("XDG_RUNTIME_DIR");
            if (xdg != null && !xdg.isBlank()) {
                return Path.of(xdg, "xq", "node.sock");
            }
        } catch (RuntimeException badPath) {
            return null; // the host names it
        }
        return euid == 0 ? Path.of("/run/xq/node.sock") : Path.of("/tmp/xq-" + Integer.toUnsignedString(euid), "node.sock");
    }

    /** @return the HTTP API's address, or null when it is off, on any free port, or configured in a way its bundle will refuse */
    static InetSocketAddress http(Properties cfg, Function<String, String> property) {
        String enabled = cfg.getProperty("enabled", "").trim();
        boolean on = switch (enabled) {
            case "true" -> true;
            case "false" -> false;
            default -> !"false".equalsIgnoreCase(String.valueOf(property.apply("xq.http.enabled")).trim());
        };
        if (!on) {
            return null;
        }
        int port;
        try {
            port = Integer.parseInt(cfg.getProperty("port", "-1").trim());
            if (port == -1) {
                String p = property.apply("xq.http.port");
                port = p == null || p.isBlank() ? 50000 : Integer.parseInt(p.trim());
            }
        } catch (NumberFormatException bad) {
            return null;
        }
        if (port <= 0 || port > 65535) {
            return null;
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(cfg.getProperty("bindAddress", "127.0.0.1").trim()), port);
        } catch (IOException | RuntimeException bad) {
            return null;
        }
    }

    /** @return whether a program listens on the Unix socket {@code socket} (a leftover file of one that died does not count) */
    static boolean accepts(Path socket) {
        if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            // non-blocking, as the host's own check: a node whose backlog is full must not hang this start
            probe.configureBlocking(false);
            probe.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (ConnectException nobody) {
            return false;
        } catch (IOException | RuntimeException other) {
            return false; // not a socket, not ours to read: the host says what it is
        }
    }

    /** @return whether binding {@code address} fails because it is in use (bound as Jetty binds, address reuse on) */
    static boolean inUse(InetSocketAddress address) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(address);
            return false;
        } catch (BindException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the properties of a FileInstall {@code .cfg} file; empty when there is none or it cannot be read */
    static Properties read(Path cfg) {
        Properties p = new Properties();
        if (Files.isRegularFile(cfg)) {
            try (Reader r = Files.newBufferedReader(cfg, StandardCharsets.ISO_8859_1)) {
                p.load(r);
            } catch (IOException | IllegalArgumentException unreadable) {
                return new Properties();
            }
        }
        return p;
    }
}
