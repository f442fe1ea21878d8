package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * A command run at start-up ({@code xq-node run CMD}, as scripts and the GPU benchmark kit do)
 * runs under the hot-deploy folder's configuration: the launcher waits until Config Admin holds
 * every {@code .cfg} there and the components they configure have restarted with the values.
 * Before, a benchmark on the GPU machine ran under the defaults in 6 of 9 runs: FileInstall wrote
 * the configuration back into its file (empty for a moment, and read back empty by its own scan),
 * so the launcher also turns that write-back off. The built launcher runs as a process of its own here.
 */
public class NodeConfigIT {

    private static String run(Path hot, String command) throws Exception {
        Path jar = Path.of(System.getProperty("xq.node.jar", "../node/target/xq-node.jar")).toAbsolutePath().normalize();
        assertTrue("the node is built: " + jar, Files.isRegularFile(jar));
        Path log = Files.createTempFile("xqcfg", ".log");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-Dxq.home=" + Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize(),
                "-Dxq.host.socket=" + hot.resolve("node.sock"), "-jar", jar.toString(), "--bundles", hot.toString(),
                "run", command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue("the node ran its command", p.waitFor(90, TimeUnit.SECONDS));
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertEquals(out, 0, p.exitValue());
        return out;
    }

    @Test
    public void aStartUpCommandSeesTheHotFolderConfiguration() throws Exception {
        // the race it guards against was seen in about 1 start of 9 here: several starts
        for (int i = 0; i < 8; i++) {
            Path hot = Files.createTempDirectory(Path.of("/tmp"), "xqhot", PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            Files.writeString(hot.resolve("dev.xq.scheduler.cfg"), "policy=edf\n");
            String out = run(hot, "xq:policy");
            List<String> selected = out.lines().filter(l -> l.startsWith("selected:")).toList();
            assertEquals("run " + i + ": " + out, List.of("selected: edf"), selected);
            // FileInstall must not write configurations back into the operator's files (its write-back
            // empties a file for a moment, and its own scan can apply the empty one)
            assertEquals("run " + i + ": the .cfg file was rewritten", "policy=edf\n",
                    Files.readString(hot.resolve("dev.xq.scheduler.cfg")));
        }
    }
}
