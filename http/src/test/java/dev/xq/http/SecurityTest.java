package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.runtime.log.RuntimeLog;
import java.io.ByteArrayInputStream;
import java.lang.annotation.Annotation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Who may ask, and how much: bind rules, bearer tokens, body limits. */
class SecurityTest {

    static HttpConfig config(String bind, String token, boolean onLoopback, int port) {
        return new HttpConfig() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return HttpConfig.class;
            }

            @Override
            public String enabled() {
                return "";
            }

            @Override
            public int port() {
                return port;
            }

            @Override
            public String bindAddress() {
                return bind;
            }

            @Override
            public String token() {
                return token;
            }

            @Override
            public boolean tokenOnLoopback() {
                return onLoopback;
            }

            @Override
            public int maxBodyBytes() {
                return HttpSettings.DEFAULT_MAX_BODY;
            }

            @Override
            public int maxConnections() {
                return HttpSettings.DEFAULT_MAX_CONNECTIONS;
            }

            @Override
            public int maxConnectionsPerUser() {
                return HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER;
            }

            @Override
            public int threadNice() {
                return HttpSettings.DEFAULT_THREAD_NICE;
            }

            @Override
            public int penConnections() {
                return HttpSettings.DEFAULT_PEN_CONNECTIONS;
            }

            @Override
            public int refusalDelayMillis() {
                return HttpSettings.DEFAULT_REFUSAL_DELAY_MILLIS;
            }

            @Override
            public String[] allowedHosts() {
                return new String[0];
            }
        };
    }

    static final Map<String, String> NO_PROPS = Map.of();

    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path tmp;

    /** Errors said, as a node's log would get them. */
    static final class Errors implements RuntimeLog {
        final List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<String> infos = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public void info(String message) {
            infos.add(message);
        }

        @Override
        public void warn(String message) {
            warnings.add(message);
        }

        @Override
        public void error(String message, Throwable cause) {
            lines.add(message);
        }
    }

    @Test
    void aTokenInAFileGroupOrOthersMayReadIsNotUsed() throws Exception {
        java.nio.file.Path cfg = tmp.resolve("dev.xq.http.cfg");
        java.nio.file.Files.writeString(cfg, "token=" + Securities.TOKEN + "\n");
        // FileInstall marks the configuration with the file's URL (file:/a/b); a plain path is taken too
        Map<String, Object> props = Map.of(HttpSettings.FILE_PROPERTY, cfg.toUri().toURL().toString());
        for (String mode : new String[] {"rw-r--r--", "rw-r-----", "rw-----w-", "rw-rw----"}) {
            java.nio.file.Files.setPosixFilePermissions(cfg, java.nio.file.attribute.PosixFilePermissions.fromString(mode));
            Errors log = new Errors();
            HttpSettings s = HttpSettings.from(config("127.0.0.1", Securities.TOKEN, false, -1), NO_PROPS::get, props, log);
            assertEquals("", s.token(), mode + ": the token of a file others may read is not used");
            assertEquals(1, log.lines.size(), () -> mode + ": " + log.lines);
            String line = log.lines.getFirst();
            assertTrue(line.contains("its file " + cfg + " has mode ") && line.contains("(" + mode + ")")
                    && line.contains("chmod 600 " + cfg), line);
            assertTrue(!line.contains(Securities.TOKEN), "the token is never printed: " + line);
            // beyond loopback: refused, saying why there is no token
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpSettings.from(
                    config("0.0.0.0", Securities.TOKEN, false, -1), NO_PROPS::get, props, new Errors()));
            assertTrue(e.getMessage().startsWith("bindAddress 0.0.0.0 is not a loopback address and no token is set (the one "
                    + "configured is not used: group or others may read its file; chmod 600 it)"), e.getMessage());
        }
        java.nio.file.Files.setPosixFilePermissions(cfg, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertTrue(HttpSettings.exposedTokenFile(cfg.toString()).contains("has mode 0644 (rw-r--r--)"),
                HttpSettings.exposedTokenFile(cfg.toString()));
        // the settings are those of a node without a token (loopback only; changes by the uid rule)
        HttpSettings dropped = HttpSettings.from(config("127.0.0.1", Securities.TOKEN, false, -1), NO_PROPS::get, props, new Errors());
        assertEquals(Securities.loopback().token(), dropped.token());

        // 0600 (and 0400): the token is used, nothing said
        for (String mode : new String[] {"rw-------", "r--------"}) {
            java.nio.file.Files.setPosixFilePermissions(cfg, java.nio.file.attribute.PosixFilePermissions.fromString(mode));
            Errors log = new Errors();
            assertEquals(Securities.TOKEN, HttpSettings.from(config("0.0.0.0", Securities.TOKEN, false, -1), NO_PROPS::get, props, log)
                    .token(), mode);
            assertTrue(log.lines.isEmpty(), () -> mode + ": " + log.lines);
        }
        // not from a file (set through Config Admin another way): used
        assertEquals(Securities.TOKEN, HttpSettings.from(config("0.0.0.0", Securities.TOKEN, false, -1), NO_PROPS::get,
                Map.of(), new Errors()).token());
    }

    @Test
    void loopbackOnPort50000ByDefault() {
        HttpSettings s = HttpSettings.from(config(HttpSettings.DEFAULT_BIND, "", false, -1), NO_PROPS::get);
        assertEquals(50000, s.port());
        assertTrue(s.loopback() && s.enabled());
        assertEquals(0, HttpSettings.from(config("127.0.0.1", "", false, -1), Map.of("xq.http.port", "0")::get).port());
        assertEquals(8080, HttpSettings.from(config("::1", "", false, 8080), Map.of("xq.http.port", "0")::get).port());
        assertTrue(!HttpSettings.from(config("127.0.0.1", "", false, -1), Map.of("xq.http.enabled", "false")::get).enabled());
    }

    @Test
    void anyOtherAddressNeedsAToken() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HttpSettings.from(config("0.0.0.0", "", false, -1), NO_PROPS::get));
        assertEquals("bindAddress 0.0.0.0 is not a loopback address and no token is set: refusing to serve the node's control API to "
                + "the network without one; set token (PID dev.xq.http, at least 16 characters) or bind to 127.0.0.1", e.getMessage());
        HttpSettings s = HttpSettings.from(config("0.0.0.0", Securities.TOKEN, false, -1), NO_PROPS::get);
        assertTrue(!s.loopback());
        assertTrue(!s.toString().contains(Securities.TOKEN), "the token is never printed: " + s);
        assertEquals("token has 5 characters; at least 16 are needed",
                assertThrows(IllegalArgumentException.class, () -> HttpSettings.from(config("0.0.0.0", "short", false, -1), NO_PROPS::get)).getMessage());
        assertEquals("tokenOnLoopback is set but no token is; set token (PID dev.xq.http)",
                assertThrows(IllegalArgumentException.class, () -> HttpSettings.from(config("127.0.0.1", "", true, -1), NO_PROPS::get)).getMessage());
        assertEquals("port 70000 is out of range [0, 65535] (-1: the default, 50000)",
                assertThrows(IllegalArgumentException.class, () -> HttpSettings.from(config("127.0.0.1", "", false, 70000), NO_PROPS::get)).getMessage());
    }

    Fakes.Service xq = new Fakes.Service();
    Fakes.Scheduler scheduler = new Fakes.Scheduler("hpf", "kedf");

    @Test
    void withATokenOtherHostsMustSendIt() {
        Fakes.Queue q = xq.add(5, "q", "sim0", "", 0);
        Api api = new Api(xq, scheduler, Securities.withToken(false), RuntimeLog.NONE, Securities.SAME_USER);
        ApiRequest change = ApiRequest.of("POST", "/hint", "{\"hint_type\":1,\"handle\":5,\"priority\":9}").fromPeer(false);
        ApiResponse none = api.handle(change);
        assertEquals(401, none.status());
        assertEquals("{\"error\":\"this node requires 'Authorization: Bearer <token>' from other hosts\"}", none.body());
        assertEquals("Bearer realm=\"xq\"", none.headers().get("WWW-Authenticate"));
        ApiResponse wrong = api.handle(change.withAuthorization("Bearer not-the-token-at-all"));
        assertEquals(401, wrong.status());
        assertEquals("{\"error\":\"the bearer token is wrong\"}", wrong.body());
        assertEquals(401, api.handle(change.withAuthorization("Basic " + Securities.TOKEN)).status());
        assertTrue(q.hints().isEmpty(), "refused requests change nothing");
        assertEquals(200, api.handle(change.withAuthorization("Bearer " + Securities.TOKEN)).status());
        assertEquals(List.of(new Hint.Priority(9)), q.hints());
        // loopback peers (xcli on the node's host) need no token unless the operator says so
        assertEquals(200, api.handle(ApiRequest.of("GET", "/xqueues")).status());
        assertEquals(401, api.handle(ApiRequest.of("GET", "/metrics").fromPeer(false)).status(), "metrics too");
    }

    @Test
    void tokenOnLoopbackRefusesXcli() {
        Api api = new Api(xq, scheduler, Securities.withToken(true), RuntimeLog.NONE, Securities.SAME_USER);
        ApiResponse r = api.handle(ApiRequest.of("POST", "/policy?policy=7"));
        assertEquals(401, r.status());
        assertEquals("{\"error\":\"this node requires 'Authorization: Bearer <token>' from loopback too (tokenOnLoopback)\"}", r.body());
        assertEquals("hpf", scheduler.selected);
        assertEquals(200, api.handle(ApiRequest.of("POST", "/policy?policy=7").withAuthorization("Bearer " + Securities.TOKEN)).status());
        assertEquals("kedf", scheduler.selected);
    }

    @Test
    void withoutATokenOtherHostsAreRefused() {
        // only reachable if the server were bound beyond loopback by other means: never served
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        ApiResponse r = api.handle(ApiRequest.of("GET", "/xqueues").fromPeer(false));
        assertEquals(403, r.status());
        assertEquals("{\"error\":\"requests from other hosts are refused: the node has no token configured (PID dev.xq.http, token)\"}", r.body());
    }

    @Test
    void bodiesOverTheLimitAre413AndChangeNothing() {
        Fakes.Queue q = xq.add(5, "q", "sim0", "", 0);
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        String padded = "{\"hint_type\":1,\"handle\":5,\"priority\":9" + " ".repeat(5000) + "}";
        ApiResponse declared = api.handle(ApiRequest.of("POST", "/hint", padded));
        assertEquals(413, declared.status());
        assertEquals("{\"error\":\"request body of " + padded.length() + " bytes is over the limit of 4096 bytes (PID dev.xq.http, maxBodyBytes)\"}",
                declared.body());
        byte[] bytes = padded.getBytes(StandardCharsets.UTF_8);
        ApiRequest chunked = new ApiRequest("POST", "/api/v1/hint", null, null, true, -1, () -> new ByteArrayInputStream(bytes));
        ApiResponse sent = api.handle(chunked);
        assertEquals(413, sent.status());
        assertEquals("{\"error\":\"request body is over the limit of 4096 bytes (PID dev.xq.http, maxBodyBytes)\"}", sent.body());
        assertTrue(q.hints().isEmpty());
        byte[] latin1 = "{\"name\":\"caf\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1);
        ApiResponse notUtf8 = api.handle(new ApiRequest("POST", "/api/v1/policy", null, null, true, latin1.length,
                () -> new ByteArrayInputStream(latin1)));
        assertEquals("{\"error\":\"the request body is not UTF-8 text\"}", notUtf8.body());
        assertEquals(400, notUtf8.status());
    }

    @Test
    void aBodyStillComingAtTheDeadlineIs408AndChangesNothing() {
        Fakes.Queue q = xq.add(5, "q", "sim0", "", 0);
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        long[] now = {0};
        api.nanos = () -> now[0];
        byte[] bytes = "{\"hint_type\":1,\"handle\":5,\"priority\":9}".getBytes(StandardCharsets.UTF_8);
        // a byte every 5 s (on the fake clock): the sender of issue item 6
        java.io.InputStream slow = new java.io.InputStream() {
            int next;

            @Override
            public int read() {
                if (next == bytes.length) {
                    return -1;
                }
                now[0] += 5_000_000_000L;
                return bytes[next++];
            }

            @Override
            public int read(byte[] b, int off, int len) {
                int c = read();
                if (c < 0) {
                    return -1;
                }
                b[off] = (byte) c;
                return 1;
            }
        };
        ApiResponse r = api.handle(new ApiRequest("POST", "/hint", null, null, true, bytes.length, () -> slow));
        assertEquals(408, r.status());
        assertEquals("{\"error\":\"request body not received within " + Api.BODY_DEADLINE_SECONDS + " s (3 bytes came); "
                + "the connection is closed\"}", r.body());
        assertEquals("close", r.headers().get("Connection"));
        assertTrue(q.hints().isEmpty());
        // the same body, all there at once, is taken
        now[0] = 0;
        assertEquals(200, api.handle(new ApiRequest("POST", "/hint", null, null, true, bytes.length,
                () -> new ByteArrayInputStream(bytes))).status());
    }

    @Test
    void withoutATokenTheHostMustNameThisNode() {
        // DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 sends its requests to the node
        // with Origin and Host evil.example: same origin to the browser, loopback to the node. Its Host gives it away.
        Fakes.Queue q = xq.add(5, "q", "sim0", "", 0);
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        for (String ok : List.of("127.0.0.1:50000", "127.0.0.1", "localhost:50000", "LOCALHOST", "localhost.", "dash.localhost:8080",
                "[::1]:50000", "[::1]", "10.1.2.3:50000", "xq-node.example:50000", "XQ-Node.Example")) {
            assertEquals(200, api.handle(ApiRequest.of("GET", "/xqueues").withHost(ok)).status(), ok);
        }
        ApiResponse r = api.handle(ApiRequest.of("POST", "/policy?policy=7").withOrigin("http://evil.example:50000", "evil.example:50000"));
        assertEquals(403, r.status());
        assertEquals("{\"error\":\"Host evil.example:50000 is not a name of this node: a request served without a token must name it "
                + "by localhost, an IP address or a name in allowedHosts (PID dev.xq.http; now xq-node.example)\"}", r.body());
        assertEquals("hpf", scheduler.selected, "refused: nothing changed");
        for (String bad : List.of("evil.example", "127.0.0.1.evil.example", "localhost.evil.example:50000", "1.2.3.4.example",
                "xq-node.example.evil", "::1", "[::1", "[::1]x", "", "\u00e9vil")) {
            if (bad.isEmpty()) {
                continue;   // no Host at all: HTTP/1.0, never a browser
            }
            assertEquals(403, api.handle(ApiRequest.of("GET", "/xqueues").withHost(bad)).status(), bad);
            assertEquals(403, api.handle(ApiRequest.of("POST", "/hint", "{\"hint_type\":1,\"handle\":5,\"priority\":9}")
                    .withHost(bad)).status(), bad);
        }
        assertTrue(q.hints().isEmpty());
        assertEquals(200, api.handle(ApiRequest.of("GET", "/xqueues")).status(), "no Host: allowed");
        // with a token a name is no threat (a page cannot know the token): any name will do
        Api tokened = new Api(xq, scheduler, Securities.withToken(true), RuntimeLog.NONE, Securities.SAME_USER);
        assertEquals(200, tokened.handle(ApiRequest.of("GET", "/xqueues").withHost("gpu-7.corp.example")
                .withAuthorization("Bearer " + Securities.TOKEN)).status());
        // the dashboard's files hold no data: served whatever the name
        assertEquals(200, api.handle(ApiRequest.of("GET", "/").withHost("evil.example")).status());
    }

    @Test
    void allowedHostsMustBeHostNames() {
        HttpConfig named = new Named(config("127.0.0.1", "", false, -1), new String[] {" Gpu-7.Example ", "tunnel"});
        assertEquals(List.of("gpu-7.example", "tunnel"), HttpSettings.from(named, NO_PROPS::get).allowedHosts());
        for (String bad : new String[] {"*.example", "host:8080", "a..b", "-a.example", "", "h\u00f6st", "x".repeat(64)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HttpSettings.from(new Named(config("127.0.0.1", "", false, -1), new String[] {bad}), NO_PROPS::get), bad);
            assertEquals("allowedHosts entry '" + bad + "' is not a host name: letters, digits, '-' and '.', at most 253 characters, "
                    + "no port, no wildcard (localhost and IP addresses are always allowed)", e.getMessage());
        }
    }

    /** A configuration with allowedHosts set. */
    private record Named(HttpConfig base, String[] allowedHosts) implements HttpConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return HttpConfig.class;
        }

        @Override
        public String enabled() {
            return base.enabled();
        }

        @Override
        public int port() {
            return base.port();
        }

        @Override
        public String bindAddress() {
            return base.bindAddress();
        }

        @Override
        public String token() {
            return base.token();
        }

        @Override
        public boolean tokenOnLoopback() {
            return base.tokenOnLoopback();
        }

        @Override
        public int maxBodyBytes() {
            return base.maxBodyBytes();
        }

        @Override
        public int maxConnections() {
            return base.maxConnections();
        }

        @Override
        public int maxConnectionsPerUser() {
            return base.maxConnectionsPerUser();
        }

        @Override
        public int threadNice() {
            return base.threadNice();
        }

        @Override
        public int penConnections() {
            return base.penConnections();
        }

        @Override
        public int refusalDelayMillis() {
            return base.refusalDelayMillis();
        }
    }

    @Test
    void pathsThatCouldMeanTwoThingsAreRefusedAsJson() {
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        for (String p : List.of("/%2e%2e/xqueues", "/./xqueues", "/api/v1/../xqueues", "/api/v1/%2E/queues", "/xqueues/.",
                "/xqueue/%zz", "/xqueue/%4", "/xqueue/%", "/a\u0001b", "/caf\u00e9")) {
            ApiResponse r = api.handle(ApiRequest.of("GET", p));
            assertEquals(400, r.status(), p);
            assertTrue(r.body().startsWith("{\"error\":\"path '"), p + ": " + r.body());
        }
        assertEquals("{\"error\":\"path '/xqueue/%zz' is not URL-encoded correctly: '%' at 8 must be followed by two hex digits\"}",
                api.handle(ApiRequest.of("GET", "/xqueue/%zz")).body());
        assertEquals("{\"error\":\"path '/a\\\\x01b' has a character outside printable ASCII at 2; percent-encode it\"}",
                api.handle(ApiRequest.of("GET", "/a\u0001b")).body());
        assertTrue(api.handle(ApiRequest.of("GET", "/%2e%2e/xqueues")).body().startsWith(
                "{\"error\":\"path '/%2e%2e/xqueues' has a '..' segment; give a route as it is (routes: GET /xqueues,"));
        // what is only unusual still gets its answer: a name with an encoded '/' and dots inside a segment
        assertEquals(404, api.handle(ApiRequest.of("GET", "/api/v1/queues/a%2Fb")).status());
        assertEquals(404, api.handle(ApiRequest.of("GET", "/api/v1/queues/a..b")).status());
    }

    @Test
    void peersAreJudgedByTheirLiteralAddress() {
        assertTrue(ApiServlet.loopback("127.0.0.1"));
        assertTrue(ApiServlet.loopback("127.5.6.7"));
        assertTrue(ApiServlet.loopback("[::1]"));
        assertTrue(ApiServlet.loopback("0:0:0:0:0:0:0:1"));
        assertTrue(!ApiServlet.loopback("10.0.0.1"));
        assertTrue(!ApiServlet.loopback("localhost"), "a name is not an address: no lookup");
        assertTrue(!ApiServlet.loopback(null));
    }
}
