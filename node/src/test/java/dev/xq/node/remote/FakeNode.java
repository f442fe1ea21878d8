package dev.xq.node.remote;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A stand-in for a node's HTTP API on a free loopback port: canned answers per "METHOD PATH", requests recorded. */
final class FakeNode implements AutoCloseable {

    record Answer(int status, String contentType, String body) {
    }

    record Seen(String method, String path, String authorization, String body) {
    }

    private final HttpServer server;
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    final List<Seen> seen = new CopyOnWriteArrayList<>();

    FakeNode() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String key = ex.getRequestMethod() + " " + ex.getRequestURI().getPath();
            seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().getPath(), ex.getRequestHeaders().getFirst("Authorization"), body));
            Answer a = answers.getOrDefault(key, new Answer(404, "application/json", "{\"error\":\"no route " + key + "\"}"));
            byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", a.contentType());
            ex.sendResponseHeaders(a.status(), out.length == 0 ? -1 : out.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(out);
            }
        });
        server.start();
    }

    FakeNode answer(String methodAndPath, int status, String json) {
        answers.put(methodAndPath, new Answer(status, "application/json", json));
        return this;
    }

    FakeNode answer(String methodAndPath, int status, String contentType, String body) {
        answers.put(methodAndPath, new Answer(status, contentType, body));
        return this;
    }

    String address() {
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
