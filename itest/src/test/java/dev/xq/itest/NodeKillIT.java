package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.After;
import org.junit.Test;

/**
 * A node killed with SIGKILL while processes (CUDA and HIP) run under it: they finish unscheduled with correct
 * results, and register with the next node that comes up on the same socket. The node runs as a
 * process of its own here (the built launcher in serve mode), so that it can be killed.
 */
public class NodeKillIT {

    private final List<Process> nodes = new ArrayList<>();

    @After
    public void stopNodes() {
        nodes.forEach(Process::destroyForcibly);
    }

    private Process node(Path socket, Path log, String... mode) throws IOException {
        Path jar = Path.of(System.getProperty("xq.node.jar", "../node/target/xq-node.jar")).toAbsolutePath().normalize();
        assertTrue("the node is built: " + jar, Files.isRegularFile(jar));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-Dxq.home=" + Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize(),
                // any free port: a node that serves starts only where its port is free (Taken), and 50000 may not be
                "-Dxq.host.socket=" + socket, "-Dxq.http.port=0", "-jar", jar.toString(),
                "--bundles", Files.createTempDirectory(socket.getParent(), "hd").toString()));
        cmd.addAll(List.of(mode));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        nodes.add(p);
        return p;
    }

    @Test
    public void appsOutliveAKilledNodeAndComeBackToTheNext() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "xqkill");
        Path socket = dir.resolve("node.sock");
        Path log = dir.resolve("node.log");
        Process first = node(socket, log, "serve");
        assertTrue("the first node serves; log: " + log, XqNode.eventually(60_000, () -> Files.exists(socket)));
        Path work = Path.of(System.getProperty("xq.itest.work", "/tmp")).toAbsolutePath();
        Path gpu = dir.resolve("gpu.lock");
        FakeApps.App lp = FakeApps.start(work, socket, gpu, Map.of("XQ_NAME", "train", "XQ_PRIORITY", "1"),
                "--seconds", "20", "--kernels", "10", "--us", "1000", "--period-ms", "0", "--check");
        FakeApps.App hp = FakeApps.start(work, socket, gpu, Map.of("XQ_NAME", "serve", "XQ_PRIORITY", "2"),
                "--seconds", "20", "--kernels", "5", "--us", "1000", "--period-ms", "30", "--check");
        // a HIP program under libxq-hip.so beside them (its own simulated GPU: the double's)
        FakeApps.App rocm = FakeApps.startHip(work, socket, dir.resolve("hipgpu.lock"), false, Map.of("XQ_NAME", "rocm",
                "XQ_PRIORITY", "3"), "--seconds", "20", "--kernels", "4", "--us", "1000", "--check");
        // the apps run 20 s: long enough to outlive a second node's start on a slow machine (with 8 s
        // they had ended before it served in two runs of three on a 2-vCPU VM where a 20 us sleep took 120)
        Thread.sleep(1500);
        first.destroyForcibly();   // SIGKILL: no goodbye to anyone
        assertTrue(first.waitFor(10, TimeUnit.SECONDS));
        Thread.sleep(500);
        // The next node on the same socket: the apps find it (they retry every second).
        Process second = node(socket, log, "run", "xq:processes --wait 3 --timeout 20000");
        assertTrue("the second node ran its command; log: " + log, second.waitFor(90, TimeUnit.SECONDS));
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertEquals("xq:processes --wait saw the three apps back; log:\n" + out, 0, second.exitValue());
        assertTrue(out, out.contains(Long.toString(lp.pid())) && out.contains(Long.toString(hp.pid()))
                && out.contains(Long.toString(rocm.pid())));
        assertTrue("the HIP app is listed as one: " + out, out.lines().anyMatch(l -> l.contains(rocm.pid() + " ") && l.contains(" rocm ") && l.contains(" hip ")));
        for (FakeApps.App a : List.of(lp, hp, rocm)) {
            assertEquals("exit code; stderr: " + a.stderr(), 0, a.waitFor(60));
            assertTrue("correct results: " + a.stdout(), a.stdout().contains("\"check\":\"ok\""));
            assertTrue("the app said once that it lost the node: " + a.stderr(), a.stderr().contains("xq"));
        }
    }
}
