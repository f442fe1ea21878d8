package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import javax.inject.Inject;
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
 * The HTTP API in a real node: Felix HTTP's Jetty serving dev.xq.http, real requests over
 * loopback, as xcli and curl send them, changing real queues and the real scheduler.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HttpIT {

    @Inject
    BundleContext ctx;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    ConfigurationAdmin cm;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private XQueue queue;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Before
    public void openQueue() {
        queue = xq.create(QueueOptions.on("sim0").named("http-q").inGroup("tenant-h").with(new Hint.Priority(1)));
    }

    @After
    public void closeQueue() throws Exception {
        if (queue != null) {
            queue.close();
        }
        org.osgi.service.cm.Configuration c = cm.getConfiguration("dev.xq.http", "?");
        if (c.getProperties() != null) {
            c.delete();
        }
        scheduler.selectPolicy("hpf");
    }

    /** @return the API's base URL once its Jetty listens: the endpoint its HttpServiceRuntime announces */
    private String base() throws Exception {
        AtomicReference<String> url = new AtomicReference<>();
        assertTrue("the HTTP API's runtime appears", XqNode.eventually(20_000, () -> {
            url.set(endpoint());
            return url.get() != null;
        }));
        return url.get().endsWith("/") ? url.get().substring(0, url.get().length() - 1) : url.get();
    }

    private String endpoint() {
        try {
            for (ServiceReference<?> r : ctx.getServiceReferences("org.osgi.service.servlet.runtime.HttpServiceRuntime", "(xq.http=xq)")) {
                Object e = r.getProperty("osgi.http.endpoint");
                String first = e instanceof String[] a && a.length > 0 ? a[0] : e instanceof String s ? s : null;
                if (first != null && !first.endsWith(":0/")) {
                    return first;
                }
            }
        } catch (Exception | Error e) {
            return null;
        }
        return null;
    }

    private HttpResponse<String> send(String method, String url, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    public void xcliRoutesDriveTheNode() throws Exception {
        String base = base();
        assertTrue("bound to loopback: " + base, base.startsWith("http://127.0.0.1:"));
        String hex = "0x" + Long.toHexString(queue.handle());

        HttpResponse<String> list = send("GET", base + "/xqueues", null, null);
        assertEquals(200, list.statusCode());
        assertTrue(list.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertTrue(list.body(), list.body().contains("\"handle\":" + queue.handle() + ",\"level\":3,\"pid\":" + ProcessHandle.current().pid()));
        assertTrue(list.body(), list.body().startsWith("{\"processes\":[{\"cmdline\":"));

        // xcli config -x HANDLE -l 1 -t 4 -b 2: all three parameters in one POST
        HttpResponse<String> cfg = send("POST", base + "/config/" + hex + "?level=1&threshold=4&batch_size=2", null, null);
        assertEquals(cfg.body(), 200, cfg.statusCode());
        assertEquals("{\"info\":\"success\"}", cfg.body());
        assertEquals(PreemptionLevel.BLOCK, queue.status().config().level());
        assertEquals(4, queue.status().config().threshold());
        assertEquals(2, queue.status().config().batch());

        HttpResponse<String> bad = send("POST", base + "/config/" + hex + "?level=1&threshold=4&batch_size=9", null, null);
        assertEquals(400, bad.statusCode());
        assertEquals("{\"error\":\"batch_size 9 is out of range [1, threshold=4]\"}", bad.body());
        assertEquals(2, queue.status().config().batch());

        HttpResponse<String> hint = send("POST", base + "/hint", "{\"hint_type\":1,\"handle\":" + queue.handle() + ",\"priority\":7}", null);
        assertEquals(hint.body(), 200, hint.statusCode());
        assertEquals(List.of(new Hint.Priority(7)), queue.hints());

        assertEquals(200, send("POST", base + "/policy?policy=7", null, null).statusCode());
        assertEquals("kedf", scheduler.selectedPolicy());
        assertEquals("{\"policy\":7}", send("GET", base + "/policy", null, null).body());
        HttpResponse<String> spup = send("POST", base + "/policy?policy=6", null, null);
        assertEquals(400, spup.statusCode());
        assertTrue(spup.body(), spup.body().startsWith("{\"error\":\"policy 6 (SPUP) has no XQ equivalent; allowed: 1 (HPF: XQ's hpf)"));
        assertEquals("kedf", scheduler.selectedPolicy());
        assertEquals(200, send("POST", base + "/policy?policy=9", null, null).statusCode());
        assertEquals("awf", scheduler.selectedPolicy());
        assertEquals("{\"policy\":9}", send("GET", base + "/policy", null, null).body());

        HttpResponse<String> missing = send("GET", base + "/xqueue/0xffffffffffffffff", null, null);
        assertEquals(404, missing.statusCode());
        assertTrue(missing.body(), missing.body().startsWith("{\"error\":\"no XQueue with handle 0xffffffffffffffff; open: "));
    }

    @Test
    public void xqsOwnApiAndMetrics() throws Exception {
        String base = base();
        HttpResponse<String> q = send("GET", base + "/api/v1/queues/http-q", null, null);
        assertEquals(q.body(), 200, q.statusCode());
        assertTrue(q.body(), q.body().contains("\"name\":\"http-q\",\"device\":\"sim0\",\"group\":\"tenant-h\""));
        HttpResponse<String> h = send("POST", base + "/api/v1/hint", "{\"queue\":\"http-q\",\"kind\":\"deadline\",\"values\":[5000]}", null);
        assertEquals(h.body(), 200, h.statusCode());
        assertTrue(queue.hints().contains(new Hint.Deadline(5000)));
        assertEquals(200, send("POST", base + "/api/v1/suspend", "{\"queue\":" + queue.handle() + "}", null).statusCode());
        assertTrue(queue.status().suspendedByApp());
        assertEquals(200, send("POST", base + "/api/v1/resume", "{\"queue\":\"http-q\"}", null).statusCode());
        assertTrue(!queue.status().suspendedByApp());
        HttpResponse<String> dev = send("GET", base + "/api/v1/devices", null, null);
        assertTrue(dev.body(), dev.body().startsWith("{\"devices\":[{\"id\":\"sim0\""));
        HttpResponse<String> big = send("POST", base + "/api/v1/hint", "{\"queue\":\"http-q\",\"kind\":\"priority\",\"values\":[1],"
                + "\"pad\":\"" + "x".repeat(70_000) + "\"}", null);
        assertEquals(big.body(), 413, big.statusCode());
        assertTrue(big.body().startsWith("{\"error\":\"request body of "));

        HttpResponse<String> m = send("GET", base + "/metrics", null, null);
        assertEquals(200, m.statusCode());
        assertTrue(m.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        assertTrue(m.body(), m.body().contains("xq_queue_commands_submitted_total{device=\"sim0\",group=\"tenant-h\",handle=\""
                + queue.handle() + "\",name=\"http-q\",pid=\"" + ProcessHandle.current().pid() + "\"} 0.0"));
        assertTrue(m.body(), m.body().contains("xq_scheduler_decisions_total "));
        // the scheduler's decision histogram and the device's busy time, from the real runtime
        assertTrue(m.body(), m.body().contains("# TYPE xq_scheduler_decision_seconds histogram\n"));
        assertTrue(m.body(), m.body().contains("\nxq_scheduler_decision_seconds_bucket{le=\"+Inf\"} "));
        assertTrue(m.body(), m.body().contains("\nxq_scheduler_decision_seconds_count "));
        assertTrue(m.body(), m.body().contains("\nxq_device_busy_seconds_total{device=\"sim0\",platform=\"sim\"} "));
    }

    /** One request written as is (java.net.http refuses to send some of these): the whole reply. */
    private static String raw(URI base, String request) throws Exception {
        try (java.net.Socket s = new java.net.Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    @Test
    public void oddRequestsGetJsonFromTheRealServerAndChangeNothing() throws Exception {
        URI base = URI.create(base());
        // URIs that Jetty's default compliance rejects itself, with an HTML page xcli cannot read
        for (String target : List.of("/a/%2e%2e/xqueues", "/api/v1/../xqueues", "/./policy", "/xqueue/%2F", "/xqueue/%c3%28",
                "/api/v1/queues/%2e", "//xqueues", "/xqueue/a%5Cb", "/xqueues;x=1")) {
            String reply = raw(base, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            String head = reply.substring(0, Math.max(0, reply.indexOf("\r\n\r\n")));
            String body = reply.substring(reply.indexOf("\r\n\r\n") + 4);
            assertTrue(target + " -> " + reply, head.startsWith("HTTP/1.1 400 ") || head.startsWith("HTTP/1.1 404 "));
            assertTrue(target + " -> " + reply, head.toLowerCase(java.util.Locale.ROOT).contains("\r\ncontent-type: application/json"));
            assertTrue(target + " -> " + reply, body.startsWith("{\"error\":\""));
        }
        // DNS rebinding: a page of evil.example resolving to 127.0.0.1, same origin to the browser
        String rebind = raw(base, "POST /policy?policy=7 HTTP/1.1\r\nHost: evil.example:" + base.getPort() + "\r\nOrigin: http://evil.example:"
                + base.getPort() + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assertTrue(rebind, rebind.startsWith("HTTP/1.1 403 "));
        assertTrue(rebind, rebind.contains("{\"error\":\"Host evil.example:" + base.getPort() + " is not a name of this node"));
        assertEquals("hpf", scheduler.selectedPolicy());
        String named = raw(base, "POST /policy?policy=7 HTTP/1.1\r\nHost: localhost:" + base.getPort() + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assertTrue(named, named.startsWith("HTTP/1.1 200 "));
        assertEquals("kedf", scheduler.selectedPolicy());
    }

    @Test
    public void aTokenGuardsTheApiAndNoTokenMeansNoNetwork() throws Exception {
        String token = "it-token-0123456789";
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("port", 0);
        props.put("token", token);
        props.put("tokenOnLoopback", true);
        org.osgi.service.cm.Configuration c = cm.getConfiguration("dev.xq.http", "?");
        c.update(props);
        // the component restarts with the token; wait until requests without it are refused
        AtomicReference<HttpResponse<String>> last = new AtomicReference<>();
        assertTrue("requests without the token are refused", XqNode.eventually(20_000, () -> {
            try {
                String e = endpoint();
                if (e == null) {
                    return false;
                }
                last.set(send("GET", e + "xqueues", null, null));
                return last.get().statusCode() == 401;
            } catch (Exception notYet) {
                return false;
            }
        }));
        assertEquals("{\"error\":\"this node requires 'Authorization: Bearer <token>' from loopback too (tokenOnLoopback)\"}", last.get().body());
        String base = base();
        assertEquals(401, send("POST", base + "/policy?policy=7", null, "wrong-token-000000000").statusCode());
        assertEquals("hpf", scheduler.selectedPolicy());
        assertEquals(200, send("POST", base + "/policy?policy=7", null, token).statusCode());
        assertEquals("kedf", scheduler.selectedPolicy());

        // a boolean spelt otherwise than true or false (read as false by Declarative Services, it let
        // loopback requests in without the token): the configuration is refused, nothing listens
        Hashtable<String, Object> yes = new Hashtable<>();
        yes.put("port", 0);
        yes.put("token", token);
        yes.put("tokenOnLoopback", "yes");
        c.update(yes);
        assertTrue("the API's Jetty goes away", XqNode.eventually(20_000, () -> endpoint() == null));
        Thread.sleep(1000);
        assertNull("and does not come back", endpoint());

        // every interface and no token: refused, nothing listens
        Hashtable<String, Object> open = new Hashtable<>();
        open.put("port", 0);
        open.put("bindAddress", "0.0.0.0");
        c.update(open);
        assertTrue("the API's Jetty goes away", XqNode.eventually(20_000, () -> endpoint() == null));
        Thread.sleep(1000);
        assertNull("and does not come back", endpoint());
        assertNotNull(xq.find(queue.handle()).orElse(null));
    }

    /** @return each thread of this JVM (the framework's too: Pax Exam's native container) as "name=nice" */
    private static List<String> threadNices() throws java.io.IOException {
        List<String> out = new java.util.ArrayList<>();
        try (java.nio.file.DirectoryStream<java.nio.file.Path> ds = java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path t : ds) {
                try {
                    String comm = java.nio.file.Files.readString(t.resolve("comm")).strip();
                    String stat = java.nio.file.Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                    out.add(comm + "=" + f[16]);
                } catch (java.io.IOException | RuntimeException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return out;
    }

    /**
     * threadNice (issue 41, off by default): set, the API's Jetty threads run at that nice value
     * and no other thread of the node does (one started from them is put back); removed, the
     * API's new threads run at the node's own value again. Needs the privilege to raise a
     * thread's priority again (root here; without it the node leaves the setting unapplied).
     */
    @Test
    public void threadNiceLowersTheApisThreadsOnly() throws Exception {
        String uid = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status")).stream()
                .filter(l -> l.startsWith("Uid:")).findFirst().orElse("Uid: -1 -1").split("\\s+")[2];
        org.junit.Assume.assumeTrue("root (or CAP_SYS_NICE) is needed to undo a lowered priority", uid.equals("0"));
        String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat"));
        org.junit.Assume.assumeTrue("the JVM runs at nice 0", stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ")[16].equals("0"));
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("port", 0);
        props.put("threadNice", 10);
        org.osgi.service.cm.Configuration c = cm.getConfiguration("dev.xq.http", "?");
        c.update(props);
        assertTrue("the API's Jetty threads at nice 10: " + threadNices(), XqNode.eventually(20_000, () -> {
            try {
                String e = endpoint();
                if (e == null || send("GET", e + "api/v1/policy", null, null).statusCode() != 200) {
                    return false;
                }
                return threadNices().stream().anyMatch(t -> t.startsWith("qtp") && t.endsWith("=10"));
            } catch (Exception notYet) {
                return false;
            }
        }));
        // served requests (accepts) and the timer's listings: any thread at 10 is the API's
        String base = base();
        for (int i = 0; i < 10; i++) {
            assertEquals(200, send("GET", base + "/api/v1/policy", null, null).statusCode());
        }
        assertTrue("only the API's threads at 10: " + threadNices(), XqNode.eventually(10_000, () -> {
            try {
                return threadNices().stream().filter(t -> t.endsWith("=10")).allMatch(t -> t.startsWith("qtp"));
            } catch (java.io.IOException e) {
                return false;
            }
        }));
        // removed: the API restarts at the default, its threads at the node's value
        c.delete();
        assertTrue("no thread at 10 once the setting is gone: " + threadNices(), XqNode.eventually(20_000, () -> {
            try {
                String e = endpoint();
                return e != null && send("GET", e + "api/v1/policy", null, null).statusCode() == 200
                        && threadNices().stream().noneMatch(t -> t.endsWith("=10"));
            } catch (Exception notYet) {
                return false;
            }
        }));
    }
}
