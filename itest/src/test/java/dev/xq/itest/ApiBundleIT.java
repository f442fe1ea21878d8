package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.framework.wiring.BundleWire;
import org.osgi.framework.wiring.BundleWiring;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * Why the API and SPI packages live in a bundle of their own ({@code dev.xq.api}): the runtime
 * can be updated and refreshed in a running node without stopping or rewiring the adapter and
 * policy bundles, because they import their packages from {@code dev.xq.api}, not from
 * {@code dev.xq.runtime}. While the runtime exported them, refreshing it took every importer
 * down with it (the refresh's dependency closure), and this test fails: the adapter and the
 * policy bundle see STOPPED and get new wirings.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ApiBundleIT {

    private static final String API = "dev.xq.api";
    private static final String RUNTIME = "dev.xq.runtime";
    /** Bundles that implement or use the SPIs and must ride through a runtime update untouched. */
    private static final List<String> BYSTANDERS = List.of(API, "dev.xq.hal.sim", "dev.xq.policy.fixedpriority");

    @Inject
    BundleContext ctx;

    @Inject
    XQueueService xq;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Test
    public void updatingTheRuntimeLeavesTheAdapterAndPolicyBundlesAlone() throws Exception {
        // Before: the SPI importers are wired to dev.xq.api, and scheduling works.
        Bundle api = bundle(API);
        Bundle runtime = bundle(RUNTIME);
        assertNotNull(API + " installed", api);
        assertNotNull(RUNTIME + " installed", runtime);
        assertTrue("the runtime exports no packages: " + runtime.adapt(BundleWiring.class).getCapabilities("osgi.wiring.package"),
                runtime.adapt(BundleWiring.class).getCapabilities("osgi.wiring.package").isEmpty());
        Map<String, BundleWiring> wiringsBefore = new LinkedHashMap<>();
        for (String name : BYSTANDERS) {
            Bundle b = bundle(name);
            assertNotNull(name + " installed", b);
            assertEquals(name + " active", Bundle.ACTIVE, b.getState());
            wiringsBefore.put(name, b.adapt(BundleWiring.class));
        }
        assertImportsFromApi("dev.xq.hal.sim", "dev.xq.hal.spi", api);
        assertImportsFromApi("dev.xq.policy.fixedpriority", "dev.xq.policy.spi", api);
        assertImportsFromApi(RUNTIME, "dev.xq.hal.spi", api);
        runsACommand(xq, "before");
        BundleWiring runtimeBefore = runtime.adapt(BundleWiring.class);
        XQueueService serviceBefore = xq;

        // The runtime updated in place (a new revision from its jar) and refreshed, as an
        // operator or FileInstall would do with a new dev.xq.runtime.
        List<String> events = new CopyOnWriteArrayList<>();
        SynchronousBundleListener listener = e -> events.add(e.getBundle().getSymbolicName() + " " + type(e.getType()));
        ctx.addBundleListener(listener);
        try {
            Path jar = XqNode.jar(Path.of(ctx.getProperty(XqNode.BUNDLES_PROPERTY)), RUNTIME);
            try (InputStream in = Files.newInputStream(jar)) {
                runtime.update(in);
            }
            CountDownLatch refreshed = new CountDownLatch(1);
            List<FrameworkEvent> refreshErrors = new CopyOnWriteArrayList<>();
            FrameworkWiring fw = ctx.getBundle(0).adapt(FrameworkWiring.class);
            assertEquals("the refresh closure of the runtime is the runtime alone",
                    List.of(RUNTIME), fw.getDependencyClosure(List.of(runtime)).stream().map(Bundle::getSymbolicName).toList());
            fw.refreshBundles(List.of(runtime), e -> {
                if (e.getType() == FrameworkEvent.ERROR) {
                    refreshErrors.add(e);
                }
                refreshed.countDown();
            });
            assertTrue("refresh finished", refreshed.await(30, TimeUnit.SECONDS));
            assertTrue("refresh errors: " + refreshErrors, refreshErrors.isEmpty());
            assertTrue("the runtime is active again: " + runtime.getState(),
                    XqNode.eventually(10_000, () -> runtime.getState() == Bundle.ACTIVE));
        } finally {
            ctx.removeBundleListener(listener);
        }

        // The runtime went round; nothing else did.
        assertTrue("the runtime was stopped and started: " + events,
                events.contains(RUNTIME + " STOPPED") && events.contains(RUNTIME + " STARTED"));
        assertNotSame("the runtime has a new wiring", runtimeBefore, runtime.adapt(BundleWiring.class));
        List<String> touched = new ArrayList<>();
        for (String e : events) {
            if (!e.startsWith(RUNTIME + " ")) {
                touched.add(e);
            }
        }
        assertEquals("bundle events of bundles other than the runtime", List.of(), touched);
        for (String name : BYSTANDERS) {
            Bundle b = bundle(name);
            assertEquals(name + " still active", Bundle.ACTIVE, b.getState());
            BundleWiring now = b.adapt(BundleWiring.class);
            assertSame(name + " kept its wiring", wiringsBefore.get(name), now);
            assertTrue(name + "'s wiring is current", now.isCurrent());
        }
        assertImportsFromApi(RUNTIME, "dev.xq.hal.spi", api);

        // Scheduling works again: the new runtime finds the sim's driver and the policies
        // (services of bundles that never stopped) and runs a command to completion.
        XQueueService after = awaitService(XQueueService.class, s -> s != serviceBefore
                && s.devices().stream().anyMatch(d -> d.id().equals("sim0")));
        SchedulerControl scheduler = awaitService(SchedulerControl.class,
                s -> s.policies().stream().anyMatch(p -> p.name().equals("hpf")));
        scheduler.selectPolicy("hpf");
        assertTrue("hpf decides after the update, active " + scheduler.activePolicy(),
                XqNode.eventually(10_000, () -> "hpf".equals(scheduler.activePolicy())));
        runsACommand(after, "after");
    }

    private static void runsACommand(XQueueService service, String when) throws Exception {
        XQueue q = service.create(QueueOptions.on("sim0").named("api-bundle-it-" + when));
        try {
            CommandResult r = q.submit(Command.spin(200)).stage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            assertTrue(when + ": the command ran: " + r, r.endNanos() >= r.startNanos());
        } finally {
            q.close();
        }
    }

    private void assertImportsFromApi(String importer, String pkg, Bundle api) {
        BundleWiring w = bundle(importer).adapt(BundleWiring.class);
        List<String> providers = new ArrayList<>();
        for (BundleWire wire : w.getRequiredWires("osgi.wiring.package")) {
            if (pkg.equals(wire.getCapability().getAttributes().get("osgi.wiring.package"))) {
                providers.add(wire.getProviderWiring().getBundle().getSymbolicName());
            }
        }
        assertEquals(importer + " imports " + pkg + " from", List.of(api.getSymbolicName()), providers);
    }

    private <S> S awaitService(Class<S> type, java.util.function.Predicate<S> ready) throws InterruptedException {
        Object[] found = new Object[1];
        boolean ok = XqNode.eventually(20_000, () -> {
            ServiceReference<S> ref = ctx.getServiceReference(type);
            if (ref == null) {
                return false;
            }
            S s = ctx.getService(ref);
            try {
                if (s != null && ready.test(s)) {
                    found[0] = s;
                    return true;
                }
            } catch (RuntimeException e) {
                // a service of the old runtime, going away
            }
            return false;
        });
        assertTrue(type.getSimpleName() + " is back and ready", ok);
        return type.cast(found[0]);
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : ctx.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        return null;
    }

    private static String type(int type) {
        return switch (type) {
            case BundleEvent.INSTALLED -> "INSTALLED";
            case BundleEvent.RESOLVED -> "RESOLVED";
            case BundleEvent.STARTING -> "STARTING";
            case BundleEvent.STARTED -> "STARTED";
            case BundleEvent.STOPPING -> "STOPPING";
            case BundleEvent.STOPPED -> "STOPPED";
            case BundleEvent.UNRESOLVED -> "UNRESOLVED";
            case BundleEvent.UPDATED -> "UPDATED";
            case BundleEvent.UNINSTALLED -> "UNINSTALLED";
            case BundleEvent.LAZY_ACTIVATION -> "LAZY_ACTIVATION";
            default -> "EVENT" + type;
        };
    }
}
