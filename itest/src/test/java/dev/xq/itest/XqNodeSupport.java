package dev.xq.itest;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.systemPackage;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.ops4j.pax.exam.Option;

/**
 * The node as the launcher builds it: every bundle in {@code node/target/bundles} (framework
 * services, Gogo, FileInstall and the XQ bundles), in a real Felix framework.
 */
final class XqNodeSupport {

    private XqNodeSupport() {
    }

    static Path bundleDir() {
        return Path.of(System.getProperty("xq.node.bundles", "../node/target/bundles"));
    }

    /** @return the node's bundles, without the ones whose symbolic-name prefix is listed, plus the test harness */
    static Option[] node(Path hotDeploy, Set<String> leaveOut) {
        List<Option> opts = new ArrayList<>();
        File[] jars = bundleDir().toFile().listFiles((d, n) -> n.endsWith(".jar"));
        if (jars == null || jars.length == 0) {
            throw new IllegalStateException("no bundles in " + bundleDir().toAbsolutePath() + "; build the node module first");
        }
        Arrays.sort(jars);
        for (File jar : jars) {
            if (leaveOut.stream().anyMatch(jar.getName()::startsWith)) {
                continue;
            }
            // the shell bundle wants a terminal; tests use the command processor directly
            if (jar.getName().startsWith("org.apache.felix.gogo.jline") || jar.getName().startsWith("jline-")) {
                continue;
            }
            opts.add(bundle(jar.toURI().toString()));
        }
        opts.add(junitBundles());
        opts.add(frameworkProperty("felix.log.level").value("2"));
        // appended to Pax Exam's own extra system packages (setting the framework property would replace them)
        opts.add(systemPackage("jdk.jfr"));
        opts.add(frameworkProperty("felix.fileinstall.dir").value(hotDeploy.toAbsolutePath().toString()));
        opts.add(frameworkProperty("felix.fileinstall.poll").value("200"));
        opts.add(frameworkProperty("felix.fileinstall.noInitialDelay").value("true"));
        opts.add(frameworkProperty("felix.fileinstall.bundles.new.start").value("true"));
        opts.add(systemProperty("xq.node.bundles").value(bundleDir().toAbsolutePath().toString()));
        opts.add(systemProperty("java.awt.headless").value("true"));
        return opts.toArray(Option[]::new);
    }

    static Path tempHotDeploy(String name) {
        try {
            return Files.createTempDirectory("xq-itest-" + name);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static void eventually(BooleanSupplier condition, long millis, String what) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + millis + " ms: " + what);
            }
            Thread.sleep(10);
        }
    }
}
