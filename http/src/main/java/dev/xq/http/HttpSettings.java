package dev.xq.http;

import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The HTTP API's settings, checked: where to listen and who may ask.
 *
 * @param port the TCP port; 0 for any free one
 * @param bindAddress the address to listen on, as configured
 * @param loopback whether that address is a loopback address
 * @param token the bearer token, or empty for none
 * @param tokenOnLoopback whether loopback peers must send the token too
 * @param maxBodyBytes the largest request body
 * @param allowedHosts host names (lower case) besides localhost and IP literals that a request served without a token may name
 * @param maxConnections the most connections open at once ({@link ConnectionCap})
 * @param maxConnectionsPerUser the most connections one local user other than the node's and root may keep open ({@link ConnectionCap})
 * @param threadNice the nice value of the server's threads, 0 for the node's own ({@link ThreadNice})
 * @param penConnections the most connections refused over a user's cap held unread at once, 0 for none ({@link Pen})
 * @param refusalDelayMillis how long a local user refused often is kept waiting for its next refusals, 0 for never ({@link RefusalPacer})
 */
record HttpSettings(boolean enabled, int port, String bindAddress, boolean loopback, String token, boolean tokenOnLoopback,
                    int maxBodyBytes, List<String> allowedHosts, int maxConnections, int maxConnectionsPerUser, int threadNice,
                    int penConnections, int refusalDelayMillis) {

    private static final Pattern HOST_NAME = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");

    HttpSettings {
        allowedHosts = List.copyOf(allowedHosts);
    }

    static final int DEFAULT_PORT = 50000;
    static final String DEFAULT_BIND = "127.0.0.1";
    static final int DEFAULT_MAX_BODY = 65536;
    /** Connections at once: Prometheus, dashboards (a browser opens up to six per page), xcli and ./xq, with room to spare. */
    static final int DEFAULT_MAX_CONNECTIONS = 256;
    static final int MAX_MAX_CONNECTIONS = 65536;
    /** A quarter of the default cap: a user flooding the API leaves three quarters to everyone else. */
    static final int DEFAULT_MAX_CONNECTIONS_PER_USER = 64;
    static final int MIN_TOKEN = 16;
    /**
     * The API's threads at the node's own priority by default: at 10, under a connection flood on a
     * 2-CPU host, the operator's ./xq took over a second in 3 of 10 pairs (1 of 10 at 0), and the
     * tenant beside the flood gained no median (docs/security.md).
     */
    static final int DEFAULT_THREAD_NICE = 0;
    /**
     * Refused connections held at once: more than a flooding client on one machine keeps open in
     * the attacks measured (2,000), and at most a quarter of the node's descriptor limit ({@link Pen}).
     */
    static final int DEFAULT_PEN_CONNECTIONS = 4096;
    /** Default of {@link #refusalDelayMillis}. */
    static final int DEFAULT_REFUSAL_DELAY_MILLIS = 10_000;
    /** Framework property: the port when the configuration leaves it at -1. */
    static final String PORT_PROPERTY = "xq.http.port";
    /** Framework property: false turns the API off unless the configuration turns it on. */
    static final String ENABLED_PROPERTY = "xq.http.enabled";

    /** The property FileInstall puts on each configuration it made from a file of the hot-deploy folder: the file's URL. */
    static final String FILE_PROPERTY = "felix.fileinstall.filename";

    /**
     * Checks a configuration as the node has it: where its properties came from a file
     * ({@value #FILE_PROPERTY}, the hot-deploy folder's {@code dev.xq.http.cfg}) that group or
     * others may read or write, the token in it is not used (one error in the log naming the file,
     * its mode and the fix): the node runs as without a token, so that binding beyond loopback
     * is refused and changes without a token follow the uid rule.
     *
     * @param properties the component's properties, as Declarative Services gives them
     * @throws IllegalArgumentException naming the bad value and what is allowed; the API then does not start
     */
    static HttpSettings from(HttpConfig c, Function<String, String> framework, Map<String, ?> properties, RuntimeLog log) {
        String exposed = c.token() == null || c.token().isBlank() ? null : exposedTokenFile(properties.get(FILE_PROPERTY));
        if (exposed != null) {
            log.error(exposed, null);
        }
        return from(c, framework, exposed != null);
    }

    /**
     * @param file a configuration's {@value #FILE_PROPERTY} (a {@code file:} URL, or a path), or null
     * @return why a token in that file must not be used (group or others may read or write it), naming
     *         the file, its mode and the fix; null when only its owner may, or it is no file whose mode can be read
     */
    static String exposedTokenFile(Object file) {
        if (file == null) {
            return null;
        }
        String name = file.toString();
        Path path;
        try {
            path = name.startsWith("file:") ? Path.of(URI.create(name)) : Path.of(name);
        } catch (RuntimeException e) { // not a URL of a local file: cannot be checked
            return null;
        }
        Set<PosixFilePermission> perms;
        try {
            perms = Files.getPosixFilePermissions(path);
        } catch (IOException | UnsupportedOperationException e) { // gone, or no POSIX modes here
            return null;
        }
        boolean open = perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.OTHERS_READ)
                || perms.contains(PosixFilePermission.GROUP_WRITE) || perms.contains(PosixFilePermission.OTHERS_WRITE);
        if (!open) {
            return null;
        }
        int mode = 0;
        for (PosixFilePermission p : perms) {
            mode |= 0400 >> p.ordinal(); // OWNER_READ, OWNER_WRITE, ..., OTHERS_EXECUTE: 0400 down to 0001
        }
        return "HTTP API: the token is not used: its file " + path + " has mode " + String.format("%04o", mode)
                + " (" + java.nio.file.attribute.PosixFilePermissions.toString(perms) + "), so group or others may read or "
                + "change it; the node runs as without a token (bound to loopback only, changes without the token only "
                + "from the node's user or root). Fix: chmod 600 " + path + " (the node looks at the mode again every second "
                + "and then uses the token)";
    }

    /**
     * Checks a configuration.
     * @param framework the framework's properties ({@code BundleContext::getProperty})
     * @throws IllegalArgumentException naming the bad value and what is allowed; the API then does not start
     */
    static HttpSettings from(HttpConfig c, Function<String, String> framework) {
        return from(c, framework, false);
    }

    /**
     * @param tokenExposed whether the configured token must not be used ({@link #exposedTokenFile}): the settings are then
     *        those without a token
     */
    private static HttpSettings from(HttpConfig c, Function<String, String> framework, boolean tokenExposed) {
        boolean enabled = switch (c.enabled().trim()) {
            case "" -> !"false".equalsIgnoreCase(String.valueOf(framework.apply(ENABLED_PROPERTY)).trim());
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("enabled '" + c.enabled() + "' is not one of: true, false, empty");
        };
        int port = c.port();
        if (port == -1) {
            String p = framework.apply(PORT_PROPERTY);
            if (p == null || p.isBlank()) {
                port = DEFAULT_PORT;
            } else {
                try {
                    port = Integer.parseInt(asciiDigits(p.trim()));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("framework property " + PORT_PROPERTY + " '" + p + "' is not a port in [0, 65535]");
                }
            }
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range [0, 65535] (-1: the default, 50000)");
        }
        String bind = c.bindAddress() == null ? "" : c.bindAddress().trim();
        if (bind.isEmpty()) {
            throw new IllegalArgumentException("bindAddress is empty; give an address such as 127.0.0.1 (loopback) or 0.0.0.0 (all, needs a token)");
        }
        boolean loopback;
        try {
            loopback = InetAddress.getByName(bind).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("bindAddress '" + bind + "' is not an address of this host: " + e.getMessage());
        }
        String token = c.token() == null || tokenExposed ? "" : c.token().trim();
        // where the token was set aside, the refusals below say why there is none
        String none = tokenExposed ? " (the one configured is not used: group or others may read its file; chmod 600 it)" : "";
        if (!token.isEmpty() && token.length() < MIN_TOKEN) {
            throw new IllegalArgumentException("token has " + token.length() + " characters; at least " + MIN_TOKEN + " are needed");
        }
        if (!token.isEmpty() && !token.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) {
            throw new IllegalArgumentException("token may only hold printable ASCII characters without spaces");
        }
        if (!loopback && token.isEmpty()) {
            throw new IllegalArgumentException("bindAddress " + bind + " is not a loopback address and no token is set" + none + ": "
                    + "refusing to serve the node's control API to the network without one; set token (PID "
                    + HttpConfig.PID + ", at least " + MIN_TOKEN + " characters) or bind to 127.0.0.1");
        }
        if (c.tokenOnLoopback() && token.isEmpty()) {
            throw new IllegalArgumentException("tokenOnLoopback is set but no token is" + none + "; set token (PID " + HttpConfig.PID + ")");
        }
        int max = c.maxBodyBytes();
        if (max < 1024 || max > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("maxBodyBytes " + max + " is out of range [1024, 16777216]");
        }
        List<String> hosts = new ArrayList<>();
        for (String h : c.allowedHosts() == null ? new String[0] : c.allowedHosts()) {
            String name = h == null ? "" : h.trim().toLowerCase(Locale.ROOT);
            if (name.length() > 253 || !HOST_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("allowedHosts entry '" + h + "' is not a host name: letters, digits, '-' and "
                        + "'.', at most 253 characters, no port, no wildcard (localhost and IP addresses are always allowed)");
            }
            hosts.add(name);
        }
        int connections = c.maxConnections();
        if (connections < 1 || connections > MAX_MAX_CONNECTIONS) {
            throw new IllegalArgumentException("maxConnections " + connections + " is out of range [1, " + MAX_MAX_CONNECTIONS
                    + "] (default " + DEFAULT_MAX_CONNECTIONS + ")");
        }
        int perUser = c.maxConnectionsPerUser();
        if (perUser < 1 || perUser > MAX_MAX_CONNECTIONS) {
            throw new IllegalArgumentException("maxConnectionsPerUser " + perUser + " is out of range [1, " + MAX_MAX_CONNECTIONS
                    + "] (default " + DEFAULT_MAX_CONNECTIONS_PER_USER + ")");
        }
        int nice = c.threadNice();
        if (nice < 0 || nice > 19) {
            throw new IllegalArgumentException("threadNice " + nice + " is out of range [0, 19] (default " + DEFAULT_THREAD_NICE
                    + ": the node's own)");
        }
        int pen = c.penConnections();
        if (pen < 0 || pen > MAX_MAX_CONNECTIONS) {
            throw new IllegalArgumentException("penConnections " + pen + " is out of range [0, " + MAX_MAX_CONNECTIONS + "] (default "
                    + DEFAULT_PEN_CONNECTIONS + "; 0: refused connections are closed at once)");
        }
        int delay = c.refusalDelayMillis();
        if (delay < 0 || delay > 10_000) {
            throw new IllegalArgumentException("refusalDelayMillis " + delay + " is out of range [0, 10000] ms (default "
                    + DEFAULT_REFUSAL_DELAY_MILLIS + "; 0: refusals are answered at once)");
        }
        return new HttpSettings(enabled, port, bind, loopback, token, c.tokenOnLoopback(), max, hosts, connections, perUser, nice, pen,
                delay);
    }

    @Override
    public String toString() {
        // never the token itself
        return "HttpSettings[enabled=" + enabled + ", port=" + port + ", bindAddress=" + bindAddress + ", token="
                + (token.isEmpty() ? "none" : "set") + ", tokenOnLoopback=" + tokenOnLoopback + ", maxBodyBytes=" + maxBodyBytes + ", maxConnections=" + maxConnections
                + ", maxConnectionsPerUser=" + maxConnectionsPerUser + ", threadNice=" + threadNice + ", penConnections=" + penConnections
                + ", refusalDelayMillis=" + refusalDelayMillis
                + (allowedHosts.isEmpty() ? "" : ", allowedHosts=" + allowedHosts) + "]";
    }

    /**
     * @return {@code text} when it is a whole number written in ASCII digits (an optional sign, then
     *         0-9 only); Java's own parsing also takes other scripts' digits (Arabic-Indic, Devanagari...)
     * @throws NumberFormatException otherwise
     */
    private static String asciiDigits(String text) {
        // a loop, not a regular expression: the process protocol parses every WAKE line with it
        int n = text == null ? 0 : text.length();
        int i = n > 0 && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        if (i == n) {
            throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
        }
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
            }
        }
        return text;
    }
}
