package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.DeviceInfo;
import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.service.component.runtime.dto.UnsatisfiedReferenceDTO;

/** The node's bundles in a real Felix: all active, services usable, the shell answers. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class NodeIT {

    @Inject
    BundleContext context;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    ServiceComponentRuntime scr;

    @Inject
    CommandProcessor shell;

    @Configuration
    public Option[] config() {
        return XqNodeSupport.node(XqNodeSupport.tempHotDeploy("node"), Set.of());
    }

    @Test
    public void everyBundleIsActiveAndEveryComponentSatisfied() {
        List<String> problems = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            boolean fragment = b.getHeaders().get("Fragment-Host") != null;
            if (!fragment && b.getState() != Bundle.ACTIVE) {
                problems.add(b.getSymbolicName() + " is in state " + b.getState());
            }
        }
        int xqComponents = 0;
        for (ComponentDescriptionDTO d : scr.getComponentDescriptionDTOs()) {
            if (!d.bundle.symbolicName.startsWith("dev.xq.")) {
                continue;
            }
            xqComponents++;
            for (ComponentConfigurationDTO c : scr.getComponentConfigurationDTOs(d)) {
                if (c.state == ComponentConfigurationDTO.UNSATISFIED_REFERENCE || c.state == ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION
                        || c.state == ComponentConfigurationDTO.FAILED_ACTIVATION) {
                    problems.add(d.name + " state " + c.state + " unsatisfied: " + java.util.Arrays.stream(c.unsatisfiedReferences)
                            .map((UnsatisfiedReferenceDTO r) -> r.name + " " + r.target).collect(Collectors.joining(", "))
                            + (c.failure == null ? "" : " failure: " + c.failure));
                }
            }
        }
        assertTrue("problems: " + problems, problems.isEmpty());
        assertTrue("XQ components found: " + xqComponents, xqComponents >= 10);
        for (String bsn : List.of("dev.xq.runtime", "dev.xq.hal.sim", "dev.xq.hal.hip", "dev.xq.hal.cuda", "dev.xq.policy.fixedpriority",
                "dev.xq.policy.edf", "dev.xq.policy.drf", "dev.xq.bench", "org.apache.felix.fileinstall")) {
            assertTrue(bsn + " installed", java.util.Arrays.stream(context.getBundles()).anyMatch(b -> bsn.equals(b.getSymbolicName())));
        }
    }

    @Test
    public void hostAppCreatesQueuesOnSimAndRunsCommands() throws Exception {
        List<String> ids = xq.devices().stream().map(DeviceInfo::id).toList();
        assertTrue("devices: " + ids, ids.contains("sim0"));
        try (XQueue a = xq.create(QueueOptions.on("sim0").named("itest-a").with(new Hint.Priority(2)));
             XQueue b = xq.create(QueueOptions.on("sim0").named("itest-b").with(new Hint.Priority(1)))) {
            List<Submission> subs = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                subs.add(a.submit(Command.spin(200)));
                subs.add(b.submit(Command.spin(200)));
            }
            for (Submission s : subs) {
                CommandResult r = s.await(Duration.ofSeconds(10));
                assertTrue("device time " + r.deviceNanos(), r.deviceNanos() >= 200_000);
            }
            assertEquals(20, a.status().completed());
            assertEquals(20, b.status().completed());
        }
        IllegalArgumentException e = expectIae(() -> xq.create(QueueOptions.on("gpu7")));
        assertTrue(e.getMessage(), e.getMessage().contains("gpu7") && e.getMessage().contains("sim0"));
    }

    @Test
    public void shellCommandsRunAndPrint() throws Exception {
        assertTrue(run("xq:devices").contains("sim0"));
        assertTrue(run("xq:devices").contains("no device"));
        assertTrue(run("xq:policies").contains("hpf"));
        assertTrue(run("xq:policies").contains("edf"));
        assertTrue(run("xq:policy").contains("selected"));
        try (XQueue q = xq.create(QueueOptions.on("sim0").named("shellq"))) {
            assertTrue(run("xq:queues").contains("shellq"));
            assertTrue(run("xq:top --once").contains("decisions"));
            assertTrue(run("xq:hint shellq priority 3").contains("priority=3"));
            assertEquals(List.of(new Hint.Priority(3)), q.hints());
            String bad = runExpectingError("xq:config shellq threshold 0");
            assertTrue(bad, bad.contains("out of range"));
            assertEquals(16, q.status().config().threshold());
            String badHint = runExpectingError("xq:hint shellq priority 99999");
            assertTrue(badHint, badHint.contains("[-1000, 1000]"));
            assertTrue(run("xq:suspend shellq").contains("suspended"));
            assertTrue(q.status().suspendedByApp());
            run("xq:resume shellq");
            assertFalse(q.status().suspendedByApp());
        }
        String unknown = runExpectingError("xq:policy nosuch");
        assertTrue(unknown, unknown.contains("nosuch") && unknown.contains("hpf"));
    }

    private String run(String line) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        try (CommandSession s = shell.createSession(System.in, ps, ps)) {
            Object r = s.execute(line);
            if (r != null) {
                ps.println(s.format(r, org.apache.felix.service.command.Converter.INSPECT));
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private String runExpectingError(String line) throws Exception {
        try {
            String out = run(line);
            fail("'" + line + "' should fail, printed: " + out);
            return out;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private static IllegalArgumentException expectIae(Runnable r) {
        try {
            r.run();
        } catch (IllegalArgumentException e) {
            return e;
        }
        throw new AssertionError("expected IllegalArgumentException");
    }
}
