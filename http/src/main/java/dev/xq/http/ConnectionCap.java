package dev.xq.http;

import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.felix.http.jetty.ConnectorFactory;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The HTTP API's cap on open connections (issue 41, item 5: a flood of idle connections took
 * every file descriptor of the node). Felix HTTP Jetty 1.1.8 has no setting for it; the one
 * hook it offers that reaches Jetty's {@code Server} is {@link ConnectorFactory}: each of its
 * Jetty instances, once started with its own HTTP connector, calls every such service with its
 * {@code Server} and adds and starts the connector returned.
 *
 * <p>This factory puts Jetty's own {@link NetworkConnectionLimit} on the server's network
 * connectors (Felix's HTTP connector, listening where {@code dev.xq.http} says): at the limit the
 * connector stops accepting (further clients wait in the kernel's accept queue, which holds no
 * descriptor of the node, and one caught in the middle of its accept is closed), and the idle
 * timeout of the connections open is cut to {@value #IDLE_AT_LIMIT_MS} ms, so that idle ones make
 * room; below the limit again, it accepts and the idle timeout is the connector's. The connector
 * this factory returns listens nowhere: it only carries the limit's life (started when Felix adds
 * it; stopped, and the limit removed, when this service is unregistered). It mirrors the host and
 * port of the server's connector, because Felix lists every connector's address as the runtime's
 * {@code osgi.http.endpoint}: that list names the API's address twice, never another one.
 *
 * <p>Felix offers the factory to each of its Jetty instances in the framework; the node runs one
 * (its default instance is off: {@code org.apache.felix.http.enable=false}).
 */
final class ConnectionCap implements ConnectorFactory {

    /** The idle timeout of the open connections while the limit is reached, in milliseconds. */
    static final long IDLE_AT_LIMIT_MS = 1_000;
    /** How often, at most, reaching the limit is said in the log. */
    static final long LOG_EVERY_NANOS = 60_000_000_000L;

    private final int max;
    private final RuntimeLog log;
    private final LongSupplier nanoTime;

    ConnectionCap(int max, RuntimeLog log) {
        this(max, log, System::nanoTime);
    }

    ConnectionCap(int max, RuntimeLog log, LongSupplier nanoTime) {
        if (max < 1) {
            throw new IllegalArgumentException("maxConnections " + max + " is below 1");
        }
        this.max = max;
        this.log = log;
        this.nanoTime = nanoTime;
    }

    @Override
    public Connector createConnector(Server server) {
        List<ServerConnector> network = new ArrayList<>();
        for (Connector c : server.getConnectors()) {
            if (c instanceof ServerConnector s && !(c instanceof Carrier)) {
                network.add(s);
            }
        }
        return new Carrier(server, network);
    }

    /**
     * The limit, saying in the log when it is reached (rarely: at most once a minute, with a count).
     *
     * <p>Jetty's limit is reached when accepted connections are counted, before their endpoints
     * exist, and it shortens the idle timeout only of the endpoints connected by then: in a burst
     * of accepts, the last ones (often all of them) kept the connector's timeout, and once served
     * and idle they held their places for its 30 s while clients waited (HostileIT d05 in CI, 28
     * Nov). So the limit is also a listener of the connections the connectors open: one opened
     * while limiting gets the short timeout too. The flag is raised before Jetty walks the
     * connected endpoints, and an endpoint is connected before its connection is opened, so each
     * one is reached by the walk, by the listener, or by both.
     */
    private final class Limit extends NetworkConnectionLimit implements Connection.Listener {
        private final String where;
        private long lastSaid = Long.MIN_VALUE;
        private int reachedSince;
        private volatile boolean limiting;

        Limit(List<ServerConnector> connectors) {
            super(max, connectors.toArray(Connector[]::new));
            setEndPointIdleTimeout(IDLE_AT_LIMIT_MS);
            where = connectors.stream().map(c -> c.getHost() + ":" + c.getLocalPort()).toList().toString();
        }

        @Override
        public void onOpened(Connection connection) {
            if (limiting) {
                connection.getEndPoint().setIdleTimeout(IDLE_AT_LIMIT_MS);
            }
        }

        @Override
        protected void unlimit() {
            limiting = false;
            super.unlimit();
        }

        @Override
        protected void limit() {
            limiting = true;
            super.limit();
            reachedSince++;
            long now = nanoTime.getAsLong();
            if (lastSaid == Long.MIN_VALUE || now - lastSaid >= LOG_EVERY_NANOS) {
                log.warn("HTTP API: " + max + " connections are open on " + where + ", the limit (PID " + HttpConfig.PID
                        + ", maxConnections): no more are accepted until some close (clients wait in the kernel's queue), "
                        + "and open connections idle for " + IDLE_AT_LIMIT_MS + " ms are closed meanwhile"
                        + (lastSaid == Long.MIN_VALUE ? "" : "; reached " + reachedSince + " times since this was last said"), null);
                lastSaid = now;
                reachedSince = 0;
            }
        }
    }

    /**
     * The connector Felix adds: it opens no socket and starts no thread; its life is the limit's.
     * Jetty's {@code NetworkConnectionLimit} attaches itself to connectors as a bean, which a
     * started {@code ServerConnector} no longer passes to its selector manager (it does so in its
     * {@code doStart}): the limit is given to their selector managers here.
     */
    final class Carrier extends ServerConnector {
        private final List<ServerConnector> network;
        private volatile Limit limit;

        Carrier(Server server, List<ServerConnector> network) {
            super(server, 0, 1, new HttpConnectionFactory());
            this.network = List.copyOf(network);
            if (!network.isEmpty()) {
                // Felix names the runtime's endpoints after its connectors': the same address as the real one
                setHost(network.getFirst().getHost());
                setPort(network.getFirst().getPort());
            }
        }

        @Override
        protected void doStart() throws Exception {
            if (network.isEmpty()) {
                return; // a Jetty without a network connector: nothing to limit
            }
            Limit l = new Limit(network);
            l.start();
            for (ServerConnector c : network) {
                c.getSelectorManager().addEventListener(l);
                c.addEventListener(l); // read as each connection is made: its connections tell the limit they opened
            }
            limit = l;
            log.info("HTTP API: at most " + max + " connections at once on " + l.where + " (PID " + HttpConfig.PID + ", maxConnections)");
        }

        @Override
        protected void doStop() throws Exception {
            Limit l = limit;
            limit = null;
            if (l == null) {
                return;
            }
            for (ServerConnector c : network) {
                c.getSelectorManager().removeEventListener(l);
                c.removeEventListener(l);
            }
            l.stop();
            for (ServerConnector c : network) {
                if (c.isRunning()) {
                    c.setAccepting(true); // stopped while limiting: the connector accepts again
                }
            }
        }

        /** @return the connections the limit counts now (tests) */
        int openConnections() {
            Limit l = limit;
            return l == null ? 0 : l.getNetworkConnectionCount();
        }

        @Override
        public void open() {
            // listens nowhere
        }

        @Override
        public boolean isOpen() {
            return false;
        }

        @Override
        public void close() {
            // nothing was opened
        }

        @Override
        public CompletableFuture<Void> shutdown() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public int getLocalPort() {
            return -1;
        }

        @Override
        public String toString() {
            return "XQ connection cap (maxConnections " + max + ") of " + network;
        }
    }
}
