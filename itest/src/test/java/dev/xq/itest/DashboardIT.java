package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;
import javax.inject.Inject;
import org.junit.After;
import org.junit.Assume;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The dashboard ({@code GET /}) in a real browser: Debian's headless Chromium, driven by
 * Selenium through Debian's chromedriver, against this framework's HTTP API. The page shows a
 * queue of the node in its table, on its chart and on the timeline of who holds the device (held
 * by its owner for a moment), selects a policy (the node's scheduler
 * changes), sets a hint (the queue has it), shows the node's words for a bad hint, and works
 * with a token once one is typed. One browser session for all of it.
 *
 * <p>Chromium and chromedriver: {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver}
 * (system properties {@code xq.chromium}, {@code xq.chromedriver} for others); {@code ./xq test}
 * and {@code .ci/run} install them where they can. Without them this test fails under
 * {@code CI=true} and is skipped elsewhere, saying why.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class DashboardIT {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Inject
    BundleContext ctx;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    ConfigurationAdmin cm;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final AtomicBoolean working = new AtomicBoolean(true);
    private XQueue queue;
    private Thread load;
    private WebDriver browser;
    private Path profile;

    @Configuration
    public Option[] config() {
        return XqNode.withSelenium();
    }

    @Before
    public void queueAndBrowser() throws Exception {
        String chromium = System.getProperty("xq.chromium", "/usr/bin/chromium");
        String driver = System.getProperty("xq.chromedriver", "/usr/bin/chromedriver");
        List<String> missing = Stream.of(chromium, driver).filter(p -> !Files.isExecutable(Path.of(p))).toList();
        if (!missing.isEmpty()) {
            String why = "DashboardIT needs Chromium and chromedriver: " + String.join(" and ", missing) + " missing. On Debian: "
                    + "apt-get install -y chromium chromium-driver (./xq test and .ci/run do it when they run as root)";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why);
            }
            System.err.println("SKIPPED: " + why);
            Assume.assumeTrue(why, false);
        }

        queue = xq.create(QueueOptions.on("sim0").named("dash-fg").inGroup("tenant-d").with(new Hint.Priority(1)));
        // commands completing all along, so that the chart has something to draw
        load = Thread.ofPlatform().name("dashboard-load").daemon().start(() -> {
            while (working.get()) {
                try {
                    queue.submit(Command.spin(300)).await();
                    Thread.sleep(2);
                } catch (Exception closed) {
                    return;
                }
            }
        });

        profile = Files.createTempDirectory("xq-chromium");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(driver)).usingAnyFreePort()
                .build();
        try {
            browser = new ChromeDriver(service, options);
        } catch (WebDriverException e) {
            throw new AssertionError("Chromium (" + chromium + ") did not start under " + driver + ": " + e.getMessage(), e);
        }
        browser.manage().timeouts().pageLoadTimeout(WAIT).scriptTimeout(WAIT);
    }

    @After
    public void cleanUp() throws Exception {
        working.set(false);
        if (browser != null) {
            browser.quit();
        }
        if (load != null) {
            load.join(5_000);
        }
        if (queue != null) {
            queue.close();
        }
        org.osgi.service.cm.Configuration c = cm.getConfiguration("dev.xq.http", "?");
        if (c.getProperties() != null) {
            c.delete();
        }
        scheduler.selectPolicy("hpf");
        if (profile != null) {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    public void theDashboardShowsTheNodeAndChangesIt() throws Exception {
        String base = base();
        String handle = Long.toUnsignedString(queue.handle());
        browser.get(base + "/");
        assertEquals("XQ node", browser.getTitle());

        // the queue table, as xq:top shows it, refreshed from /api/v1
        waitFor("the queue dash-fg in the table", () -> cell("dash-fg", 1).equals("dash-fg"));
        assertEquals(handle, cell("dash-fg", 0));
        assertEquals("sim0", cell("dash-fg", 2));
        assertEquals("tenant-d", cell("dash-fg", 3));
        assertEquals("priority=1", cell("dash-fg", 17));
        assertEquals("LAG: a queue of the node's own times none", "", cell("dash-fg", 15));
        assertEquals("WIDTH: a queue of the node's own tells none", "", cell("dash-fg", 14));
        assertEquals("SM%: a queue of the node's own has the whole device", "100", cell("dash-fg", 13));
        List<String> columns = browser.findElements(By.cssSelector("#queues thead th")).stream().map(WebElement::getText).toList();
        assertEquals(List.of("HANDLE", "NAME", "DEVICE", "GROUP", "STATE", "LV", "PEND", "FLIGHT", "DONE", "FAIL", "CANCEL",
                "EST_US", "RUN_MS", "SM%", "WIDTH", "LAG", "LIMITS", "HINTS"), columns);
        waitFor("xq:top's first line", () -> text("head").startsWith("policy hpf (selected hpf)  decisions "));
        long done = Long.parseLong(cell("dash-fg", 8));
        waitFor("DONE rising with the commands that complete", () -> Long.parseLong(cell("dash-fg", 8)) > done);
        waitFor("points on the latency chart", () -> Integer.parseInt(attr("chart", "data-points", "0")) >= 2);

        // who holds the device: the queue's row filled while it runs, grey while its owner holds it
        waitFor("the queue's row on the holders' timeline", () -> Integer.parseInt(attr("holders", "data-rows", "0")) >= 1);
        waitFor("seconds in which it ran", () -> Integer.parseInt(attr("holders", "data-running", "0")) >= 2);
        assertEquals("no hold yet", "0", attr("holders", "data-held", ""));
        queue.suspend();
        try {
            waitFor("a held second, grey", () -> Integer.parseInt(attr("holders", "data-held", "0")) >= 1);
        } finally {
            queue.resume();
        }

        // the policy selector: the node's scheduler changes
        waitFor("edf among the policies", () -> browser.findElements(By.cssSelector("#policy option[value='edf']")).size() == 1);
        new Select(browser.findElement(By.id("policy"))).selectByValue("edf");
        browser.findElement(By.id("policy-select")).click();
        waitFor("the node's selected policy edf", () -> scheduler.selectedPolicy().equals("edf"));
        waitFor("the page saying so", () -> text("policy-result").equals("selected: edf (decides from the next scheduling event)"));
        waitFor("the head line with edf", () -> text("head").contains("(selected edf)"));

        // a hint from the page
        hint(handle, "priority", "5");
        waitFor("the queue's new priority", () -> queue.hints().contains(new Hint.Priority(5)));
        waitFor("the page saying so", () -> text("hint-result").equals("queue " + handle + ": priority=5"));
        waitFor("the table showing it", () -> cell("dash-fg", 17).equals("priority=5"));

        String shot = System.getProperty("xq.itest.screenshot");   // a picture of the page, for a person to look at
        if (shot != null) {
            Files.write(Path.of(shot), ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(org.openqa.selenium.OutputType.BYTES));
        }

        // a bad hint: the node's own words on the page, and nothing changed
        String refusal = refusal(base, "{\"queue\":\"" + handle + "\",\"kind\":\"priority\",\"values\":[\"lots\"]}");
        hint(handle, "priority", "lots");
        waitFor("the node's refusal on the page", () -> text("hint-result").equals(refusal)
                && attr("hint-result", "class", "").equals("err"));
        assertEquals(List.of(new Hint.Priority(5)), queue.hints());
        String tooMany = refusal(base, "{\"queue\":\"" + handle + "\",\"kind\":\"deadline\",\"values\":[\"5000\",\"1\"]}");
        hint(handle, "deadline", "5000 1");
        waitFor("the node's refusal of two deadline values", () -> text("hint-result").equals(tooMany));
        assertEquals(List.of(new Hint.Priority(5)), queue.hints());

        // a token: the page loads, says it needs one, and works once it is typed
        String token = "dashboard-token-0123456789";
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("port", 0);
        props.put("token", token);
        props.put("tokenOnLoopback", true);
        cm.getConfiguration("dev.xq.http", "?").update(props);
        AtomicReference<String> guarded = new AtomicReference<>();
        assertTrue("the API restarts with the token", XqNode.eventually(20_000, () -> {
            String e = XqNode.httpEndpoint(ctx);
            try {
                if (e != null && get(e + "/api/v1/queues", null).statusCode() == 401) {
                    guarded.set(e);
                    return true;
                }
            } catch (IOException | InterruptedException notYet) {
                // the old server is going, the new one not there yet
            }
            return false;
        }));
        browser.get(guarded.get() + "/");
        waitFor("the page asking for the token", () -> browser.findElement(By.id("problem")).isDisplayed()
                && text("problem").equals("this node requires 'Authorization: Bearer <token>' from loopback too (tokenOnLoopback)"
                        + " (type the node's token at the top)"));
        browser.findElement(By.id("token")).sendKeys(token);
        browser.findElement(By.id("token-use")).click();
        waitFor("the queue table with the token", () -> cell("dash-fg", 1).equals("dash-fg"));
        waitFor("no problem shown", () -> !browser.findElement(By.id("problem")).isDisplayed());
        assertEquals(token, ((JavascriptExecutor) browser).executeScript("return sessionStorage.getItem('xq.token')"));
        new Select(browser.findElement(By.id("policy"))).selectByValue("hpf");
        browser.findElement(By.id("policy-select")).click();
        waitFor("the node's selected policy hpf, through the token", () -> scheduler.selectedPolicy().equals("hpf"));
    }

    // ------------------------------------------------------------------ helpers

    private String base() throws Exception {
        AtomicReference<String> url = new AtomicReference<>();
        assertTrue("the HTTP API's runtime appears", XqNode.eventually(20_000, () -> {
            url.set(XqNode.httpEndpoint(ctx));
            return url.get() != null;
        }));
        return url.get();
    }

    private void hint(String handle, String kind, String values) {
        new Select(browser.findElement(By.id("hint-queue"))).selectByValue(handle);
        new Select(browser.findElement(By.id("hint-kind"))).selectByVisibleText(kind);
        WebElement v = browser.findElement(By.id("hint-values"));
        v.clear();
        v.sendKeys(values);
        browser.findElement(By.id("hint-set")).click();
    }

    /** @return the {@code error} text the node answers to this hint, asked directly */
    private String refusal(String base, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/api/v1/hint"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(r.body(), 400, r.statusCode());
        assertTrue(r.body(), r.body().startsWith("{\"error\":\"") && r.body().endsWith("\"}") && !r.body().contains("\\"));
        return r.body().substring("{\"error\":\"".length(), r.body().length() - 2);
    }

    private HttpResponse<String> get(String url, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** @return the text of column {@code column} of the row of the queue named {@code name}, or "" */
    private String cell(String name, int column) {
        return fresh(() -> {
            List<WebElement> cells = browser.findElements(By.cssSelector("#queues tbody tr[data-name='" + name + "'] td"));
            return cells.size() > column ? cells.get(column).getText() : "";
        });
    }

    private String text(String id) {
        return fresh(() -> browser.findElement(By.id(id)).getText());
    }

    /**
     * Reads the page again where the dashboard replaced what was found between the find and the
     * read (it redraws its tables every refresh: a stale element failed CI once).
     */
    private static String fresh(java.util.function.Supplier<String> read) {
        for (int i = 0; ; i++) {
            try {
                return read.get();
            } catch (org.openqa.selenium.StaleElementReferenceException e) {
                if (i >= 20) {
                    throw e;
                }
            }
        }
    }

    private String attr(String id, String name, String otherwise) {
        String v = fresh(() -> browser.findElement(By.id(id)).getDomAttribute(name));
        return v == null ? otherwise : v;
    }

    /** Waits for {@code condition} (elements replaced under a refresh count as "not yet"); fails saying what the page shows. */
    private void waitFor(String what, Supplier<Boolean> condition) throws InterruptedException {
        boolean held = XqNode.eventually(WAIT.toMillis(), () -> {
            try {
                return condition.get();
            } catch (WebDriverException | NumberFormatException notYet) {
                return false;
            }
        });
        if (!held) {
            String shown;
            try {
                shown = "problem: '" + text("problem") + "', head: '" + text("head") + "', policy: '" + text("policy-result")
                        + "', hint: '" + text("hint-result") + "', table:\n" + browser.findElement(By.id("queues")).getText();
            } catch (WebDriverException e) {
                shown = "(the page could not be read: " + e.getMessage() + ")";
            }
            fail("the dashboard did not show " + what + " within " + WAIT.toSeconds() + " s; it shows " + shown);
        }
    }
}
