package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * {@code ./xq queues}, {@code ./xq top}, {@code ./xq policy} and {@code ./xq hint}: the launcher
 * script run as an operator runs it, against this framework's HTTP API, saying what the Gogo
 * commands say in the same node and changing the same things.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class RemoteCommandsIT {

    @Inject
    BundleContext ctx;

    @Inject
    CommandProcessor processor;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    ConfigurationAdmin cm;

    private CommandSession session;
    private final List<XQueue> queues = new ArrayList<>();

    /** What one run of ./xq printed and returned. */
    record Ran(int rc, String out, String err) {
    }

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Before
    public void openQueuesAndSession() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        session = processor.createSession(InputStream.nullInputStream(), out, out);
        assertTrue("xq commands registered", XqNode.eventually(10_000, () -> {
            try {
                session.execute("xq:policies");
                return true;
            } catch (Exception notYet) {
                return false;
            }
        }));
        queues.add(xq.create(QueueOptions.on("sim0").named("cli-fg").inGroup("tenant-c").with(new Hint.Priority(2))));
        XQueue bg = xq.create(QueueOptions.on("sim0").named("cli-bg").with(new Hint.Deadline(5000)).with(new Hint.Laxity(900, 1, 4)));
        bg.suspend();   // shown with "(app)" after its state
        queues.add(bg);
    }

    @After
    public void closeQueues() throws Exception {
        for (XQueue q : queues) {
            q.close();
        }
        queues.clear();
        org.osgi.service.cm.Configuration c = cm.getConfiguration("dev.xq.http", "?");
        if (c.getProperties() != null) {
            c.delete();
        }
        scheduler.selectPolicy("hpf");
    }

    @Test
    public void queuesAndTopPrintWhatTheShellPrints() throws Exception {
        String node = address();
        Ran r = xq(Map.of("XQ_NODE", node), "queues");
        assertEquals(r.err(), 0, r.rc());
        assertEquals(shell("xq:queues"), r.out());
        assertTrue(r.out(), r.out().contains("cli-bg") && r.out().contains("(app)")
                && r.out().contains("deadline=5000us laxity=900us/1/4") && r.out().contains("tenant-c"));

        // the figures in the first line move between two asks; the words and the table do not
        Ran top = xq(Map.of(), "top", "--once", "--node", node);
        assertEquals(top.err(), 0, top.rc());
        assertTrue(top.out(), top.out().matches("(?s)policy hpf \\(selected hpf\\)  decisions \\d+  swaps \\d+  watchdog \\d+  "
                + "decision p50 \\S+ us  p99 \\S+ us\n.*"));
        assertEquals(figuresOut(shell("xq:top --once")), figuresOut(top.out()));

        Ran frames = xq(Map.of("XQ_NODE", node), "top", "--count", "2", "--interval", "100");
        assertEquals(frames.err(), 0, frames.rc());
        assertEquals(frames.out(), 2, frames.out().split("\u001b\\[H\u001b\\[2J", -1).length - 1);
    }

    @Test
    public void policyAndHintChangeTheNodeWithTheShellsWords() throws Exception {
        Map<String, String> env = Map.of("XQ_NODE", address());
        Ran sel = xq(env, "policy", "edf");
        assertEquals(sel.err(), 0, sel.rc());
        assertEquals("selected: edf (decides from the next scheduling event)\n", sel.out());
        assertEquals("edf", scheduler.selectedPolicy());
        Ran show = xq(env, "policy");
        assertEquals(show.err(), 0, show.rc());
        assertEquals(shell("xq:policy") + "\n", show.out());

        Ran refused = xq(env, "policy", "no-such-policy");
        assertEquals(1, refused.rc());
        assertEquals("", refused.out());
        assertEquals("xq: " + shellFailure("xq:policy no-such-policy") + "\n", refused.err());
        assertEquals("edf", scheduler.selectedPolicy());

        long fg = queues.getFirst().handle();
        Ran hint = xq(env, "hint", "cli-fg", "priority", "-5");
        assertEquals(hint.err(), 0, hint.rc());
        assertEquals("queue " + fg + ": priority=-5\n", hint.out());
        assertTrue(queues.getFirst().hints().contains(new Hint.Priority(-5)));
        Ran byHandle = xq(env, "hint", String.valueOf(fg), "laxity", "1000", "1", "5");
        assertEquals(byHandle.err(), 0, byHandle.rc());
        assertEquals(shell("xq:hint cli-fg laxity 1000 1 5") + "\n", byHandle.out());
        assertTrue(queues.getFirst().hints().contains(new Hint.Laxity(1000, 1, 5)));

        Ran bad = xq(env, "hint", "cli-fg", "deadline", "soon");
        assertEquals(1, bad.rc());
        assertEquals("xq: " + shellFailure("xq:hint cli-fg deadline soon") + "\n", bad.err());
        Ran unknown = xq(env, "hint", "no-such-queue", "priority", "1");
        assertEquals(1, unknown.rc());
        assertEquals("xq: " + shellFailure("xq:hint no-such-queue priority 1") + "\n", unknown.err());
        Ran short_ = xq(env, "hint", "cli-fg", "priority");
        assertEquals(2, short_.rc());
        assertTrue(short_.err(), short_.err().startsWith("xq: usage: ./xq hint QUEUE KIND VALUE..."));
        assertFalse(queues.getFirst().hints().stream().anyMatch(h -> h instanceof Hint.Deadline));
    }

    @Test
    public void noNodeIsOneClearLineAndTokensComeFromFlagsBeforeTheEnvironment() throws Exception {
        int free;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            free = s.getLocalPort();
        }
        Ran none = xq(Map.of("XQ_NODE", "127.0.0.1:" + free), "queues");
        assertEquals(1, none.rc());
        assertEquals("", none.out());
        assertTrue(none.err(), none.err().startsWith("xq: no XQ node answers at 127.0.0.1:" + free + " (connection refused). Start one with ./xq node"));
        assertEquals(none.err(), 1, none.err().lines().count());

        String token = "remote-it-token-0123456789";
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("port", 0);
        props.put("token", token);
        props.put("tokenOnLoopback", true);
        cm.getConfiguration("dev.xq.http", "?").update(props);
        AtomicReference<String> node = new AtomicReference<>();
        assertTrue("the API restarts asking for a token", XqNode.eventually(20_000, () -> {
            String e = endpoint();
            if (e == null) {
                return false;
            }
            node.set(e);
            try {
                return xq(Map.of("XQ_NODE", e), "policy").err().contains("Bearer");
            } catch (Exception notYet) {
                return false;
            }
        }));
        Ran without = xq(Map.of("XQ_NODE", node.get()), "policy");
        assertEquals(1, without.rc());
        assertEquals("xq: this node requires 'Authorization: Bearer <token>' from loopback too (tokenOnLoopback) "
                + "(give the node's token with --token T or XQ_TOKEN)\n", without.err());
        Ran withEnv = xq(Map.of("XQ_NODE", node.get(), "XQ_TOKEN", token), "policy");
        assertEquals(withEnv.err(), 0, withEnv.rc());
        assertEquals(shell("xq:policy") + "\n", withEnv.out());
        // flags win: a wrong --token over the right XQ_TOKEN is refused, a right --node over a wrong XQ_NODE answers
        Ran wrongFlag = xq(Map.of("XQ_NODE", node.get(), "XQ_TOKEN", token), "policy", "--token", "not-the-token-0123456");
        assertEquals(1, wrongFlag.rc());
        assertTrue(wrongFlag.err(), wrongFlag.err().endsWith("(the token given with --token or XQ_TOKEN is not the node's)\n"));
        Ran flags = xq(Map.of("XQ_NODE", "127.0.0.1:" + free), "policy", "kedf", "--node", node.get(), "--token", token);
        assertEquals(flags.err(), 0, flags.rc());
        assertEquals("kedf", scheduler.selectedPolicy());
    }

    // ------------------------------------------------------------------ helpers

    /** Runs {@code ./xq ARGS} with {@code env} added to a copy of this environment without XQ_NODE and XQ_TOKEN. */
    private static Ran xq(Map<String, String> env, String... args) throws Exception {
        Path script = Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize().resolve("xq");
        List<String> cmd = new ArrayList<>();
        cmd.add(script.toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("XQ_NODE");
        pb.environment().remove("XQ_TOKEN");
        pb.environment().putAll(env);
        Path out = Files.createTempFile("xq-remote", ".out");
        Path err = Files.createTempFile("xq-remote", ".err");
        try {
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("./xq " + String.join(" ", args) + " did not end within 60 s");
            }
            return new Ran(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private String shell(String line) throws Exception {
        Object result = session.execute(line);
        assertNotNull(line + " returned nothing", result);
        return result.toString();
    }

    private String shellFailure(String line) {
        try {
            fail(line + " succeeded with " + session.execute(line));
            return null;
        } catch (Exception e) {
            assertNotNull(line + ": error without a message", e.getMessage());
            return e.getMessage();
        }
    }

    /** {@code xq:top}'s screen with the moving figures of its first line taken out. */
    private static String figuresOut(String screen) {
        int nl = screen.indexOf('\n');
        return screen.substring(0, nl).replaceAll("[0-9][0-9.,]*|NaN", "#") + screen.substring(nl);
    }

    /** @return HOST:PORT of the HTTP API once its Jetty listens */
    private String address() throws Exception {
        AtomicReference<String> a = new AtomicReference<>();
        assertTrue("the HTTP API's runtime appears", XqNode.eventually(20_000, () -> {
            a.set(endpoint());
            return a.get() != null;
        }));
        return a.get();
    }

    /** HOST:PORT from the endpoint the API's HttpServiceRuntime announces, or null. */
    private String endpoint() {
        try {
            for (ServiceReference<?> r : ctx.getServiceReferences("org.osgi.service.servlet.runtime.HttpServiceRuntime", "(xq.http=xq)")) {
                Object e = r.getProperty("osgi.http.endpoint");
                String first = e instanceof String[] arr && arr.length > 0 ? arr[0] : e instanceof String s ? s : null;
                if (first != null && !first.endsWith(":0/")) {
                    return first.replaceFirst("^http://", "").replaceFirst("/$", "");
                }
            }
        } catch (Exception | Error e) {
            return null;
        }
        return null;
    }
}
