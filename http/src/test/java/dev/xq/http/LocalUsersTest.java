package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.http.LoopbackPeers.Connection;
import dev.xq.http.LoopbackPeers.Owner;
import dev.xq.runtime.log.RuntimeLog;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Changes over HTTP from loopback: only the node's own user (and root) without a token; another local
 * user needs the token. Reads stay open to every local user.
 */
class LocalUsersTest {

    static final int OTHER = 1001;

    Fakes.Service xq;
    Fakes.Scheduler scheduler;
    Fakes.Queue q;
    QueueConfig before;

    @BeforeEach
    void node() {
        xq = new Fakes.Service();
        scheduler = new Fakes.Scheduler("hpf", "kedf", "edf");
        q = xq.add(5, "victim/default", "sim0", "victim", 0);
        before = q.config;
    }

    /** Every change route of both APIs, with a request that would succeed from the node's user. */
    static List<ApiRequest> changes() {
        return List.of(
                ApiRequest.of("POST", "/api/v1/suspend", "{\"queue\":\"victim/default\"}"),
                ApiRequest.of("POST", "/api/v1/resume", "{\"queue\":5}"),
                ApiRequest.of("POST", "/api/v1/policy", "{\"name\":\"edf\"}"),
                ApiRequest.of("POST", "/api/v1/hint", "{\"queue\":5,\"kind\":\"priority\",\"values\":[9]}"),
                ApiRequest.of("POST", "/api/v1/config", "{\"queue\":5,\"threshold\":4,\"batch\":2}"),
                ApiRequest.of("POST", "/policy?policy=7"),
                ApiRequest.of("POST", "/hint", "{\"hint_type\":1,\"handle\":5,\"priority\":9}"),
                ApiRequest.of("POST", "/config/5?level=2&threshold=8&batch_size=4"));
    }

    void unchanged(String what) {
        assertTrue(!q.suspendedByApp, what + ": not suspended");
        assertEquals("hpf", scheduler.selected, what + ": policy");
        assertTrue(q.hints().isEmpty(), what + ": hints");
        assertEquals(before, q.config, what + ": config");
    }

    @Test
    void anotherUsersChangesAreRefusedNamingItsUidAndChangeNothing() {
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.peerIs(OTHER));
        for (ApiRequest r : changes()) {
            ApiResponse a = api.handle(r);
            String what = r.method() + " " + r.path();
            assertEquals(403, a.status(), what + ": " + a.body());
            assertEquals(Json.write(Json.object("error", what + " refused: this connection belongs to uid 1001; changes over HTTP "
                    + "from another local user need the node's token; the node runs as uid 1000 (it and root, uid 0, need none; "
                    + "reading needs none); this node has no token configured (PID dev.xq.http, token)")), a.body());
            unchanged(what);
        }
        // a method that is no read is a change, whatever the route: refused before anything else is looked at
        assertEquals(403, api.handle(ApiRequest.of("DELETE", "/api/v1/queues/5")).status());
        assertEquals(403, api.handle(ApiRequest.of("PUT", "/api/v1/nothing", "{}")).status());
    }

    /**
     * A user refused more than ten times in a second gets its further refusals after the delay
     * (its flood waits instead of making the node answer as fast as the CPUs allow); the same
     * words, nothing changed; at once again a second later; never with the delay 0.
     */
    @Test
    void aUserRefusedOftenWaitsForItsNextRefusals() {
        long[] now = {5_000_000_000L};
        List<Long> waits = new java.util.ArrayList<>();
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.peerIs(OTHER));
        api.pacing(() -> now[0], waits::add);
        ApiRequest suspend = ApiRequest.of("POST", "/api/v1/suspend", "{\"queue\":\"victim/default\"}");
        String first = api.handle(suspend).body();
        for (int i = 1; i < 15; i++) {
            ApiResponse a = api.handle(suspend);
            assertEquals(403, a.status());
            assertEquals(first, a.body(), "the same refusal");
        }
        assertEquals(5, waits.size(), "10 at once, the next 5 after the delay: " + waits);
        assertTrue(waits.stream().allMatch(w -> w == HttpSettings.DEFAULT_REFUSAL_DELAY_MILLIS * 1_000_000L), waits.toString());
        unchanged("refused often");
        now[0] += 1_100_000_000L;
        api.handle(suspend);
        assertEquals(5, waits.size(), "a second later: at once again");

        HttpSettings off = new HttpSettings(true, 0, "127.0.0.1", true, "", false, 4096, List.of(), HttpSettings.DEFAULT_MAX_CONNECTIONS,
                HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER, HttpSettings.DEFAULT_THREAD_NICE, HttpSettings.DEFAULT_PEN_CONNECTIONS, 0);
        Api never = new Api(xq, scheduler, off, RuntimeLog.NONE, Securities.peerIs(OTHER));
        List<Long> none = new java.util.ArrayList<>();
        never.pacing(() -> now[0], none::add);
        for (int i = 0; i < 30; i++) {
            assertEquals(403, never.handle(suspend).status());
        }
        assertTrue(none.isEmpty(), "refusalDelayMillis 0: always at once: " + none);
    }

    @Test
    void theVictimsExampleFromTheIssue() {
        // an unprivileged user: curl -X POST localhost:50000/api/v1/suspend -d '{"queue":"victim/default"}'
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.peerIs(OTHER));
        ApiResponse r = api.handle(ApiRequest.of("POST", "/api/v1/suspend", "{\"queue\":\"victim/default\"}").withHost("localhost:50000"));
        assertEquals(403, r.status());
        assertTrue(r.body().contains("uid 1001") && r.body().contains("the node runs as uid 1000"), r.body());
        assertTrue(!q.suspendedByApp);
    }

    @Test
    void readsStayOpenToOtherUsers() {
        AtomicInteger lookups = new AtomicInteger();
        LoopbackPeers other = new LoopbackPeers(Securities.NODE_UID, c -> {
            lookups.incrementAndGet();
            return Owner.of(OTHER);
        });
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, other);
        for (String p : List.of("/xqueues", "/xqueue/5", "/policy", "/metrics", "/api/v1/queues", "/api/v1/queues/5",
                "/api/v1/policies", "/api/v1/scheduler", "/", "/dashboard.js")) {
            ApiResponse r = api.handle(ApiRequest.of("GET", p));
            assertEquals(200, r.status(), p + ": " + r.body());
        }
        assertEquals(0, lookups.get(), "reads look no one up");
    }

    @Test
    void theNodesOwnUserAndRootMayChange() {
        for (int uid : new int[] {Securities.NODE_UID, 0}) {
            node();
            Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.peerIs(uid));
            for (ApiRequest r : changes()) {
                ApiResponse a = api.handle(r);
                assertEquals(200, a.status(), "uid " + uid + ": " + r.method() + " " + r.path() + ": " + a.body());
            }
            assertEquals("kedf", scheduler.selected, "uid " + uid);
            assertEquals(List.of(new Hint.Priority(9)), q.hints(), "uid " + uid);
            assertTrue(api.handle(ApiRequest.of("POST", "/api/v1/suspend", "{\"queue\":5}")).status() == 200 && q.suspendedByApp);
        }
    }

    @Test
    void withTheTokenAnyUserMayChange() {
        Api api = new Api(xq, scheduler, Securities.loopbackWithToken(), RuntimeLog.NONE, Securities.peerIs(OTHER));
        ApiRequest suspend = ApiRequest.of("POST", "/api/v1/suspend", "{\"queue\":5}");
        ApiResponse none = api.handle(suspend);
        assertEquals(403, none.status());
        assertTrue(none.body().endsWith("reading needs none); send 'Authorization: Bearer <token>'\"}"), none.body());
        ApiResponse wrong = api.handle(suspend.withAuthorization("Bearer not-the-token-at-all"));
        assertEquals(403, wrong.status());
        assertTrue(wrong.body().contains("uid 1001") && wrong.body().endsWith("the Authorization header sent does not hold it\"}"),
                wrong.body());
        assertTrue(!q.suspendedByApp);
        assertEquals(200, api.handle(suspend.withAuthorization("Bearer " + Securities.TOKEN)).status());
        assertTrue(q.suspendedByApp);
    }

    @Test
    void anOwnerThatCannotBeFoundIsRefused() {
        LoopbackPeers lost = new LoopbackPeers(Securities.NODE_UID, c -> Owner.unknown("no socket 127.0.0.1:41299 -> 127.0.0.1:50000 is in /proc/net/tcp, /proc/net/tcp6"));
        Api api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, lost);
        ApiResponse r = api.handle(ApiRequest.of("POST", "/policy?policy=7"));
        assertEquals(403, r.status());
        assertEquals("{\"error\":\"POST /policy refused: the local user of this connection could not be found (no socket 127.0.0.1:41299 -> "
                + "127.0.0.1:50000 is in /proc/net/tcp, /proc/net/tcp6); changes over HTTP from another local user need the node's token; the node runs as uid 1000 (it and "
                + "root, uid 0, need none; reading needs none); this node has no token configured (PID dev.xq.http, token)\"}", r.body());
        // the real lookup with no connection known: refused too
        Api system = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, LoopbackPeers.system());
        ApiResponse s = system.handle(ApiRequest.of("POST", "/policy?policy=7"));
        assertEquals(403, s.status());
        assertTrue(s.body().contains("could not be found (the server did not give the connection's addresses)"), s.body());
        unchanged("unknown owner");
    }

    @Test
    void tokenOnLoopbackStillWantsTheTokenFromEveryone() {
        AtomicInteger lookups = new AtomicInteger();
        LoopbackPeers own = new LoopbackPeers(Securities.NODE_UID, c -> {
            lookups.incrementAndGet();
            return Owner.of(Securities.NODE_UID);
        });
        Api api = new Api(xq, scheduler, Securities.withToken(true), RuntimeLog.NONE, own);
        assertEquals(401, api.handle(ApiRequest.of("POST", "/policy?policy=7")).status(), "the node's user, no token");
        assertEquals(401, api.handle(ApiRequest.of("GET", "/xqueues")).status());
        assertEquals("hpf", scheduler.selected);
        assertEquals(200, api.handle(ApiRequest.of("POST", "/policy?policy=7").withAuthorization("Bearer " + Securities.TOKEN)).status());
        assertEquals(0, lookups.get(), "with the token required, the uid is not asked");
    }

    // ------------------------------------------------------------------ through the servlet

    @Test
    void theServletHandsTheConnectionsEndsToTheLookup() throws IOException {
        List<Connection> asked = new ArrayList<>();
        LoopbackPeers other = new LoopbackPeers(Securities.NODE_UID, c -> {
            asked.add(c);
            return Owner.of(OTHER);
        });
        ApiServlet servlet = new ApiServlet(new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, other));
        Answer a = serve(servlet, "POST", "/api/v1/suspend", "{\"queue\":\"victim/default\"}", "127.0.0.1", 41234, "127.0.0.1", 50000);
        assertEquals(403, a.status);
        assertTrue(a.body.contains("this connection belongs to uid 1001"), a.body);
        assertEquals(List.of(new Connection(InetAddress.ofLiteral("127.0.0.1"), 41234, InetAddress.ofLiteral("127.0.0.1"), 50000)), asked);
        assertTrue(!q.suspendedByApp);

        Answer v6 = serve(servlet, "POST", "/hint", "{\"hint_type\":1,\"handle\":5,\"priority\":9}", "[::1]", 41000, "[::1]", 50000);
        assertEquals(403, v6.status);
        assertEquals(new Connection(InetAddress.ofLiteral("::1"), 41000, InetAddress.ofLiteral("::1"), 50000), asked.get(1));

        Answer read = serve(servlet, "GET", "/api/v1/queues", null, "127.0.0.1", 41235, "127.0.0.1", 50000);
        assertEquals(200, read.status);
        assertEquals(2, asked.size(), "a read is not looked up");
        unchanged("servlet");
    }

    /** The servlet with the real tables: a real connection of this process may change; one no one holds may not. */
    @Test
    void theServletWithTheRealTables() throws IOException {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")), "Linux /proc/net/tcp");
        ApiServlet servlet = new ApiServlet(new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, LoopbackPeers.system()));
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 0));
            try (Socket client = new Socket(server.getInetAddress(), server.getLocalPort()); Socket accepted = server.accept()) {
                Answer own = serve(servlet, "POST", "/api/v1/suspend", "{\"queue\":5}", accepted.getInetAddress().getHostAddress(),
                        accepted.getPort(), accepted.getLocalAddress().getHostAddress(), accepted.getLocalPort());
                assertEquals(200, own.status, own.body);
                assertTrue(q.suspendedByApp);
                Answer nobody = serve(servlet, "POST", "/policy?policy=7", null, "127.0.0.1", accepted.getPort() == 65535 ? 1
                        : accepted.getPort() + 1, "127.0.0.1", accepted.getLocalPort());
                assertEquals(403, nobody.status, nobody.body);
                assertTrue(nobody.body.contains("could not be found (no socket 127.0.0.1:"), nobody.body);
                assertEquals("hpf", scheduler.selected);
            }
        }
    }

    /**
     * The servlet with the real tables and a real other user: a connection made by uid 65534 (nobody, through
     * setpriv and bash's /dev/tcp) is refused naming that uid. Needs root (to become nobody) and setpriv.
     */
    @Test
    void anotherRealUsersConnectionIsRefused() throws Exception {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")), "Linux /proc/net/tcp");
        Assumptions.assumeTrue(LoopbackPeers.processUid() == 0, "root, to connect as another user");
        Path setpriv = List.of(Path.of("/usr/bin/setpriv"), Path.of("/bin/setpriv")).stream().filter(Files::isExecutable).findFirst().orElse(null);
        Path bash = Path.of("/bin/bash");
        Assumptions.assumeTrue(setpriv != null && Files.isExecutable(bash), "setpriv and bash");
        ApiServlet servlet = new ApiServlet(new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, LoopbackPeers.system()));
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 0));
            server.setSoTimeout(10_000);
            Process nobody = new ProcessBuilder(setpriv.toString(), "--reuid=65534", "--regid=65534", "--clear-groups", bash.toString(),
                    "-c", "exec 3<>/dev/tcp/127.0.0.1/" + server.getLocalPort() + "; read -t 10 line <&3").redirectErrorStream(true).start();
            try (Socket accepted = server.accept()) {
                Answer a = serve(servlet, "POST", "/api/v1/suspend", "{\"queue\":\"victim/default\"}",
                        accepted.getInetAddress().getHostAddress(), accepted.getPort(), accepted.getLocalAddress().getHostAddress(),
                        accepted.getLocalPort());
                assertEquals(403, a.status, a.body);
                assertTrue(a.body.contains("this connection belongs to uid 65534;") && a.body.contains("the node runs as uid 0"), a.body);
                assertTrue(!q.suspendedByApp);
                assertEquals(200, serve(servlet, "GET", "/api/v1/queues", null, accepted.getInetAddress().getHostAddress(),
                        accepted.getPort(), accepted.getLocalAddress().getHostAddress(), accepted.getLocalPort()).status, "reading");
            } finally {
                nobody.destroy();
                nobody.waitFor();
            }
        }
    }

    record Answer(int status, String body) {
    }

    /** Drives {@link ApiServlet} with a request as Jetty gives one: addresses and ports of both ends. */
    static Answer serve(ApiServlet servlet, String method, String pathAndQuery, String body, String remoteAddr, int remotePort,
                        String localAddr, int localPort) throws IOException {
        int qm = pathAndQuery.indexOf('?');
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        ByteArrayInputStream in = new ByteArrayInputStream(bytes);
        Map<String, Object> answers = new HashMap<>();
        answers.put("getMethod", method);
        answers.put("getRequestURI", qm < 0 ? pathAndQuery : pathAndQuery.substring(0, qm));
        answers.put("getQueryString", qm < 0 ? null : pathAndQuery.substring(qm + 1));
        answers.put("getContextPath", "");
        answers.put("getRemoteAddr", remoteAddr);
        answers.put("getRemotePort", remotePort);
        answers.put("getLocalAddr", localAddr);
        answers.put("getLocalPort", localPort);
        answers.put("getContentLengthLong", (long) bytes.length);
        answers.put("getInputStream", new ServletInputStream() {
            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener l) {
            }

            @Override
            public int read() {
                return in.read();
            }
        });
        HttpServletRequest req = (HttpServletRequest) java.lang.reflect.Proxy.newProxyInstance(LocalUsersTest.class.getClassLoader(),
                new Class<?>[] {HttpServletRequest.class}, (p, m, args) -> switch (m.getName()) {
                    case "getHeader" -> "Host".equals(args[0]) ? "127.0.0.1:50000" : null;
                    default -> {
                        if (!answers.containsKey(m.getName())) {
                            throw new UnsupportedOperationException("the servlet asked " + m.getName());
                        }
                        yield answers.get(m.getName());
                    }
                });
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int[] status = {0};
        ServletOutputStream sos = new ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener l) {
            }

            @Override
            public void write(int b) {
                out.write(b);
            }
        };
        HttpServletResponse resp = (HttpServletResponse) java.lang.reflect.Proxy.newProxyInstance(LocalUsersTest.class.getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (p, m, args) -> switch (m.getName()) {
                    case "setStatus" -> {
                        status[0] = (Integer) args[0];
                        yield null;
                    }
                    case "getOutputStream" -> sos;
                    case "setContentType", "setHeader", "setContentLength" -> null;
                    default -> throw new UnsupportedOperationException("the servlet called " + m.getName());
                });
        servlet.service(req, resp);
        return new Answer(status[0], out.toString(StandardCharsets.UTF_8));
    }
}
