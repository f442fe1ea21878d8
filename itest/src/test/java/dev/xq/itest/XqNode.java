package dev.xq.itest;

import static org.ops4j.pax.exam.CoreOptions.bootDelegationPackage;
import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.systemPackage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.ops4j.pax.exam.Option;

/**
 * The framework set-up every test shares: the bundles the node launcher starts, in the same
 * order, from the folder the build copies them into ({@code xq.itest.bundles}).
 *
 * <p>The tests use Pax Exam's native container, so the framework runs inside the surefire JVM:
 * {@code --enable-native-access=ALL-UNNAMED} comes from surefire's {@code argLine} (a
 * {@code vmOption} would only reach a forked container), and {@code jdk.jfr} is exported by
 * the system bundle as on the node ({@code org.osgi.framework.system.packages.extra}).
 */
final class XqNode {

    /** Third-party bundles, dependencies before their users. */
    static final List<String> PLATFORM = List.of(
            "org.osgi.util.function", "org.osgi.util.promise", "org.osgi.service.component",
            "org.apache.felix.scr", "org.apache.felix.configadmin", "org.apache.felix.metatype",
            "org.apache.felix.log", "org.apache.felix.gogo.runtime", "org.apache.felix.gogo.command",
            "org.apache.felix.fileinstall",
            // the HTTP API's server
            "org.apache.felix.http.servlet-api", "org.apache.commons.commons-io", "org.apache.commons.commons-fileupload",
            "org.ops4j.pax.logging.pax-logging-api", "org.apache.felix.http.jetty12");

    /** The XQ bundles, in the node's start order: the itest pom's dev.xq dependencies, as its build listed them. */
    static final List<String> XQ = bundleList(bundleDir().resolve("xq-bundles.txt"));

    /** Framework property naming the folder with the bundle jars, for tests that copy one. */
    static final String BUNDLES_PROPERTY = "xq.itest.bundles";

    /** Framework property: the HTTP API's port when its configuration does not set one. */
    static final String HTTP_PORT_PROPERTY = "xq.http.port";

    /** Framework property naming the socket the process host serves on. */
    static final String HOST_SOCKET_PROPERTY = "xq.host.socket";

    private XqNode() {
    }

    /** @return the node's bundles less {@code without}, FileInstall watching a fresh folder */
    static Option[] options(String... without) {
        Path dir = bundleDir();
        Set<String> skip = Set.of(without);
        List<Option> all = new ArrayList<>();
        // Pax Exam adds its own packages to org.osgi.framework.system.packages.extra; setting that
        // property directly would drop them and the driver could no longer see the probe.
        all.add(systemPackage("jdk.jfr"));
        // Felix 7.0.5 leaves it out of the system bundle on Java 25; Jetty 12 (the HTTP API) imports it
        all.add(systemPackage("javax.rmi.ssl"));
        all.add(bootDelegationPackage("jdk.jfr.internal.event"));
        all.add(frameworkProperty("felix.log.level").value(System.getProperty("xq.itest.felix.log", "1")));
        all.add(frameworkProperty(BUNDLES_PROPERTY).value(dir.toString()));
        all.add(frameworkProperty("felix.fileinstall.dir").value(freshFolder("hot-deploy").toString()));
        all.add(frameworkProperty("felix.fileinstall.poll").value("500"));
        // Each framework serves processes on a socket of its own (a short path: sun_path holds 108 bytes).
        all.add(frameworkProperty(HOST_SOCKET_PROPERTY).value(socketPath().toString()));
        all.add(frameworkProperty("felix.fileinstall.noInitialDelay").value("true"));
        all.add(frameworkProperty("felix.fileinstall.bundles.new.start").value("true"));
        all.add(frameworkProperty("felix.fileinstall.log.level").value("1"));
        all.add(frameworkProperty("gosh.args").value("--nointeractive"));
        // As on the node: Felix HTTP's default Jetty stays off (the HTTP API runs its own), and
        // each framework's API listens on a free port of its own, never the node's 50000.
        all.add(frameworkProperty("org.apache.felix.http.enable").value("false"));
        all.add(frameworkProperty(HTTP_PORT_PROPERTY).value("0"));
        all.add(frameworkProperty("org.ops4j.pax.logging.DefaultServiceLog.level").value("ERROR"));
        all.add(junitBundles());
        for (String name : PLATFORM) {
            all.add(bundle(jar(dir, name).toUri().toString()));
        }
        for (String name : XQ) {
            if (!skip.contains(name)) {
                all.add(bundle(jar(dir, name).toUri().toString()));
            }
        }
        return all.toArray(Option[]::new);
    }

    /**
     * The node's bundles, and Selenium for a test that drives a browser: Selenium is no bundle,
     * so the framework takes {@code org.openqa.selenium} (and what it uses) from the test class
     * path, through boot delegation to the application class loader.
     */
    static Option[] withSelenium() {
        List<Option> all = new ArrayList<>(List.of(options()));
        all.add(frameworkProperty("org.osgi.framework.bundle.parent").value("app"));
        all.add(bootDelegationPackage("org.openqa.selenium"));
        all.add(bootDelegationPackage("org.openqa.selenium.*"));
        return all.toArray(Option[]::new);
    }

    /**
     * @return the base URL ({@code http://127.0.0.1:PORT}, no slash at the end) the HTTP API's
     *     Jetty announces once it listens, or null while it does not
     */
    static String httpEndpoint(org.osgi.framework.BundleContext ctx) {
        try {
            for (org.osgi.framework.ServiceReference<?> r
                    : ctx.getServiceReferences("org.osgi.service.servlet.runtime.HttpServiceRuntime", "(xq.http=xq)")) {
                Object e = r.getProperty("osgi.http.endpoint");
                String first = e instanceof String[] a && a.length > 0 ? a[0] : e instanceof String s ? s : null;
                if (first != null && !first.endsWith(":0/")) {
                    return first.endsWith("/") ? first.substring(0, first.length() - 1) : first;
                }
            }
        } catch (Exception | Error e) {
            return null;
        }
        return null;
    }

    /** The bundle names of a list that {@code dependency:list} wrote (the node's format too). */
    static List<String> bundleList(Path file) {
        try {
            return Files.readAllLines(file).stream().map(String::trim).map(l -> l.split(":"))
                    .filter(f -> f.length >= 4 && f[0].equals("dev.xq")).map(f -> f[1]).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(file + " cannot be read; the itest build writes it (mvn -pl itest install)", e);
        }
    }

    static Path jar(Path dir, String symbolicName) {
        Path jar = dir.resolve(symbolicName + ".jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing; the itest build copies the bundles there (mvn -pl itest install)");
        }
        return jar;
    }

    private static Path bundleDir() {
        String dir = System.getProperty(BUNDLES_PROPERTY);
        if (dir == null) {
            throw new IllegalStateException("system property " + BUNDLES_PROPERTY + " is not set; run the tests through Maven");
        }
        return Path.of(dir);
    }

    /** A fresh socket path under /tmp, short enough for sun_path. */
    static Path socketPath() {
        try {
            return Files.createTempDirectory(Path.of("/tmp"), "xqit").resolve("node.sock");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path freshFolder(String what) {
        try {
            Path work = Path.of(System.getProperty("xq.itest.work", System.getProperty("java.io.tmpdir")));
            Files.createDirectories(work);
            return Files.createTempDirectory(work, what);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Polls {@code condition} every 20 ms until it holds or {@code millis} pass.
     * @return whether it held
     */
    static boolean eventually(long millis, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }
}
