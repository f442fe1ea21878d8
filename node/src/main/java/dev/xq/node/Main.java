package dev.xq.node;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Stream;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

/**
 * Starts an XQ node: Apache Felix with SCR, Config Admin, Metatype, Log Service, Gogo and
 * FileInstall, then every bundle in the node's bundle folder; FileInstall watches the
 * hot-deploy folder. Two modes:
 * <ul>
 *   <li>{@code node}: the interactive Gogo shell on this terminal; the node runs until the shell ends;</li>
 *   <li>{@code run COMMAND...}: runs one Gogo command line without a shell, prints its result
 *       and exits with 0, or with 1 and the error when the command fails.</li>
 * </ul>
 * The launcher reaches Gogo's {@code CommandProcessor} by reflection: its API lives in the
 * gogo runtime bundle, and exporting it from the class path instead would put two copies of
 * the package in the framework.
 */
public final class Main {

    private static final String PROCESSOR = "org.apache.felix.service.command.CommandProcessor";

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        Path home = Path.of(System.getProperty("xq.home", ".")).toAbsolutePath().normalize();
        Path bundleDir = Path.of(System.getProperty("xq.bundles", home.resolve("node/target/bundles").toString()));
        Path hotDeploy = home.resolve("bundles");
        boolean verbose = false;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bundles" -> {
                    if (i + 1 >= args.length) {
                        usage("--bundles needs a folder");
                    }
                    hotDeploy = Path.of(args[++i]).toAbsolutePath();
                }
                case "--verbose", "-v" -> verbose = true;
                default -> rest.add(args[i]);
            }
        }
        if (rest.isEmpty()) {
            usage("no mode given");
        }
        String mode = rest.getFirst();
        boolean interactive = switch (mode) {
            case "node" -> true;
            case "run" -> false;
            default -> {
                usage("unknown mode '" + mode + "'");
                yield false;
            }
        };
        if (!interactive && rest.size() < 2) {
            usage("run needs a command line, e.g. run xq:devices");
        }
        System.setProperty("java.awt.headless", "true");
        int rc = new Main().start(bundleDir, hotDeploy, interactive, String.join(" ", rest.subList(1, rest.size())), verbose);
        System.exit(rc);
    }

    private static void usage(String why) {
        System.err.println("xq-node: " + why + "\nusage: xq-node [--bundles HOT_DEPLOY_DIR] [--verbose] node | run COMMAND...");
        System.exit(2);
    }

    private int start(Path bundleDir, Path hotDeploy, boolean interactive, String command, boolean verbose) throws Exception {
        if (!Files.isDirectory(bundleDir)) {
            System.err.println("xq-node: bundle folder " + bundleDir + " does not exist; build first (./xq builds what is missing)");
            return 2;
        }
        Files.createDirectories(hotDeploy);
        Path storage = Files.createTempDirectory("xq-felix");
        Map<String, String> cfg = new HashMap<>();
        cfg.put(Constants.FRAMEWORK_STORAGE, storage.toString());
        cfg.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
        // JFR's API for the runtime's flight-recorder events
        cfg.put(Constants.FRAMEWORK_SYSTEMPACKAGES_EXTRA, "jdk.jfr");
        cfg.put("felix.fileinstall.dir", hotDeploy.toString());
        cfg.put("felix.fileinstall.poll", "500");
        cfg.put("felix.fileinstall.noInitialDelay", "true");
        cfg.put("felix.fileinstall.bundles.new.start", "true");
        cfg.put("felix.fileinstall.log.level", verbose ? "4" : "1");
        cfg.put("felix.log.level", "1");
        cfg.put("gosh.args", interactive ? "" : "--nointeractive");
        cfg.put("gosh.home", hotDeploy.getParent() == null ? "." : hotDeploy.getParent().toString());

        FrameworkFactory factory = ServiceLoader.load(FrameworkFactory.class).findFirst()
                .orElseThrow(() -> new IllegalStateException("no OSGi framework on the class path"));
        Framework fw = factory.newFramework(cfg);
        fw.init();
        BundleContext ctx = fw.getBundleContext();
        List<Bundle> installed = new ArrayList<>();
        List<Path> jars;
        try (Stream<Path> s = Files.list(bundleDir)) {
            jars = s.filter(p -> p.toString().endsWith(".jar")).sorted(Comparator.comparing(Path::toString)).toList();
        }
        for (Path jar : jars) {
            try {
                installed.add(ctx.installBundle(jar.toUri().toString()));
            } catch (BundleException e) {
                System.err.println("xq-node: cannot install " + jar.getFileName() + ": " + e.getMessage());
            }
        }
        fw.start();
        LogPrinter logs = new LogPrinter(verbose);
        for (Bundle b : installed) {
            if (b.getHeaders().get(Constants.FRAGMENT_HOST) != null) {
                continue;
            }
            if (!interactive && "org.apache.felix.gogo.jline".equals(b.getSymbolicName())) {
                continue; // one command, no terminal: the shell bundle would only try to open one
            }
            try {
                b.start();
            } catch (BundleException e) {
                System.err.println("xq-node: bundle " + b.getSymbolicName() + " did not start: " + e.getMessage());
            }
            if ("org.apache.felix.log".equals(b.getSymbolicName())) {
                logs.attach(ctx);
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(storage)));
        if (interactive) {
            System.out.println("XQ node running. Commands: xq:devices, xq:queues, xq:top, xq:policies, xq:policy NAME, xq:demo, xq:bench ...; "
                    + "hot-deploy folder: " + hotDeploy + "; leave with 'exit' or Ctrl-D.");
            fw.waitForStop(0);
            return 0;
        }
        int rc = runCommand(ctx, command);
        logs.quiet(); // bundles going away at shutdown is no news
        fw.stop();
        fw.waitForStop(15_000);
        return rc;
    }

    /** Runs one command line once the command processor and the command's own service are there. */
    private static int runCommand(BundleContext ctx, String command) throws Exception {
        String first = command.trim().split("\\s+")[0];
        int colon = first.indexOf(':');
        String filter = colon > 0
                ? "(&(osgi.command.scope=" + first.substring(0, colon) + ")(osgi.command.function=" + first.substring(colon + 1) + "))"
                : "(osgi.command.function=" + first + ")";
        long deadline = System.nanoTime() + 30_000_000_000L;
        ServiceReference<?> processor;
        while ((processor = ctx.getServiceReference(PROCESSOR)) == null || ctx.getServiceReferences((String) null, filter) == null) {
            if (System.nanoTime() > deadline) {
                System.err.println("xq-node: command '" + first + "' did not become available within 30 s"
                        + (processor == null ? " (no Gogo command processor)" : ""));
                return 1;
            }
            Thread.sleep(20);
        }
        Thread.sleep(100); // let Gogo's tracker pick the command up and DS finish activating what it needs
        Object cp = ctx.getService(processor);
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true);
        Object session = cp.getClass().getMethod("createSession", InputStream.class, OutputStream.class, OutputStream.class)
                .invoke(cp, InputStream.nullInputStream(), out, err);
        try {
            Method execute = session.getClass().getMethod("execute", CharSequence.class);
            Object result = execute.invoke(session, command);
            if (result != null) {
                out.println(result);
            }
            return 0;
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            err.println("xq: " + (cause.getMessage() == null ? cause.toString() : cause.getMessage()));
            if (!(cause instanceof IllegalArgumentException)) {
                cause.printStackTrace(err);
            }
            return 1;
        } finally {
            session.getClass().getMethod("close").invoke(session);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind is harmless
        }
    }

    /**
     * Prints warnings and errors from the OSGi Log Service on the console (everything with
     * {@code --verbose}). The log API lives in the log bundle, so the listener is a proxy of
     * that bundle's interface.
     */
    private static final class LogPrinter {
        private final boolean verbose;
        private Class<?> entryType;
        private volatile boolean quiet;

        void quiet() {
            quiet = true;
        }

        LogPrinter(boolean verbose) {
            this.verbose = verbose;
        }

        void attach(BundleContext ctx) {
            try {
                ServiceReference<?> ref = ctx.getServiceReference("org.osgi.service.log.LogReaderService");
                if (ref == null) {
                    return;
                }
                Object reader = ctx.getService(ref);
                Class<?> listenerType = ref.getBundle().loadClass("org.osgi.service.log.LogListener");
                Class<?> readerType = ref.getBundle().loadClass("org.osgi.service.log.LogReaderService");
                entryType = ref.getBundle().loadClass("org.osgi.service.log.LogEntry");
                Object listener = Proxy.newProxyInstance(listenerType.getClassLoader(), new Class<?>[] {listenerType}, (p, m, a) -> {
                    if (m.getName().equals("logged") && a != null && a.length == 1) {
                        print(a[0]);
                    }
                    return null;
                });
                readerType.getMethod("addLogListener", listenerType).invoke(reader, listener);
            } catch (ReflectiveOperationException | RuntimeException e) {
                System.err.println("xq-node: log messages will not be shown: " + e);
            }
        }

        private void print(Object entry) throws ReflectiveOperationException {
            if (quiet) {
                return;
            }
            int level = (Integer) entryType.getMethod("getLevel").invoke(entry);
            if (level > 2 && !verbose) {
                return; // 1 error, 2 warning, 3 info, 4 debug
            }
            Object msg = entryType.getMethod("getMessage").invoke(entry);
            Object ex = entryType.getMethod("getException").invoke(entry);
            Object bundle = entryType.getMethod("getBundle").invoke(entry);
            String who = bundle instanceof Bundle b ? b.getSymbolicName() : "?";
            String tag = switch (level) {
                case 1 -> "ERROR";
                case 2 -> "WARN";
                case 3 -> "INFO";
                default -> "DEBUG";
            };
            System.err.println("[" + tag + "] " + who + ": " + msg + (ex instanceof Throwable t ? " (" + t + ")" : ""));
        }
    }
}
