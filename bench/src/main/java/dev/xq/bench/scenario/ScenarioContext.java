package dev.xq.bench.scenario;

import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.Hint;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.bench.args.UsageException;
import dev.xq.bench.report.ScenarioReport;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.framework.BundleContext;

/**
 * What a scenario runs against: the node's services, the chosen device and the progress
 * output. Closing it closes every queue the scenario opened, undoes what it set up (such as
 * sim devices), and selects the policy that was selected before.
 */
public final class ScenarioContext implements AutoCloseable {

    private final XQueueService service;
    private final SchedulerControl scheduler;
    private final BundleContext bundles;
    private final Progress out;
    private final String deviceKind;
    private final DeviceInfo device;
    private final String previousPolicy;
    private final List<XQueue> queues = new CopyOnWriteArrayList<>();
    private final Deque<AutoCloseable> cleanups = new ArrayDeque<>();
    private volatile Checkpoint checkpoint = r -> { };

    /** Where a scenario's report so far goes while it runs ({@link #checkpoint}). */
    @FunctionalInterface
    public interface Checkpoint {
        /** @param sofar the report as it stands, marked partial in its summary */
        void write(ScenarioReport sofar) throws Exception;
    }

    private ScenarioContext(XQueueService service, SchedulerControl scheduler, BundleContext bundles, Progress out,
                            String deviceKind, DeviceInfo device) {
        this.service = service;
        this.scheduler = scheduler;
        this.bundles = bundles;
        this.out = out;
        this.deviceKind = deviceKind;
        this.device = device;
        this.previousPolicy = scheduler.selectedPolicy();
    }

    /**
     * @param deviceKind {@code sim} (device {@code sim0}), {@code cuda} (device {@code cuda0}) or {@code hip} (device {@code hip0})
     * @throws UsageException if that device is not on the node (the message lists what is)
     */
    public static ScenarioContext open(XQueueService service, SchedulerControl scheduler, BundleContext bundles,
                                       Progress out, String deviceKind) {
        String id = switch (deviceKind) {
            case "sim" -> "sim0";
            case "cuda" -> "cuda0";
            case "hip" -> "hip0";
            default -> throw new IllegalArgumentException("--device " + deviceKind + " is unknown; allowed: sim, cuda, hip");
        };
        DeviceInfo found = null;
        for (DeviceInfo d : service.devices()) {
            if (d.id().equals(id)) {
                found = d;
            }
        }
        if (found == null) {
            // A device named on the command line that is not there is a bad argument: no stack trace.
            throw new UsageException("device " + id + " (--device " + deviceKind + ") is not on this node; "
                    + describeDevices(service) + ". Nothing was run.");
        }
        return new ScenarioContext(service, scheduler, bundles, out, deviceKind, found);
    }

    /** @return a line listing the node's devices and its drivers' status */
    public static String describeDevices(XQueueService service) {
        List<String> ds = new ArrayList<>();
        for (DeviceInfo d : service.devices()) {
            ds.add(d.id() + " (" + d.platform() + ", " + d.engines() + (d.engines() == 1 ? " engine" : " engines") + ", Lv"
                    + d.maxLevel().number() + ")");
        }
        List<String> drivers = new ArrayList<>();
        for (DriverInfo d : service.drivers()) {
            drivers.add(d.platform() + ": " + d.status());
        }
        return "devices: " + (ds.isEmpty() ? "none" : String.join(", ", ds))
                + "; drivers: " + (drivers.isEmpty() ? "none" : String.join(", ", drivers));
    }

    public XQueueService service() {
        return service;
    }

    public SchedulerControl scheduler() {
        return scheduler;
    }

    public BundleContext bundles() {
        return bundles;
    }

    public Progress out() {
        return out;
    }

    /**
     * Sets where {@link #checkpoint} writes (the bench's {@code --json} file); by default nowhere.
     */
    public void onCheckpoint(Checkpoint sink) {
        this.checkpoint = sink == null ? r -> { } : sink;
    }

    /**
     * Hands the report as it stands to the checkpoint sink, between a long scenario's parts (the
     * workload family after each mix): a run cut short by a time limit keeps every part done. A
     * checkpoint that cannot be written is said on the progress output and the run goes on; the
     * final report is written as before.
     */
    public void checkpoint(ScenarioReport sofar) {
        try {
            checkpoint.write(sofar);
        } catch (Exception e) {
            out.line("checkpoint not written: " + e.getMessage());
        }
    }

    /** @return the device id the scenario measures, e.g. {@code sim0} */
    public String device() {
        return device.id();
    }

    /** @return the device as it was when the scenario started */
    public DeviceInfo deviceInfo() {
        return device;
    }

    /** @return whether the device is a GPU (CUDA or HIP), where the {@code prio} mode (stream priorities) also runs */
    public boolean gpu() {
        return !deviceKind.equals("sim");
    }

    /**
     * @throws IllegalStateException if one of the policies is not registered (the message lists those that are)
     */
    public void requirePolicies(String... names) {
        Set<String> known = new TreeSet<>();
        for (SchedulerControl.PolicyInfo p : scheduler.policies()) {
            known.add(p.name());
        }
        known.add(SchedulerControl.NATIVE);
        List<String> missing = new ArrayList<>();
        for (String n : names) {
            if (!known.contains(n)) {
                missing.add(n);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("polic" + (missing.size() == 1 ? "y " : "ies ") + String.join(", ", missing)
                    + " not registered on this node; registered: " + String.join(", ", known)
                    + ". Install the policy bundle (bundles/). Nothing was run.");
        }
    }

    /**
     * Selects a policy, retrying for up to {@code patienceMillis} while it is not registered
     * (a policy bundle that is being updated comes back after a moment).
     */
    public void selectPolicy(String name, long patienceMillis) throws InterruptedException {
        long deadline = System.nanoTime() + patienceMillis * 1_000_000;
        while (true) {
            try {
                scheduler.selectPolicy(name);
                return;
            } catch (IllegalArgumentException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }

    /** Creates a queue that {@link #close()} closes if the scenario has not. */
    public XQueue open(Mode mode, String device, String name, String group, int nativePriority, Hint... hints) {
        XQueue q = service.create(mode.options(device, name, group, nativePriority, List.of(hints)));
        queues.add(q);
        return q;
    }

    /** Closes a queue opened through {@link #open}. */
    public void closeQueue(XQueue q) {
        q.close();
        queues.remove(q);
    }

    /** Registers something to undo when the scenario ends, last registered first. */
    public void onClose(AutoCloseable c) {
        cleanups.push(c);
    }

    @Override
    public void close() throws Exception {
        Exception failure = null;
        for (XQueue q : queues) {
            try {
                q.close();
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
        }
        queues.clear();
        while (!cleanups.isEmpty()) {
            try {
                cleanups.pop().close();
            } catch (Exception e) {
                failure = add(failure, e);
            }
        }
        try {
            selectPolicy(previousPolicy, 10_000);
        } catch (RuntimeException e) {
            failure = add(failure, new IllegalStateException("could not select the previous policy " + previousPolicy + " again", e));
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static Exception add(Exception first, Exception next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
