package dev.xq.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.log.RuntimeLog;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** GET /: the dashboard's static files, served from the bundle without data and without a token. */
class DashboardTest {

    private final Api api = new Api(new Fakes.Service(), new Fakes.Scheduler("hpf"), Securities.withToken(true), RuntimeLog.NONE, Securities.SAME_USER);

    @Test
    void thePageAndItsFilesAreServedWithoutATokenUnderAStrictPolicy() {
        ApiResponse page = api.handle(ApiRequest.of("GET", "/").fromPeer(false));
        assertEquals(200, page.status(), page.body());
        assertEquals("text/html", page.contentType());
        assertEquals(Dashboard.CSP, page.headers().get("Content-Security-Policy"));
        assertEquals("DENY", page.headers().get("X-Frame-Options"));
        assertTrue(page.body().startsWith("<!doctype html>"), page.body());
        // every file the page names is one the node serves, and nothing comes from elsewhere
        Matcher m = Pattern.compile("(?:src|href)=\"([^\"]*)\"").matcher(page.body());
        int files = 0;
        while (m.find()) {
            String ref = m.group(1);
            if (ref.startsWith("data:")) {
                continue;
            }
            assertTrue(!ref.contains("//"), "the page loads " + ref + " from elsewhere");
            ApiResponse f = api.handle(ApiRequest.of("GET", "/" + ref).fromPeer(false));
            assertEquals(200, f.status(), ref + ": " + f.body());
            files++;
        }
        assertEquals(2, files, "the page loads dashboard.js and dashboard.css");
        ApiResponse js = api.handle(ApiRequest.of("GET", "/dashboard.js"));
        assertEquals("text/javascript", js.contentType());
        assertTrue(js.body().contains("'api/v1/' + path"), "the script reads the node's /api/v1");
        assertEquals("text/css", api.handle(ApiRequest.of("GET", "/dashboard.css")).contentType());
    }

    @Test
    void theDataStillNeedsTheTokenAndThePageTakesOnlyGet() {
        assertEquals(401, api.handle(ApiRequest.of("GET", "/api/v1/queues").fromPeer(false)).status());
        ApiResponse post = api.handle(ApiRequest.of("POST", "/", "x"));
        assertEquals(405, post.status());
        assertEquals("{\"error\":\"method POST is not allowed on /; allowed: GET\"}", post.body());
        assertEquals("GET", post.headers().get("Allow"));
        ApiResponse other = api.handle(ApiRequest.of("GET", "/index.html").withAuthorization("Bearer " + Securities.TOKEN));
        assertEquals(404, other.status());
        assertTrue(other.body().endsWith("GET / (the dashboard)\"}"), other.body());
    }

    @Test
    void pagesOfOtherSitesCannotUseTheApiButTheDashboardAndNonBrowsersCan() {
        Fakes.Scheduler scheduler = new Fakes.Scheduler("hpf", "edf");
        Api open = new Api(new Fakes.Service(), scheduler, Securities.loopback(), RuntimeLog.NONE, Securities.SAME_USER);
        ApiResponse csrf = open.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":\"edf\"}")
                .withOrigin("http://evil.example", "127.0.0.1:50000"));
        assertEquals(403, csrf.status());
        assertEquals("{\"error\":\"cross-origin requests are refused: Origin http://evil.example is not this node (Host "
                + "127.0.0.1:50000); use the node's own dashboard (GET /) or a client that sends no Origin\"}", csrf.body());
        assertEquals(403, open.handle(ApiRequest.of("POST", "/policy?policy=7").withOrigin("null", "127.0.0.1:50000")).status());
        assertEquals(403, open.handle(ApiRequest.of("GET", "/api/v1/queues").withOrigin("http://127.0.0.1:50001", "127.0.0.1:50000"))
                .status());
        assertEquals("hpf", scheduler.selectedPolicy());

        ApiResponse own = open.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":\"edf\"}")
                .withOrigin("http://127.0.0.1:50000", "127.0.0.1:50000"));
        assertEquals(200, own.status(), own.body());
        assertEquals("edf", scheduler.selectedPolicy());
        assertEquals(200, open.handle(ApiRequest.of("POST", "/api/v1/policy", "{\"name\":\"hpf\"}")).status());   // curl, xcli
        assertEquals("hpf", scheduler.selectedPolicy());
        assertEquals(200, open.handle(ApiRequest.of("GET", "/").withOrigin("http://evil.example", "127.0.0.1:50000")).status());
    }
}
