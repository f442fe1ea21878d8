package dev.xq.host;

import dev.xq.api.XQueueService;
import dev.xq.external.spi.ExternalQueues;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.runtime.log.OsgiLog;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
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

/**
 * The process host in a node: serves the socket while the runtime is there, and offers
 * {@code xq:processes}. There is no modified method: a configuration change stops the server
 * (every session ends, its processes run unscheduled and register again) and starts a new one.
 */
@Component(service = HostComponent.class, immediate = true, configurationPid = HostConfig.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, property = {
                "osgi.command.scope=xq",
                "osgi.command.function=processes"})
@Designate(ocd = HostConfig.class)
public class HostComponent {

    @Reference
    ExternalQueues queues;

    @Reference
    XQueueService xq;

    private final OsgiLog log = new OsgiLog(HostComponent.class);
    private final CopyOnWriteArrayList<XpuDriver> drivers = new CopyOnWriteArrayList<>();
    private volatile HostServer server;
    private volatile String notServing = "not serving: not started";

    public HostComponent() {
    }

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindLoggerFactory(LoggerFactory factory) {
        log.bind(factory);
    }

    void unbindLoggerFactory(LoggerFactory factory) {
        log.unbind();
    }

    /** The node's drivers, the same services the runtime uses: a stream's PCI bus id is looked up in their devices. */
    @Reference(service = XpuDriver.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void addDriver(XpuDriver driver) {
        drivers.add(driver);
    }

    void removeDriver(XpuDriver driver) {
        drivers.remove(driver);
    }

    /** Every device of every driver; a driver that fails to list its devices is left out, and logged. */
    List<DeviceDescriptor> devices() {
        List<DeviceDescriptor> all = new ArrayList<>();
        for (XpuDriver d : drivers) {
            try {
                all.addAll(d.devices());
            } catch (RuntimeException e) {
                log.error("driver " + d.platform() + " failed to list its devices", e);
            }
        }
        return all;
    }

    @Activate
    void activate(HostConfig config, BundleContext context, java.util.Map<String, Object> properties) {
        // values Declarative Services would read otherwise than written (a boolean 'yes' as false) or
        // fail on naming no key (a number 'abc'): refused, the host does not serve on a guess
        java.util.List<String> bad = dev.xq.runtime.config.ConfigCheck.problems(HostConfig.class, properties);
        if (!bad.isEmpty()) {
            notServing = "not serving: bad configuration (" + HostConfig.PID + "): " + String.join("; ", bad);
            log.error("process host is " + notServing, null);
            return;
        }
        java.util.Set<String> unknown = dev.xq.runtime.config.ConfigCheck.unknown(HostConfig.class, properties,
                java.util.Set.of("felix.fileinstall.filename"));
        if (!unknown.isEmpty()) {
            log.warn("process host: " + HostConfig.PID + ": " + String.join(", ", unknown) + (unknown.size() == 1 ? " is" : " are")
                    + " no setting here, ignored; allowed: " + String.join(", ", dev.xq.runtime.config.ConfigCheck.keys(HostConfig.class)));
        }
        HostSettings settings;
        try {
            settings = HostSettings.from(config, context::getProperty, System.getenv(), Libc.geteuid());
        } catch (IllegalArgumentException e) {
            notServing = "not serving: bad configuration (" + HostConfig.PID + "): " + e.getMessage();
            log.error("process host is " + notServing, null);
            return;
        }
        HostServer s = new HostServer(settings, queues, xq::defaults, log, this::devices);
        try {
            s.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.parse(config.mps()), config.mpsControl(),
                    java.nio.file.Path.of("/dev/nvidiactl"), config.mpsLatencyPriority(), config.mpsBestEffortShare(),
                    config.mpsHoldBestEffort(), config.mpsHoldBehindMicros(), config.mpsNarrow(), config.mpsLatencyOwnContext(),
                    config.mpsNarrowLatency(), config.mpsLowPriorityBestEffort()));
        } catch (IllegalArgumentException e) {
            log.error("process host: " + HostConfig.PID + ": " + e.getMessage() + "; MPS off", null);
        }
        try {
            s.useArrivalWatch(config.arrivalWatchMicros(), config.arrivalWatchQuietMicros());
        } catch (IllegalArgumentException e) {
            log.error("process host: " + HostConfig.PID + ": " + e.getMessage() + "; no arrival watch", null);
        }
        s.quietIfTaken(Boolean.parseBoolean(context.getProperty(QUIET_IF_TAKEN_PROPERTY)));
        if (s.start()) {
            // Tools in the node (the process scenarios) find the socket through this registration.
            Hashtable<String, Object> props = new Hashtable<>();
            props.put(SOCKET_PROPERTY, settings.socketPath().toString());
            // and the MPS pipe directory where the node runs MPS (the mix scenario's hand-set "mps" mode uses it)
            java.nio.file.Path pipe = s.space().daemon().pipeDir();
            props.put(MPS_PIPE_PROPERTY, pipe == null ? "" : pipe.toString());
            registration = context.registerService(Object.class, s, props);
        }
        server = s;
    }

    /**
     * Framework property a one-command run sets ({@code ./xq demo}, {@code ./xq bench}): another
     * node on the socket is said at info, not as an error.
     */
    public static final String QUIET_IF_TAKEN_PROPERTY = "xq.host.quietIfTaken";

    /** Service property naming the socket a serving host listens on. */
    public static final String SOCKET_PROPERTY = "xq.host.socket";

    /** Service property naming the MPS pipe directory of the node's daemon, empty when the node runs none. */
    public static final String MPS_PIPE_PROPERTY = "xq.host.mps.pipe";

    private volatile ServiceRegistration<Object> registration;

    @Deactivate
    void deactivate() {
        ServiceRegistration<Object> r = registration;
        registration = null;
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping: the framework unregistered it
            }
        }
        HostServer s = server;
        server = null;
        if (s != null) {
            s.stop();
        }
    }

    /** xq:processes: the processes served, with the server's status. */
    @Descriptor("lists the processes served, with the process host's status")
    public String processes() {
        HostServer s = server;
        return s == null ? "process host: " + notServing + "\n" : ProcessesCommand.all(s);
    }

    /** xq:processes PID: one process's streams. */
    @Descriptor("shows one process's streams: slot, handle, queue, device, gate, limits")
    public String processes(@Descriptor("the process id (xq:processes lists them)") String pid) {
        return ProcessesCommand.streams(server, pid);
    }

    /** xq:processes --wait N [--timeout MS]: the list once at least N processes are served. */
    @Descriptor("waits until at least N processes are served, then lists them")
    public String processes(
            @Descriptor("N, the processes to wait for, 1..100000")
            @Parameter(names = "--wait", absentValue = "") String wait,
            @Descriptor("how long to wait in ms, 1..3600000 (default 10000)")
            @Parameter(names = "--timeout", absentValue = "10000") String timeout) throws InterruptedException {
        if (wait.isEmpty()) {
            return processes();   // Gogo may bind a bare xq:processes here
        }
        return ProcessesCommand.await(server, wait, timeout);
    }

    /** What the typed forms cannot take (two process ids, --wait without N), refused with the usage. */
    @Descriptor("with other arguments: refused with the usage")
    public String processes(@Descriptor("the arguments as typed") String... args) throws InterruptedException {
        return ProcessesCommand.run(server, args);
    }
}
