package dev.xq.http;

import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueueService;
import dev.xq.runtime.log.OsgiLog;
import jakarta.servlet.Servlet;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.apache.felix.http.jetty.ConnectorFactory;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.servlet.runtime.HttpServiceRuntime;
import org.osgi.service.servlet.runtime.HttpServiceRuntimeConstants;
import org.osgi.service.servlet.whiteboard.HttpWhiteboardConstants;
import org.osgi.util.tracker.ServiceTracker;

/**
 * The HTTP API in a node. It runs its own Jetty instance of Apache Felix HTTP (a factory
 * configuration of {@code org.apache.felix.http}, named {@value #INSTANCE}) on the configured
 * address and port, and serves the API there through the Servlet Whiteboard. A configuration
 * that would expose the node without a token is refused: nothing listens, and the log says why.
 * There is no modified method: a configuration change stops the server and starts a new one.
 */
@Component(service = HttpComponent.class, immediate = true, configurationPid = HttpConfig.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = HttpConfig.class)
public class HttpComponent {

    /** Felix HTTP's factory PID: one Jetty per configuration. */
    static final String FELIX_HTTP_FACTORY = "org.apache.felix.http";
    /** The name of XQ's configuration of it. */
    static final String INSTANCE = "xq";
    /** Service property our Jetty instance's HttpServiceRuntime carries, that the servlets target. */
    static final String RUNTIME_PROPERTY = "xq.http";
    /** Jetty's idle timeout, in milliseconds: a connection that sends or takes nothing this long is closed. */
    static final int IDLE_TIMEOUT_MS = 30_000;
    /**
     * How long a port in use may take to come free before it is called taken: after a change of configuration the
     * previous Jetty of this bundle is stopped by Config Admin's thread, a moment after this one activates.
     */
    static final long PORT_WAIT_MS = 3_000;
    /** How often the mode of a token's file that group or others may read is looked at again. */
    static final long TOKEN_FILE_CHECK_MS = 1_000;

    @Reference
    XQueueService xq;

    @Reference
    SchedulerControl scheduler;

    @Reference
    ConfigurationAdmin cm;

    private final OsgiLog log = new OsgiLog(HttpComponent.class);
    private final List<ServiceRegistration<?>> registrations = new java.util.ArrayList<>();
    private volatile Configuration jetty;
    private volatile ServiceTracker<HttpServiceRuntime, HttpServiceRuntime> endpoints;
    /** Connections refused over a user's cap, held unread ({@link Pen}); null while stopped. */
    private volatile Pen pen;
    /** The API's threads' priority while serving, or null. */
    private ThreadNice threadNice;

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindLoggerFactory(LoggerFactory factory) {
        log.bind(factory);
    }

    void unbindLoggerFactory(LoggerFactory factory) {
        log.unbind();
    }

    private HttpConfig config;
    private BundleContext context;
    private Map<String, Object> properties;
    /** Watches the token's file while its token is set aside for its mode; null when none is. */
    private java.util.concurrent.ScheduledExecutorService tokenFileWatch;

    @Activate
    synchronized void activate(HttpConfig config, BundleContext context, Map<String, Object> properties) throws IOException,
            InvalidSyntaxException {
        this.config = config;
        this.context = context;
        this.properties = properties;
        start();
    }

    /** Starts serving as configured: a Jetty of its own, the servlet, the connection cap. */
    private void start() throws IOException, InvalidSyntaxException {
        Object file = properties.get(HttpSettings.FILE_PROPERTY);
        if (config.token() != null && !config.token().isBlank() && HttpSettings.exposedTokenFile(file) != null) {
            // Config Admin is not told when only a file's mode changes (FileInstall updates a configuration whose
            // properties changed, and a chmod, or a touch, changes none): the component watches the mode itself
            watchTokenFile(file);
        }
        // values Declarative Services would read otherwise than written: tokenOnLoopback=yes was read as
        // false and loopback requests went through without the token; port=abc failed naming no key
        java.util.List<String> bad = dev.xq.runtime.config.ConfigCheck.problems(HttpConfig.class, properties);
        if (!bad.isEmpty()) {
            log.error("HTTP API not started: bad configuration (PID " + HttpConfig.PID + "): " + String.join("; ", bad), null);
            return;
        }
        java.util.Set<String> unknown = dev.xq.runtime.config.ConfigCheck.unknown(HttpConfig.class, properties, java.util.Set.of(HttpSettings.FILE_PROPERTY));
        if (!unknown.isEmpty()) {
            log.warn("HTTP API configuration (PID " + HttpConfig.PID + "): " + String.join(", ", unknown) + (unknown.size() == 1 ? " is" : " are")
                    + " no setting here, ignored; allowed: " + String.join(", ", dev.xq.runtime.config.ConfigCheck.keys(HttpConfig.class)));
        }
        HttpSettings settings;
        try {
            // a token in a file that group or others may read is not used (said in the log): issue 41, item 10
            settings = HttpSettings.from(config, context::getProperty, properties, log);
        } catch (IllegalArgumentException e) {
            log.error("HTTP API not started: bad configuration (PID " + HttpConfig.PID + "): " + e.getMessage(), null);
            return;
        }
        if (!settings.enabled()) {
            log.info("HTTP API off (" + HttpConfig.PID + " enabled, framework property " + HttpSettings.ENABLED_PROPERTY + ")");
            return;
        }
        String taken = taken(settings.bindAddress(), settings.port(), PORT_WAIT_MS);
        if (taken != null) {
            // Jetty would print its stack traces and serve nothing: one line instead (issue 41, item 11)
            log.error("HTTP API not started: " + taken, null);
            return;
        }
        Api api = new Api(xq, scheduler, settings, log, LoopbackPeers.system());
        String target = "(" + RUNTIME_PROPERTY + "=" + INSTANCE + ")";

        Hashtable<String, Object> servlet = new Hashtable<>();
        servlet.put(HttpWhiteboardConstants.HTTP_WHITEBOARD_SERVLET_NAME, "xq-api");
        servlet.put(HttpWhiteboardConstants.HTTP_WHITEBOARD_SERVLET_PATTERN, "/*");
        servlet.put(HttpWhiteboardConstants.HTTP_WHITEBOARD_TARGET, target);
        registrations.add(context.registerService(Servlet.class, new ApiServlet(api), servlet));

        Filter f = FrameworkUtil.createFilter("(&(objectClass=" + HttpServiceRuntime.class.getName() + ")" + target + ")");
        ServiceTracker<HttpServiceRuntime, HttpServiceRuntime> t = new ServiceTracker<>(context, f, null) {
            @Override
            public HttpServiceRuntime addingService(ServiceReference<HttpServiceRuntime> ref) {
                log.info("HTTP API serving on " + endpoint(ref) + " (" + settings + ")");
                return super.addingService(ref);
            }
        };
        t.open();
        endpoints = t;

        // The cap on open connections (issue 41, item 5): Felix has no setting for it; it calls every
        // ConnectorFactory service with its Jetty server, which is where the cap goes on (ConnectionCap).
        // Connections refused over a user's cap are held unread a while instead of closed at once (Pen): closed, a
        // flooding client reopens them as fast as the CPUs allow.
        pen = new Pen(settings.penConnections(), log);
        pen.start();
        registrations.add(context.registerService(ConnectorFactory.class, new ConnectionCap(settings.maxConnections(), settings.maxConnectionsPerUser(),
                threadNice(settings.threadNice()), log).pen(pen),
                new Hashtable<>(Map.of(RUNTIME_PROPERTY, INSTANCE))));

        // Our own Jetty: host, port and nothing else of Felix's defaults that matter here.
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("org.apache.felix.http.enable", "true");
        props.put("org.apache.felix.https.enable", "false");
        props.put("org.apache.felix.http.host", settings.bindAddress());
        props.put("org.osgi.service.http.port", Integer.toString(settings.port()));
        props.put("org.apache.felix.http.name", INSTANCE);
        props.put("org.apache.felix.http.runtime.init." + RUNTIME_PROPERTY, INSTANCE);
        props.put("org.apache.felix.http.jetty.sendServerHeader", "false");
        props.put("org.apache.felix.http.jetty.requestSizeLimit", Long.toString(settings.maxBodyBytes() + 16384L));
        // A connection silent this long is closed (Felix's default: 60 s); it also ends a read of a body that stopped coming.
        props.put("org.apache.felix.http.timeout", Integer.toString(IDLE_TIMEOUT_MS));
        // Requests run on virtual threads: one blocked reading a slow body holds no pool thread, so slow senders
        // cannot starve the other requests (/metrics included). Api bounds the body's reading itself (408).
        props.put("org.apache.felix.http.jetty.virtualthreads.enable", "true");
        // Jetty's URI checks off: ambiguous URIs (/a/%2e%2e/, %2F, //, bad UTF-8) reach the API, which
        // refuses them itself with a JSON error (Api.checkPath); refused by Jetty they got its HTML error
        // page, which xcli cannot read. The API matches routes on the raw path and serves no file by path,
        // so nothing depends on Jetty's normalising. What its parser cannot take (a path above the root,
        // '%' without two hex digits, %00) still gets Jetty's own 400 page.
        props.put("org.eclipse.jetty.UriComplianceMode", "UNSAFE");
        Configuration c = cm.getFactoryConfiguration(FELIX_HTTP_FACTORY, INSTANCE, "?");
        c.update(props);
        jetty = c;
    }

    @Deactivate
    synchronized void deactivate() {
        java.util.concurrent.ScheduledExecutorService w = tokenFileWatch;
        tokenFileWatch = null;
        if (w != null) {
            w.shutdownNow();
        }
        stop();
    }

    /**
     * Once only its owner may read and write the token's file ({@code chmod 600}), the token is used: the API
     * restarts with it, within {@value #TOKEN_FILE_CHECK_MS} ms.
     */
    private void watchTokenFile(Object file) {
        if (tokenFileWatch != null) {
            return;
        }
        java.util.concurrent.ScheduledExecutorService w = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                r -> Thread.ofPlatform().daemon().name("xq-http-token-file").unstarted(r));
        tokenFileWatch = w;
        w.scheduleWithFixedDelay(() -> {
            if (HttpSettings.exposedTokenFile(file) != null) {
                return;
            }
            synchronized (this) {
                if (tokenFileWatch != w) {
                    return; // deactivated meanwhile
                }
                tokenFileWatch = null;
                w.shutdown();
                log.warn("HTTP API: the token's file " + file + " is now its owner's only: the token is used (the API restarts)");
                stop();
                try {
                    start();
                } catch (IOException | InvalidSyntaxException | RuntimeException e) {
                    log.error("HTTP API not started again after its token's file was made private", e);
                }
            }
        }, TOKEN_FILE_CHECK_MS, TOKEN_FILE_CHECK_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /**
     * @return the server's threads' priority, started, or null where {@code value} is 0 or this node
     *         could not undo it on threads that inherit it ({@link ThreadNice}: said in the log)
     */
    private ThreadNice threadNice(int value) {
        if (value == 0) {
            return null;
        }
        if (!ThreadNice.canUndo(value)) {
            log.info("HTTP API: its threads run at the node's own priority: threadNice " + value + " (PID " + HttpConfig.PID
                    + ") needs Linux and the privilege to raise a thread's priority again (root or CAP_SYS_NICE), which threads "
                    + "started from the API's threads need");
            return null;
        }
        ThreadNice n = new ThreadNice(value, log);
        n.start();
        threadNice = n;
        return n;
    }

    /** Stops serving: the servlet, the cap, the tracker and our Jetty's configuration go. */
    private void stop() {
        ThreadNice n = threadNice;
        threadNice = null;
        if (n != null) {
            n.close();
        }
        for (ServiceRegistration<?> r : registrations) {
            try {
                r.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping: the framework unregistered it
            }
        }
        registrations.clear();
        ServiceTracker<?, ?> t = endpoints;
        endpoints = null;
        if (t != null) {
            t.close();
        }
        Pen p = pen;
        pen = null;
        if (p != null) {
            p.close(); // after the connector is gone: nothing is held any more
        }
        Configuration c = jetty;
        jetty = null;
        if (c != null) {
            try {
                c.delete();
            } catch (IOException | IllegalStateException e) {
                log.warn("HTTP API: removing the Jetty configuration failed", e);
            }
        }
    }

    /**
     * @return why nothing can listen on {@code bind}:{@code port} (another program does), or null when something may
     *     (port 0, any free one, always may). A bind and a close, as Jetty's connector binds (address reuse on).
     */
    static String taken(String bind, int port, long waitMillis) {
        if (port == 0) {
            return null;
        }
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        while (true) {
            try (ServerSocket probe = new ServerSocket()) {
                probe.setReuseAddress(true);
                probe.bind(new InetSocketAddress(InetAddress.getByName(bind), port));
                return null;
            } catch (BindException e) {
                if (System.nanoTime() > deadline) {
                    return bind + ":" + port + " is taken (another node, or another program, listens there); stop it or set "
                            + "port (PID " + HttpConfig.PID + ", or the framework property " + HttpSettings.PORT_PROPERTY + ")";
                }
            } catch (IOException e) {
                return null; // anything else: Jetty's own bind says what it is
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    /** @return the runtime's endpoints, e.g. {@code http://127.0.0.1:50000/}, each once */
    static String endpoint(ServiceReference<?> ref) {
        Object e = ref.getProperty(HttpServiceRuntimeConstants.HTTP_SERVICE_ENDPOINT);
        if (e instanceof String[] a) {
            // ConnectionCap's connector carries the address of the one it limits: Felix lists it twice
            return String.join(", ", new java.util.LinkedHashSet<>(List.of(a)));
        }
        if (e instanceof java.util.Collection<?> c) {
            return c.toString();
        }
        return String.valueOf(e);
    }
}
