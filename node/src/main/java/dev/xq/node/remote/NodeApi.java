package dev.xq.node.remote;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Requests to a running node's HTTP API ({@code dev.xq.http}, docs/http.md), answers as parsed
 * JSON. Whatever goes wrong becomes a {@link Failure} with one line for the operator: no node at
 * the address (and how to start one), a refusal with the API's own {@code error} text, or
 * something on the port that is not XQ's API.
 *
 * <p>{@link HttpURLConnection}, not {@code java.net.http}: it is in {@code java.base}, so the
 * client runs on the jlinked runtime that GPU machines get ({@code .jre}), which has no
 * {@code java.net.http}. No proxy is used: the node is asked directly.
 */
final class NodeApi {

    /** Seconds to wait for a connection, and for an answer. */
    static final int CONNECT_TIMEOUT_S = 5;
    static final int ANSWER_TIMEOUT_S = 15;

    /** Something the operator must hear about: the message is the whole line (without "xq: "). */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int exitCode;

        Failure(String message, int exitCode) {
            super(message);
            this.exitCode = exitCode;
        }

        int exitCode() {
            return exitCode;
        }
    }

    private final Target target;

    NodeApi(Target target) {
        this.target = target;
    }

    Map<String, Object> get(String path) {
        return send("GET", path, null);
    }

    Map<String, Object> post(String path, String json) {
        return send("POST", path, json);
    }

    private Map<String, Object> send(String method, String path, String body) {
        int status;
        String text;
        try {
            HttpURLConnection c = (HttpURLConnection) target.uri(path).toURL().openConnection(Proxy.NO_PROXY);
            c.setRequestMethod(method);
            c.setConnectTimeout(CONNECT_TIMEOUT_S * 1000);
            c.setReadTimeout(ANSWER_TIMEOUT_S * 1000);
            c.setInstanceFollowRedirects(false);
            c.setUseCaches(false);
            c.setRequestProperty("Accept", "application/json");
            if (target.token() != null) {
                c.setRequestProperty("Authorization", "Bearer " + target.token());
            }
            if (body != null) {
                byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                c.setDoOutput(true);
                c.setRequestProperty("Content-Type", "application/json");
                try (OutputStream o = c.getOutputStream()) {
                    o.write(bytes);
                }
            }
            status = c.getResponseCode();
            InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream();
            try (InputStream i = in) {
                text = i == null ? "" : new String(i.readAllBytes(), StandardCharsets.UTF_8);
            }
            c.disconnect();
        } catch (IOException e) {
            throw unreachable(e);
        }
        return answer(method, path, status, text);
    }

    /** Why no answer came, in one line. */
    Failure unreachable(IOException e) {
        String at = target.address();
        if (causedBy(e, UnknownHostException.class)) {
            return new Failure("cannot resolve the node's host '" + target.host() + "' (--node or " + Target.NODE_ENV + ")", 1);
        }
        if (e instanceof SocketTimeoutException) {
            // HttpURLConnection says which: "Connect timed out" or "Read timed out"
            if (String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT).contains("connect")) {
                return new Failure("no XQ node answers at " + at + " (no connection within " + CONNECT_TIMEOUT_S + " s); "
                        + "is the address right, and is a node running there (./xq node or ./xq serve)?", 1);
            }
            return new Failure("the node at " + at + " did not answer within " + ANSWER_TIMEOUT_S + " s", 1);
        }
        if (causedBy(e, ConnectException.class)) {
            return new Failure("no XQ node answers at " + at + " (connection refused). Start one with ./xq node "
                    + "(with its shell) or ./xq serve (as a service), or name another with --node HOST:PORT or "
                    + Target.NODE_ENV, 1);
        }
        return new Failure("talking to the node at " + at + " failed: "
                + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), 1);
    }

    private Map<String, Object> answer(String method, String path, int status, String body) {
        Object json;
        try {
            json = JsonReader.parse(body);
        } catch (JsonReader.Malformed e) {
            json = null;
        }
        if (status >= 200 && status < 300) {
            if (json instanceof Map<?, ?>) {
                return Views.object(json, "the answer");
            }
            throw notXq(method, path, status, body);
        }
        if (json instanceof Map<?, ?> m && m.get("error") instanceof String error) {
            String hint = switch (status) {
                case 401 -> target.token() == null
                        ? " (give the node's token with --token T or " + Target.TOKEN_ENV + ")"
                        : " (the token given with --token or " + Target.TOKEN_ENV + " is not the node's)";
                case 403 -> " (the node has no token, so it answers loopback only)";
                default -> "";
            };
            return fail(error + hint);
        }
        if (status == 413 || status == 414) {
            // the node's HTTP server refused the request's size before the API saw it (its own page, not JSON)
            return fail(target.address() + " refused " + method + " " + path + " as too large (HTTP " + status + "): an argument is "
                    + "longer than the node takes (its dev.xq.http maxBodyBytes, or its URI limit)");
        }
        throw notXq(method, path, status, body);
    }

    private static Map<String, Object> fail(String message) {
        throw new Failure(message, 1);
    }

    private Failure notXq(String method, String path, int status, String body) {
        String start = body.strip().replaceAll("\\s+", " ");
        if (start.length() > 80) {
            start = start.substring(0, 80) + "...";
        }
        return new Failure(target.address() + " answered " + method + " " + path + " with HTTP " + status
                + (start.isEmpty() ? "" : " '" + start + "'") + ", which is not XQ's API: is it an XQ node's HTTP port?", 1);
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
