package dev.xq.http;

import java.io.IOException;
import java.io.InputStream;

/**
 * One HTTP request as the API sees it, free of the servlet API so that tests can make one.
 *
 * @param method GET, POST, ...
 * @param path the path, not decoded, without the query ({@code /xqueue/0x1f})
 * @param query the raw query string, or null
 * @param authorization the Authorization header, or null
 * @param loopbackPeer whether the peer's address is a loopback address
 * @param contentLength the declared body length, or -1 when unknown (chunked)
 * @param body opens the body; read at most once
 * @param origin the Origin header (browsers send it), or null
 * @param host the Host header, or null
 * @param connection the connection's two ends, for finding which local user a loopback peer is
 *        ({@link LoopbackPeers}); null when unknown (then a change without a token is refused)
 */
record ApiRequest(String method, String path, String query, String authorization, boolean loopbackPeer,
                  long contentLength, Body body, String origin, String host, LoopbackPeers.Connection connection) {

    /** A request without Origin and Host headers (as curl and xcli send none of the first) and no connection. */
    ApiRequest(String method, String path, String query, String authorization, boolean loopbackPeer, long contentLength, Body body) {
        this(method, path, query, authorization, loopbackPeer, contentLength, body, null, null, null);
    }

    /** The request body, opened on demand (after the request was authorised). */
    interface Body {
        InputStream open() throws IOException;
    }

    /** @return whether the request may change something: any method but GET and HEAD (OPTIONS, unknown ones: too) */
    boolean change() {
        return !method.equals("GET") && !method.equals("HEAD");
    }

    /** A request with no body, from a loopback peer and no Authorization header (for tests). */
    static ApiRequest of(String method, String pathAndQuery) {
        return of(method, pathAndQuery, null);
    }

    /** A request with a body, from a loopback peer and no Authorization header (for tests). */
    static ApiRequest of(String method, String pathAndQuery, String body) {
        int q = pathAndQuery.indexOf('?');
        byte[] bytes = body == null ? new byte[0] : body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return new ApiRequest(method, q < 0 ? pathAndQuery : pathAndQuery.substring(0, q), q < 0 ? null : pathAndQuery.substring(q + 1),
                null, true, bytes.length, () -> new java.io.ByteArrayInputStream(bytes));
    }

    ApiRequest withAuthorization(String header) {
        return new ApiRequest(method, path, query, header, loopbackPeer, contentLength, body, origin, host, connection);
    }

    ApiRequest fromPeer(boolean loopback) {
        return new ApiRequest(method, path, query, authorization, loopback, contentLength, body, origin, host, connection);
    }

    ApiRequest withHost(String hostHeader) {
        return new ApiRequest(method, path, query, authorization, loopbackPeer, contentLength, body, origin, hostHeader, connection);
    }

    ApiRequest withOrigin(String origin, String host) {
        return new ApiRequest(method, path, query, authorization, loopbackPeer, contentLength, body, origin, host, connection);
    }

    ApiRequest withConnection(LoopbackPeers.Connection c) {
        return new ApiRequest(method, path, query, authorization, loopbackPeer, contentLength, body, origin, host, c);
    }
}
