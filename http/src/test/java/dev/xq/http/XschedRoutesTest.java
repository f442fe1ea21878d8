package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** XSched 1.2's xserver routes, as xcli calls them, with their exact JSON. */
class XschedRoutesTest {

    /** 2^53 + 1: a double cannot hold it. */
    static final long BIG = (1L << 53) + 1;
    /** Above 2^63: negative as a Java long, unsigned in JSON. */
    static final long HUGE = 0xfedcba9876543210L;
    static final long NODE = Processes.NODE_PID;

    Fakes.Service xq;
    Fakes.Scheduler scheduler;
    Fakes.Queue big;
    Fakes.Queue huge;
    Api api;

    @BeforeEach
    void node() {
        xq = new Fakes.Service();
        scheduler = new Fakes.Scheduler("hpf", "hhpf", "chpf", "kedf", "lax", "cfs", "bandwidth", "bandwidth-group", "awf", "edf", "native");
        big = xq.add(BIG, "serve/default", "cuda0", "4242:serve", 4242);
        huge = xq.add(HUGE, "fg", "sim0", "", 0);
        huge.state = QueueState.READY;
        huge.suspendedByScheduler = true;
        api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
    }

    ApiResponse call(String method, String url) {
        return api.handle(ApiRequest.of(method, url));
    }

    ApiResponse call(String method, String url, String body) {
        return api.handle(ApiRequest.of(method, url, body));
    }

    static void assertAnswer(int status, String body, ApiResponse r) {
        assertEquals(body, r.body());
        assertEquals(status, r.status());
        assertEquals("application/json", r.contentType());
    }

    @Test
    void aDeviceIsTypedAsXcliExpectsEvenWithoutAnAdapterListingIt() {
        assertEquals(2L << 32 | 3, XschedApi.device("cuda3", "cuda"));
        assertEquals(2L << 32 | 1, XschedApi.device("cuda1", ""), "a process's queue where no CUDA adapter runs");
        assertEquals(2L << 32, XschedApi.device("hip0", ""));
        assertEquals(0L << 32 | 2, XschedApi.device("sim2", ""), "the simulated XPU: unknown to XSched");
        assertEquals(0L, XschedApi.device("x", ""));
    }

    @Test
    void xqueuesHasXschedsShapeWithUnsignedHandles() {
        ApiResponse r = call("GET", "/xqueues");
        assertEquals(200, r.status());
        String cmdline = Processes.cmdline(4242).replace("\\", "\\\\").replace("\"", "\\\"");
        String node = Processes.cmdline(NODE).replace("\\", "\\\\").replace("\"", "\\\"");
        assertEquals("{\"processes\":[{\"cmdline\":\"" + cmdline + "\",\"pid\":4242},{\"cmdline\":\"" + node + "\",\"pid\":" + NODE + "}],"
                + "\"xqueues\":["
                + "{\"batch_size\":8,\"device\":8589934592,\"handle\":9007199254740993,\"level\":3,\"pid\":4242,\"ready\":false,"
                + "\"suspended\":false,\"threshold\":16},"
                + "{\"batch_size\":8,\"device\":0,\"handle\":18364758544493064720,\"level\":3,\"pid\":" + NODE + ",\"ready\":true,"
                + "\"suspended\":true,\"threshold\":16}]}", r.body());
    }

    @Test
    void xqueueTakesHexWithOrWithout0x() {
        ApiResponse r = call("GET", "/xqueue/0xFEDCBA9876543210");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.body().startsWith("{\"process\":{\"cmdline\":"), r.body());
        assertTrue(r.body().contains("\"xqueue\":{\"batch_size\":8,\"device\":0,\"handle\":18364758544493064720,"), r.body());
        assertEquals(200, call("GET", "/xqueue/20000000000001").status());
    }

    @Test
    void badAndUnknownHandlesAreRefusedWithTheirValue() {
        assertAnswer(400, "{\"error\":\"handle 'xyz' is not a hexadecimal XQueue handle; allowed: 1 to 16 hex digits, optionally after 0x, "
                + "not 0 (GET /xqueues lists the handles)\"}", call("GET", "/xqueue/xyz"));
        assertEquals(400, call("GET", "/xqueue/0x").status());
        assertEquals(400, call("GET", "/xqueue/11112222333344445").status(), "17 digits");
        assertAnswer(400, "{\"error\":\"handle '0' is 0, which is no XQueue's handle (GET /xqueues lists the handles)\"}",
                call("GET", "/xqueue/0"));
        assertAnswer(404, "{\"error\":\"no XQueue with handle 0x7; open: 0x20000000000001, 0xfedcba9876543210\"}", call("GET", "/xqueue/7"));
        assertEquals(400, call("GET", "/xqueue/1/2").status());
    }

    @Test
    void xcliConfigSendsAllThreeParameters() {
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/config/0xfedcba9876543210?level=2&threshold=8&batch_size=4"));
        assertEquals(new QueueConfig(PreemptionLevel.DEACTIVATE, 8, 4, QueueConfig.DEFAULT_WINDOW_MICROS), huge.config);
    }

    @Test
    void xcliNoChangeValuesLeaveTheSettingAlone() {
        // xcli's defaults: level 0, threshold -1, batch size -1 mean "no change"
        assertAnswer(200, "{\"warning\":\"no change\"}", call("POST", "/config/fedcba9876543210?level=0&threshold=-1&batch_size=-1"));
        assertEquals(QueueConfig.defaults(), huge.config);
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/config/fedcba9876543210?level=0&threshold=32&batch_size=-1"));
        assertEquals(QueueConfig.defaults().withThreshold(32), huge.config);
    }

    @Test
    void badConfigValuesChangeNothing() {
        QueueConfig before = huge.config;
        assertAnswer(400, "{\"error\":\"preemption level 7 is not one of 1 (block), 2 (deactivate), 3 (interrupt)\"}",
                call("POST", "/config/fedcba9876543210?level=7&threshold=8&batch_size=4"));
        assertAnswer(400, "{\"error\":\"batch_size 9 is out of range [1, threshold=8]\"}",
                call("POST", "/config/fedcba9876543210?level=2&threshold=8&batch_size=9"));
        assertAnswer(400, "{\"error\":\"threshold value 'many' is not a whole number\"}",
                call("POST", "/config/fedcba9876543210?level=1&threshold=many&batch_size=4"));
        assertAnswer(400, "{\"error\":\"query parameter 'window' is unknown; allowed: level, threshold, batch_size\"}",
                call("POST", "/config/fedcba9876543210?window=5"));
        assertAnswer(400, "{\"error\":\"query parameter 'level' is given twice; give it once\"}",
                call("POST", "/config/fedcba9876543210?level=1&level=2"));
        assertEquals(before, huge.config);
        assertAnswer(404, "{\"error\":\"no XQueue with handle 0x99; open: 0x20000000000001, 0xfedcba9876543210\"}",
                call("POST", "/config/99?level=1&threshold=-1&batch_size=-1"));
        assertEquals(405, call("GET", "/config/99").status());
        assertEquals("POST", call("GET", "/config/99").headers().get("Allow"));
    }

    @Test
    void policyUsesXschedsNumbers() {
        assertAnswer(200, "{\"policy\":1}", call("GET", "/policy"));
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/policy?policy=7"));
        assertEquals("kedf", scheduler.selected);
        assertAnswer(200, "{\"policy\":7}", call("GET", "/policy"));
        scheduler.selected = "edf";
        assertAnswer(200, "{\"policy\":0}", call("GET", "/policy"));
        scheduler.selected = "pup"; // XSched's name for bandwidth-group, selectable as such
        assertAnswer(200, "{\"policy\":5}", call("GET", "/policy"));
        scheduler.selected = "bandwidth-group";
        assertAnswer(200, "{\"policy\":5}", call("GET", "/policy"));
    }

    /** xserver's routes that take no query parameters refuse one by name, changing nothing; /metrics takes any. */
    @Test
    void routesWithoutQueryParametersRefuseOne() {
        assertAnswer(400, "{\"error\":\"query parameter 'all' is unknown: GET /xqueues takes no query parameters\"}",
                call("GET", "/xqueues?all=1"));
        assertAnswer(400, "{\"error\":\"query parameter 'x' is unknown: GET /xqueue/99 takes no query parameters\"}",
                call("GET", "/xqueue/99?x=1"));
        assertAnswer(400, "{\"error\":\"query parameter 'policy' is unknown: GET /policy takes no query parameters\"}",
                call("GET", "/policy?policy=7"));
        assertEquals("hpf", scheduler.selected, "nothing selected");
        int before = big.hints.size();
        assertAnswer(400, "{\"error\":\"query parameter 'prio' is unknown: POST /hint takes no query parameters (its values go in the JSON body)\"}",
                call("POST", "/hint?prio=5", "{\"hint_type\":1,\"handle\":" + BIG + ",\"priority\":9}"));
        assertEquals(before, big.hints.size(), "the hint in the body was not applied");
        assertEquals(200, call("POST", "/hint", "{\"hint_type\":1,\"handle\":" + BIG + ",\"priority\":9}").status(),
                "the same hint without the query parameter: applied");
        assertEquals(before + 1, big.hints.size());
        assertEquals(200, call("GET", "/xqueues").status(), "without one: answered");
        assertEquals(405, call("GET", "/hint?x=1").status(), "a method not allowed says so first");
    }

    @Test
    void policiesWithoutAnXqEquivalentAreRefused() {
        String allowed = "allowed: 1 (HPF: XQ's hpf), 2 (HHPF: XQ's hhpf), 3 (CHPF: XQ's chpf), 4 (UP: XQ's bandwidth), "
                + "5 (PUP: XQ's bandwidth-group), 7 (KEDF: XQ's kedf), 8 (LAX: XQ's lax), 9 (AWF: XQ's awf), 10 (CFS: XQ's cfs), "
                + "11 (MLFQ: XQ's mlfq)";
        assertAnswer(400, "{\"error\":\"policy 6 (SPUP) has no XQ equivalent; " + allowed + "\"}", call("POST", "/policy?policy=6"));
        assertAnswer(400, "{\"error\":\"policy 12 is not an XSched policy number; " + allowed + "\"}", call("POST", "/policy?policy=12"));
        assertAnswer(400, "{\"error\":\"policy 'x' is not a whole number; " + allowed + "\"}", call("POST", "/policy?policy=x"));
        assertAnswer(400, "{\"error\":\"query parameter 'policy' is missing; " + allowed + "\"}", call("POST", "/policy"));
        // mlfq is XSched's 11, but its bundle is not in this node: the scheduler's own refusal
        assertAnswer(400, "{\"error\":\"no policy 'mlfq'; known: hpf, hhpf, chpf, kedf, lax, cfs, bandwidth, bandwidth-group, awf, edf, native\"}",
                call("POST", "/policy?policy=11"));
        assertEquals("hpf", scheduler.selected);
    }

    @Test
    void awfIsXschedsNine() {
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/policy?policy=9"));
        assertEquals("awf", scheduler.selected);
        assertAnswer(200, "{\"policy\":9}", call("GET", "/policy"));
    }

    private static Hint.WindowActive window(Fakes.Queue q) {
        return q.hints().stream().filter(h -> h instanceof Hint.WindowActive).map(h -> (Hint.WindowActive) h).findFirst().orElse(null);
    }

    @Test
    void windowActiveMarksEveryQueueOfTheProcessAboveEveryMarkBefore() {
        Fakes.Queue second = xq.add(77, "serve/s1", "cuda0", "4242:serve", 4242);
        Fakes.Queue other = xq.add(78, "game/default", "cuda0", "5151:game", 5151);
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242,\"display\":0}"));
        Hint.WindowActive first = window(big);
        assertTrue(first != null && first.display() == 0 && first.active(), big.hints().toString());
        assertEquals(first, window(second), "every queue of process 4242, the same mark");
        assertEquals(null, window(other));
        assertEquals(null, window(huge));
        // the focus moves to process 5151: a higher mark; 4242's stays as it was (awf takes the highest)
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":7,\"pid\":5151,\"display\":0}"));
        assertTrue(window(other).mark() > first.mark(), window(other) + " after " + first);
        assertEquals(first, window(big));
        // a mark typed by hand far above the clock: the route still goes above it
        other.hint(new Hint.WindowActive(0, Long.MAX_VALUE - 3));
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242,\"display\":0}"));
        assertEquals(Long.MAX_VALUE - 2, window(big).mark());
        // another display is another window
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":7,\"pid\":" + NODE + ",\"display\":1}"));
        assertEquals(1, window(huge).display());
        // the focus goes to a program without XQueues: display 0's marks are cleared, display 1's stay
        assertAnswer(200, "{\"info\":\"success\",\"warning\":\"process 999 has no open XQueue: no XQueue owns display 0's "
                + "active window now (3 queues' marks cleared)\"}", call("POST", "/hint", "{\"hint_type\":7,\"pid\":999,\"display\":0}"));
        assertEquals(new Hint.WindowActive(0, 0), window(big));
        assertEquals(new Hint.WindowActive(0, 0), window(second));
        assertEquals(new Hint.WindowActive(0, 0), window(other));
        assertTrue(window(huge).active() && window(huge).display() == 1);
    }

    @Test
    void badWindowActiveHintsChangeNothing() {
        assertAnswer(400, "{\"error\":\"field 'pid' is missing; an integer in [1, 2147483647] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"display\":0}"));
        assertAnswer(400, "{\"error\":\"field 'pid' 0 is out of range [1, 2147483647]\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"pid\":0,\"display\":0}"));
        assertAnswer(400, "{\"error\":\"field 'display' is missing; an integer in [0, 1000000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242}"));
        assertAnswer(400, "{\"error\":\"field 'display' 1000001 is out of range [0, 1000000]\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242,\"display\":1000001}"));
        assertAnswer(400, "{\"error\":\"field 'handle' is unknown; allowed: hint_type, pid, display\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242,\"display\":0,\"handle\":1}"));
        assertTrue(big.hints().isEmpty() && huge.hints().isEmpty());
    }

    @Test
    void priorityHintOnAHandleAbove2To53() {
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":1,\"handle\":9007199254740993,\"priority\":3}"));
        assertEquals(List.of(new Hint.Priority(3)), big.hints());
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":1,\"handle\":18364758544493064720,\"priority\":-2}"));
        assertEquals(List.of(new Hint.Priority(-2)), huge.hints());
        assertTrue(big.hints().equals(List.of(new Hint.Priority(3))), "the other queue is untouched");
    }

    @Test
    void badHintsChangeNothing() {
        assertAnswer(400, "{\"error\":\"field 'priority' 5000 is out of range [-1000, 1000]\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":9007199254740993,\"priority\":5000}"));
        assertAnswer(400, "{\"error\":\"field 'handle' is missing or 0; the XQueue's handle is expected (GET /xqueues lists them)\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"priority\":1}"));
        assertAnswer(400, "{\"error\":\"field 'handle' is the string \\\"0x20000000000001\\\"; an unsigned 64-bit integer is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":\"0x20000000000001\",\"priority\":1}"));
        assertAnswer(400, "{\"error\":\"field 'handle' 18446744073709551616 is out of range [0, 18446744073709551615]\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":18446744073709551616,\"priority\":1}"));
        assertAnswer(400, "{\"error\":\"field 'priority' 1.5 is not a whole number; an integer in [-1000, 1000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":9007199254740993,\"priority\":1.5}"));
        // whole, but not written as an integer: refused by the text sent, not taken as 1000 or 2
        assertAnswer(400, "{\"error\":\"field 'priority' 1e3 is not written as an integer (digits only, without a fraction or an "
                        + "exponent: 1000); an integer in [-1000, 1000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":9007199254740993,\"priority\":1e3}"));
        assertAnswer(400, "{\"error\":\"field 'priority' 2.0 is not written as an integer (digits only, without a fraction or an "
                        + "exponent: 2); an integer in [-1000, 1000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":9007199254740993,\"priority\":2.0}"));
        assertAnswer(400, "{\"error\":\"field 'handle' 9.007199254740993E15 is not written as an integer (digits only, without a "
                        + "fraction or an exponent: 9007199254740993); an unsigned 64-bit integer is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":9.007199254740993E15,\"priority\":1}"));
        assertAnswer(400, "{\"error\":\"field 'priority' 1e999999999 is out of range; an integer in [-1000, 1000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":9007199254740993,\"priority\":1e999999999}"));
        assertAnswer(400, "{\"error\":\"field 'hint_type' is missing; allowed: 1 (priority: handle, priority), 2 (utilization: handle or pid, "
                + "utilization), 3 (timeslice: timeslice in us, optional handle), 7 (window active: pid, display)\"}", call("POST", "/hint", "{}"));
        assertAnswer(400, "{\"error\":\"hint_type 4 (deadline) has no equivalent on this route; allowed: 1 (priority: handle, priority), "
                + "2 (utilization: handle or pid, utilization), 3 (timeslice: timeslice in us, optional handle), 7 (window active: pid, display); "
                + "XQ's own hints (deadline, laxity, ...): POST /api/v1/hint\"}",
                call("POST", "/hint", "{\"hint_type\":4,\"handle\":1}"));
        assertAnswer(400, "{\"error\":\"malformed JSON at offset 13: the text ends where a value was expected\"}",
                call("POST", "/hint", "{\"hint_type\":"));
        assertAnswer(400, "{\"error\":\"the request body is JSON but not an object; a JSON object is expected\"}", call("POST", "/hint", "[1]"));
        assertAnswer(400, "{\"error\":\"field 'utilization' 0 is out of range [1, 100]\"}",
                call("POST", "/hint", "{\"hint_type\":2,\"pid\":4242,\"utilization\":0}"));
        assertAnswer(404, "{\"error\":\"no XQueue with handle 0x5; open: 0x20000000000001, 0xfedcba9876543210\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":5,\"priority\":1}"));
        assertTrue(big.hints().isEmpty() && huge.hints().isEmpty());
    }

    /** Each field's refusal names the value and the hint's own range, not the range of the Java type it is read into. */
    @Test
    void hintFieldsAreRefusedWithTheirHintsRangeNotTheJavaTypes() {
        String types = "1 (priority: handle, priority), 2 (utilization: handle or pid, utilization), 3 (timeslice: timeslice in us, "
                + "optional handle), 7 (window active: pid, display)";
        assertAnswer(400, "{\"error\":\"field 'priority' 3000000000 is out of range [-1000, 1000]\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":" + BIG + ",\"priority\":3000000000}"));
        assertAnswer(400, "{\"error\":\"field 'priority' -1001 is out of range [-1000, 1000]\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":" + BIG + ",\"priority\":-1001}"));
        assertAnswer(400, "{\"error\":\"field 'priority' is missing; an integer in [-1000, 1000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":1,\"handle\":" + BIG + "}"));
        assertAnswer(400, "{\"error\":\"field 'display' -1 is out of range [0, 1000000]\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242,\"display\":-1}"));
        assertAnswer(400, "{\"error\":\"field 'display' 2000000 is out of range [0, 1000000]\"}",
                call("POST", "/hint", "{\"hint_type\":7,\"pid\":4242,\"display\":2000000}"));
        assertAnswer(400, "{\"error\":\"field 'timeslice' 2.5 is not a whole number; an integer in [100, 10000000] is expected\"}",
                call("POST", "/hint", "{\"hint_type\":3,\"timeslice\":2.5}"));
        assertAnswer(400, "{\"error\":\"field 'timeslice' 99 is out of range [100, 10000000]\"}",
                call("POST", "/hint", "{\"hint_type\":3,\"timeslice\":99}"));
        assertAnswer(400, "{\"error\":\"field 'utilization' 101 is out of range [1, 100]\"}",
                call("POST", "/hint", "{\"hint_type\":2,\"handle\":" + BIG + ",\"utilization\":101}"));
        assertAnswer(400, "{\"error\":\"field 'hint_type' is the string \\\"1\\\"; one of " + types + " is expected\"}",
                call("POST", "/hint", "{\"hint_type\":\"1\",\"handle\":" + BIG + ",\"priority\":3}"));
        assertAnswer(400, "{\"error\":\"hint_type 3000000000 is unknown; allowed: " + types + "\"}",
                call("POST", "/hint", "{\"hint_type\":3000000000,\"handle\":" + BIG + ",\"priority\":3}"));
        assertAnswer(400, "{\"error\":\"hint_type -4294967295 is unknown; allowed: " + types + "\"}",
                call("POST", "/hint", "{\"hint_type\":-4294967295,\"handle\":" + BIG + ",\"priority\":3}"));
        assertTrue(big.hints().isEmpty() && huge.hints().isEmpty(), "nothing changed: " + big.hints() + " " + huge.hints());
        // the bounds themselves are taken
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":1,\"handle\":" + BIG + ",\"priority\":-1000}"));
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":3,\"handle\":" + BIG + ",\"timeslice\":10000000}"));
        assertEquals(List.of(new Hint.Priority(-1000), new Hint.Timeslice(10_000_000)), big.hints());
    }

    /** xcli sends the one of handle and pid it does not use as 0; two non-zero ones are refused naming both, not one dropped. */
    @Test
    void utilizationByHandleAndByPidAtOnceIsRefusedNamingBoth() {
        Fakes.Queue second = xq.add(77, "serve/s1", "cuda0", "4242:serve", 4242);
        assertAnswer(400, "{\"error\":\"utilization takes a non-zero 'handle' (one XQueue) or 'pid' (every XQueue of that process), "
                        + "not both: handle " + BIG + " and pid 4242 were given; give one, the other 0 or left out\"}",
                call("POST", "/hint", "{\"hint_type\":2,\"handle\":" + BIG + ",\"pid\":4242,\"utilization\":50}"));
        assertTrue(big.hints().isEmpty() && second.hints().isEmpty(), "nothing changed");
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":2,\"handle\":77,\"pid\":0,\"utilization\":50}"));
        assertEquals(List.of(new Hint.Utilization(50)), second.hints());
        assertTrue(big.hints().isEmpty(), "only the queue named by handle");
    }

    @Test
    void utilizationByProcessAndTimesliceForAll() {
        Fakes.Queue second = xq.add(77, "serve/s1", "cuda0", "4242:serve", 4242);
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":2,\"pid\":4242,\"handle\":0,\"utilization\":40}"));
        assertEquals(List.of(new Hint.Utilization(40)), big.hints());
        assertEquals(List.of(new Hint.Utilization(40)), second.hints());
        assertTrue(huge.hints().isEmpty());
        assertAnswer(200, "{\"info\":\"success\"}", call("POST", "/hint", "{\"hint_type\":3,\"timeslice\":2000}"));
        assertTrue(huge.hints().contains(new Hint.Timeslice(2000)) && second.hints().contains(new Hint.Timeslice(2000)));
        assertAnswer(404, "{\"error\":\"no XQueue of process 999 is open\"}",
                call("POST", "/hint", "{\"hint_type\":2,\"pid\":999,\"utilization\":40}"));
        assertFalse(xq.queues().isEmpty());
    }
}
