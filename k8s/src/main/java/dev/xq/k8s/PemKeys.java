package dev.xq.k8s;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509KeyManager;

/**
 * The webhook's certificate and key, from PEM files (a {@code kubernetes.io/tls} Secret: {@code
 * tls.crt}, the chain; {@code tls.key}, PKCS#8, as cert-manager writes it with {@code
 * privateKey.encoding: PKCS8} and {@code openssl} 3 by default), read again when either file
 * changes, so that a renewed certificate is served without a restart. One {@link SSLContext}
 * whose key manager hands out the current pair.
 */
final class PemKeys implements AutoCloseable {

    /** How often the files are looked at. */
    static final long RELOAD_MS = 30_000;

    private final Path cert;
    private final Path key;
    private volatile X509KeyManager current;
    private volatile FileTime[] seen;
    private final SSLContext context;
    private final ScheduledExecutorService watch;

    PemKeys(Path cert, Path key, long reloadMillis) throws IOException {
        this.cert = cert;
        this.key = key;
        try {
            load();
            context = SSLContext.getInstance("TLS");
            context.init(new javax.net.ssl.KeyManager[] {new Current()}, null, null);
        } catch (GeneralSecurityException e) {
            throw new IOException(cert + ", " + key + ": " + e.getMessage(), e);
        }
        watch = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "xq-webhook-certs");
            t.setDaemon(true);
            return t;
        });
        watch.scheduleWithFixedDelay(this::reloadIfChanged, reloadMillis, reloadMillis, TimeUnit.MILLISECONDS);
    }

    SSLContext context() {
        return context;
    }

    /** @return the certificate served now (tests) */
    X509Certificate served() {
        return current.getCertificateChain("xq")[0];
    }

    private void reloadIfChanged() {
        try {
            FileTime[] now = {Files.getLastModifiedTime(cert), Files.getLastModifiedTime(key)};
            FileTime[] was = seen;
            if (was != null && now[0].equals(was[0]) && now[1].equals(was[1])) {
                return;
            }
            load();
            System.out.println("xq webhook: certificate reloaded from " + cert + " (subject " + served().getSubjectX500Principal()
                    + ", valid until " + served().getNotAfter() + ")");
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            // a renewal caught half-written: the pair in use stays, and the next look tries again
            System.err.println("xq webhook: " + cert + " / " + key + " not reloaded (" + e.getMessage() + "); serving the previous pair");
        }
    }

    private void load() throws IOException, GeneralSecurityException {
        FileTime[] times = {Files.getLastModifiedTime(cert), Files.getLastModifiedTime(key)};
        Certificate[] chain = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(Files.readAllBytes(cert)))
                .toArray(Certificate[]::new);
        if (chain.length == 0) {
            throw new GeneralSecurityException(cert + " holds no certificate (PEM, BEGIN CERTIFICATE)");
        }
        PrivateKey pk = privateKey(Files.readString(key, StandardCharsets.US_ASCII));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("xq", pk, new char[0], chain);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        current = (X509KeyManager) kmf.getKeyManagers()[0];
        seen = times;
    }

    /** A PKCS#8 private key ({@code BEGIN PRIVATE KEY}), RSA or EC. */
    static PrivateKey privateKey(String pem) throws GeneralSecurityException {
        String begin = "-----BEGIN PRIVATE KEY-----";
        int b = pem.indexOf(begin);
        int e = pem.indexOf("-----END PRIVATE KEY-----");
        if (b < 0 || e < b) {
            throw new GeneralSecurityException("the key is not PKCS#8 PEM (BEGIN PRIVATE KEY)"
                    + (pem.contains("BEGIN RSA PRIVATE KEY") || pem.contains("BEGIN EC PRIVATE KEY")
                            ? "; it is PKCS#1/SEC1: have cert-manager write PKCS8 (privateKey.encoding: PKCS8) or convert it with "
                                    + "'openssl pkcs8 -topk8 -nocrypt'"
                            : ""));
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(b + begin.length(), e));
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        GeneralSecurityException last = null;
        for (String alg : new String[] {"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(spec);
            } catch (GeneralSecurityException x) {
                last = x;
            }
        }
        throw new GeneralSecurityException("the PKCS#8 key is neither RSA, EC nor Ed25519: " + last.getMessage());
    }

    @Override
    public void close() {
        watch.shutdownNow();
    }

    /** Hands out whichever pair is current. */
    private final class Current extends X509ExtendedKeyManager {
        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return current.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return current.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return current.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            X509KeyManager k = current;
            return k instanceof X509ExtendedKeyManager x ? x.chooseEngineServerAlias(keyType, issuers, engine)
                    : k.chooseServerAlias(keyType, issuers, null);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return current.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return current.getPrivateKey(alias);
        }
    }
}
