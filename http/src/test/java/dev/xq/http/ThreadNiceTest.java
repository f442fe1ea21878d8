package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;

/** The HTTP API's threads at a lower CPU priority (issue 41, the connection flood), on real threads of this JVM. */
class ThreadNiceTest {

    private final SecurityTest.Errors log = new SecurityTest.Errors();
    private static final Path TASKS = Path.of("/proc/self/task");

    /** @return the nice values of the threads whose names start with {@code prefix} */
    private static List<Integer> nices(String prefix) throws IOException {
        List<Integer> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(TASKS)) {
            for (Path t : ds) {
                try {
                    if (Files.readString(t.resolve("comm")).strip().startsWith(prefix)) {
                        out.add(ThreadNice.niceOf(t.resolve("stat")));
                    }
                } catch (IOException gone) {
                    // ended meanwhile
                }
            }
        }
        return out;
    }

    /** Waits until {@code n} threads named {@code prefix}... are listed (a thread names itself once it runs). */
    private static void awaitNamed(String prefix, int n) throws Exception {
        long until = System.nanoTime() + 5_000_000_000L;
        while (nices(prefix).size() < n && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(n, nices(prefix).size(), "threads named " + prefix);
    }

    private static int processNice() {
        return ThreadNice.niceOf(Path.of("/proc/self/stat"));
    }

    private static boolean root() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("Uid:")) {
                return l.split("\\s+")[2].equals("0");
            }
        }
        return false;
    }

    @Test
    void theServersPoolThreadsRunAtTheValueAndTheOthersDoNot() throws Exception {
        assumeTrue(ThreadNice.available(), "Linux with setpriority");
        assumeTrue(processNice() < 10, "the test JVM runs at a nice value under 10");
        QueuedThreadPool pool = new QueuedThreadPool(16, 4);
        pool.setName("xqnt-jetty");
        Server server = new Server(pool);
        try {
            ServerConnector http = new ServerConnector(server);
            http.setHost("127.0.0.1");
            http.setPort(0);
            server.addConnector(http);
            server.setHandler(new ConnectionCapTest.Ok());
            server.start();
            awaitNamed("xqnt-jetty", pool.getThreads());
            AtomicLong clock = new AtomicLong(0);
            ThreadNice nice = new ThreadNice(10, TASKS, log, clock::get);
            Connector c = new ConnectionCap(16, 16, log, clock::get, ch -> ConnectionCap.UNCOUNTED, nice).createConnector(server);
            server.addConnector(c);
            c.start();

            List<Integer> started = nices("xqnt-jetty");
            assertFalse(started.isEmpty(), "the pool has threads");
            assertTrue(started.stream().allMatch(n -> n == 10), "every thread of the pool at 10 once the server runs: " + started);
            assertEquals(List.of(processNice()), List.of(ThreadNice.niceOf(Path.of("/proc/thread-self/stat"))),
                    "the test's own thread keeps the process's value");

            // threads the pool starts later: they inherit the value from the pool's thread that starts them,
            // and a listing as connections are accepted (a second after the last) catches any other
            clock.addAndGet(ThreadNice.EVERY_NANOS);
            List<Socket> open = new ArrayList<>();
            try {
                for (int i = 0; i < 12; i++) {
                    Socket s = new Socket("127.0.0.1", http.getLocalPort());
                    open.add(s);
                    s.getOutputStream().write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                for (Socket s : open) {
                    s.setSoTimeout(5_000);
                    InputStream in = s.getInputStream();
                    assertTrue(in.read() > 0, "answered");
                }
            } finally {
                for (Socket s : open) {
                    s.close();
                }
            }
            List<Integer> after = nices("xqnt-jetty");
            assertTrue(after.stream().allMatch(n -> n == 10), "every thread of the pool at 10 after serving: " + after);
            assertTrue(log.warnings.isEmpty(), "nothing to say: " + log.warnings);
        } finally {
            server.stop();
        }
    }

    @Test
    void aThreadStartedFromAPoolThreadGoesBackToTheNodesValue() throws Exception {
        assumeTrue(ThreadNice.available(), "Linux with setpriority");
        assumeTrue(processNice() < 10, "the test JVM runs at a nice value under 10");
        CountDownLatch end = new CountDownLatch(1);
        CountDownLatch childStarted = new CountDownLatch(1);
        CountDownLatch startChild = new CountDownLatch(1);
        Thread pooled = new Thread(() -> {
            try {
                startChild.await();
                Thread child = new Thread(() -> {
                    childStarted.countDown();
                    try {
                        end.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "xqnc-child");
                child.setDaemon(true);
                child.start();
                end.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "xqnp-pool-1");
        pooled.setDaemon(true);
        pooled.start();
        awaitNamed("xqnp-pool", 1);
        try {
            ThreadNice nice = new ThreadNice(12, TASKS, log, System::nanoTime);
            assertEquals(1, nice.apply("xqnp-pool"), "one thread of the pool lowered");
            assertEquals(List.of(12), nices("xqnp-pool"));
            assertEquals(0, nice.apply("xqnp-pool"), "nothing more to do");

            startChild.countDown();
            childStarted.await();
            awaitNamed("xqnc-child", 1);
            assertEquals(List.of(12), nices("xqnc-child"), "a thread inherits its starter's value");
            nice.apply("xqnp-pool");
            if (root()) {
                assertEquals(List.of(processNice()), nices("xqnc-child"), "put back at the node's value");
                assertTrue(log.warnings.isEmpty(), "nothing to say: " + log.warnings);
            } else {
                assertEquals(List.of(12), nices("xqnc-child"), "without the privilege it stays");
                assertEquals(1, log.warnings.size(), "said once: " + log.warnings);
                assertTrue(log.warnings.getFirst().contains("xqnc-child") && log.warnings.getFirst().contains("CAP_SYS_NICE"),
                        log.warnings.getFirst());
            }
            assertEquals(List.of(12), nices("xqnp-pool"), "the pool's thread keeps the value");
        } finally {
            end.countDown();
        }
    }

    @Test
    void theTimerListsTheThreadsWithoutAnyConnection() throws Exception {
        assumeTrue(ThreadNice.available(), "Linux with setpriority");
        assumeTrue(processNice() < 10, "the test JVM runs at a nice value under 10");
        assertEquals(root(), ThreadNice.canUndo(10), "a value can be raised again by root only (or CAP_SYS_NICE)");
        CountDownLatch end = new CountDownLatch(1);
        Thread late = new Thread(() -> {
            try {
                end.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "xqnt-late-1");
        late.setDaemon(true);
        ThreadNice nice = new ThreadNice(10, TASKS, log, System::nanoTime);
        try {
            nice.pool("xqnt-late");
            late.start(); // after the first listing
            awaitNamed("xqnt-late", 1);
            assertEquals(List.of(processNice()), nices("xqnt-late"));
            nice.start();
            long until = System.nanoTime() + 3 * ThreadNice.TIMER_MS * 1_000_000L;
            while (!nices("xqnt-late").equals(List.of(10)) && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            assertEquals(List.of(10), nices("xqnt-late"), "lowered by the timer");
        } finally {
            nice.close();
            end.countDown();
        }
    }

    @Test
    void valuesOutOfRangeAreRefusedByName() {
        for (int bad : new int[] {-1, 20, Integer.MAX_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ThreadNice(bad, log));
            assertTrue(e.getMessage().contains("threadNice " + bad) && e.getMessage().contains("[0, 19]"), e.getMessage());
        }
    }

    @Test
    void theSettingOutsideItsRangeIsRefusedByName() {
        HttpConfig base = SecurityTest.config("127.0.0.1", "", false, -1);
        for (int bad : new int[] {-1, 20}) {
            HttpConfig c = (HttpConfig) java.lang.reflect.Proxy.newProxyInstance(HttpConfig.class.getClassLoader(), new Class<?>[] {HttpConfig.class},
                    (proxy, m, args) -> m.getName().equals("threadNice") ? bad : m.invoke(base, args));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpSettings.from(c, SecurityTest.NO_PROPS::get));
            assertEquals("threadNice " + bad + " is out of range [0, 19] (default 0: the node's own)", e.getMessage());
        }
        HttpSettings s = HttpSettings.from(base, SecurityTest.NO_PROPS::get);
        assertEquals(HttpSettings.DEFAULT_THREAD_NICE, s.threadNice());
        assertTrue(s.toString().contains("threadNice=0"), s.toString());
    }

    @Test
    void zeroLeavesEveryThreadAsItIs() throws Exception {
        ThreadNice nice = new ThreadNice(0, TASKS, log, System::nanoTime);
        nice.pool("main"); // would match the JVM's main thread
        nice.maybeApply();
        assertTrue(log.warnings.isEmpty(), "nothing done, nothing said: " + log.warnings);
    }

    @Test
    void theNiceValueIsReadPastANameWithSpacesAndParentheses(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path stat = dir.resolve("stat");
        // fields 1-2, then 3 (state) ... 18 (priority) 19 (nice): the name may hold ") (" itself
        Files.writeString(stat, "4242 (a) (b c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 30 10 1 0 100 0 0\n");
        assertEquals(10, ThreadNice.niceOf(stat));
        Files.writeString(stat, "garbage");
        assertEquals(Integer.MIN_VALUE, ThreadNice.niceOf(stat));
        assertEquals(Integer.MIN_VALUE, ThreadNice.niceOf(dir.resolve("none")));
    }
}
