package dev.xq.http;

/** Settings for tests. */
final class Securities {
    static final String TOKEN = "0123456789abcdef-token";

    private Securities() {
    }

    static HttpSettings loopback() {
        return new HttpSettings(true, 0, "127.0.0.1", true, "", false, 4096, java.util.List.of("xq-node.example"));
    }

    static HttpSettings withToken(boolean onLoopback) {
        return new HttpSettings(true, 0, "0.0.0.0", false, TOKEN, onLoopback, 4096, java.util.List.of());
    }
}
