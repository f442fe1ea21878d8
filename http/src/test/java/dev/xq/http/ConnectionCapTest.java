package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.Annotation;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cap on open connections (issue 41, item 5) on a real Jetty, the one Felix's bundle holds,
 * put on as Felix's {@code ConnectorFactoryTracker} does: the server started with its HTTP
 * connector, then the factory's connector added and started.
 */
class ConnectionCapTest {

    /** Answers every request 200 "ok". */
    static final class Ok extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            response.setStatus(200);
            response.write(true, ByteBuffer.wrap("ok".getBytes(StandardCharsets.US_ASCII)), callback);
            return true;
        }
    }

    private final Server server = new Server();
    private final SecurityTest.Errors log = new SecurityTest.Errors();
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        server.stop();
    }

    /** @return the port of a started Jetty with one HTTP connector on 127.0.0.1, as Felix's */
    private int start() throws Exception {
        ServerConnector http = new ServerConnector(server);
        http.setHost("127.0.0.1");
        http.setPort(0);
        server.addConnector(http);
        server.setHandler(new Ok());
        server.start();
        return http.getLocalPort();
    }

    /** As Felix adds a ConnectorFactory's connector. */
    private Connector capped(int max) throws Exception {
        Connector c = new ConnectionCap(max, log).createConnector(server);
        server.addConnector(c);
        c.start();
        return c;
    }

    private Socket request(int port) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        s.getOutputStream().write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    /** @return the status of the answer read within {@code millis}; 0 when none came in time, -1 when the node closed the connection */
    private static int status(Socket s, int millis) throws IOException {
        s.setSoTimeout(millis);
        InputStream in = s.getInputStream();
        StringBuilder line = new StringBuilder();
        try {
            for (int b = in.read(); b >= 0; b = in.read()) {
                if (b == '\n') {
                    String[] f = line.toString().trim().split(" ");
                    return f.length > 1 ? Integer.parseInt(f[1]) : -1;
                }
                line.append((char) b);
            }
            return -1;
        } catch (SocketTimeoutException quiet) {
            return 0;
        } catch (IOException reset) {
            return -1;
        }
    }

    /** Reads and drops the rest of an answer of 200 "ok" (its headers and its two bytes). */
    private static void drain(Socket s) throws IOException {
        s.setSoTimeout(5_000);
        InputStream in = s.getInputStream();
        String seen = "";
        while (!seen.endsWith("\r\n\r\nok")) {
            int b = in.read();
            if (b < 0) {
                return;
            }
            seen = (seen + (char) b).substring(Math.max(0, seen.length() - 8));
        }
    }

    @Test
    void beyondTheCapConnectionsAreNotServedIdleOnesMakeRoomAndTheApiAnswersAfterTheFlood() throws Exception {
        int port = start();
        Connector carrier = capped(4);
        List<Socket> first = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Socket s = request(port);
            assertEquals(200, status(s, 5_000), "connection " + i + " of 4 is served");
            drain(s);
            first.add(s);
        }
        List<Socket> extra = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            extra.add(request(port)); // the kernel completes the handshake: the connector accepts it or not
        }
        for (Socket s : extra) {
            int st = status(s, 300);
            assertTrue(st <= 0, "a connection beyond the cap of 4 is not served (status " + st + ")");
        }
        assertTrue(log.warnings.stream().anyMatch(w -> w.contains("4 connections are open") && w.contains("maxConnections")),
                "reaching the cap is said, with the setting: " + log.warnings);
        // at the cap, idle connections are closed after a second: they make room for the waiting ones
        long t0 = System.nanoTime();
        for (Socket s : first) {
            assertEquals(-1, status(s, 5_000), "an idle connection is closed at the cap");
        }
        long closedMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(closedMs < 3_000, "idle connections closed " + closedMs + " ms into the cap, not after the connector's 30 s");
        int served = 0;
        for (Socket s : extra) {
            if (status(s, 5_000) == 200) {
                served++;
            }
        }
        // one caught in the middle of its accept when the cap was reached is closed; the others waited and are served
        assertTrue(served >= extra.size() - 1, served + " of " + extra.size() + " waiting connections served once there was room");
        for (Socket s : sockets) {
            s.close();
        }
        Socket fresh = request(port);
        assertEquals(200, status(fresh, 5_000), "a fresh client is served after the flood");
        // the factory's service going away takes the cap off (Felix stops and removes its connector)
        carrier.stop();
        server.removeConnector(carrier);
        List<Socket> uncapped = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            uncapped.add(request(port));
        }
        for (Socket s : uncapped) {
            assertEquals(200, status(s, 5_000), "without the cap every connection is served");
        }
    }

    /**
     * The CI failure of 28 Nov (HostileIT d05): connections accepted in one burst reach the cap
     * while Jetty's limit counts them as pending, before their endpoints exist, so the short idle
     * timeout it puts on the connected ones missed them: served and then idle, they held their
     * places for the connector's 30 s and the clients waiting behind them were not served.
     */
    @Test
    void connectionsAcceptedInOneBurstAtTheCapAreClosedWhenIdleAndTheWaitingOnesAreServed() throws Exception {
        int port = start();
        capped(4);
        List<Socket> burst = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            burst.add(request(port)); // all at once: the acceptor takes 4 before any is served
        }
        long t0 = System.nanoTime();
        int served = 0;
        for (Socket s : burst) {
            if (status(s, (int) Math.max(1, 9_000 - (System.nanoTime() - t0) / 1_000_000)) == 200) {
                served++;
            }
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        // the three rounds of 4 each wait for the round before to idle out (1 s); one caught mid-accept may be closed
        assertTrue(served >= burst.size() - 1, served + " of " + burst.size() + " burst connections served within " + ms
                + " ms (idle ones at the cap are closed after " + ConnectionCap.IDLE_AT_LIMIT_MS + " ms)");
    }

    @Test
    void theCarrierListensNowhereAndNamesTheLimitedConnectorsAddress() throws Exception {
        int port = start();
        ServerConnector carrier = (ServerConnector) capped(8);
        assertEquals("127.0.0.1", carrier.getHost());
        assertEquals(0, carrier.getPort(), "the address Felix names the endpoint by is the limited connector's (configured port)");
        assertEquals(-1, carrier.getLocalPort());
        assertTrue(carrier.isStarted());
        assertTrue(log.infos.stream().anyMatch(l -> l.contains("at most 8 connections at once on [127.0.0.1:" + port + "]")), log.infos.toString());
        // the server's only socket is the HTTP connector's: nothing else accepts
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress("127.0.0.1", 0));
        }
        assertEquals(2, server.getConnectors().length);
    }

    /** Connections counted per user, the user said by a stand-in for the kernel (the test runs as one user). */
    @Test
    void oneUserPastItsCapIsClosedAtOnceWhileOthersAndTheUncountedAreServed() throws Exception {
        int port = start();
        java.util.concurrent.atomic.AtomicInteger user = new java.util.concurrent.atomic.AtomicInteger(1001);
        ConnectionCap cap = new ConnectionCap(16, 2, log, System::nanoTime, ch -> user.get());
        ConnectionCap.Carrier carrier = (ConnectionCap.Carrier) cap.createConnector(server);
        server.addConnector(carrier);
        carrier.start();
        List<Socket> mine = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Socket s = request(port);
            assertEquals(200, status(s, 5_000), "connection " + i + " of user 1001 (cap 2) is served");
            drain(s);
            mine.add(s);
        }
        Socket third = request(port);
        assertEquals(-1, status(third, 5_000), "user 1001's third connection is closed at once");
        assertTrue(eventually(() -> log.warnings.stream().anyMatch(w -> w.contains("local user uid 1001 has 2 connections open")
                && w.contains("maxConnectionsPerUser 2"))), "the cap is said, with the user and the setting: " + log.warnings);
        user.set(1002);
        Socket other = request(port);
        assertEquals(200, status(other, 5_000), "another user has room");
        drain(other);
        user.set(ConnectionCap.UNCOUNTED);
        for (int i = 0; i < 4; i++) {
            Socket s = request(port);
            assertEquals(200, status(s, 5_000), "the node's own user and root are not counted (" + i + ")");
            drain(s);
        }
        assertEquals(Map.of(1001, 2, 1002, 1), carrier.openPerUser(), "what is counted");
        // one of user 1001's closes: it has room for one more
        mine.getFirst().close();
        assertTrue(eventually(() -> carrier.openPerUser().getOrDefault(1001, 0) == 1), "the closed one is no longer counted: "
                + carrier.openPerUser());
        user.set(1001);
        Socket again = request(port);
        assertEquals(200, status(again, 5_000), "user 1001 is served again once under its cap");
    }

    /**
     * With a pen, a user's connection past its cap is held open and unanswered (its client waits
     * instead of reconnecting at once), is not counted as open, and is reset when the pen lets go.
     */
    @Test
    void pastItsCapAUsersConnectionIsHeldUnreadWhenThereIsAPen() throws Exception {
        int port = start();
        Pen pen = new Pen(8, 30_000_000_000L, System::nanoTime, log, -1);
        ConnectionCap cap = new ConnectionCap(16, 1, log, System::nanoTime, ch -> 1001).pen(pen);
        ConnectionCap.Carrier carrier = (ConnectionCap.Carrier) cap.createConnector(server);
        server.addConnector(carrier);
        carrier.start();
        Socket first = request(port);
        assertEquals(200, status(first, 5_000), "user 1001's first connection (cap 1) is served");
        drain(first);
        Socket second = request(port);
        assertEquals(0, status(second, 500), "the second is held: open, never answered");
        assertTrue(eventually(() -> pen.size() == 1), "in the pen: " + pen.size());
        assertEquals(Map.of(1001, 1), carrier.openPerUser(), "not counted among the user's open connections");
        assertTrue(eventually(() -> log.warnings.stream().anyMatch(w -> w.contains("local user uid 1001") && w.contains("held unread for 30 s")
                && w.contains("1 of them held"))), log.warnings.toString());
        pen.close();
        assertEquals(-1, status(second, 2_000), "reset once the pen lets go");
    }

    private static boolean eventually(java.util.function.BooleanSupplier c) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    @Test
    void maxConnectionsPerUserOutsideItsRangeIsRefusedByName() {
        for (int bad : new int[] {0, -1, 65537}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpSettings.from(
                    new Capped(SecurityTest.config("127.0.0.1", "", false, -1), 256, bad), SecurityTest.NO_PROPS::get));
            assertEquals("maxConnectionsPerUser " + bad + " is out of range [1, 65536] (default 64)", e.getMessage());
        }
        HttpSettings s = HttpSettings.from(new Capped(SecurityTest.config("127.0.0.1", "", false, -1), 256, 8), SecurityTest.NO_PROPS::get);
        assertEquals(8, s.maxConnectionsPerUser());
        assertTrue(s.toString().contains("maxConnectionsPerUser=8"), s.toString());
    }

    @Test
    void maxConnectionsOutsideItsRangeIsRefusedByName() {
        for (int bad : new int[] {0, -1, 65537}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HttpSettings.from(new Capped(SecurityTest.config("127.0.0.1", "", false, -1), bad), SecurityTest.NO_PROPS::get));
            assertEquals("maxConnections " + bad + " is out of range [1, 65536] (default 256)", e.getMessage());
        }
        HttpSettings s = HttpSettings.from(new Capped(SecurityTest.config("127.0.0.1", "", false, -1), 16), SecurityTest.NO_PROPS::get);
        assertEquals(16, s.maxConnections());
        assertTrue(s.toString().contains("maxConnections=16"), s.toString());
        assertEquals(256, HttpSettings.from(SecurityTest.config("127.0.0.1", "", false, -1), SecurityTest.NO_PROPS::get).maxConnections());
    }

    @Test
    void aTakenPortIsNamedInOneLine() throws Exception {
        try (ServerSocket other = new ServerSocket()) {
            other.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = other.getLocalPort();
            assertEquals("127.0.0.1:" + port + " is taken (another node, or another program, listens there); stop it or set port "
                    + "(PID dev.xq.http, or the framework property xq.http.port)", HttpComponent.taken("127.0.0.1", port, 100));
            other.close();
            assertEquals(null, HttpComponent.taken("127.0.0.1", port, 100), "free once the other program is gone");
        }
        assertEquals(null, HttpComponent.taken("127.0.0.1", 0, 0), "any free port is never taken");
    }

    /** A configuration with maxConnections set. */
    private record Capped(HttpConfig base, int maxConnections, int maxConnectionsPerUser) implements HttpConfig {
        Capped(HttpConfig base, int maxConnections) {
            this(base, maxConnections, HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER);
        }

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
        public String[] allowedHosts() {
            return base.allowedHosts();
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

        @Override
        public int maxBodyBytes() {
            return base.maxBodyBytes();
        }
    }
}
