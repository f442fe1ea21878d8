package dev.xq.node.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The client's arguments, its words and its errors, against a stand-in for the node's API. */
class RemoteTest {

    /** What one run printed and returned. */
    record Result(int rc, String out, String err) {
    }

    static Result run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Remote.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static final String QUEUES = """
            {"queues":[
             {"handle":18446744073709551615,"name":"serve/default","device":"cuda0","group":"4242:serve","pid":4242,"state":"READY",
              "suspended_by_scheduler":false,"suspended_by_app":false,"level":1,"available_level":1,
              "config":{"level":1,"threshold":16,"batch":8,"window":0},"pending":3,"in_flight":2,"submitted":12,"completed":7,
              "failed":0,"cancelled":0,"estimated_command_us":412,"limits":"on_top","sm_share_percent":50,"device_lags":120,"slow_device_lags":3,"run_us":12999,
              "width_sms":132,"stretch_width_sms":24,"device_sms":132,
              "hints":[{"kind":"priority","values":[2],"text":"priority=2"},{"kind":"laxity","values":[1000,1,5],"text":"laxity=1000us/1/5"}],
              "error":null},
             {"handle":7,"name":"bg","device":"sim0","group":null,"pid":1,"state":"SUSPENDED",
              "suspended_by_scheduler":false,"suspended_by_app":true,"level":3,"available_level":3,
              "config":{"level":3,"threshold":4,"batch":2,"window":300},"pending":10,"in_flight":0,"submitted":10,"completed":0,
              "failed":1,"cancelled":2,"estimated_command_us":0,"run_us":999,"hints":[],"error":null},
             {"handle":9,"name":"train/default","device":"cuda0","group":"77:train","pid":77,"state":"READY",
              "suspended_by_scheduler":false,"suspended_by_app":false,"level":1,"available_level":1,
              "config":{"level":1,"threshold":16,"batch":8,"window":0},"pending":0,"in_flight":4,"submitted":50,"completed":46,
              "failed":0,"cancelled":0,"estimated_command_us":2000,"limits":"narrowed","sm_share_percent":48,"device_lags":0,
              "slow_device_lags":0,"run_us":92000,"hints":[],"error":null}]}""";

    static final String QUEUE_TABLE = """
            HANDLE                NAME           DEVICE  GROUP       STATE           LV  PEND  FLIGHT  DONE  FAIL  CANCEL  EST_US  RUN_MS  SM%  WIDTH          LAG    LIMITS    HINTS
            18446744073709551615  serve/default  cuda0   4242:serve  READY           1   3     2       7     0     0       412     12      50   24/132 of 132  3/120  on top    priority=2 laxity=1000us/1/5
            7                     bg             sim0                SUSPENDED(app)  3   10    0       0     1     2       0       0       100                                  \n\
            9                     train/default  cuda0   77:train    READY           1   0     4       46    0     0       2000    92      48                         narrowed  \n""";


    // ------------------------------------------------------------------ arguments

    @Test
    void theNodeIsTheDefaultThenTheEnvironmentThenTheFlag() {
        assertEquals("127.0.0.1:50000", Remote.parse(new String[] {"queues"}, Map.of()).target().address());
        assertEquals("gpu1:50001", Remote.parse(new String[] {"queues"}, Map.of("XQ_NODE", "gpu1:50001")).target().address());
        assertEquals("127.0.0.1:50000", Remote.parse(new String[] {"queues"}, Map.of("XQ_NODE", "  ")).target().address());
        Remote.Invocation i = Remote.parse(new String[] {"queues", "--node", "gpu2:7"}, Map.of("XQ_NODE", "gpu1:50001"));
        assertEquals("gpu2:7", i.target().address());
        assertEquals("gpu3:50000", Remote.parse(new String[] {"--node=gpu3", "queues"}, Map.of()).target().address());
    }

    @Test
    void theTokenComesFromTheFlagBeforeTheEnvironment() {
        assertNull(Remote.parse(new String[] {"queues"}, Map.of()).target().token());
        assertEquals("env-token-0123456789", Remote.parse(new String[] {"queues"}, Map.of("XQ_TOKEN", "env-token-0123456789")).target().token());
        assertEquals("flag-token-012345678", Remote.parse(new String[] {"queues", "--token", "flag-token-012345678"},
                Map.of("XQ_TOKEN", "env-token-0123456789")).target().token());
        assertEquals("flag-token-012345678", Remote.parse(new String[] {"--token=flag-token-012345678", "top", "--once"}, Map.of()).target().token());
        Remote.Usage e = assertThrows(Remote.Usage.class, () -> Remote.parse(new String[] {"queues"}, Map.of("XQ_TOKEN", "has space 0123456789")));
        assertTrue(e.getMessage().startsWith("XQ_TOKEN must be printable ASCII"), e.getMessage());
    }

    @Test
    void flagsMayComeAnywhereAndDoubleDashEndsThem() {
        Remote.Invocation i = Remote.parse(new String[] {"hint", "fg", "--node", "h:1", "priority", "-5"}, Map.of());
        assertEquals("hint", i.command());
        assertEquals(List.of("fg", "priority", "-5"), i.args());
        assertEquals("h:1", i.target().address());
        Remote.Invocation q = Remote.parse(new String[] {"hint", "--", "--node", "priority", "2"}, Map.of());
        assertEquals(List.of("--node", "priority", "2"), q.args());
        assertEquals("127.0.0.1:50000", q.target().address());
    }

    @Test
    void addressesAreHostAndPort() {
        assertEquals("[::1]:8080", Target.parse("[::1]:8080", "--node").address());
        assertEquals("http://[::1]:8080/api/v1/queues", Target.parse("[::1]:8080", "--node").uri("/api/v1/queues").toString());
        assertEquals("https://gpu-host:443/x", Target.parse("https://gpu-host:443/", "--node").uri("/x").toString());
        assertEquals("http://10.0.0.2:50000/x", Target.parse("http://10.0.0.2", "--node").uri("/x").toString());
        for (String bad : List.of("h:0", "h:65536", "h:x", "h:", "::1", "[::1", "[::1]x", "a b:1", "h/x:1", ":50000", "[]:1")) {
            Remote.Usage e = assertThrows(Remote.Usage.class, () -> Target.parse(bad, "--node"), bad);
            assertTrue(e.getMessage().startsWith("--node '" + bad + "' is not HOST:PORT: "), e.getMessage());
        }
    }

    @Test
    void wrongArgumentsAreRefusedWithExitCode2BeforeAnythingIsSent() {
        Result none = run(Map.of());
        assertEquals(2, none.rc());
        assertTrue(none.err().startsWith("xq: no command given"), none.err());
        Result unknown = run(Map.of(), "lb");
        assertEquals(2, unknown.rc());
        assertEquals("xq: unknown command 'lb'; allowed: queues, top, policy, hint\n", unknown.err());
        Result hint = run(Map.of(), "hint", "fg", "priority");
        assertEquals(2, hint.rc());
        assertTrue(hint.err().startsWith("xq: usage: ./xq hint QUEUE KIND VALUE..., e.g. ./xq hint fg priority 2"), hint.err());
        assertEquals(2, run(Map.of(), "queues", "extra").rc());
        Result top = run(Map.of(), "top", "--interval", "5");
        assertEquals("xq: --interval 5 is out of range [100, 60000]\n", top.err());
        assertEquals(2, top.rc());
        assertEquals("xq: top: unknown option '--fast'; allowed: --once, --interval MS (100..60000), --count N\n",
                run(Map.of(), "top", "--fast").err());
        assertEquals("xq: --node needs a value: --node HOST:PORT\n", run(Map.of(), "queues", "--node").err());
        Result both = run(Map.of(), "top", "--once", "--count", "3");
        assertEquals("xq: top: --once and --count 3 together; allowed: one of them (--once is --count 1)\n", both.err());
        assertEquals(2, both.rc());
        Result badEnv = run(Map.of("XQ_NODE", "h:99999"), "queues");
        assertEquals(2, badEnv.rc());
        assertTrue(badEnv.err().startsWith("xq: XQ_NODE 'h:99999' is not HOST:PORT: port '99999'"), badEnv.err());
        Result help = run(Map.of(), "--help");
        assertEquals(0, help.rc());
        assertTrue(help.out().startsWith("usage: ./xq queues|top|policy|hint"), help.out());
    }

    // ------------------------------------------------------------------ no node, a refusing node, not a node

    @Test
    void noNodeIsOneLineNamingTheAddressAndHowToStartOne() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Result r = run(Map.of(), "queues", "--node", "127.0.0.1:" + port);
        assertEquals(1, r.rc());
        assertEquals("", r.out());
        assertEquals("xq: no XQ node answers at 127.0.0.1:" + port + " (connection refused). Start one with ./xq node (with its shell) "
                + "or ./xq serve (as a service), or name another with --node HOST:PORT or XQ_NODE\n", r.err());
        Result unresolved = run(Map.of("XQ_NODE", "no-such-host.invalid:1"), "policy");
        assertEquals(1, unresolved.rc());
        assertEquals("xq: cannot resolve the node's host 'no-such-host.invalid' (--node or XQ_NODE)\n", unresolved.err());
    }

    @Test
    void aRefusalPrintsTheApisOwnText() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("POST /api/v1/policy", 400, "{\"error\":\"policy 'nosuch' is not registered; allowed: [hpf, edf]\"}");
            Result r = run(Map.of("XQ_NODE", n.address()), "policy", "nosuch");
            assertEquals(1, r.rc());
            assertEquals("", r.out());
            assertEquals("xq: policy 'nosuch' is not registered; allowed: [hpf, edf]\n", r.err());

            n.answer("POST /api/v1/hint", 404, "{\"error\":\"no open queue 'fg'; open queues: 1 (bg)\"}");
            Result h = run(Map.of("XQ_NODE", n.address()), "hint", "fg", "priority", "2");
            assertEquals(1, h.rc());
            assertEquals("xq: no open queue 'fg'; open queues: 1 (bg)\n", h.err());
        }
    }

    @Test
    void aTokenIsSentAndA401SaysHowToGiveOne() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("GET /api/v1/queues", 401, "{\"error\":\"missing or wrong bearer token\"}");
            Result r = run(Map.of("XQ_NODE", n.address()), "queues");
            assertEquals(1, r.rc());
            assertEquals("xq: missing or wrong bearer token (give the node's token with --token T or XQ_TOKEN)\n", r.err());
            assertNull(n.seen.getLast().authorization());
            Result wrong = run(Map.of("XQ_NODE", n.address(), "XQ_TOKEN", "not-the-token-0123"), "queues");
            assertTrue(wrong.err().endsWith("(the token given with --token or XQ_TOKEN is not the node's)\n"), wrong.err());
            assertEquals("Bearer not-the-token-0123", n.seen.getLast().authorization());
            run(Map.of("XQ_NODE", n.address(), "XQ_TOKEN", "not-the-token-0123"), "queues", "--token", "flag-wins-01234567");
            assertEquals("Bearer flag-wins-01234567", n.seen.getLast().authorization());
        }
    }

    @Test
    void somethingElseOnThePortIsNamedAsSuch() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("GET /api/v1/policy", 404, "text/html", "<html><body>Not Found</body></html>");
            Result r = run(Map.of("XQ_NODE", n.address()), "policy");
            assertEquals(1, r.rc());
            assertEquals("xq: " + n.address() + " answered GET /api/v1/policy with HTTP 404 '<html><body>Not Found</body></html>', "
                    + "which is not XQ's API: is it an XQ node's HTTP port?\n", r.err());
            n.answer("GET /api/v1/queues", 200, "text/plain", "hello");
            assertTrue(run(Map.of("XQ_NODE", n.address()), "queues").err().contains("with HTTP 200 'hello', which is not XQ's API"));
            // the node's HTTP server refusing a request's size is its own page, not XQ's JSON: said as too large
            n.answer("POST /api/v1/policy", 413, "text/html", "<html><body>413 Payload Too Large</body></html>");
            Result big = run(Map.of("XQ_NODE", n.address()), "policy", "x".repeat(200));
            assertEquals(1, big.rc());
            assertEquals("xq: " + n.address() + " refused POST /api/v1/policy as too large (HTTP 413): an argument is longer than the "
                    + "node takes (its dev.xq.http maxBodyBytes, or its URI limit)\n", big.err());
            n.answer("GET /api/v1/queues", 200, "{\"queues\":{}}");
            assertEquals("xq: the node's answer is not what XQ's API sends: 'queues' is not a JSON array\n",
                    run(Map.of("XQ_NODE", n.address()), "queues").err());
        }
    }

    // ------------------------------------------------------------------ the words

    @Test
    void queuesPrintsTheShellsTable() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("GET /api/v1/queues", 200, QUEUES);
            Result r = run(Map.of("XQ_NODE", n.address()), "queues");
            assertEquals("", r.err());
            assertEquals(0, r.rc());
            assertEquals(QUEUE_TABLE, r.out());
            n.answer("GET /api/v1/queues", 200, "{\"queues\":[]}");
            assertEquals("HANDLE  NAME  DEVICE  GROUP  STATE  LV  PEND  FLIGHT  DONE  FAIL  CANCEL  EST_US  RUN_MS  SM%  WIDTH  LAG  LIMITS  HINTS\n(none)\n",
                    run(Map.of("XQ_NODE", n.address()), "queues").out());
        }
    }

    @Test
    void topPrintsTheSchedulerLineAboveTheTableAndRefreshes() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("GET /api/v1/queues", 200, QUEUES);
            n.answer("GET /api/v1/scheduler", 200, "{\"selected\":\"edf\",\"active\":\"hpf\",\"decisions\":120,\"swaps\":1,"
                    + "\"watchdog_trips\":0,\"decision_p50_us\":4.25,\"decision_p99_us\":null,\"max_decision_gap_us\":9}");
            String head = String.format("policy hpf (selected edf)  decisions 120  swaps 1  watchdog 0  decision p50 %.1f us  p99 %.1f us%n",
                    4.25, Double.NaN);
            Result once = run(Map.of("XQ_NODE", n.address()), "top", "--once");
            assertEquals(0, once.rc());
            assertEquals(head + QUEUE_TABLE, once.out());
            Result twice = run(Map.of("XQ_NODE", n.address()), "top", "--count", "2", "--interval", "100");
            assertEquals(0, twice.rc());
            String frame = "\u001b[H\u001b[2J" + head + QUEUE_TABLE + System.lineSeparator();
            assertEquals(frame + frame, twice.out());
        }
    }

    @Test
    void policyShowsAndSelects() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("GET /api/v1/policy", 200, "{\"selected\":\"edf\",\"active\":\"hpf\"}");
            n.answer("POST /api/v1/policy", 200, "{\"selected\":\"kedf\",\"active\":\"hpf\"}");
            n.answer("GET /api/v1/policies", 200, "{\"selected\":\"edf\",\"active\":\"hpf\",\"policies\":[{\"name\":\"hpf\"},{\"name\":\"edf\"}]}");
            assertEquals("selected: edf\nactive:   hpf\n", run(Map.of("XQ_NODE", n.address()), "policy").out());
            Result sel = run(Map.of("XQ_NODE", n.address()), "policy", "kedf");
            assertEquals(0, sel.rc());
            assertEquals("selected: kedf (decides from the next scheduling event)\n", sel.out());
            assertEquals("{\"name\":\"kedf\"}", n.seen.getLast().body());
            Result two = run(Map.of("XQ_NODE", n.address()), "policy", "a", "b");
            assertEquals(2, two.rc());
            assertEquals("xq: policy takes at most one name; allowed: hpf, edf\n", two.err());
        }
    }

    @Test
    void hintSendsTheWordsAsTypedAndPrintsTheHintTheQueueNowHas() throws Exception {
        try (FakeNode n = new FakeNode()) {
            n.answer("POST /api/v1/hint", 200, "{\"queue\":{\"handle\":7,\"hints\":[{\"kind\":\"deadline\",\"values\":[5000],"
                    + "\"text\":\"deadline=5000us\"},{\"kind\":\"priority\",\"values\":[-5],\"text\":\"priority=-5\"}]}}");
            Result r = run(Map.of("XQ_NODE", n.address()), "hint", "q\"7", "priority", "-5");
            assertEquals(0, r.rc());
            assertEquals("queue 7: priority=-5\n", r.out());
            assertEquals("{\"queue\":\"q\\\"7\",\"kind\":\"priority\",\"values\":[\"-5\"]}", n.seen.getLast().body());
            assertEquals("queue 7: deadline=5000us\n", run(Map.of("XQ_NODE", n.address()), "hint", "7", "deadline", "5000").out());
        }
    }

    /** The node writes each hint's text with the shell's code (Hint.text()); the client prints it as it comes. */
    @Test
    void hintsReadAsTheShellWritesThem() {
        assertEquals("priority=2", Views.hintText(hint("{\"kind\":\"priority\",\"values\":[2],\"text\":\"priority=2\"}")));
        assertEquals("demand=1e/512.0MiB", Views.hintText(hint("{\"kind\":\"demand\",\"values\":[1,536870912],\"text\":\"demand=1e/512.0MiB\"}")));
        assertEquals("future=1/18446744073709551615", Views.hintText(hint("{\"kind\":\"future\",\"values\":[1,18446744073709551615]}")),
                "a node that sends no text: kind=values");
    }

    @Test
    void jsonKeepsBigNumbersExactAndRefusesWhatIsNotJson() {
        Map<String, Object> m = Views.object(JsonReader.parse("{\"h\":18446744073709551615,\"s\":\"a\\u00e9\\n\",\"l\":[true,null]}"), "x");
        assertEquals("18446744073709551615", ((java.math.BigDecimal) m.get("h")).toPlainString());
        assertEquals("a\u00e9\n", m.get("s"));
        assertEquals(java.util.Arrays.asList(true, null), m.get("l"));
        for (String bad : List.of("", "{", "{\"a\":1,}", "[1 2]", "{\"a\":1} x", "<html>", "\"open", "{\"a\":-}")) {
            assertThrows(JsonReader.Malformed.class, () -> JsonReader.parse(bad), bad);
        }
    }

    private static Map<String, Object> hint(String json) {
        return Views.object(JsonReader.parse(json), "hint");
    }
}
