package dev.xq.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * The hot-deploy folder installs and starts whatever jar appears in it, so whoever can write
 * there runs code as the node's user: it must belong to that user and be writable by no one else.
 */
final class HotDeployFolder {

    private HotDeployFolder() {
    }

    /** @return why {@code dir} must not be used, or null when it is safe */
    static String problem(Path dir) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            return "hot-deploy folder " + dir + " is a symbolic link; give the real folder";
        }
        Object owner;
        Object me;
        try {
            owner = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            me = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
            return null; // no POSIX owners here to check
        }
        if (!owner.equals(me)) {
            return "hot-deploy folder " + dir + " belongs to uid " + owner + ", not to this node's uid " + me
                    + ": anyone who can write there runs code as this node; use a folder of your own (--bundles DIR)";
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
        if (perms.contains(PosixFilePermission.GROUP_WRITE) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            return "hot-deploy folder " + dir + " is writable by its group or by others (" + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                    + "): anyone who can write there runs code as this node; chmod go-w " + dir;
        }
        return null;
    }

    /**
     * @return why {@code jar} (a {@code .jar} file in the hot-deploy folder) is not an OSGi bundle
     *         FileInstall can install, or null when it looks like one; FileInstall skips such files
     *         without a word
     */
    static String notABundle(Path jar) {
        try (java.util.jar.JarFile f = new java.util.jar.JarFile(jar.toFile())) {
            java.util.jar.Manifest m = f.getManifest();
            if (m == null) {
                return "it has no META-INF/MANIFEST.MF";
            }
            if (m.getMainAttributes().getValue("Bundle-SymbolicName") == null) {
                return "its manifest has no Bundle-SymbolicName (a plain jar, not an OSGi bundle)";
            }
            return null;
        } catch (IOException e) {
            return "it cannot be read as a jar (" + e.getMessage() + ")";
        }
    }

    /**
     * Reports, once per version of a file, each {@code .jar} in {@code dir} that is not a bundle
     * (checked every 2 s on a daemon thread). Jars that are bundles but cannot be resolved or
     * started are reported by FileInstall itself (a warning naming the missing requirement).
     */
    static void watchForNonBundles(Path dir) {
        java.util.Map<Path, String> seen = new java.util.HashMap<>();
        Thread t = new Thread(() -> {
            while (true) {
                try (java.util.stream.Stream<Path> s = Files.list(dir)) {
                    for (Path jar : s.filter(p -> p.toString().endsWith(".jar") && Files.isRegularFile(p)).toList()) {
                        String version = Files.getLastModifiedTime(jar) + "/" + Files.size(jar);
                        if (!version.equals(seen.put(jar, version))) {
                            String why = notABundle(jar);
                            if (why != null) {
                                System.err.println("xq-node: hot-deploy folder: " + jar.getFileName() + " is not installed: " + why);
                            }
                        }
                    }
                    seen.keySet().removeIf(p -> !Files.exists(p));
                    Thread.sleep(2000);
                } catch (InterruptedException e) {
                    return;
                } catch (IOException | RuntimeException e) {
                    try {
                        Thread.sleep(2000); // the folder went away for a moment, or a file while it was read
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }, "xq-hot-deploy-check");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Waits until Config Admin holds a configuration for every {@code .cfg}/{@code .config} file in
     * the hot-deploy folder (FileInstall marks each with {@code felix.fileinstall.filename}), then a
     * little longer for Declarative Services to act on them, so that a command run at start-up
     * ({@code xq-node run ...}) sees the node as configured. FileInstall's first scan races with the
     * command otherwise: a benchmark started under settings it never got (seen on the GPU machine:
     * 2 of 3 runs). Config Admin is reached by reflection: the launcher does not import its package.
     *
     * @return the files still not applied when {@code timeoutNanos} ran out (empty when all were)
     */
    static java.util.List<String> awaitConfigs(org.osgi.framework.BundleContext ctx, Path dir, long timeoutNanos,
                                               long settleNanos) throws Exception {
        java.util.List<Path> files = new java.util.ArrayList<>();
        try (var list = Files.list(dir)) {
            list.filter(f -> f.getFileName().toString().endsWith(".cfg") || f.getFileName().toString().endsWith(".config"))
                    .forEach(files::add);
        }
        if (files.isEmpty()) {
            return java.util.List.of();
        }
        long deadline = System.nanoTime() + timeoutNanos;
        java.util.List<String> missing = new java.util.ArrayList<>();
        while (true) {
            missing.clear();
            org.osgi.framework.ServiceReference<?> ref = ctx.getServiceReference("org.osgi.service.cm.ConfigurationAdmin");
            Object admin = ref == null ? null : ctx.getService(ref);
            java.util.Set<String> applied = new java.util.HashSet<>();
            if (admin != null) {
                try {
                    Object[] configs = (Object[]) admin.getClass().getMethod("listConfigurations", String.class)
                            .invoke(admin, "(felix.fileinstall.filename=*)");
                    for (Object c : configs == null ? new Object[0] : configs) {
                        java.lang.reflect.Method props = c.getClass().getMethod("getProperties");
                        props.setAccessible(true);
                        java.util.Dictionary<?, ?> d = (java.util.Dictionary<?, ?>) props.invoke(c);
                        Object name = d == null ? null : d.get("felix.fileinstall.filename");
                        if (name != null) {
                            applied.add(name.toString());
                        }
                    }
                } finally {
                    ctx.ungetService(ref);
                }
            }
            for (Path f : files) {
                String uri = f.toUri().toString();
                // FileInstall writes file:/a/b (URL form); Path.toUri gives file:///a/b
                if (!applied.contains(uri) && !applied.contains("file:" + f.toAbsolutePath()) && !applied.contains(f.toString())) {
                    missing.add(f.getFileName().toString());
                }
            }
            if (missing.isEmpty()) {
                java.util.List<String> late = awaitComponents(ctx, files, deadline);
                awaitQuiet(ctx, settleNanos, deadline);
                return late.stream().map(n -> n + " (its component does not show the values)").toList();
            }
            if (System.nanoTime() > deadline) {
                return java.util.List.copyOf(missing);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Waits until no service has been registered, modified or unregistered for {@code quietNanos}
     * (a component restarting under a new configuration unregisters and registers its services;
     * the CUDA driver's restart opens the GPU, which takes longer than any fixed pause on a cold
     * machine), or until {@code deadline}.
     */
    static void awaitQuiet(org.osgi.framework.BundleContext ctx, long quietNanos, long deadline) throws InterruptedException {
        java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
        org.osgi.framework.ServiceListener l = e -> last.set(System.nanoTime());
        ctx.addServiceListener(l);
        try {
            while (System.nanoTime() - last.get() < quietNanos && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        } finally {
            ctx.removeServiceListener(l);
        }
    }

    /**
     * For each configuration file whose PID names a component that publishes a service (Declarative
     * Services puts the configuration's properties on it), waits until that service carries the
     * file's values: the component has restarted under them. Files for components without a
     * service, or with values DS renders differently, are left to {@link #awaitQuiet}.
     */
    static java.util.List<String> awaitComponents(org.osgi.framework.BundleContext ctx, java.util.List<Path> files,
                                                  long deadline) throws Exception {
        java.util.List<String> late = new java.util.ArrayList<>();
        for (Path f : files) {
            if (!f.getFileName().toString().endsWith(".cfg")) {
                continue;
            }
            String pid = f.getFileName().toString().replaceFirst("\\.cfg$", "");
            java.util.Properties want = new java.util.Properties();
            try (var in = Files.newInputStream(f)) {
                want.load(in);
            }
            java.util.List<String> names = componentsOf(ctx, pid);
            if (names.isEmpty()) {
                continue;
            }
            StringBuilder any = new StringBuilder("(|");
            for (String n : names) {
                any.append("(component.name=").append(n).append(')');
            }
            String filter = any.append(')').toString();
            while (true) {
                if (System.nanoTime() > deadline) {
                    late.add(f.getFileName().toString());
                    break;
                }
                // (none while the component restarts: it unregisters its service first)
                org.osgi.framework.ServiceReference<?>[] refs = ctx.getAllServiceReferences(null, filter);
                boolean all = false;
                if (refs == null) {
                    refs = new org.osgi.framework.ServiceReference<?>[0];
                }
                for (org.osgi.framework.ServiceReference<?> r : refs) {
                    boolean match = true;
                    for (String k : want.stringPropertyNames()) {
                        Object v = r.getProperty(k);
                        if (v == null || !String.valueOf(v).equals(want.getProperty(k).strip())) {
                            match = false;
                        }
                    }
                    all |= match;
                }
                if (all) {
                    break;
                }
                Thread.sleep(20);
            }
        }
        return late;
    }

    /** @return the names of the DS components configured by {@code pid} (read from ServiceComponentRuntime by reflection) */
    private static java.util.List<String> componentsOf(org.osgi.framework.BundleContext ctx, String pid) throws Exception {
        org.osgi.framework.ServiceReference<?> ref =
                ctx.getServiceReference("org.osgi.service.component.runtime.ServiceComponentRuntime");
        if (ref == null) {
            return java.util.List.of();
        }
        Object scr = ctx.getService(ref);
        try {
            java.util.List<String> out = new java.util.ArrayList<>();
            java.lang.reflect.Method m = scr.getClass().getMethod("getComponentDescriptionDTOs", org.osgi.framework.Bundle[].class);
            m.setAccessible(true);
            for (Object dto : (java.util.Collection<?>) m.invoke(scr, (Object) new org.osgi.framework.Bundle[0])) {
                String[] pids = (String[]) dto.getClass().getField("configurationPid").get(dto);
                String[] services = (String[]) dto.getClass().getField("serviceInterfaces").get(dto);
                if (pids != null && java.util.Arrays.asList(pids).contains(pid) && services != null && services.length > 0) {
                    out.add((String) dto.getClass().getField("name").get(dto));
                }
            }
            return out;
        } finally {
            ctx.ungetService(ref);
        }
    }
}
