package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/** The operator's Gogo commands, run through the real command processor as the shell runs them. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ShellIT {

    @Inject
    CommandProcessor processor;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    private CommandSession session;
    private ByteArrayOutputStream printed;
    private XQueue queue;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Before
    public void openSession() throws Exception {
        printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        session = processor.createSession(InputStream.nullInputStream(), out, out);
        // Gogo picks command services up asynchronously after they register.
        assertTrue("xq commands registered", XqNode.eventually(10_000, () -> {
            try {
                session.execute("xq:policies");
                return true;
            } catch (Exception notYet) {
                return false;
            }
        }));
        queue = xq.create(QueueOptions.on("sim0").named("shell-q").with(new Hint.Priority(3)));
    }

    @After
    public void closeSession() {
        if (queue != null) {
            queue.close();
        }
        session.close();
    }

    @Test
    public void devicesListsTheSimulatorAndTheAdapters() throws Exception {
        String out = run("xq:devices");
        assertTrue(out, out.contains("sim0"));
        assertTrue(out, out.contains("ADAPTER"));
        assertTrue("adapters without hardware say why: " + out, out.contains("no device"));
        for (String platform : List.of("sim", "hip", "cuda")) {
            assertTrue(platform + " in " + out, out.contains(platform));
        }
    }

    @Test
    public void queuesListsAnOpenQueue() throws Exception {
        String out = run("xq:queues");
        assertTrue(out, out.contains("shell-q"));
        assertTrue(out, out.contains(Long.toString(queue.handle())));
        assertTrue(out, out.contains("priority=3"));
    }

    @Test
    public void policiesListsEveryPolicyBundle() throws Exception {
        String out = run("xq:policies");
        for (String p : List.of("hpf", "hpf-aging", "edf", "drf", "bandwidth")) {
            assertTrue(p + " in " + out, out.contains(p));
        }
    }

    @Test
    public void policyShowsAndSelects() throws Exception {
        String before = scheduler.selectedPolicy();
        try {
            String out = run("xq:policy");
            assertTrue(out, out.contains("selected: " + before));
            assertTrue(out, out.contains("active:"));
            out = run("xq:policy edf");
            assertTrue(out, out.contains("edf"));
            assertEquals("edf", scheduler.selectedPolicy());
        } finally {
            scheduler.selectPolicy(before);
        }
    }

    @Test
    public void unknownPolicyIsRefusedWithTheChoices() {
        String before = scheduler.selectedPolicy();
        String m = failure("xq:policy no-such-policy");
        assertTrue(m, m.contains("no-such-policy"));
        assertTrue("lists the policies: " + m, m.contains("hpf") && m.contains("edf"));
        assertEquals("selection unchanged", before, scheduler.selectedPolicy());
    }

    @Test
    public void topOnceShowsSchedulerAndQueues() throws Exception {
        String out = run("xq:top --once");
        assertTrue(out, out.contains("policy"));
        assertTrue(out, out.contains("decisions"));
        assertTrue(out, out.contains("shell-q"));
        String m = failure("xq:top --interval 5");
        assertTrue(m, m.contains("out of range"));
    }

    @Test
    public void hintSetsAndRefusesOutOfRange() throws Exception {
        String out = run("xq:hint shell-q priority 7");
        assertTrue(out, out.contains("priority=7"));
        assertTrue(queue.hints().toString(), queue.hints().contains(new Hint.Priority(7)));
        String m = failure("xq:hint shell-q priority 100000");
        assertTrue(m, m.contains("out of range"));
        assertTrue("unchanged: " + queue.hints(), queue.hints().contains(new Hint.Priority(7)));
        m = failure("xq:hint shell-q");
        assertTrue(m, m.contains("usage"));
    }

    @Test
    public void configChangesAndRefusesBadValues() throws Exception {
        String out = run("xq:config shell-q batch 4");
        assertTrue(out, out.contains("batch=4"));
        QueueConfig before = queue.status().config();
        assertEquals(4, before.batch());

        String m = failure("xq:config shell-q threshold 0");
        assertTrue(m, m.contains("out of range"));
        m = failure("xq:config shell-q window -5");
        assertTrue(m, m.contains("out of range"));
        m = failure("xq:config shell-q colour 3");
        assertTrue(m, m.contains("colour") && m.contains("allowed"));
        m = failure("xq:config shell-q level nine");
        assertTrue(m, m.contains("nine"));
        assertEquals("nothing changed", before, queue.status().config());
    }

    @Test
    public void suspendAndResumeByName() throws Exception {
        assertTrue(run("xq:suspend shell-q").contains("suspended"));
        assertTrue(queue.status().suspendedByApp());
        assertTrue(run("xq:resume shell-q").contains("resumed"));
        assertTrue(!queue.status().suspendedByApp());
        String m = failure("xq:suspend no-such-queue");
        assertTrue(m, m.contains("no-such-queue") && m.contains("shell-q"));
    }

    @Test
    public void helpDescribesEveryXqCommandFromItsDescriptors() throws Exception {
        for (String c : List.of("devices", "queues", "top", "policy", "policies", "hint", "config", "suspend", "resume", "processes")) {
            String out = help("xq:" + c);
            assertTrue(c + ": " + out, out.contains(c + " - "));
            assertTrue(c + ": " + out, out.contains("scope: xq"));
        }
        String hint = help("xq:hint");
        assertTrue(hint, hint.contains("sets a hint of a queue") && hint.contains("the queue: its handle or its name")
                && hint.contains("the kind's values"));
        String top = help("xq:top");
        assertTrue(top, top.contains("--once, -1") && top.contains("--interval") && top.contains("milliseconds between screens"));
        assertTrue(help("sim:lose"), help("sim:lose").contains("the device's id"));
    }

    /** @return what {@code help NAME} answers (Gogo's help reads the commands' @Descriptor and @Parameter) */
    private String help(String name) throws Exception {
        printed.reset();
        Object r = session.execute("help " + name);
        String out = r + printed.toString(StandardCharsets.UTF_8);
        return out;
    }

    private String run(String line) throws Exception {
        Object result = session.execute(line);
        assertNotNull(line + " returned nothing", result);
        return result + printed.toString(StandardCharsets.UTF_8);
    }

    /** @return the message of the error {@code line} must end with */
    private String failure(String line) {
        try {
            Object result = session.execute(line);
            fail(line + " succeeded with " + result);
            return null;
        } catch (Exception e) {
            assertNotNull(line + ": error without a message", e.getMessage());
            return e.getMessage();
        }
    }
}
