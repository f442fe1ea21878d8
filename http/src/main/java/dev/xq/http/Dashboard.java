package dev.xq.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The live dashboard: {@code GET /} and the script and style it loads, static files from this
 * bundle ({@code dev/xq/http/dashboard/}). They hold no data (the page reads everything from
 * {@code /api/v1} with the token the operator types), so they are served to any peer that may
 * connect, with or without a token: a browser cannot send a bearer header when it opens a page.
 * A content security policy lets the page load nothing but these files and talk to nothing but
 * this node.
 */
final class Dashboard {

    /** Path → file in the bundle and its content type. */
    static final Map<String, String[]> FILES = Map.of(
            "/", new String[] {"index.html", "text/html"},
            "/dashboard.js", new String[] {"dashboard.js", "text/javascript"},
            "/dashboard.css", new String[] {"dashboard.css", "text/css"});

    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final Map<String, String> cache = new ConcurrentHashMap<>();

    static boolean serves(String path) {
        return FILES.containsKey(path);
    }

    ApiResponse file(ApiRequest r) {
        if (!r.method().equals("GET")) {
            return ApiResponse.error(405, "method " + r.method() + " is not allowed on " + r.path() + "; allowed: GET")
                    .withHeader("Allow", "GET");
        }
        String[] f = FILES.get(r.path());
        String text = cache.computeIfAbsent(f[0], Dashboard::read);
        return new ApiResponse(200, f[1], text, Map.of())
                .withHeader("Content-Security-Policy", CSP)
                .withHeader("X-Frame-Options", "DENY")
                .withHeader("Referrer-Policy", "no-referrer");
    }

    private static String read(String name) {
        try (InputStream in = Dashboard.class.getResourceAsStream("dashboard/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the dashboard file dev/xq/http/dashboard/" + name + " is missing from the bundle");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the dashboard file " + name + " failed", e);
        }
    }
}
