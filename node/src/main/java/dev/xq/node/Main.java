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
import java.util.HashSet;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.SynchronousBundleListener;
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

    /** The command "line" that stands for: the lines of standard input, one after the other. */
    private static final String STDIN = "\0stdin";

    /**
     * Start order: what others need first (DS, Config Admin, Log before the bundles that use
     * them, so components activate once, with their configuration), FileInstall last of the
     * platform, then the XQ bundles in the order the runtime expects to meet them.
     */
    private static final List<String> PLATFORM_BUNDLES = List.of(
            "org.osgi.util.function", "org.osgi.util.promise", "org.osgi.service.component",
            "org.apache.felix.log", "org.apache.felix.configadmin", "org.apache.felix.metatype", "org.apache.felix.scr",
            "org.apache.felix.gogo.runtime", "org.apache.felix.gogo.command", "org.jline", "org.apache.felix.gogo.jline",
            "org.apache.felix.fileinstall",
            "org.apache.felix.http.servlet-api", "org.apache.commons.commons-io", "org.apache.commons.commons-fileupload",
            "org.ops4j.pax.logging.pax-logging-api", "org.apache.felix.http.jetty12");

    /** How long {@code run} waits for its command to appear (bundles start and DS activates). */
    private static final long COMMAND_WAIT_NANOS = 30_000_000_000L;

    /** How long Gogo's command table must stay unchanged before an unknown command is given up on. */
    private static final long SETTLED_NANOS = 5_000_000_000L;
    /** How long a command waits for the hot-deploy folder's configuration files to reach Config Admin. */
    private static final long CONFIG_WAIT_NANOS = 10_000_000_000L;
    /** And then for the components they configure to restart with them. */
    private static final long CONFIG_SETTLE_NANOS = 500_000_000L;

    /**
     * The file in the bundle folder that names the XQ bundles the node is built with, in start
     * order: written by the build from node/pom.xml's provided-scope dev.xq dependencies (the one
     * list of them), as {@code dependency:list} prints them.
     */
    static final String XQ_BUNDLE_LIST = "xq-bundles.txt";

    /** @return the XQ bundles named in {@code dir}'s list, in order; empty (and a warning) without one */
    static List<String> xqBundles(Path dir) throws IOException {
        Path list = dir.resolve(XQ_BUNDLE_LIST);
        if (!Files.isRegularFile(list)) {
            System.err.println("xq-node: warning: " + list + " is missing (module node not built?); XQ bundles start in file-name order");
            return List.of();
        }
        List<String> names = new ArrayList<>();
        for (String line : Files.readAllLines(list)) {
            String[] f = line.trim().split(":");
            if (f.length >= 4 && f[0].equals("dev.xq")) {
                names.add(f[1]);
            }
        }
        return List.copyOf(names);
    }

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
        boolean serve = mode.equals("serve");
        boolean interactive = switch (mode) {
            case "node" -> true;
            case "run", "serve" -> false;
            default -> {
                usage("unknown mode '" + mode + "'");
                yield false;
            }
        };
        if (mode.equals("run") && rest.size() < 2) {
            usage("run needs a command line, e.g. run xq:devices");
        }
        if (!mode.equals("run") && rest.size() > 1) {
            // "./xq node run xq:devices" used to open the shell and drop the words silently
            usage("'" + mode + "' takes no command (got '" + String.join(" ", rest.subList(1, rest.size()))
                    + "'); one command without a shell: xq-node run COMMAND... (./xq demo and ./xq bench do that)");
        }
        // A shell on a pipe or a file (printf 'xq:devices\n' | ./xq node): no line editor, which
        // ignored its input and never saw its end; the lines are run one by one, and the node stops at the end.
        boolean fromStdin = mode.equals("node") && !(System.console() != null && System.console().isTerminal());
        if (fromStdin) {
            interactive = false;
        }
        System.setProperty("java.awt.headless", "true");
        int rc = new Main().start(bundleDir, hotDeploy, interactive,
                serve ? null : fromStdin ? STDIN : commandLine(rest.subList(1, rest.size())), verbose);
        System.exit(rc);
    }

    private static void usage(String why) {
        System.err.println("xq-node: " + why + "\nusage: xq-node [--bundles HOT_DEPLOY_DIR] [--verbose] node | serve | run COMMAND...");
        System.exit(2);
    }

    private int start(Path bundleDir, Path hotDeploy, boolean interactive, String command, boolean verbose) throws Exception {
        if (!Files.isDirectory(bundleDir)) {
            System.err.println("xq-node: bundle folder " + bundleDir + " does not exist; build first (./xq builds what is missing)");
            return 2;
        }
        Files.createDirectories(hotDeploy);
        String unsafe = HotDeployFolder.problem(hotDeploy);
        if (unsafe != null) {
            System.err.println("xq-node: " + unsafe);
            return 2;
        }
        if (interactive || command == null) {
            // a node that serves (HTTP on): another node here already holds its socket or port? One line and exit 1
            // (it used to print Jetty's stack traces, say "serving" and serve neither: issue 41, item 11)
            String taken = Taken.check(hotDeploy, System::getProperty, System.getenv(), euid());
            if (taken != null) {
                System.err.println("xq-node: " + taken);
                return 1;
            }
        }
        // The framework's storage holds Config Admin's store and every bundle's data: inside a folder
        // of this node's only (0700 on POSIX systems; Felix re-creates the storage folder itself
        // with the default 0755 when it cleans it). Folders of nodes that died are removed first.
        NodeStorage.removeStale();
        Path privateDir = NodeStorage.create();
        Path storage = privateDir.resolve("felix");
        Map<String, String> cfg = new HashMap<>();
        cfg.put(Constants.FRAMEWORK_STORAGE, storage.toString());
        cfg.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
        // JFR's API for the runtime's flight-recorder events
        // and javax.rmi.ssl, which Felix 7.0.5 leaves out of the system bundle on Java 25 while Jetty 12 imports it
        cfg.put(Constants.FRAMEWORK_SYSTEMPACKAGES_EXTRA, "jdk.jfr,javax.rmi.ssl");
        // While a recording runs, the JDK rewrites event classes to call jdk.jfr.internal.event
        // (EventWriter); bundle class loaders must find it at the boot loader.
        cfg.put(Constants.FRAMEWORK_BOOTDELEGATION, "jdk.jfr.internal.event");
        cfg.put("felix.fileinstall.dir", hotDeploy.toString());
        cfg.put("felix.fileinstall.poll", "500");
        cfg.put("felix.fileinstall.noInitialDelay", "true");
        // The folder's files are the operator's: FileInstall must not write configurations back into
        // them. Its write-back creates the file empty and then fills it, and its own scan can read
        // it empty in between and apply that (FELIX-6515); on the GPU machine a .cfg written before
        // start came out empty in 6 of 9 runs, and the node ran under the defaults.
        cfg.put("felix.fileinstall.enableConfigSave", "false");
        cfg.put("felix.fileinstall.bundles.new.start", "true");
        // warnings too: a jar in the hot-deploy folder that cannot be resolved is reported at WARN
        cfg.put("felix.fileinstall.log.level", verbose ? "4" : "2");
        cfg.put("felix.log.level", "1");
        cfg.put("gosh.args", interactive ? "" : "--nointeractive");
        // The HTTP API (dev.xq.http) runs a Jetty of its own, where its configuration says; Felix
        // HTTP's default one would listen on 8080 on every interface: it stays off. Jetty logs
        // through Pax Logging's API: errors only. A one-command run (./xq demo, ./xq bench) serves
        // no API, so that it never competes for the port with a node that is running.
        cfg.put("org.apache.felix.http.enable", "false");
        cfg.put("org.ops4j.pax.logging.DefaultServiceLog.level", System.getProperty("xq.jetty.log", "ERROR"));
        if (!interactive && command != null) {
            cfg.put("xq.http.enabled", "false");
            // beside a running node, its process socket is that node's: said at info, not as an error
            cfg.put("xq.host.quietIfTaken", "true");
        }
        for (String p : List.of("xq.http.port", "xq.http.enabled")) {
            if (System.getProperty(p) != null) {
                cfg.put(p, System.getProperty(p));
            }
        }
        // Gogo runs ${gosh.home}/etc/gosh_profile at start: never from a folder others may write
        // (it was the hot-deploy folder's parent: code execution for whoever could put a file
        // there). An empty folder in the node's private storage: Gogo's built-in profile.
        cfg.put("gosh.home", Files.createDirectories(privateDir.resolve("gosh")).toString());

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
        // installed in start order, so that bundle ids (lb) read in that order too
        List<String> xqBundles = xqBundles(bundleDir);
        jars = jars.stream().sorted(Comparator.comparingInt(j -> startRank(symbolicName(j), xqBundles))).toList();
        for (Path jar : jars) {
            try {
                installed.add(ctx.installBundle(jar.toUri().toString()));
            } catch (BundleException e) {
                System.err.println("xq-node: cannot install " + jar.getFileName() + ": " + e.getMessage());
            }
        }
        for (String name : xqBundles) {
            if (installed.stream().noneMatch(b -> name.equals(b.getSymbolicName()))) {
                System.err.println("xq-node: warning: " + name + " is not in " + bundleDir + " (module not built?); the node runs without it");
            }
        }
        fw.start();
        Exit exit = new Exit(fw);
        if (interactive) {
            // Before the shell bundle starts, so that the banner comes ahead of the first prompt.
            System.out.println("XQ node starting. Commands: xq:devices, xq:queues, xq:top, xq:policies, xq:policy NAME, xq:demo, xq:bench ...; "
                    + "hot-deploy folder: " + hotDeploy + "; leave with 'exit' or Ctrl-D.");
            Hashtable<String, Object> props = new Hashtable<>();
            // The shell's profile searches scope gogo first and otherwise maps 'exit' to
            // System.exit(int), which needs an argument and skips the framework's shutdown.
            props.put("osgi.command.scope", "gogo");
            props.put("osgi.command.function", new String[] {"exit"});
            ctx.registerService(Object.class.getName(), exit, props);
        }
        LogPrinter logs = new LogPrinter(verbose);
        // Bundles going away while the node shuts down is no news.
        ctx.addBundleListener((SynchronousBundleListener) e -> {
            if (e.getBundle().getBundleId() == 0 && e.getType() == BundleEvent.STOPPING) {
                logs.quiet();
            }
        });
        for (Bundle b : installed) {
            if (b.getHeaders().get(Constants.FRAGMENT_HOST) != null) {
                continue;
            }
            if (!interactive && "org.apache.felix.gogo.jline".equals(b.getSymbolicName())) {
                // One command, no terminal: even with --nointeractive the shell bundle runs its
                // profile against a line reader it never made and prints a stack trace.
                continue;
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
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(privateDir)));
        HotDeployFolder.watchForNonBundles(hotDeploy);
        if (interactive) {
            fw.waitForStop(0);
            return exit.code;
        }
        if (command == null) {
            // serve: no shell, no command; runs until stopped (SIGTERM or SIGINT stop the framework cleanly)
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    fw.stop();
                    fw.waitForStop(15_000);
                } catch (Exception e) {
                    System.err.println("xq-node: stopping the framework failed: " + e);
                }
            }, "xq-node-stop"));
            System.err.println("xq-node: serving (hot-deploy folder " + hotDeploy + "); stop with SIGTERM");
            fw.waitForStop(0);
            return 0;
        }
        List<String> unapplied = HotDeployFolder.awaitConfigs(ctx, hotDeploy, CONFIG_WAIT_NANOS, CONFIG_SETTLE_NANOS);
        if (!unapplied.isEmpty()) {
            System.err.println("xq-node: warning: " + unapplied + " in " + hotDeploy + " not applied after "
                    + CONFIG_WAIT_NANOS / 1_000_000_000L + " s; running the command anyway");
        }
        int rc = command.equals(STDIN) ? runLines(ctx) : runCommand(ctx, command);
        logs.quiet(); // bundles going away at shutdown is no news
        fw.stop();
        fw.waitForStop(15_000);
        return rc;
    }

    /**
     * Runs the lines of standard input as Gogo command lines in one session (variables carry from
     * line to line), printing each result or error; ends at the end of input or at a line {@code exit}.
     * @return 0, or 1 when a line failed
     */
    private static int runLines(BundleContext ctx) throws Exception {
        System.err.println("xq-node: standard input is not a terminal: running its lines as commands; the node stops at its end");
        Object cp = waitForCommand(ctx, "xq:devices"); // the runtime's commands are there once xq:devices is
        if (cp == null) {
            return 1;
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true);
        Object session = cp.getClass().getMethod("createSession", InputStream.class, OutputStream.class, OutputStream.class)
                .invoke(cp, InputStream.nullInputStream(), out, err);
        int rc = 0;
        try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in))) {
            Method execute = session.getClass().getMethod("execute", CharSequence.class);
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                if (l.equals("exit")) {
                    break;
                }
                if (execute(session, execute, l, out, err) != 0) {
                    rc = 1;
                }
            }
        } finally {
            session.getClass().getMethod("close").invoke(session);
        }
        return rc;
    }

    /** Executes one line in {@code session}, printing its result or its error. @return 0, or 1 when it failed */
    private static int execute(Object session, Method execute, String line, PrintStream out, PrintStream err)
            throws ReflectiveOperationException {
        try {
            Object result = execute.invoke(session, line);
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
        }
    }

    /**
     * Waits until Gogo's command processor is there and knows {@code command}'s first word.
     * @return the processor, or null after saying on stderr why the command is not available
     */
    private static Object waitForCommand(BundleContext ctx, String command) throws Exception {
        String first = command.trim().split("\\s+")[0].toLowerCase(java.util.Locale.ROOT);
        // Only a plain command name can be waited for; a closure or variable runs as it is.
        boolean named = first.matches("[a-z0-9_.-]+(:[a-z0-9_.-]+)?");
        long deadline = System.nanoTime() + COMMAND_WAIT_NANOS;
        Object cp = null;
        Set<String> known = Set.of();
        Set<String> lastKnown = null;
        long lastChange = System.nanoTime();
        while (true) {
            ServiceReference<?> processor = ctx.getServiceReference(PROCESSOR);
            if (cp == null && processor != null) {
                cp = ctx.getService(processor);
            }
            if (cp != null) {
                // Gogo's own table, not the service registry: it also holds the built-ins
                // (echo, each, ...) and a command is there only once Gogo can call it.
                known = commands(cp);
                if (!named || known.contains(first) || (first.indexOf(':') < 0 && known.stream().anyMatch(c -> c.endsWith(":" + first)))) {
                    return cp;
                }
            }
            long now = System.nanoTime();
            if (!known.equals(lastKnown)) {
                lastKnown = known;
                lastChange = now;
            }
            // A name that is still unknown once the command table has stopped changing for a
            // while is a typo or a missing bundle: say so without waiting out the whole limit.
            boolean settled = cp != null && now - lastChange > SETTLED_NANOS;
            if (now > deadline || settled) {
                String scope = first.indexOf(':') > 0 ? first.substring(0, first.indexOf(':') + 1) : "xq:";
                System.err.println("xq-node: command '" + first + "' is not available"
                        + (settled ? "" : " after " + COMMAND_WAIT_NANOS / 1_000_000_000L + " s")
                        + (cp == null ? " (no Gogo command processor: is org.apache.felix.gogo.runtime in the bundle folder?)"
                        : "; " + scope + " commands now: " + known.stream().filter(c -> c.startsWith(scope)).sorted().toList()));
                return null;
            }
            Thread.sleep(20);
        }
    }

    /** Runs one command line once the command processor and the command's own service are there. */
    private static int runCommand(BundleContext ctx, String command) throws Exception {
        Object cp = waitForCommand(ctx, command);
        if (cp == null) {
            return 1;
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true);
        Object session = cp.getClass().getMethod("createSession", InputStream.class, OutputStream.class, OutputStream.class)
                .invoke(cp, InputStream.nullInputStream(), out, err);
        try {
            return execute(session, session.getClass().getMethod("execute", CharSequence.class), command, out, err);
        } finally {
            session.getClass().getMethod("close").invoke(session);
        }
    }

    @SuppressWarnings("unchecked")
    private static Set<String> commands(Object processor) throws ReflectiveOperationException {
        Object names = processor.getClass().getMethod("getCommands").invoke(processor);
        return names instanceof Set<?> set ? new HashSet<>((Set<String>) set) : Set.of();
    }

    private static String symbolicName(Path jar) {
        try (JarFile f = new JarFile(jar.toFile())) {
            Manifest m = f.getManifest();
            String bsn = m == null ? null : m.getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME);
            return bsn == null ? "" : bsn.split(";")[0].trim();
        } catch (IOException e) {
            return ""; // installing it will report what is wrong with it
        }
    }

    private static int startRank(String name, List<String> xqBundles) {
        int i = PLATFORM_BUNDLES.indexOf(name);
        if (i >= 0) {
            return i;
        }
        int x = xqBundles.indexOf(name);
        return x >= 0 ? PLATFORM_BUNDLES.size() + x : PLATFORM_BUNDLES.size() + xqBundles.size();
    }

    /**
     * One argument is a whole Gogo command line ({@code run "xq:bench edf --json a.json"}); several
     * are words, quoted where Gogo would otherwise split or interpret them (a file name with a space).
     */
    static String commandLine(List<String> words) {
        if (words.size() == 1) {
            return words.getFirst();
        }
        StringBuilder line = new StringBuilder();
        for (String w : words) {
            if (!line.isEmpty()) {
                line.append(' ');
            }
            if (!w.isEmpty() && w.chars().noneMatch(c -> Character.isWhitespace(c) || "\"'$;|&(){}[]<>#`\\".indexOf(c) >= 0)) {
                line.append(w);
            } else {
                line.append('"');
                for (char c : w.toCharArray()) {
                    if (c == '"' || c == '\\' || c == '$') {
                        line.append('\\');
                    }
                    line.append(c);
                }
                line.append('"');
            }
        }
        return line.toString();
    }

    /** @return this process's effective uid (the owner of /proc/self), or -1 where there is none */
    static int euid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException notLinux) {
            return -1;
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind is harmless
        }
    }

    /** The shell's {@code exit [CODE]}: stops the framework, and so the node, with that exit status. */
    public static final class Exit {
        private final Framework framework;
        private volatile int code;

        Exit(Framework framework) {
            this.framework = framework;
        }

        /** Stops the node with status 0. */
        public void exit() throws BundleException {
            exit(0);
        }

        /** Stops the node with status {@code status}. */
        public void exit(int status) throws BundleException {
            code = status;
            framework.stop();
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
