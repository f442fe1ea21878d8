package dev.xq.http;

import dev.xq.runtime.log.RuntimeLog;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import org.apache.felix.http.jetty.ConnectorFactory;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

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
 * <p>Per user ({@code maxConnectionsPerUser}): as each connection is accepted, the kernel is
 * asked whose socket the loopback peer's end is ({@link KernelUsers}); a user other than the
 * node's and root who has that many open gets the new one closed at once. One user's flood then
 * holds at most that many of the places, and the operator's commands and Prometheus find room
 * (issue 41: with the cap for all only, a flood held all 256 and operator commands took 1-15 s or
 * failed).
 *
 * <p>Felix offers the factory to each of its Jetty instances in the framework; the node runs one
 * (its default instance is off: {@code org.apache.felix.http.enable=false}).
 */
final class ConnectionCap implements ConnectorFactory {

    /** The idle timeout of the open connections while the limit is reached, in milliseconds. */
    static final long IDLE_AT_LIMIT_MS = 1_000;
    /** How often, at most, reaching the limit is said in the log. */
    static final long LOG_EVERY_NANOS = 60_000_000_000L;

    /** {@link #userOf}: not counted (the node's own user, root, or no way to tell). */
    static final int UNCOUNTED = Integer.MIN_VALUE;
    /** {@link #userOf}: a peer on another host (all of them count as one user). */
    static final int OTHER_HOSTS = -2;
    /** {@link #userOf}: a loopback peer whose user the kernel did not say. */
    static final int UNKNOWN = -1;

    private final int max;
    private final int perUser;
    private final RuntimeLog log;
    private final LongSupplier nanoTime;
    private final ToIntFunction<SelectableChannel> userOf;
    /** The server's threads' priority ({@link ThreadNice}), or null to leave them as they are. */
    private final ThreadNice nice;
    /** Where connections refused over a user's cap are held ({@link Pen}), or null to close them at once. */
    private volatile Pen pen;

    ConnectionCap(int max, int perUser, ThreadNice nice, RuntimeLog log) {
        this(max, perUser, log, System::nanoTime, new KernelUsers(LoopbackPeers.processUid(), log), nice);
    }

    ConnectionCap(int max, RuntimeLog log) {
        this(max, Integer.MAX_VALUE, log, System::nanoTime, c -> UNCOUNTED, null);
    }

    ConnectionCap(int max, int perUser, RuntimeLog log, LongSupplier nanoTime, ToIntFunction<SelectableChannel> userOf) {
        this(max, perUser, log, nanoTime, userOf, null);
    }

    /**
     * @param perUser the most connections one user may keep open (users {@link #UNCOUNTED} are not counted)
     * @param userOf the user of an accepted channel, asked as it is accepted
     * @param nice the server's threads' priority, applied as it starts and as connections are accepted; null: none
     */
    ConnectionCap(int max, int perUser, RuntimeLog log, LongSupplier nanoTime, ToIntFunction<SelectableChannel> userOf, ThreadNice nice) {
        if (max < 1) {
            throw new IllegalArgumentException("maxConnections " + max + " is below 1");
        }
        if (perUser < 1) {
            throw new IllegalArgumentException("maxConnectionsPerUser " + perUser + " is below 1");
        }
        this.max = max;
        this.perUser = perUser;
        this.log = log;
        this.nanoTime = nanoTime;
        this.userOf = userOf;
        this.nice = nice;
    }

    /** Holds the connections refused over a user's cap in {@code pen} instead of closing them at once; null: close them. */
    ConnectionCap pen(Pen pen) {
        this.pen = pen;
        return this;
    }

    /**
     * The user of an accepted connection: for a loopback peer, the uid the kernel gives its socket
     * ({@link SockDiag}: one lookup by the connection's addresses, cheap enough for every accept;
     * the {@code /proc} tables are not, so where netlink cannot be used nobody is counted, said once
     * in the log); the node's own uid and root are not counted; peers on other hosts are one user.
     */
    static final class KernelUsers implements ToIntFunction<SelectableChannel> {
        private final int nodeUid;
        private final RuntimeLog log;
        private volatile boolean off;

        KernelUsers(int nodeUid, RuntimeLog log) {
            this.nodeUid = nodeUid;
            this.log = log;
        }

        @Override
        public int applyAsInt(SelectableChannel channel) {
            if (off || !(channel instanceof SocketChannel sc)) {
                return UNCOUNTED;
            }
            try {
                if (!(sc.getRemoteAddress() instanceof InetSocketAddress peer) || !(sc.getLocalAddress() instanceof InetSocketAddress local)) {
                    return UNCOUNTED;
                }
                if (!peer.getAddress().isLoopbackAddress()) {
                    return OTHER_HOSTS;
                }
                String[] why = new String[1];
                LoopbackPeers.Owner o = SockDiag.owner(new LoopbackPeers.Connection(peer.getAddress(), peer.getPort(), local.getAddress(),
                        local.getPort()), why);
                if (o == null) {
                    off = true;
                    log.warn("HTTP API: the users of connections cannot be asked of the kernel (" + why[0] + "); maxConnectionsPerUser (PID "
                            + HttpConfig.PID + ") is not applied, maxConnections is", null);
                    return UNCOUNTED;
                }
                if (o.uid().isEmpty()) {
                    return UNKNOWN;
                }
                int uid = o.uid().getAsInt();
                return uid == 0 || uid == nodeUid ? UNCOUNTED : uid;
            } catch (java.io.IOException closed) {
                return UNCOUNTED; // gone already: the accept fails by itself
            }
        }
    }

    @Override
    public Connector createConnector(Server server) {
        if (nice != null && server.getThreadPool() instanceof QueuedThreadPool pool) {
            nice.pool(pool.getName());
        }
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
        /** The counted user of each connection open; guarded by itself, as {@link #perUid}. */
        private final Map<SelectableChannel, Integer> users = new HashMap<>();
        private final Map<Integer, Integer> perUid = new HashMap<>();
        private long userSaid = Long.MIN_VALUE;
        private int refusedSince;
        private int heldSince;

        Limit(List<ServerConnector> connectors) {
            super(max, connectors.toArray(Connector[]::new));
            setEndPointIdleTimeout(IDLE_AT_LIMIT_MS);
            where = connectors.stream().map(c -> c.getHost() + ":" + c.getLocalPort()).toList().toString();
        }

        /**
         * A connection is being accepted: past the cap on all, Jetty's limit closes it; past the
         * cap of its user, this closes it (the accept then fails, which Jetty tells the limit).
         */
        @Override
        public void onAccepting(SelectableChannel channel) {
            super.onAccepting(channel);
            if (nice != null) {
                nice.maybeApply(); // a pool grows under load, which brings accepts
            }
            if (!channel.isOpen() || perUser == Integer.MAX_VALUE) {
                return;
            }
            int user = userOf.applyAsInt(channel);
            if (user == UNCOUNTED) {
                return;
            }
            int open;
            boolean over;
            synchronized (users) {
                open = perUid.getOrDefault(user, 0);
                over = open >= perUser;
                if (!over) {
                    perUid.put(user, open + 1);
                    users.put(channel, user);
                }
            }
            if (over) {
                Pen p = pen;
                boolean held = p != null && p.hold(channel); // on a duplicate of its descriptor: Jetty's is closed all the same
                try {
                    channel.close();
                } catch (java.io.IOException ignored) {
                    // closed is what was wanted
                }
                sayUser(user, open, held);
            }
        }

        @Override
        public void onAcceptFailed(SelectableChannel channel, Throwable cause) {
            super.onAcceptFailed(channel, cause);
            release(channel);
        }

        @Override
        public void onClosed(SelectableChannel channel) {
            super.onClosed(channel);
            release(channel);
        }

        private void release(SelectableChannel channel) {
            synchronized (users) {
                Integer user = users.remove(channel);
                if (user != null) {
                    perUid.computeIfPresent(user, (u, n) -> n <= 1 ? null : n - 1);
                }
            }
        }

        /** @return connections open of each counted user (tests) */
        Map<Integer, Integer> perUser() {
            synchronized (users) {
                return Map.copyOf(perUid);
            }
        }

        private void sayUser(int user, int open, boolean held) {
            long now = nanoTime.getAsLong();
            synchronized (users) {
                refusedSince++;
                if (held) {
                    heldSince++;
                }
                if (userSaid != Long.MIN_VALUE && now - userSaid < LOG_EVERY_NANOS) {
                    return;
                }
                userSaid = now;
            }
            String who = user == OTHER_HOSTS ? "peers on other hosts (counted as one user)"
                    : user == UNKNOWN ? "loopback peers whose user the kernel did not say (counted as one user)" : "local user uid " + user;
            int n;
            int h;
            synchronized (users) {
                n = refusedSince;
                h = heldSince;
                refusedSince = 0;
                heldSince = 0;
            }
            Pen p = pen;
            log.warn("HTTP API: " + who + " has " + open + " connections open, the most one user may (PID " + HttpConfig.PID
                    + ", maxConnectionsPerUser " + perUser + "): more of theirs are "
                    + (p != null && p.capacity() > 0 ? "held unread for " + Pen.HOLD_NANOS / 1_000_000_000L + " s, then reset (at most "
                            + p.capacity() + " at once, penConnections; beyond that closed at once)" : "closed as they come")
                    + " (" + n + " refused since this was last said, " + h + " of them held)", null);
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
            log.info("HTTP API: at most " + max + " connections at once on " + l.where + " (PID " + HttpConfig.PID + ", maxConnections)"
                    + (perUser == Integer.MAX_VALUE ? "" : ", at most " + perUser + " of one local user other than the node's and root (maxConnectionsPerUser)"));
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

        /** @return connections open of each counted user (tests) */
        Map<Integer, Integer> openPerUser() {
            Limit l = limit;
            return l == null ? Map.of() : l.perUser();
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
