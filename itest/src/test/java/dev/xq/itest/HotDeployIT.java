package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
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

/**
 * The hot-deploy folder: a policy bundle that the node did not start with is dropped into
 * the folder FileInstall watches, is used, and is taken away again.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HotDeployIT {

    private static final String EDF = "dev.xq.policy.edf";

    @Inject
    BundleContext ctx;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Configuration
    public Option[] config() {
        return XqNode.options(EDF);
    }

    @Test
    public void aPolicyBundleDroppedInTheFolderIsInstalledUsedAndRemoved() throws Exception {
        Path watched = Path.of(ctx.getProperty("felix.fileinstall.dir"));
        Path source = XqNode.jar(Path.of(ctx.getProperty(XqNode.BUNDLES_PROPERTY)), EDF);
        assertTrue("FileInstall's folder exists: " + watched, Files.isDirectory(watched));
        assertFalse("edf is not there before the drop: " + policies(), policies().contains("edf"));

        Path dropped = watched.resolve(EDF + ".jar");
        dropAtomically(source, dropped);
        assertTrue("edf listed within 15 s of the drop; policies " + policies(),
                XqNode.eventually(15_000, () -> policies().containsAll(List.of("edf", "kedf", "lax"))));
        Bundle edf = bundle(EDF);
        assertNotNull(edf);
        assertEquals("installed from the folder", Bundle.ACTIVE, edf.getState());

        // Configuration files in the same folder reach Config Admin: select the new policy.
        Path cfg = watched.resolve("dev.xq.scheduler.cfg");
        Path tmp = Files.createTempFile(watched.getParent(), "scheduler", ".cfg");
        Files.writeString(tmp, "policy=edf\n");
        Files.move(tmp, cfg, StandardCopyOption.ATOMIC_MOVE);
        assertTrue("dev.xq.scheduler.cfg selects edf; selected " + scheduler.selectedPolicy(),
                XqNode.eventually(15_000, () -> "edf".equals(scheduler.selectedPolicy())));
        try (XQueue q = xq.create(QueueOptions.on("sim0").named("hot"))) {
            for (int i = 0; i < 20; i++) {
                q.submit(Command.spin(200));
            }
            q.waitAll(Duration.ofSeconds(30));
            assertTrue("edf decides; active " + scheduler.activePolicy(),
                    XqNode.eventually(10_000, () -> "edf".equals(scheduler.activePolicy())));

            Files.delete(dropped);
            assertTrue("edf gone within 15 s of deleting the jar; policies " + policies(),
                    XqNode.eventually(15_000, () -> !policies().contains("edf") && bundle(EDF) == null));
            for (int i = 0; i < 20; i++) {
                q.submit(Command.spin(200));
            }
            q.waitAll(Duration.ofSeconds(30));
            assertEquals("native decides without its policy", SchedulerControl.NATIVE, scheduler.activePolicy());
            assertEquals("every command ran", 40, q.status().completed());
        }
    }

    /** FileInstall must never see a half-written jar: write it beside the folder, then move it in. */
    private static void dropAtomically(Path source, Path target) throws Exception {
        Path tmp = Files.createTempFile(target.getParent().getParent(), "drop", ".part");
        Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    }

    private List<String> policies() {
        return scheduler.policies().stream().map(SchedulerControl.PolicyInfo::name).toList();
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : ctx.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        return null;
    }
}
