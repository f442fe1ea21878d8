package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.QueueState;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Unmodified HIP processes scheduled by a real node: libxq-hip.so preloaded into the HIP test
 * program on the HIP test double, several processes sharing one simulated GPU, the node's
 * policies deciding; with the fake KFD preloaded too and the host's {@code interruptProcesses}
 * on, a held process's queue is stopped through the KFD debugger API inside that process (Lv3).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HipProcessIT {

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    CommandProcessor processor;

    @Inject
    BundleContext bundles;

    @Inject
    ConfigurationAdmin cm;

    private Path work;
    private Path gpu;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Before
    public void nodeServesWithInterrupts() throws Exception {
        work = Files.createTempDirectory(Path.of(System.getProperty("xq.itest.work", "/tmp")).toAbsolutePath(), "hip");
        gpu = work.resolve("gpu.lock");
        assertTrue("the HIP interposer is built: " + FakeApps.hipInterposer(), Files.isRegularFile(FakeApps.hipInterposer()));
        org.osgi.service.cm.Configuration host = cm.getConfiguration("dev.xq.host", "?");
        if (host.getProperties() == null || !Boolean.TRUE.equals(host.getProperties().get("interruptProcesses"))) {
            host.update(new Hashtable<>(Map.of("interruptProcesses", Boolean.TRUE)));
            // the server restarts with the new setting: the status line says so
            assertTrue("the host serves with interrupts", XqNode.eventually(10_000, () -> {
                try {
                    return shell("xq:processes").contains("serving") && Files.exists(socket());
                } catch (Exception e) {
                    return false;
                }
            }));
            Thread.sleep(300);
        }
        assertTrue("the process host serves on " + socket(), XqNode.eventually(10_000, () -> Files.exists(socket())));
    }

    @After
    public void nativeAgain() {
        scheduler.selectPolicy(SchedulerControl.NATIVE);
    }

    private Path socket() {
        return Path.of(bundles.getProperty(XqNode.HOST_SOCKET_PROPERTY));
    }

    private List<XQueueStatus> queuesOf(long pid) {
        return xq.queues().stream().map(XQueue::status).filter(s -> s.group().startsWith(pid + ":")).toList();
    }

    private XQueueStatus awaitQueue(long pid, long millis) throws InterruptedException {
        assertTrue("process " + pid + " has a queue in the node", XqNode.eventually(millis, () -> !queuesOf(pid).isEmpty()));
        return queuesOf(pid).getFirst();
    }

    private FakeApps.App app(String name, int priority, boolean kfd, String... args) throws IOException {
        return FakeApps.startHip(work, socket(), gpu, kfd, Map.of("XQ_NAME", name, "XQ_PRIORITY", Integer.toString(priority)), args);
    }

    private static void assertFinishedCorrectly(FakeApps.App a, long seconds) throws Exception {
        int rc = a.waitFor(seconds);
        assertEquals("exit code of " + a.pid() + "; stderr: " + a.stderr(), 0, rc);
        assertTrue("results checked ok: " + a.stdout(), a.stdout().contains("\"check\":\"ok\""));
    }

    /** The xq:processes row of pid. */
    private String row(long pid) throws Exception {
        return shell("xq:processes").lines().filter(l -> l.startsWith(pid + " ")).findFirst().orElse("");
    }

    @Test
    public void aHighPriorityHipProcessPreemptsALowOneWhoseQueueIsStopped() throws Exception {
        scheduler.selectPolicy("hpf");
        FakeApps.App lp = app("train", 1, true, "--seconds", "4", "--kernels", "10", "--us", "2000", "--check");
        XQueueStatus lpq = awaitQueue(lp.pid(), 5_000);
        assertEquals("train/s1", lpq.name());
        assertEquals("hip0", lpq.device());
        // XQ_PRIORITY 1, every stream's (the double's streams have priority 0 in its range [1 least, -1
        // greatest]: one step up, which counts only in a process without XQ_PRIORITY)
        assertTrue(lpq.hints().toString(), lpq.hints().contains(new Hint.Priority(1)));
        FakeApps.App hp = app("serve", 2, true, "--seconds", "3", "--kernels", "3", "--us", "1000", "--check");
        XQueueStatus hpq = awaitQueue(hp.pid(), 5_000);
        assertTrue(hpq.hints().toString(), hpq.hints().contains(new Hint.Priority(2)));
        boolean lpHeldWhileHpReady = false;
        long until = System.nanoTime() + 3_000_000_000L;
        while (System.nanoTime() < until && !lpHeldWhileHpReady) {
            Optional<XQueue> h = xq.find(hpq.handle());
            Optional<XQueue> l = xq.find(lpq.handle());
            if (h.isEmpty() || l.isEmpty()) {
                break;
            }
            lpHeldWhileHpReady = h.get().status().state() == QueueState.READY && l.get().status().suspendedByScheduler();
            Thread.sleep(1);
        }
        // Lv3 from a separate process: the node asked lp (and only lp is ever held) to stop its KFD queue
        boolean interrupted = XqNode.eventually(3_000, () -> {
            try {
                return row(lp.pid()).matches(".* [1-9][0-9]* suspended.*");
            } catch (Exception e) {
                return false;
            }
        });
        String lpRow = row(lp.pid());
        assertFinishedCorrectly(hp, 30);
        assertFinishedCorrectly(lp, 30);
        assertTrue("lp was held back while hp had work", lpHeldWhileHpReady);
        assertTrue("lp's KFD queue was suspended through the interposer: " + lpRow, interrupted);
        System.out.println("HipProcessIT: hp task p50 " + hp.figure("p50_ms") + " ms, p99 " + hp.figure("p99_ms")
                + " ms (tasks of 3 x 1 ms); lp " + lp.figure("tasks") + " tasks; lp row: " + lpRow);
        assertTrue("the queues left the node with their processes",
                XqNode.eventually(5_000, () -> queuesOf(hp.pid()).isEmpty() && queuesOf(lp.pid()).isEmpty()));
    }

    @Test
    public void withoutTheFakeKfdAHipProcessIsHeldAtLv1() throws Exception {
        FakeApps.App a = app("plain", 1, false, "--tasks", "5", "--kernels", "2", "--us", "300", "--check", "--linger-ms", "1500");
        awaitQueue(a.pid(), 5_000);
        assertTrue(XqNode.eventually(3_000, () -> {
            try {
                return row(a.pid()).matches(".* hip +1 +- .*");
            } catch (Exception e) {
                return false;
            }
        }));
        assertFinishedCorrectly(a, 20);
    }

    @Test
    public void killedHipProcessesLeaveNothingBehind() throws Exception {
        int rounds = Integer.getInteger("xq.itest.hipkills", 20);
        for (int i = 0; i < rounds; i++) {
            FakeApps.App a = app("victim", 1, i % 2 == 0, "--seconds", "20", "--kernels", "4", "--us", "500");
            awaitQueue(a.pid(), 5_000);
            a.process().destroyForcibly();
            a.process().waitFor();
            long pid = a.pid();
            assertTrue("queues of killed process " + pid + " gone", XqNode.eventually(3_000, () -> queuesOf(pid).isEmpty()));
        }
        assertTrue("no session left", XqNode.eventually(3_000, () -> {
            try {
                return !shell("xq:processes").contains("victim");
            } catch (Exception e) {
                return false;
            }
        }));
    }

    @Test
    public void hostileHipClientsAreRefusedAndOthersUnaffected() throws Exception {
        FakeApps.App good = app("good", 1, true, "--seconds", "3", "--kernels", "2", "--us", "500", "--check");
        awaitQueue(good.pid(), 5_000);
        long me = ProcessHandle.current().pid();
        assertTrue(refused("HELLO 1 " + me + " evil - hip,gpu\n"));
        assertTrue(refused("HELLO 1 " + me + " evil - lv3\n"));
        assertTrue(refused("HELLO 1 " + me + " evil - cuda,hip\n"));
        assertTrue(refused("HELLO 1 " + me + " evil - hip\nLV3 0 suspended\n"));
        assertTrue(refused("HELLO 1 " + me + " evil - hip,lv3\nLV3 0 frozen\n"));
        assertFinishedCorrectly(good, 20);
    }

    @Test
    public void xqRunPreloadsBothInterposers() throws Exception {
        Path xqScript = Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize().resolve("xq");
        Path out = work.resolve("xqrun.out");
        ProcessBuilder pb = new ProcessBuilder(xqScript.toString(), "run", "--priority", "2", "--name", "viaxq", "--socket",
                socket().toString(), "--", FakeApps.hipApp().toString(), "--module",
                FakeApps.dir().resolve("fakehip/xq-spin.hipdouble").toString(), "--tasks", "3", "--kernels", "2", "--us", "100",
                "--check", "--linger-ms", "1500");
        pb.environment().put("XQ_HIPDOUBLE_GPU", gpu.toString());
        pb.redirectErrorStream(true).redirectOutput(out.toFile());
        Process p = pb.start();
        XQueueStatus q = awaitQueue(p.pid(), 10_000);
        assertEquals("viaxq/s1", q.name());
        assertEquals("hip0", q.device());
        assertTrue(q.hints().toString(), q.hints().contains(new Hint.Priority(2)));
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(Files.readString(out), 0, p.exitValue());
        assertTrue(Files.readString(out), Files.readString(out).contains("\"check\":\"ok\""));
    }

    /**
     * Triton's HIP launcher takes hipModuleLaunchKernel with dlsym from dlopen("libamdhip64.so"):
     * under ./xq run (both interposers, libxq-cuda.so's dlsym bound first) those kernels reach the
     * node too: per task a memset, a copy in, 2 kernels, a copy back and a host function.
     */
    @Test
    public void kernelsTakenWithDlsymUnderXqRunAreScheduled() throws Exception {
        Path xqScript = Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize().resolve("xq");
        Path out = work.resolve("xqrun-dlsym.out");
        ProcessBuilder pb = new ProcessBuilder(xqScript.toString(), "run", "--name", "triton", "--socket", socket().toString(),
                "--", FakeApps.hipApp().toString(), "--module", FakeApps.dir().resolve("fakehip/xq-spin.hipdouble").toString(),
                "--via", "dlsym", "--tasks", "3", "--kernels", "2", "--us", "100", "--check", "--linger-ms", "3000");
        pb.environment().put("XQ_HIPDOUBLE_GPU", gpu.toString());
        pb.redirectErrorStream(true).redirectOutput(out.toFile());
        Process p = pb.start();
        XQueueStatus q = awaitQueue(p.pid(), 10_000);
        assertEquals("triton/s1", q.name());
        boolean all = XqNode.eventually(2_500, () -> queuesOf(p.pid()).stream().anyMatch(s -> s.completed() == 3 * 6));
        long completed = queuesOf(p.pid()).stream().mapToLong(XQueueStatus::completed).sum();
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(Files.readString(out), 0, p.exitValue());
        assertTrue(Files.readString(out), Files.readString(out).contains("\"check\":\"ok\""));
        assertTrue("the node saw every command, the kernels taken with dlsym included: " + completed + " of 18", all);
    }

    /** Sends {@code text} and reports whether the node answered ERR and closed the connection. */
    private boolean refused(String text) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket()));
            ByteBuffer out = ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
            try {
                while (out.hasRemaining()) {
                    ch.write(out);
                }
            } catch (IOException closedOnUs) {
                // the node may close before it read everything: that is a refusal too
            }
            ByteBuffer in = ByteBuffer.allocate(4096);
            StringBuilder got = new StringBuilder();
            long deadline = System.nanoTime() + 5_000_000_000L;
            try {
                while (System.nanoTime() < deadline) {
                    int n = ch.read(in);
                    if (n < 0) {
                        break;
                    }
                    got.append(new String(in.array(), 0, in.position(), StandardCharsets.US_ASCII));
                    in.clear();
                }
            } catch (IOException reset) {
                // closed on us: a refusal
            }
            return got.toString().contains("ERR");
        }
    }

    private String shell(String command) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        CommandSession session = processor.createSession(InputStream.nullInputStream(), out, out);
        try {
            assertTrue("command available: " + command, XqNode.eventually(10_000, () -> {
                try {
                    Object r = session.execute(command);
                    if (r != null) {
                        out.println(r);
                    }
                    return true;
                } catch (Exception e) {
                    if (e.getMessage() != null && e.getMessage().startsWith("Command not found")) {
                        return false;
                    }
                    throw new AssertionError(command + " failed: " + e, e);
                }
            }));
        } finally {
            session.close();
        }
        return printed.toString(StandardCharsets.UTF_8);
    }
}
