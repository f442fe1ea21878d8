package dev.xq.k8s;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The mutating admission webhook (issue 43): the API server sends each pod it is about to create
 * as an {@code AdmissionReview}; the answer adds, to the containers that ask for {@value
 * PodMutator#RESOURCE}, the XQ priority that the pod's Kubernetes priority means
 * ({@link PriorityMapper}), so that a PriorityClass is a GPU priority too, with no change to the
 * pod's image or command. HTTPS only in a cluster (the API server calls webhooks over TLS): the
 * certificate and key are PEM files (a Secret mounted by the chart), read again when they change.
 *
 * <pre>java -jar xq-k8s.jar webhook --cert tls.crt --key tls.key [--port 8443] [--class NAME=N]...</pre>
 *
 * {@code POST /mutate} takes the review, {@code GET /healthz} answers {@code ok}.
 */
public final class Webhook implements AutoCloseable {

    static final String MUTATE = "/mutate";
    static final String HEALTH = "/healthz";
    /** The most bytes of a review read (the API server's requests are far smaller). */
    static final int MAX_BODY = 3 << 20;

    private final PodMutator mutator;
    private final ObjectMapper json = new ObjectMapper();
    private HttpServer server;
    private PemKeys keys;

    Webhook(PodMutator mutator) {
        this.mutator = mutator;
    }

    /**
     * Answers one review.
     *
     * @param body the {@code AdmissionReview} the API server sent
     * @return the {@code AdmissionReview} with its response
     * @throws IllegalArgumentException when the body is no review (answered 400)
     */
    byte[] review(byte[] body) throws IOException {
        JsonNode in;
        try {
            in = json.readTree(body);
        } catch (tools.jackson.core.JacksonException e) {
            throw new IllegalArgumentException("the body is not JSON: " + e.getOriginalMessage());
        }
        JsonNode rq = in == null ? null : in.get("request");
        if (rq == null || !rq.isObject() || !rq.hasNonNull("uid")) {
            throw new IllegalArgumentException("the body is not an AdmissionReview with a request and its uid");
        }
        AdmissionResponse out = new AdmissionResponse();
        out.setUid(rq.get("uid").asString());
        out.setAllowed(true);
        JsonNode kind = rq.path("kind").path("kind");
        JsonNode object = rq.get("object");
        if ("Pod".equals(kind.asString()) && "CREATE".equals(rq.path("operation").asString()) && object != null && object.isObject()) {
            Pod pod = json.treeToValue(object, Pod.class);
            try {
                List<Map<String, Object>> ops = mutator.patch(pod, rq.path("namespace").asString(""));
                if (!ops.isEmpty()) {
                    out.setPatchType("JSONPatch");
                    out.setPatch(Base64.getEncoder().encodeToString(json.writeValueAsBytes(ops)));
                }
            } catch (PriorityMapper.Refused r) {
                out.setAllowed(false);
                Status s = new StatusBuilder().withCode(400).withMessage("xq: " + r.getMessage()).build();
                out.setStatus(s);
            }
        }
        AdmissionReview review = new AdmissionReview();
        review.setApiVersion(in.path("apiVersion").asString("admission.k8s.io/v1"));
        review.setKind("AdmissionReview");
        review.setResponse(out);
        return json.writeValueAsBytes(review);
    }

    /**
     * Starts serving: over TLS with the PEM files given, or plain HTTP when both are null (a test, or
     * behind a proxy that ends TLS; the API server itself calls only HTTPS).
     *
     * @return the port
     */
    synchronized int start(String host, int port, Path cert, Path key, long reloadMillis) throws IOException {
        InetSocketAddress at = new InetSocketAddress(host, port);
        if (cert != null || key != null) {
            if (cert == null || key == null) {
                throw new IllegalArgumentException("--cert and --key go together (PEM files; the chart mounts them from a Secret)");
            }
            keys = new PemKeys(cert, key, reloadMillis);
            HttpsServer s = HttpsServer.create(at, 64);
            s.setHttpsConfigurator(new HttpsConfigurator(keys.context()));
            server = s;
        } else {
            server = HttpServer.create(at, 64);
        }
        server.createContext(MUTATE, this::mutate);
        server.createContext(HEALTH, x -> answer(x, 200, "text/plain", "ok\n".getBytes(StandardCharsets.US_ASCII)));
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        return server.getAddress().getPort();
    }

    private void mutate(HttpExchange x) throws IOException {
        if (!"POST".equals(x.getRequestMethod())) {
            answer(x, 405, "text/plain", ("POST an AdmissionReview to " + MUTATE + "\n").getBytes(StandardCharsets.UTF_8));
            return;
        }
        byte[] body;
        try (InputStream in = x.getRequestBody()) {
            body = in.readNBytes(MAX_BODY + 1);
        }
        if (body.length > MAX_BODY) {
            answer(x, 413, "text/plain", ("a review of more than " + MAX_BODY + " bytes\n").getBytes(StandardCharsets.UTF_8));
            return;
        }
        try {
            answer(x, 200, "application/json", review(body));
        } catch (IllegalArgumentException e) {
            answer(x, 400, "text/plain", (e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void answer(HttpExchange x, int code, String type, byte[] body) throws IOException {
        x.getResponseHeaders().set("Content-Type", type);
        x.sendResponseHeaders(code, body.length);
        x.getResponseBody().write(body);
        x.close();
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
        if (keys != null) {
            keys.close();
            keys = null;
        }
    }

    public static void main(String[] args) throws Exception {
        try {
            run(args);
        } catch (IllegalArgumentException e) {
            System.err.println("xq webhook: " + e.getMessage());
            System.exit(2);
        } catch (IOException e) {
            System.err.println("xq webhook: cannot serve: " + (e instanceof java.nio.file.NoSuchFileException ? "no such file: " : "")
                    + e.getMessage());
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        Map<String, Integer> classes = new LinkedHashMap<>();
        Path cert = null;
        Path key = null;
        int port = 8443;
        String host = "0.0.0.0";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--cert" -> cert = Path.of(need(a, v));
                case "--key" -> key = Path.of(need(a, v));
                case "--host" -> host = need(a, v);
                case "--port" -> port = number(a, need(a, v), 0, 65535);
                case "--class" -> {
                    String c = need(a, v);
                    int eq = c.indexOf('=');
                    if (eq <= 0) {
                        throw usage("--class '" + c + "': give NAME=N (N an XQ priority in [-1000, 1000])");
                    }
                    classes.put(c.substring(0, eq), number(a + " " + c.substring(0, eq), c.substring(eq + 1), -1000, 1000));
                }
                case "--help", "-h" -> {
                    System.out.println(USAGE);
                    return;
                }
                default -> throw usage("unknown option '" + a + "'");
            }
            if (!a.equals("--help")) {
                i++;
            }
        }
        if (cert == null || key == null) {
            throw usage("--cert and --key are needed (PEM; the API server calls webhooks over HTTPS only)");
        }
        Webhook w = new Webhook(new PodMutator(new PriorityMapper(classes)));
        int p = w.start(host, port, cert, key, PemKeys.RELOAD_MS);
        System.out.println("xq webhook: serving " + MUTATE + " and " + HEALTH + " on " + host + ":" + p + " (HTTPS; classes " + classes + ")");
        Thread.currentThread().join();
    }

    static final String USAGE = "usage: java -jar xq-k8s.jar webhook --cert tls.crt --key tls.key [--host 0.0.0.0] [--port 8443] "
            + "[--class PRIORITYCLASS=N]...";

    private static String need(String option, String value) {
        if (value == null) {
            throw usage(option + " needs a value");
        }
        return value;
    }

    private static int number(String what, String text, int min, int max) {
        try {
            int n = Integer.parseInt(text.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // said below
        }
        throw usage(what + " '" + text + "' is not an integer in [" + min + ", " + max + "]");
    }

    private static IllegalArgumentException usage(String why) {
        return new IllegalArgumentException(why + "\n" + USAGE);
    }
}
