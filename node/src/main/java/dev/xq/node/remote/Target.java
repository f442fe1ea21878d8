package dev.xq.node.remote;

import java.net.URI;
import java.util.Map;

/**
 * Which node to ask and with what token: {@code --node HOST:PORT} and {@code --token T}, else
 * the environment's {@code XQ_NODE} and {@code XQ_TOKEN}, else {@value #DEFAULT_HOST}:{@value #DEFAULT_PORT}
 * without a token. HOST is a name, an IPv4 address or {@code [IPv6]}; {@code http://} or
 * {@code https://} in front is allowed (a node behind a TLS proxy).
 */
record Target(String scheme, String host, int port, String token) {

    static final String DEFAULT_HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 50000;
    static final String NODE_ENV = "XQ_NODE";
    static final String TOKEN_ENV = "XQ_TOKEN";

    /** @return the target named by the flags ({@code null}: not given), else by {@code env} */
    static Target of(String nodeFlag, String tokenFlag, Map<String, String> env) {
        String node = nodeFlag != null ? nodeFlag : blankToNull(env.get(NODE_ENV));
        String token = tokenFlag != null ? tokenFlag : blankToNull(env.get(TOKEN_ENV));
        String from = nodeFlag != null ? "--node" : NODE_ENV;
        Target t = node == null ? new Target("http", DEFAULT_HOST, DEFAULT_PORT, null) : parse(node, from);
        if (token != null) {
            checkToken(token, tokenFlag != null ? "--token" : TOKEN_ENV);
        }
        return new Target(t.scheme, t.host, t.port, token);
    }

    /** Parses {@code [http[s]://]HOST[:PORT][/]}; {@code from} names where it came from in errors. */
    static Target parse(String value, String from) {
        String v = value.trim();
        String scheme = "http";
        if (v.startsWith("http://")) {
            v = v.substring(7);
        } else if (v.startsWith("https://")) {
            scheme = "https";
            v = v.substring(8);
        }
        if (v.endsWith("/")) {
            v = v.substring(0, v.length() - 1);
        }
        String host;
        String port = null;
        if (v.startsWith("[")) {
            int end = v.indexOf(']');
            if (end < 0) {
                throw bad(value, from, "'[' without ']'");
            }
            host = v.substring(1, end);
            String rest = v.substring(end + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw bad(value, from, "expected ':PORT' after ']'");
                }
                port = rest.substring(1);
            }
            if (host.isEmpty() || !host.matches("[0-9A-Fa-f:.]+")) {
                throw bad(value, from, "'" + host + "' is not an IPv6 address");
            }
        } else {
            int colon = v.indexOf(':');
            if (colon >= 0 && v.indexOf(':', colon + 1) >= 0) {
                throw bad(value, from, "write an IPv6 address as [ADDRESS]:PORT");
            }
            host = colon < 0 ? v : v.substring(0, colon);
            port = colon < 0 ? null : v.substring(colon + 1);
            if (host.isEmpty() || !host.matches("[A-Za-z0-9._-]+")) {
                throw bad(value, from, "'" + host + "' is not a host name or address");
            }
        }
        int p = DEFAULT_PORT;
        if (port != null) {
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw bad(value, from, "port '" + port + "' is not a number in [1, 65535]");
            }
            p = Integer.parseInt(port);
        }
        return new Target(scheme, host, p, null);
    }

    private static void checkToken(String token, String from) {
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                throw new Remote.Usage(from + " must be printable ASCII without spaces (the node's token, "
                        + "at least 16 characters; PID dev.xq.http, key token)");
            }
        }
    }

    private static Remote.Usage bad(String value, String from, String why) {
        return new Remote.Usage(from + " '" + value + "' is not HOST:PORT: " + why
                + " (e.g. 127.0.0.1:50000, gpu-host:50000, [::1]:50000)");
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** @return HOST:PORT as the user would write it */
    String address() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    URI uri(String path) {
        return URI.create(scheme + "://" + address() + path);
    }
}
