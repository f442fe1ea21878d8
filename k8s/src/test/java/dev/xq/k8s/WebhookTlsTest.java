package dev.xq.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The webhook served over TLS as a cluster runs it: a certificate and key made by {@code openssl}
 * (as cert-manager or the chart's hook would make them), a client that trusts only that
 * certificate, a review answered; the pair renewed on disk and served without a restart.
 */
class WebhookTlsTest {

    @TempDir
    Path dir;
    private Webhook hook;

    @AfterEach
    void stop() {
        if (hook != null) {
            hook.close();
        }
    }

    private void pair(String cn) throws Exception {
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", dir.resolve("tls.key").toString(), "-out", dir.resolve("tls.crt").toString(), "-days", "2", "-subj",
                "/CN=" + cn, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
    }

    private HttpClient trusting() throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(dir.resolve("tls.crt"))) {
            ks.setCertificateEntry("webhook", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ctx).connectTimeout(Duration.ofSeconds(5)).build();
    }

    private static boolean haveOpenssl() {
        try {
            return new ProcessBuilder("openssl", "version").start().waitFor() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void aReviewOverTlsAndACertificateRenewedWithoutARestart() throws Exception {
        Assumptions.assumeTrue(haveOpenssl(), "openssl is not here to make a certificate");
        pair("xq-webhook.xq.svc");
        hook = new Webhook(new PodMutator(new PriorityMapper(Map.of())));
        int port = hook.start("127.0.0.1", 0, dir.resolve("tls.crt"), dir.resolve("tls.key"), 100);
        HttpClient client = trusting();
        byte[] review;
        try (InputStream in = getClass().getResourceAsStream("/review-pod.json")) {
            review = in.readAllBytes();
        }
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + Webhook.MUTATE))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(review)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"allowed\":true") && r.body().contains("\"patchType\":\"JSONPatch\""), r.body());
        HttpResponse<String> h = client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + Webhook.HEALTH)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals("ok\n", h.body());
        HttpResponse<String> get = client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + Webhook.MUTATE)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(405, get.statusCode());
        HttpResponse<String> junk = client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + Webhook.MUTATE))
                .POST(HttpRequest.BodyPublishers.ofString("[]")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(400, junk.statusCode());
        assertEquals("the body is not an AdmissionReview with a request and its uid\n", junk.body());

        // renewed on disk (as cert-manager rotates a Secret): served by the running webhook
        Thread.sleep(1100); // a later modification time than the first pair's on coarse file systems
        pair("renewed.xq.svc");
        long until = System.nanoTime() + 10_000_000_000L;
        while (!hookServes("CN=renewed.xq.svc") && System.nanoTime() < until) {
            Thread.sleep(50);
        }
        assertTrue(hookServes("CN=renewed.xq.svc"), "the renewed certificate is served");
        HttpResponse<String> again = trusting().send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + Webhook.HEALTH))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, again.statusCode(), "a client that trusts only the renewed certificate is answered");
    }

    private boolean hookServes(String subject) throws Exception {
        java.lang.reflect.Field f = Webhook.class.getDeclaredField("keys");
        f.setAccessible(true);
        PemKeys k = (PemKeys) f.get(hook);
        return k.served().getSubjectX500Principal().getName().equals(subject);
    }

    @Test
    void aKeyThatIsNotPkcs8IsRefusedWithWhatToDo() {
        GeneralSecurityException e = assertThrows(GeneralSecurityException.class,
                () -> PemKeys.privateKey("-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n"));
        assertTrue(e.getMessage().contains("PKCS8") && e.getMessage().contains("openssl pkcs8 -topk8 -nocrypt"), e.getMessage());
    }

    @Test
    void aHalfConfiguredServerIsRefused() {
        Webhook w = new Webhook(new PodMutator(new PriorityMapper(Map.of())));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> w.start("127.0.0.1", 0, dir.resolve("tls.crt"), null, 100));
        assertTrue(e.getMessage().startsWith("--cert and --key go together"), e.getMessage());
    }
}
