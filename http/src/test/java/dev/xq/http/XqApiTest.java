package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.runtime.log.RuntimeLog;
import dev.xq.runtime.shell.XqCommands;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** XQ's own API under /api/v1: the shell's views and actions as JSON, through the shell's code path. */
class XqApiTest {

    Fakes.Service xq;
    Fakes.Scheduler scheduler;
    Fakes.Queue fg;
    Fakes.Queue bg;
    Api api;
    XqCommands shell;

    @BeforeEach
    void node() {
        xq = new Fakes.Service();
        scheduler = new Fakes.Scheduler("hpf", "edf", "native");
        fg = xq.add(1, "fg", "sim0", "tenant-a", 0);
        bg = xq.add(2, "bg", "sim0", "tenant-b", 0);
        fg.hint(new Hint.Priority(2));
        fg.submitted = 10;
        fg.completed = 7;
        fg.pending = 2;
        fg.inFlight = 1;
        fg.runMicros = 1500;
        api = new Api(xq, scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        shell = new XqCommands(xq, scheduler);
    }

    ApiResponse post(String path, String body) {
        return api.handle(ApiRequest.of("POST", path, body));
    }

    @Test
    void queueShowsNamesGroupsStatesHintsCountsAndTimings() {
        ApiResponse r = api.handle(ApiRequest.of("GET", "/api/v1/queues/fg"));
        assertEquals(200, r.status(), r.body());
        assertEquals("{\"queue\":{\"handle\":1,\"name\":\"fg\",\"device\":\"sim0\",\"group\":\"tenant-a\",\"pid\":" + Processes.NODE_PID
                + ",\"state\":\"IDLE\",\"suspended_by_scheduler\":false,\"suspended_by_app\":false,\"level\":3,\"available_level\":3,"
                + "\"config\":{\"level\":3,\"threshold\":16,\"batch\":8,\"window\":300},\"pending\":2,\"in_flight\":1,\"submitted\":10,"
                + "\"completed\":7,\"failed\":0,\"cancelled\":0,\"estimated_command_us\":250,\"limits\":\"configured\",\"sm_share_percent\":100,"
                + "\"device_lags\":0,\"slow_device_lags\":0,\"width_sms\":0,\"stretch_width_sms\":0,\"device_sms\":0,\"run_us\":1500,"
                + "\"hints\":[{\"kind\":\"priority\",\"values\":[2],\"text\":\"priority=2\"}],\"error\":\"\"}}", r.body());
        String all = api.handle(ApiRequest.of("GET", "/api/v1/queues")).body();
        assertTrue(all.startsWith("{\"queues\":[{\"handle\":1,") && all.contains("{\"handle\":2,\"name\":\"bg\""), all);
        assertEquals(api.handle(ApiRequest.of("GET", "/api/v1/queues/1")).body(), r.body(), "by handle as by name");
    }

    @Test
    void aQueueSharingItsDeviceInSpaceSaysItsShareOfTheMultiprocessors() {
        bg.smSharePercent = 50;
        assertTrue(api.handle(ApiRequest.of("GET", "/api/v1/queues/bg")).body().contains("\"sm_share_percent\":50,"));
        String all = api.handle(ApiRequest.of("GET", "/api/v1/queues")).body();
        assertTrue(all.contains("\"sm_share_percent\":100,") && all.contains("\"sm_share_percent\":50,"), all);
    }

    @Test
    void aQueueWhoseProcessTimesItsDeviceLagSaysHowManyBusyPeriodsReadSlow() {
        bg.deviceLags = 40;
        bg.slowDeviceLags = 3;
        assertTrue(api.handle(ApiRequest.of("GET", "/api/v1/queues/bg")).body().contains("\"device_lags\":40,\"slow_device_lags\":3,"));
        assertTrue(api.handle(ApiRequest.of("GET", "/api/v1/queues/fg")).body().contains("\"device_lags\":0,\"slow_device_lags\":0,"));
    }

    @Test
    void hintGoesThroughTheShellsCodePath() {
        ApiResponse ok = post("/api/v1/hint", "{\"queue\":\"bg\",\"kind\":\"laxity\",\"values\":[1000,1,5]}");
        assertEquals(200, ok.status(), ok.body());
        assertEquals(List.of(new Hint.Laxity(1000, 1, 5)), bg.hints());
        assertTrue(ok.body().contains("\"hints\":[{\"kind\":\"laxity\",\"values\":[1000,1,5],\"text\":\"laxity=1000us/1/5\"}]"), ok.body());

        // the same bad value, refused with the shell's own words, and nothing changes
        String shellSays = assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "priority", "5000")).getMessage();
        ApiResponse bad = post("/api/v1/hint", "{\"queue\":\"fg\",\"kind\":\"priority\",\"values\":[5000]}");
        assertEquals(400, bad.status());
        assertEquals(Json.write(Json.object("error", shellSays)), bad.body());
        String kindSays = assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "speed", "1")).getMessage();
        assertEquals(Json.write(Json.object("error", kindSays)), post("/api/v1/hint", "{\"queue\":\"fg\",\"kind\":\"speed\",\"values\":[1]}").body());
        assertEquals(List.of(new Hint.Priority(2)), fg.hints());
    }

    /** A value that is no whole number, or one beyond its Java type, is named by its place, quoted, with the kind's range. */
    @Test
    void aBadHintValueIsNamedByItsPlaceWithTheKindsRange() {
        String[][] cases = {
                {"laxity", "[1000,\"x\",5]", "hint laxity values[1] 'x' is not a whole number; allowed: PRIO, a whole number in [-1000, 1000]"},
                {"window-active", "[0,9223372036854775808]", "hint window-active values[1] '9223372036854775808' is out of range; "
                        + "allowed: MARK, a whole number in [0, 9223372036854775807] (0: not active) or now"},
                {"window-active", "[0,\"\"]", "hint window-active values[1] '' is not a whole number; "
                        + "allowed: MARK, a whole number in [0, 9223372036854775807] (0: not active) or now"},
                {"priority", "[\"\"]", "hint priority value '' is not a whole number; allowed: N, a whole number in [-1000, 1000]"},
                {"priority", "[3000000000]", "hint priority value '3000000000' is out of range; allowed: N, a whole number in [-1000, 1000]"},
                {"deadline", "[\"soon\"]", "hint deadline value 'soon' is not a whole number; allowed: US, a whole number in [1, 3600000000]"},
                {"demand", "[2,1.5]", "hint demand values[1] '1.5' is not a whole number; "
                        + "allowed: BYTES, a whole number in [0, 1125899906842624], not both 0"},
                {"laxity", "[99999999999999999999,1,5]", "hint laxity values[0] '99999999999999999999' is out of range; "
                        + "allowed: US, a whole number in [0, 3600000000]"},
        };
        List<Hint> before = List.copyOf(bg.hints());
        for (String[] k : cases) {
            ApiResponse r = post("/api/v1/hint", "{\"queue\":2,\"kind\":\"" + k[0] + "\",\"values\":" + k[1] + "}");
            assertEquals(400, r.status(), k[1] + ": " + r.body());
            assertEquals(Json.write(Json.object("error", k[2])), r.body(), k[1]);
        }
        assertEquals(before, bg.hints(), "nothing changed");
        // values in range but wrong for the record keep the shell's words; "now" is still a mark
        String shellSays = assertThrows(IllegalArgumentException.class, () -> shell.hint("bg", "laxity", "1000", "5", "1")).getMessage();
        assertEquals(Json.write(Json.object("error", shellSays)), post("/api/v1/hint", "{\"queue\":2,\"kind\":\"laxity\",\"values\":[1000,5,1]}").body());
        assertEquals(200, post("/api/v1/hint", "{\"queue\":2,\"kind\":\"window-active\",\"values\":[0,\"now\"]}").status());
        assertTrue(bg.hints().stream().anyMatch(h -> h instanceof Hint.WindowActive w && w.active()), bg.hints().toString());
    }

    /** HintValues' ranges are those the records of Hint check: each bound is taken and one beyond it refused, for every kind. */
    @Test
    void hintValueRangesAreHintsOwn() {
        for (Hint.Kind k : Hint.Kind.values()) {
            List<HintValues.Value> values = HintValues.VALUES.get(k);
            assertTrue(values != null, k + " has no entry in HintValues.VALUES");
            assertEquals(k.valueNames(), values.stream().map(HintValues.Value::name).toList(), k.toString());
            for (int i = 0; i < values.size(); i++) {
                HintValues.Value v = values.get(i);
                for (long bound : new long[] {v.min(), v.max()}) {
                    String[] words = inRange(k, values, i, bound);
                    assertEquals(k, Hint.Kind.of(k.parse(words).getClass()), k + " " + String.join(" ", words));
                }
                for (java.math.BigInteger beyond : List.of(java.math.BigInteger.valueOf(v.min()).subtract(java.math.BigInteger.ONE),
                        java.math.BigInteger.valueOf(v.max()).add(java.math.BigInteger.ONE))) {
                    String[] words = inRange(k, values, i, 0);
                    words[i] = beyond.toString();
                    assertThrows(IllegalArgumentException.class, () -> k.parse(words), k + " " + String.join(" ", words));
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HintValues.parse(k.kind(), words));
                    assertTrue(e.getMessage().contains(beyond.toString()), e.getMessage());
                }
            }
        }
    }

    /** The kind's example, with value {@code i} at {@code value}, and the others where the record takes them together. */
    private static String[] inRange(Hint.Kind k, List<HintValues.Value> values, int i, long value) {
        String[] words = k.example().toArray(String[]::new);
        words[i] = Long.toString(value);
        if (k == Hint.Kind.LAXITY) { // CRITICAL_PRIO at least PRIO
            words[2] = i == 1 ? Long.toString(Hint.MAX_PRIORITY) : words[2];
            words[1] = i == 2 ? Long.toString(Hint.MIN_PRIORITY) : words[1];
        }
        if (k == Hint.Kind.DEMAND && value == 0) { // not both 0
            words[1 - i] = "1";
        }
        return words;
    }

    /** values must be an array: a scalar or an object is refused naming the field, and nothing changes. */
    @Test
    void hintValuesMustBeAnArray() {
        String expected = "not an array; an array of the hint's values is expected, e.g. [2] for priority 2 (GET /api/v1/hints lists each kind's)";
        assertEquals(Json.write(Json.object("error", "field 'values' is the number 5, " + expected)),
                post("/api/v1/hint", "{\"queue\":2,\"kind\":\"priority\",\"values\":5}").body());
        assertEquals(Json.write(Json.object("error", "field 'values' is an object, " + expected)),
                post("/api/v1/hint", "{\"queue\":2,\"kind\":\"priority\",\"values\":{\"a\":1}}").body());
        assertEquals(Json.write(Json.object("error", "field 'values' is null, " + expected)),
                post("/api/v1/hint", "{\"queue\":2,\"kind\":\"priority\",\"values\":null}").body());
        ApiResponse text = post("/api/v1/hint", "{\"queue\":2,\"kind\":\"priority\",\"values\":\"5\"}");
        assertEquals(400, text.status());
        assertEquals(Json.write(Json.object("error", "field 'values' is the string \"5\", " + expected)), text.body());
        assertTrue(bg.hints().isEmpty(), "nothing changed: " + bg.hints());
    }

    /** No route of /api/v1 takes a query parameter: one is refused by name before anything is read or changed. */
    @Test
    void v1RoutesRefuseQueryParametersByName() {
        ApiResponse policy = api.handle(ApiRequest.of("POST", "/api/v1/policy?name=edf", "{\"name\":\"native\"}"));
        assertEquals(400, policy.status());
        assertEquals("{\"error\":\"query parameter 'name' is unknown: POST /api/v1/policy takes no query parameters (its values go in "
                + "the JSON body)\"}", policy.body());
        assertEquals("hpf", scheduler.selected, "neither policy was selected");
        ApiResponse queue = api.handle(ApiRequest.of("GET", "/api/v1/queues/2?x=1"));
        assertEquals(400, queue.status());
        assertEquals("{\"error\":\"query parameter 'x' is unknown: GET /api/v1/queues/2 takes no query parameters\"}", queue.body());
        ApiResponse hint = api.handle(ApiRequest.of("POST", "/api/v1/hint?dry", "{\"queue\":2,\"kind\":\"priority\",\"values\":[7]}"));
        assertEquals("{\"error\":\"query parameter 'dry' is unknown: POST /api/v1/hint takes no query parameters (its values go in "
                + "the JSON body)\"}", hint.body());
        assertTrue(bg.hints().isEmpty(), "no hint set");
        ApiResponse suspend = api.handle(ApiRequest.of("POST", "/api/v1/suspend?queue=1", "{\"queue\":2}"));
        assertEquals(400, suspend.status());
        assertFalse(fg.suspendedByApp || bg.suspendedByApp, "nothing suspended");
        assertEquals(400, api.handle(ApiRequest.of("POST", "/api/v1/config?level=1", "{\"queue\":2,\"threshold\":4}")).status());
        assertEquals(16, bg.config.threshold(), "config unchanged");
        for (String get : List.of("/api/v1/queues?a", "/api/v1/devices?a", "/api/v1/policies?a", "/api/v1/policy?a", "/api/v1/scheduler?a",
                "/api/v1/hints?a")) {
            assertEquals(400, api.handle(ApiRequest.of("GET", get)).status(), get);
        }
        ApiResponse undecodable = api.handle(ApiRequest.of("GET", "/api/v1/queues?%zz"));
        assertEquals(400, undecodable.status());
        assertTrue(undecodable.body().startsWith("{\"error\":\"query text '%zz' is not URL-encoded correctly"), undecodable.body());
        // an empty query is none; other routes and methods keep their own answers first
        assertEquals(200, api.handle(ApiRequest.of("GET", "/api/v1/queues?")).status());
        assertEquals(404, api.handle(ApiRequest.of("GET", "/api/v1/nothing?x=1")).status());
        assertEquals(405, api.handle(ApiRequest.of("DELETE", "/api/v1/queues?x=1")).status());
        assertEquals(200, api.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":\"edf\"}")).status());
        assertEquals("edf", scheduler.selected);
    }

    /** A policy's name must be a JSON string: {"name":5} is not the policy '5'. */
    @Test
    void aPolicyNameThatIsNoStringIsRefusedNamingItsType() {
        Fakes.Scheduler numbered = new Fakes.Scheduler("hpf", "5", "true");
        Api withNumbers = new Api(xq, numbered, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        String expected = ", not a string; a policy name, a JSON string (GET /api/v1/policies lists them) is expected";
        ApiResponse five = withNumbers.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":5}"));
        assertEquals(400, five.status());
        assertEquals(Json.write(Json.object("error", "field 'name' is the number 5" + expected)), five.body());
        assertEquals(Json.write(Json.object("error", "field 'name' is the boolean true" + expected)),
                withNumbers.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":true}")).body());
        assertEquals(Json.write(Json.object("error", "field 'name' is an array" + expected)),
                withNumbers.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":[\"5\"]}")).body());
        assertEquals("hpf", numbered.selected, "nothing changed");
        assertEquals(200, withNumbers.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":\"5\"}")).status());
        assertEquals("5", numbered.selected, "the same name as a string is taken");
    }

    @Test
    void hintsListsEveryKindFromHintsOwnTable() {
        ApiResponse r = api.handle(ApiRequest.of("GET", "/api/v1/hints"));
        assertEquals(200, r.status(), r.body());
        assertTrue(r.body().startsWith("{\"hints\":[{\"kind\":\"priority\",\"values\":[\"N\"],\"example\":[\"2\"],\"usage\":\"priority N\"},"), r.body());
        for (Hint.Kind k : Hint.Kind.values()) {
            assertTrue(r.body().contains("\"usage\":\"" + k.usage() + "\""), k + " in " + r.body());
        }
        assertEquals(405, api.handle(ApiRequest.of("POST", "/api/v1/hints", "{}")).status());
    }

    @Test
    void unknownQueuesAre404WithTheShellsMessage() {
        String shellSays = assertThrows(IllegalArgumentException.class, () -> shell.suspend("nope")).getMessage();
        ApiResponse r = post("/api/v1/suspend", "{\"queue\":\"nope\"}");
        assertEquals(404, r.status());
        assertEquals(Json.write(Json.object("error", shellSays)), r.body());
        assertEquals(404, api.handle(ApiRequest.of("GET", "/api/v1/queues/nope")).status());
    }

    @Test
    void configAppliesEverySettingAtOnceOrNone() {
        ApiResponse ok = post("/api/v1/config", "{\"queue\":1,\"level\":2,\"threshold\":4,\"batch\":2,\"window\":0}");
        assertEquals(200, ok.status(), ok.body());
        assertEquals(new QueueConfig(dev.xq.api.PreemptionLevel.DEACTIVATE, 4, 2, 0), fg.config);
        QueueConfig before = bg.config;
        ApiResponse bad = post("/api/v1/config", "{\"queue\":\"bg\",\"threshold\":4,\"batch\":9}");
        assertEquals("{\"error\":\"batch 9 is out of range [1, threshold=4]\"}", bad.body());
        assertEquals(before, bg.config, "the good threshold was not applied either");
        assertEquals("{\"error\":\"field 'speed' is unknown; allowed: queue, level, threshold, batch, window\"}",
                post("/api/v1/config", "{\"queue\":\"bg\",\"speed\":1}").body());
        assertEquals(before, bg.config);
    }

    @Test
    void anIntegerWrittenWithAnExponentOrAFractionIsRefusedByName() {
        QueueConfig before = fg.config;
        List<Hint> hints = List.copyOf(fg.hints());
        String[][] cases = {
                {"/api/v1/config", "{\"queue\":1,\"threshold\":1e3}", "threshold value '1e3' is not a whole number"},
                {"/api/v1/config", "{\"queue\":1,\"batch\":2.0}", "batch value '2.0' is not a whole number"},
                {"/api/v1/hint", "{\"queue\":1,\"kind\":\"priority\",\"values\":[1E1]}", "hint priority value '1E1' is not a whole number; allowed: N, a whole number in [-1000, 1000]"},
                // a handle written 1e0 is no handle: looked up as the name it is
                {"/api/v1/suspend", "{\"queue\":1e0}", "1e0"},
        };
        for (String[] k : cases) {
            ApiResponse r = post(k[0], k[1]);
            assertTrue(r.status() == 400 || r.status() == 404 && k[0].endsWith("suspend"), () -> k[1] + ": " + r.status() + " " + r.body());
            assertTrue(r.body().contains(k[2]), () -> k[1] + ": " + r.body());
        }
        assertEquals(before, fg.config, "nothing changed");
        assertEquals(hints, fg.hints(), "nothing changed");
        assertFalse(fg.suspendedByApp, "nothing changed");
    }

    @Test
    void suspendResumeAndPolicies() {
        assertEquals(200, post("/api/v1/suspend", "{\"queue\":\"bg\"}").status());
        assertTrue(bg.suspendedByApp);
        assertEquals(200, post("/api/v1/resume", "{\"queue\":2}").status());
        assertTrue(!bg.suspendedByApp);
        assertEquals("{\"selected\":\"edf\",\"active\":\"edf\"}", post("/api/v1/policy", "{\"name\":\"edf\"}").body());
        ApiResponse bad = post("/api/v1/policy", "{\"name\":\"fifo\"}");
        assertEquals("{\"error\":\"no policy 'fifo'; known: hpf, edf, native\"}", bad.body());
        assertEquals("edf", scheduler.selected);
        String list = api.handle(ApiRequest.of("GET", "/api/v1/policies")).body();
        assertTrue(list.startsWith("{\"selected\":\"edf\",\"active\":\"edf\",\"policies\":[{\"name\":\"hpf\",\"description\":\"policy hpf\","), list);
        assertEquals("{\"selected\":\"edf\",\"active\":\"edf\",\"decisions\":42,\"swaps\":3,\"watchdog_trips\":1,\"decision_p50_us\":5.5,"
                + "\"decision_p99_us\":120,\"max_decision_gap_us\":900}", api.handle(ApiRequest.of("GET", "/api/v1/scheduler")).body());
    }

    @Test
    void devicesAndDrivers() {
        String body = api.handle(ApiRequest.of("GET", "/api/v1/devices")).body();
        assertTrue(body.startsWith("{\"devices\":[{\"id\":\"sim0\",\"platform\":\"sim\",\"name\":\"simulated XPU\",\"max_level\":3,"
                + "\"engines\":1,\"memory_bytes\":17179869184,\"queues\":0}"), body);
        assertTrue(body.contains("\"drivers\":[{\"platform\":\"sim\",\"kind\":\"driver\",\"status\":\"1 device\",\"devices\":[\"sim0\"]}"), body);
    }

    @Test
    void unknownRoutesAndMethods() {
        ApiResponse r = api.handle(ApiRequest.of("GET", "/api/v1/nothing"));
        assertEquals(404, r.status());
        assertTrue(r.body().startsWith("{\"error\":\"no route GET /api/v1/nothing; routes: GET /xqueues,"), r.body());
        ApiResponse m = api.handle(ApiRequest.of("DELETE", "/api/v1/queues"));
        assertEquals(405, m.status());
        assertEquals("{\"error\":\"method DELETE is not allowed on /api/v1/queues; allowed: GET\"}", m.body());
        assertEquals("{\"error\":\"field 'queue' is missing; a queue's handle or name (GET /api/v1/queues lists them) is expected\"}",
                post("/api/v1/suspend", "{}").body());
        assertEquals("{\"error\":\"the request body is empty; a JSON object is expected\"}", post("/api/v1/resume", "").body());
    }
}
