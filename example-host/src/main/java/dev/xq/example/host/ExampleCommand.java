package dev.xq.example.host;

import dev.xq.api.DeviceInfo;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueueService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.felix.service.command.Descriptor;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The example host application, as a DS component: it finds {@link XQueueService} (its own,
 * bundle-scoped: the buffers it allocates are this bundle's and go when it stops) and
 * {@link SchedulerControl} in the registry, and runs {@link MatmulExample} when asked through
 * the Gogo command {@code xq:example} ({@code ./xq example} runs it on a fresh node).
 */
@Component(service = ExampleCommand.class, property = {"osgi.command.scope=xq", "osgi.command.function=example"})
public class ExampleCommand {

    static final String USAGE = "xq:example [--device sim|cuda|hip] [--json FILE] [size=N] [bgsize=N] [tasks=N] [bgdepth=N] [pause_us=N] [code=FILE]"
            + " [policies=native,hpf]";

    @Reference
    XQueueService xq;

    @Reference
    SchedulerControl scheduler;

    private BundleContext context;

    @Activate
    void activate(BundleContext context) {
        this.context = context;
    }

    /** What the command line asked for. */
    record Arguments(MatmulExample.Settings settings, Path json) {
    }

    /**
     * @param devices the node's devices, to pick the defaults that suit the platform
     * @throws IllegalArgumentException naming the word and what is allowed
     */
    static Arguments parse(List<String> args, List<DeviceInfo> devices) {
        String kind = "sim";
        Path json = null;
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            switch (a) {
                case "--device" -> {
                    if (i + 1 >= args.size()) {
                        throw new IllegalArgumentException("--device needs a value: sim, cuda or hip; usage: " + USAGE);
                    }
                    kind = args.get(++i);
                    if (!kind.equals("sim") && !kind.equals("cuda") && !kind.equals("hip")) {
                        throw new IllegalArgumentException("--device " + kind + " is not allowed: sim, cuda or hip");
                    }
                }
                case "--json" -> {
                    if (i + 1 >= args.size()) {
                        throw new IllegalArgumentException("--json needs a file; usage: " + USAGE);
                    }
                    json = Path.of(args.get(++i)).toAbsolutePath();
                }
                default -> {
                    if (!a.contains("=")) {
                        throw new IllegalArgumentException("'" + a + "' is not an option or key=value; usage: " + USAGE);
                    }
                    keys.add(a);
                }
            }
        }
        String device = kind + "0";
        boolean gpu = !kind.equals("sim");
        int size = gpu ? 512 : 64;
        int bgSize = gpu ? 2048 : 128;
        Path code = null;
        int tasks = 50;
        int bgDepth = 4;
        long pause = 1000;
        List<String> policies = List.of(SchedulerControl.NATIVE, "hpf");
        for (String kv : keys) {
            String k = kv.substring(0, kv.indexOf('='));
            String v = kv.substring(kv.indexOf('=') + 1);
            switch (k) {
                case "size" -> size = (int) number(k, v, 1, 8192);
                case "bgsize" -> bgSize = (int) number(k, v, 1, 16384);
                case "tasks" -> tasks = (int) number(k, v, 1, 1_000_000);
                case "bgdepth" -> bgDepth = (int) number(k, v, 1, 64);
                case "pause_us" -> pause = number(k, v, 0, 10_000_000);
                case "policies" -> {
                    policies = Arrays.stream(v.split(",")).map(String::trim).filter(p -> !p.isEmpty()).toList();
                    if (policies.isEmpty()) {
                        throw new IllegalArgumentException("policies '" + v + "' names no policy; e.g. policies=native,hpf");
                    }
                    if (new java.util.HashSet<>(policies).size() != policies.size()) {
                        throw new IllegalArgumentException("policies '" + v + "' names a policy twice; allowed: each policy once");
                    }
                }
                case "code" -> {
                    code = Path.of(v).toAbsolutePath();
                    if (!Files.isRegularFile(code)) {
                        throw new IllegalArgumentException("code=" + v + " is not a file; give the device code to load instead of the"
                                + " bundle's: a HIP code object (hipcc --genco), PTX or a sim program");
                    }
                }
                default -> throw new IllegalArgumentException("key '" + k + "' is unknown; allowed: size, bgsize, tasks, bgdepth, pause_us,"
                        + " policies, code");
            }
        }
        if (devices.stream().noneMatch(d -> d.id().equals(device))) {
            throw new IllegalArgumentException("device " + device + " (--device " + kind + ") is not on this node; devices: "
                    + devices.stream().map(DeviceInfo::id).toList());
        }
        return new Arguments(new MatmulExample.Settings(device, size, bgSize, tasks, bgDepth, pause, policies, code), json);
    }

    /**
     * Before anything runs: every policy named is one this node has ({@code native} always), so that a
     * misspelt one is refused at once, not after the runs before it (seconds of work, their results printed).
     */
    static void checkPolicies(List<String> wanted, List<String> registered) {
        for (String p : wanted) {
            if (!p.equals(SchedulerControl.NATIVE) && !registered.contains(p)) {
                java.util.TreeSet<String> allowed = new java.util.TreeSet<>(registered);
                allowed.add(SchedulerControl.NATIVE);
                throw new IllegalArgumentException("policy '" + p + "' is not registered on this node; allowed: " + String.join(", ", allowed));
            }
        }
    }

    private static long number(String key, String value, long min, long max) {
        long v;
        try {
            v = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " '" + value + "' is not a whole number; allowed: " + min + ".." + max);
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(key + " " + v + " is out of range; allowed: " + min + ".." + max);
        }
        return v;
    }

    /**
     * xq:example: the example host application, checked against the CPU.
     * @return the table of figures and the check's result
     * @throws IllegalStateException with the table if the check failed
     */
    @Descriptor("runs the example host application: a tiled matmul on two queues at two priorities, checked against the CPU")
    public String example(@Descriptor("[--device sim|cuda|hip] [--json FILE] [size=N] [bgsize=N] [tasks=N] [bgdepth=N] [pause_us=N] [code=FILE]"
            + " [policies=native,hpf]") String... args) throws Exception {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            return USAGE;
        }
        Arguments a = parse(List.of(args), xq.devices());
        checkPolicies(a.settings().policies(), scheduler.policies().stream().map(SchedulerControl.PolicyInfo::name).toList());
        var out = System.out; // bound here, on the shell's thread: the shell routes System.out per thread
        MatmulExample.Report r = new MatmulExample(xq, scheduler, p -> context.getBundle().getResource(p), out::println)
                .run(a.settings());
        String text = r.text();
        if (a.json() != null) {
            Files.writeString(a.json(), r.json());
            text += "wrote " + a.json() + "\n";
        }
        if (!r.passed()) {
            throw new IllegalStateException(text);
        }
        return text;
    }
}
