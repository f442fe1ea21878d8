package dev.xq.http;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of the HTTP API (PID {@code dev.xq.http}). A change restarts the server. */
@ObjectClassDefinition(id = HttpConfig.PID, name = "XQ HTTP API",
        description = "The node's HTTP API: XSched's xcli routes, XQ's own API under /api/v1, Prometheus metrics at /metrics")
@interface HttpConfig {

    String PID = "dev.xq.http";

    @AttributeDefinition(name = "Enabled", description = "Whether the node serves the HTTP API at all. Empty: on, unless the "
            + "framework property xq.http.enabled is false (the launcher sets it so for one-command runs such as ./xq demo)")
    String enabled() default "";

    @AttributeDefinition(name = "Port", min = "-1", max = "65535",
            description = "TCP port. -1: the framework property xq.http.port if set, else 50000 (XSched's xserver's); 0: any free port")
    int port() default -1;

    @AttributeDefinition(name = "Bind address", description = "Address to listen on. Loopback (127.0.0.1, ::1, localhost) by "
            + "default; any other address (0.0.0.0 for all) is refused unless a token is set")
    String bindAddress() default HttpSettings.DEFAULT_BIND;

    @AttributeDefinition(name = "Token", type = AttributeType.PASSWORD, required = false,
            description = "Bearer token: requests must carry 'Authorization: Bearer TOKEN' (from loopback peers only when "
                    + "'Token on loopback' is set, or when they change something and their socket belongs to another local user "
                    + "than the node's or root). At least 16 characters. Empty: no token, only loopback is served, and only the "
                    + "node's user and root may change anything")
    String token() default "";

    @AttributeDefinition(name = "Token on loopback",
            description = "Require the token from every loopback peer too, for reads as well and whatever its user "
                    + "(xcli sends no token: its requests are then refused)")
    boolean tokenOnLoopback() default false;

    @AttributeDefinition(name = "Allowed host names", required = false,
            description = "Host names, besides localhost and IP addresses, that a request served without a token may give "
                    + "in its Host header: names by which operators reach this node on loopback (an SSH tunnel, a local "
                    + "proxy). Any other name is refused, so that a web page whose own name is made to resolve to 127.0.0.1 "
                    + "(DNS rebinding) cannot use the node from the operator's browser")
    String[] allowedHosts() default {};

    @AttributeDefinition(name = "Largest request body", min = "1024", max = "16777216",
            description = "Bytes a request body may have; larger requests get 413")
    int maxBodyBytes() default HttpSettings.DEFAULT_MAX_BODY;

    @AttributeDefinition(name = "Most connections at once", min = "1", max = "65536",
            description = "Connections the API keeps open at once, from all clients together; at the limit it accepts no more "
                    + "until some close (they wait in the kernel's queue) and closes open connections idle for a second")
    int maxConnections() default HttpSettings.DEFAULT_MAX_CONNECTIONS;

    @AttributeDefinition(name = "Most connections of one local user", min = "1", max = "65536",
            description = "Connections one local user other than the node's own and root may keep open at once (the user "
                    + "of a loopback connection, asked of the kernel as it is accepted); more are closed at once, so that one "
                    + "user's flood leaves the others room under maxConnections. Connections from other hosts count as one user")
    int maxConnectionsPerUser() default HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER;

    @AttributeDefinition(name = "Nice value of the API's threads", min = "0", max = "19",
            description = "Linux nice value the HTTP server's threads run at: what clients make the API do (a flood of "
                    + "connections, slow bodies) takes only the CPU time that the node's scheduling and the tenants leave. "
                    + "0 (the default): the node's own value. Lowered, it costs the operator's own requests under load too")
    int threadNice() default HttpSettings.DEFAULT_THREAD_NICE;

    @AttributeDefinition(name = "Refused connections held", min = "0", max = "65536",
            description = "Connections refused over maxConnectionsPerUser that the API holds open, unread, for 30 s before "
                    + "resetting them, instead of closing them at once: a flooding client that reopens what is closed then "
                    + "waits instead of making the node accept and close as fast as the CPUs allow. Each costs one file "
                    + "descriptor; at most a quarter of the node's limit is used. Beyond it, refused connections are closed at "
                    + "once. 0: always closed at once")
    int penConnections() default HttpSettings.DEFAULT_PEN_CONNECTIONS;

    @AttributeDefinition(name = "Delay of refusals to a user refused often", min = "0", max = "10000",
            description = "A local user whose changes over HTTP were refused (another user's, without the token) more than "
                    + "10 times in the last second gets each further refusal after this many milliseconds: a flooding client "
                    + "that reopens whatever is answered then waits, instead of making the node accept, look up and answer as "
                    + "fast as the CPUs allow. The wait holds one of that user's connections (maxConnectionsPerUser) and no "
                    + "thread. 0: refusals are answered at once")
    int refusalDelayMillis() default HttpSettings.DEFAULT_REFUSAL_DELAY_MILLIS;
}
