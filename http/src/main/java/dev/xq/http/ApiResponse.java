package dev.xq.http;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * What the API answers: a status, a content type and the body text.
 *
 * @param headers extra headers (WWW-Authenticate, Allow)
 */
record ApiResponse(int status, String contentType, String body, Map<String, String> headers) {

    static final String JSON = "application/json";

    static ApiResponse json(int status, Object value) {
        return new ApiResponse(status, JSON, Json.write(value), Map.of());
    }

    static ApiResponse ok(Object value) {
        return json(200, value);
    }

    /** {@code {"error": message}}: every refusal looks like this. */
    static ApiResponse error(int status, String message) {
        return json(status, Json.object("error", message));
    }

    ApiResponse withHeader(String name, String value) {
        Map<String, String> h = new java.util.LinkedHashMap<>(headers);
        h.put(name, value);
        return new ApiResponse(status, contentType, body, Map.copyOf(h));
    }

    byte[] bytes() {
        return body.getBytes(StandardCharsets.UTF_8);
    }
}
