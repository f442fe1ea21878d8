package dev.xq.http;

import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueueService;
import dev.xq.operator.NoSuchQueueException;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * The HTTP API without the servlet container: checks who asks, routes, reads the body within
 * its limit and turns every refusal into {@code {"error": ...}} with its status. Nothing is
 * changed by a request that is refused. Who asks: other hosts need the token; loopback peers may
 * read without one, and change without one only from the node's own uid or root's
 * ({@link LoopbackPeers}); docs/security.md has the whole model.
 */
final class Api {

    /** Routes by path: the methods each takes (for 405s and the route list of a 404). */
    private static final List<String> ROUTES = List.of(
            "GET /xqueues", "GET /xqueue/<hex handle>", "POST /config/<hex handle>?level=&threshold=&batch_size=",
            "GET /policy", "POST /policy?policy=N", "POST /hint", "GET /metrics",
            "GET /api/v1/queues", "GET /api/v1/queues/<handle or name>", "GET /api/v1/devices", "GET /api/v1/policies",
            "GET /api/v1/policy", "POST /api/v1/policy", "GET /api/v1/scheduler", "GET /api/v1/hints", "POST /api/v1/hint",
            "POST /api/v1/config",
            "POST /api/v1/suspend", "POST /api/v1/resume", "GET / (the dashboard)");

    private final HttpSettings settings;
    private final XschedApi xsched;
    private final XqApi v1;
    private final Metrics metrics;
    private final Dashboard dashboard = new Dashboard();
    private final RuntimeLog log;
    private final byte[] token;
    private final LoopbackPeers peers;
    private volatile RefusalPacer pacer;
    private volatile java.util.function.LongConsumer sleeper = Api::sleep;

    /**
     * @param peers which local user a loopback peer is, and who may change the node without a token
     *        ({@link LoopbackPeers#system()} in a node)
     */
    Api(XQueueService xq, SchedulerControl scheduler, HttpSettings settings, RuntimeLog log, LoopbackPeers peers) {
        this.settings = settings;
        this.peers = peers;
        this.xsched = new XschedApi(xq, scheduler);
        this.v1 = new XqApi(xq, scheduler);
        this.log = log;
        this.metrics = new Metrics(xq, scheduler, log);
        this.token = settings.token().getBytes(StandardCharsets.UTF_8);
        this.pacer = new RefusalPacer(settings.refusalDelayMillis() * 1_000_000L, System::nanoTime);
    }

    /** For tests: the clock of the refusals' pacing and what waits (nanoseconds). */
    void pacing(java.util.function.LongSupplier nanoTime, java.util.function.LongConsumer sleep) {
        this.pacer = new RefusalPacer(settings.refusalDelayMillis() * 1_000_000L, nanoTime);
        this.sleeper = sleep;
    }

    private static void sleep(long nanos) {
        try {
            Thread.sleep(java.time.Duration.ofNanos(nanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    ApiResponse handle(ApiRequest r) {
        try {
            if (Dashboard.serves(r.path())) {
                return dashboard.file(r);   // static files without data: no token needed (see Dashboard)
            }
            checkPath(r.path());
            ApiResponse refused = guard(r);
            if (refused != null) {
                return refused;
            }
            return route(r);
        } catch (ApiException e) {
            ApiResponse error = ApiResponse.error(e.status(), e.getMessage());
            // a body cut off (too slow, too long) leaves unread bytes: the connection is not to be used again
            return e.status() == 408 || e.status() == 413 ? error.withHeader("Connection", "close") : error;
        } catch (NoSuchQueueException e) {
            return ApiResponse.error(404, e.getMessage());
        } catch (IllegalArgumentException e) {
            return ApiResponse.error(400, e.getMessage());
        } catch (RuntimeException e) {
            log.error("HTTP API: " + r.method() + " " + r.path() + " failed", e);
            return ApiResponse.error(500, "internal error: " + e);
        }
    }

    // ------------------------------------------------------------------ who may ask

    /** @return the refusal, or null when the request may go on */
    private ApiResponse guard(ApiRequest r) {
        if (r.origin() != null && !sameOrigin(r.origin(), r.host())) {
            // a page of another site in the operator's browser: it must not change (or read) the node
            return ApiResponse.error(403, "cross-origin requests are refused: Origin " + r.origin() + " is not this node (Host "
                    + r.host() + "); use the node's own dashboard (GET /) or a client that sends no Origin");
        }
        boolean needToken = !r.loopbackPeer() || settings.tokenOnLoopback();
        if (!needToken) {
            if (!hostAllowed(r.host())) {
                // DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 is "same origin" with
                // itself, and its requests reach a node that trusts loopback; their Host names the page's site
                return ApiResponse.error(403, "Host " + r.host() + " is not a name of this node: a request served without "
                        + "a token must name it by localhost, an IP address or a name in allowedHosts (PID " + HttpConfig.PID
                        + "; now " + (settings.allowedHosts().isEmpty() ? "none" : String.join(", ", settings.allowedHosts())) + ")");
            }
            return r.change() ? localUser(r) : null;
        }
        if (token.length == 0) {
            // only reachable when the server listens beyond loopback without a token: never serve that
            return ApiResponse.error(403, "requests from other hosts are refused: the node has no token configured (PID "
                    + HttpConfig.PID + ", token)");
        }
        return bearer(r, r.loopbackPeer() ? " from loopback too (tokenOnLoopback)" : " from other hosts");
    }

    /**
     * A change from a loopback peer, where no token is required of the node's own user: allowed with the
     * token, or when the peer's socket belongs to the node's uid or root's; any other local user, or one that
     * cannot be found, is refused. Every local user can connect to loopback, so its address alone says nothing.
     *
     * @return the refusal, or null when the request may go on
     */
    private ApiResponse localUser(ApiRequest r) {
        if (token.length > 0 && r.authorization() != null && bearer(r, "") == null) {
            return null;   // the token: whoever sends it
        }
        LoopbackPeers.Owner owner = peers.owner(r.connection());
        if (owner.uid().isPresent() && peers.mayChange(owner.uid().getAsInt())) {
            return null;
        }
        if (owner.uid().isPresent()) {
            long wait = pacer.refused(owner.uid().getAsInt());
            if (wait > 0) {
                sleeper.accept(wait); // refused often: its flood waits (RefusalPacer)
            }
        }
        String who = owner.uid().isPresent() ? "this connection belongs to uid " + owner.uid().getAsInt()
                : "the local user of this connection could not be found (" + owner.problem() + ")";
        String node = peers.nodeUid() >= 0 ? "the node runs as uid " + peers.nodeUid() : "the node's own uid could not be read";
        String how = token.length == 0 ? "this node has no token configured (PID " + HttpConfig.PID + ", token)"
                : r.authorization() != null ? "the Authorization header sent does not hold it"
                : "send 'Authorization: Bearer <token>'";
        return ApiResponse.error(403, r.method() + " " + r.path() + " refused: " + who + "; changes over HTTP from another local "
                + "user need the node's token; " + node + " (it and root, uid 0, need none; reading needs none); " + how);
    }

    /** @return the refusal of a request without the right bearer token, or null when it has it */
    private ApiResponse bearer(ApiRequest r, String where) {
        String h = r.authorization();
        String prefix = "Bearer ";
        if (h == null || !h.regionMatches(true, 0, prefix, 0, prefix.length())) {
            return ApiResponse.error(401, "this node requires 'Authorization: Bearer <token>'" + where)
                    .withHeader("WWW-Authenticate", "Bearer realm=\"xq\"");
        }
        byte[] given = h.substring(prefix.length()).trim().getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(given, token)) {
            return ApiResponse.error(401, "the bearer token is wrong").withHeader("WWW-Authenticate", "Bearer realm=\"xq\", error=\"invalid_token\"");
        }
        return null;
    }

    /**
     * @return whether a Host header names this node as a request without a token may: localhost (or a name under
     *         .localhost), an IP literal, or a configured name; no header at all (HTTP/1.0; browsers always send one)
     */
    boolean hostAllowed(String host) {
        if (host == null || host.isEmpty()) {
            return true;
        }
        String name;
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            if (end < 0 || !(end == host.length() - 1 || host.charAt(end + 1) == ':')) {
                return false;
            }
            name = host.substring(1, end);
        } else {
            int colon = host.indexOf(':');
            if (colon >= 0 && host.indexOf(':', colon + 1) >= 0) {
                return false;   // an IPv6 literal must be bracketed in a Host header
            }
            name = colon >= 0 ? host.substring(0, colon) : host;
        }
        name = name.toLowerCase(java.util.Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (name.equals("localhost") || name.endsWith(".localhost") || settings.allowedHosts().contains(name)) {
            return true;
        }
        if (!name.isEmpty() && (Character.digit(name.charAt(0), 16) >= 0 || name.indexOf(':') >= 0)) {
            try {
                InetAddress.ofLiteral(name);   // an address, never looked up
                return true;
            } catch (IllegalArgumentException notAnAddress) {
                return false;
            }
        }
        return false;
    }

    /**
     * Refuses what no route can be and a client may mean otherwise: '.' and '..' segments (plain or
     * percent-encoded), malformed percent escapes and characters outside printable ASCII. Routes are
     * matched on the raw path, so nothing else needs normalising.
     */
    static void checkPath(String path) {
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                throw ApiException.badRequest("path " + printable(path) + " has a character outside printable ASCII at "
                        + i + "; percent-encode it");
            }
            if (c == '%' && (i + 2 >= path.length() || Character.digit(path.charAt(i + 1), 16) < 0
                    || Character.digit(path.charAt(i + 2), 16) < 0)) {
                throw ApiException.badRequest("path " + printable(path) + " is not URL-encoded correctly: '%' at " + i
                        + " must be followed by two hex digits");
            }
        }
        for (String seg : path.split("/", -1)) {
            String plain = seg.replace("%2e", ".").replace("%2E", ".");
            if (plain.equals(".") || plain.equals("..")) {
                throw ApiException.badRequest("path " + printable(path) + " has a '" + plain + "' segment; give a route "
                        + "as it is (routes: " + String.join(", ", ROUTES) + ")");
            }
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 200) + 2).append('\'');
        for (int i = 0; i < s.length() && i < 200; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : c);
        }
        return b.append(s.length() > 200 ? "...'" : "'").toString();
    }

    /** @return whether a browser's Origin is the node's own address, as the request's Host names it */
    static boolean sameOrigin(String origin, String host) {
        return host != null && !host.isEmpty()
                && (origin.equalsIgnoreCase("http://" + host) || origin.equalsIgnoreCase("https://" + host));
    }

    // ------------------------------------------------------------------ routes

    private ApiResponse route(ApiRequest r) {
        String p = r.path();
        String m = r.method();
        if (p.startsWith(XqApi.PREFIX + "/")) {
            return routeV1(r, p.substring(XqApi.PREFIX.length()));
        }
        if (p.startsWith("/xqueue/")) {
            return v1(r, "GET", () -> xsched.xqueue(segment(p, "/xqueue/")));
        }
        if (p.startsWith("/config/")) {
            String hex = segment(p, "/config/");
            return method(r, "POST", () -> xsched.config(hex, r.query()));
        }
        return switch (p) {
            // xserver's routes that take no query parameters refuse one, as XQ's do; /metrics does not
            // (a Prometheus job may add its own)
            case "/xqueues" -> v1(r, "GET", xsched::xqueues);
            case "/policy" -> m.equals("POST") ? xsched.selectPolicy(r.query()) : v1(r, "GET, POST", xsched::policy);
            case "/hint" -> v1(r, "POST", () -> xsched.hint(body(r)));
            case "/metrics" -> method(r, "GET", metrics::scrape);
            default -> notFound(r);
        };
    }

    /**
     * XQ's routes take no query parameters (a change's values are in its JSON body): a request that gives
     * one is refused before anything is read or changed, rather than answered as if it had not been sent.
     * So do xserver's GET routes and its POST /hint ({@link #v1} checks for both).
     */
    private ApiResponse routeV1(ApiRequest r, String p) {
        if (p.startsWith("/queues/")) {
            String key = decodePath(segment(p, "/queues/"));
            return v1(r, "GET", () -> v1.queue(key));
        }
        return switch (p) {
            case "/queues" -> v1(r, "GET", v1::queues);
            case "/devices" -> v1(r, "GET", v1::devices);
            case "/policies" -> v1(r, "GET", v1::policies);
            case "/hints" -> v1(r, "GET", v1::hints);
            case "/scheduler" -> v1(r, "GET", v1::scheduler);
            case "/policy" -> v1(r, "GET, POST", () -> r.method().equals("POST") ? v1.selectPolicy(body(r)) : v1.policy());
            case "/hint" -> v1(r, "POST", () -> v1.hint(body(r)));
            case "/config" -> v1(r, "POST", () -> v1.config(body(r)));
            case "/suspend" -> v1(r, "POST", () -> v1.suspend(body(r)));
            case "/resume" -> v1(r, "POST", () -> v1.resume(body(r)));
            default -> notFound(r);
        };
    }

    /** {@link #method}, for a route of {@code /api/v1}: no query parameter is taken. */
    private static ApiResponse v1(ApiRequest r, String allowed, java.util.function.Supplier<ApiResponse> action) {
        return method(r, allowed, () -> {
            java.util.Map<String, String> query = Params.query(r.query());
            if (!query.isEmpty()) {
                String name = query.keySet().iterator().next();
                throw ApiException.badRequest("query parameter '" + name + "' is unknown: " + r.method() + " " + r.path()
                        + " takes no query parameters" + (r.method().equals("POST") ? " (its values go in the JSON body)" : ""));
            }
            return action.get();
        });
    }

    private static ApiResponse method(ApiRequest r, String allowed, java.util.function.Supplier<ApiResponse> action) {
        if (!List.of(allowed.split(", ")).contains(r.method())) {
            return ApiResponse.error(405, "method " + r.method() + " is not allowed on " + r.path() + "; allowed: " + allowed)
                    .withHeader("Allow", allowed);
        }
        return action.get();
    }

    private static ApiResponse notFound(ApiRequest r) {
        return ApiResponse.error(404, "no route " + r.method() + " " + r.path() + "; routes: " + String.join(", ", ROUTES));
    }

    /** @return the one path segment after {@code prefix}; a further '/' is refused */
    private static String segment(String path, String prefix) {
        String s = path.substring(prefix.length());
        if (s.isEmpty() || s.indexOf('/') >= 0) {
            throw ApiException.badRequest("path " + path + " is malformed: one segment is expected after " + prefix);
        }
        return s;
    }

    private static String decodePath(String s) {
        try {
            return java.net.URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("path segment '" + s + "' is not URL-encoded correctly");
        }
    }

    // ------------------------------------------------------------------ the body

    /** How long a request body may take to arrive, in seconds: a slow sender must not hold a worker longer. */
    static final int BODY_DEADLINE_SECONDS = 10;
    private static final long BODY_DEADLINE_NANOS = BODY_DEADLINE_SECONDS * 1_000_000_000L;

    /** The clock the body deadline is measured on; tests replace it. */
    java.util.function.LongSupplier nanos = System::nanoTime;

    /**
     * Reads at most {@code limit} bytes, in the pieces the stream gives.
     * @throws ApiException 408 when the body is still arriving at {@code deadline} (a {@link #nanos} time). A sender
     *         that sends nothing at all is cut off by Jetty's idle timeout ({@link HttpComponent#IDLE_TIMEOUT_MS})
     */
    private byte[] readBefore(InputStream in, int limit, long deadline) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(Math.min(limit, 8192));
        byte[] buffer = new byte[Math.min(limit, 8192)];
        while (out.size() < limit) {
            int n = in.read(buffer, 0, Math.min(buffer.length, limit - out.size()));
            if (n < 0) {
                break;
            }
            out.write(buffer, 0, n);
            if (out.size() < limit && nanos.getAsLong() - deadline > 0) {
                throw new ApiException(408, "request body not received within " + BODY_DEADLINE_SECONDS + " s (" + out.size()
                        + " bytes came); the connection is closed");
            }
        }
        return out.toByteArray();
    }

    /**
     * Reads the body as UTF-8, at most {@code maxBodyBytes}.
     * @throws ApiException 413 when it is longer (declared or sent), 408 when it is still coming after
     *         {@value #BODY_DEADLINE_SECONDS} s, 400 when it is not UTF-8
     */
    private String body(ApiRequest r) {
        int max = settings.maxBodyBytes();
        if (r.contentLength() > max) {
            throw new ApiException(413, "request body of " + r.contentLength() + " bytes is over the limit of " + max
                    + " bytes (PID " + HttpConfig.PID + ", maxBodyBytes)");
        }
        byte[] bytes;
        try (InputStream in = r.body().open()) {
            bytes = readBefore(in, max + 1, nanos.getAsLong() + BODY_DEADLINE_NANOS);
        } catch (IOException e) {
            throw ApiException.badRequest("the request body could not be read: " + e.getMessage());
        }
        if (bytes.length > max) {
            throw new ApiException(413, "request body is over the limit of " + max + " bytes (PID " + HttpConfig.PID + ", maxBodyBytes)");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw ApiException.badRequest("the request body is not UTF-8 text");
        }
    }
}
