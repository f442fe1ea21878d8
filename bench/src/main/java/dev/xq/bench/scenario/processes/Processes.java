package dev.xq.bench.scenario.processes;

import dev.xq.bench.scenario.ScenarioContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.osgi.framework.ServiceReference;

/**
 * What the scenarios with unmodified processes ({@code process-pair}, {@code torch-pair},
 * {@code mix}) share: where the interposer and the fake libcuda are, the node's process-host
 * socket, and the environment that puts a process under the interposer or on the fake GPU.
 */
final class Processes {

    /** The policies a process scenario may select for its xq modes. */
    static final List<String> POLICIES = List.of("hpf", "hpf-aging", "edf", "kedf", "lax", "drf", "bandwidth", "bandwidth-group");

    private Processes() {
    }

    /** @return the XQ checkout or kit the node runs from ({@code xq.home}) */
    static Path home() {
        return Path.of(System.getProperty("xq.home", ".")).toAbsolutePath().normalize();
    }

    /**
     * @return the interposer library under {@code home}
     * @throws IllegalStateException if it is not built
     */
    static Path interposer(Path home) {
        Path interposer = home.resolve("interpose/target/libxq-cuda.so");
        if (!Files.isRegularFile(interposer)) {
            throw new IllegalStateException("the interposer " + interposer + " is missing; build it (mvn install -DskipTests)");
        }
        return interposer;
    }

    /** @return the fake libcuda's test program, which a sim run starts as its tenants */
    static Path fakeApp(Path home) {
        return home.resolve("interpose/target/fakecuda/xq-cuda-app");
    }

    /**
     * The environment that runs a process on the fake libcuda; processes given the same
     * {@code dir} share one simulated GPU through its lock file.
     */
    static Map<String, String> fakeGpu(Path home, Path dir) {
        Map<String, String> env = new HashMap<>();
        env.put("FAKECUDA_GPU", dir.resolve("gpu.lock").toString());
        env.put("LD_LIBRARY_PATH", home.resolve("interpose/target/fakecuda").toString());
        return env;
    }

    /** @return {@code base} plus what puts a process under the interposer, as queue {@code name} at {@code priority} */
    static Map<String, String> interposed(Map<String, String> base, Path interposer, String socket, String name, int priority) {
        Map<String, String> env = new HashMap<>(base);
        env.put("LD_PRELOAD", interposer.toString());
        env.put("XQ_SOCKET", socket);
        env.put("XQ_NAME", name);
        env.put("XQ_PRIORITY", Integer.toString(priority));
        return env;
    }

    /** The socket the node's process host serves on, from its service registration. */
    static String hostSocket(ScenarioContext ctx) throws Exception {
        // a node starting on a loaded machine took more than 10 s to get its host serving (seen twice on the VM)
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            ServiceReference<?>[] refs = ctx.bundles().getAllServiceReferences(null, "(xq.host.socket=*)");
            if (refs != null && refs.length > 0) {
                return String.valueOf(refs[0].getProperty("xq.host.socket"));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no process host is serving in this node after 60 s (bundle dev.xq.host "
                        + "missing or not serving: see xq:processes)");
            }
            Thread.sleep(50);
        }
    }

    /** The pipe directory of the node's MPS daemon, or "" where the node runs none. */
    static String hostMpsPipe(ScenarioContext ctx) throws Exception {
        hostSocket(ctx);
        ServiceReference<?>[] refs = ctx.bundles().getAllServiceReferences(null, "(xq.host.mps.pipe=*)");
        return refs == null || refs.length == 0 ? "" : String.valueOf(refs[0].getProperty("xq.host.mps.pipe"));
    }

    /** The service id of the serving process host's registration (a configuration change replaces it). */
    static long hostServiceId(ScenarioContext ctx) throws Exception {
        hostSocket(ctx);
        ServiceReference<?>[] refs = ctx.bundles().getAllServiceReferences(null, "(xq.host.socket=*)");
        return refs == null || refs.length == 0 ? -1 : (Long) refs[0].getProperty("service.id");
    }

    /** Waits until a process host other than registration {@code before} serves; @return its service id. */
    static long awaitNewHost(ScenarioContext ctx, long before) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            ServiceReference<?>[] refs = ctx.bundles().getAllServiceReferences(null, "(xq.host.socket=*)");
            if (refs != null && refs.length > 0 && (Long) refs[0].getProperty("service.id") != before) {
                return (Long) refs[0].getProperty("service.id");
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the process host did not come back within 60 s after a configuration change");
            }
            Thread.sleep(50);
        }
    }
}
