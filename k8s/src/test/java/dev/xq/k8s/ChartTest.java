package dev.xq.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.ObjectMapper;

/**
 * The Helm chart {@code charts/xq}, linted and rendered by Helm itself (embedded: helm-java), every
 * rendered object read into the fabric8 model of its kind (a field the model does not know fails),
 * and the facts that tie the chart to XQ's programs checked against their code: the device plugin's
 * and the webhook's options as {@link Main} and {@link Webhook} take them, the host folders the
 * device plugin names to the kubelet as the pod mounts them, the node's socket where the device
 * plugin hands it to pods, the webhook's port through Service and MutatingWebhookConfiguration, its
 * generated certificate served by the webhook to a client that trusts only the caBundle, the node's
 * .cfg keys as its bundles' Metatype documents them, and the dashboard's metrics as the node exports
 * them. No cluster: what the API server would still refuse (admission, quotas) is not checked.
 */
class ChartTest {

    static final String NS = "xq-system";
    static final String RELEASE = "xq";
    static Path repo;
    static Path chart;

    @TempDir
    Path dir;

    @BeforeAll
    static void find() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve("charts/xq"))) {
            p = p.getParent();
        }
        assertNotNull(p, "charts/xq is not above " + Path.of("").toAbsolutePath());
        repo = p;
        chart = p.resolve("charts/xq");
    }

    /** The objects of one rendering, by kind and name. */
    record Rendered(List<HasMetadata> all) {
        <T extends HasMetadata> List<T> all(Class<T> type) {
            return all.stream().filter(type::isInstance).map(type::cast).toList();
        }

        <T extends HasMetadata> T one(Class<T> type, String name) {
            List<T> m = all(type).stream().filter(o -> o.getMetadata().getName().equals(name)).toList();
            assertEquals(1, m.size(), "one " + type.getSimpleName() + " " + name + " in " + names());
            return m.getFirst();
        }

        List<String> names() {
            return all.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList();
        }
    }

    static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of("ServiceAccount", ServiceAccount.class, "Secret", Secret.class,
            "ConfigMap", ConfigMap.class, "Service", Service.class, "DaemonSet", DaemonSet.class, "Deployment", Deployment.class,
            "MutatingWebhookConfiguration", MutatingWebhookConfiguration.class);

    private final ObjectMapper json = new ObjectMapper();

    Rendered render(Path values) {
        TemplateCommand t = new Helm(chart).template().withName(RELEASE).withNamespace(NS);
        if (values != null) {
            t = t.withValuesFile(values);
        }
        return parse(t.call());
    }

    Rendered parse(String yaml) {
        List<HasMetadata> out = new ArrayList<>();
        for (Object doc : new Yaml().loadAll(yaml)) {
            if (doc == null) {
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) doc;
            String kind = (String) m.get("kind");
            HasMetadata o;
            if ("ServiceMonitor".equals(kind)) {
                assertEquals("monitoring.coreos.com/v1", m.get("apiVersion"));
                o = json.convertValue(m, GenericKubernetesResource.class);
            } else {
                Class<? extends HasMetadata> type = KINDS.get(kind);
                assertNotNull(type, "the chart renders a " + kind + ", which it should not (no RBAC: nothing of XQ calls the API server)");
                o = json.convertValue(m, type);
                List<String> unknown = new ArrayList<>();
                unknownFields(o, kind, unknown);
                assertEquals(List.of(), unknown, "fields the Kubernetes model does not know");
            }
            assertNotNull(o.getMetadata().getName(), "a name: " + m);
            assertTrue(o.getMetadata().getName().matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?") && o.getMetadata().getName().length() <= 63,
                    o.getMetadata().getName());
            out.add(o);
        }
        return new Rendered(out);
    }

    /** Fields that Jackson put into a model object's additionalProperties: not fields of its kind. */
    static void unknownFields(Object o, String path, List<String> out) {
        if (o == null) {
            return;
        }
        if (o instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                unknownFields(l.get(i), path + "[" + i + "]", out);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> unknownFields(v, path + "." + k, out));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method g : o.getClass().getMethods()) {
            if (g.getParameterCount() != 0 || !g.getName().startsWith("get") || g.getName().equals("getClass")) {
                continue;
            }
            try {
                Object v = g.invoke(o);
                if (g.getName().equals("getAdditionalProperties")) {
                    if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
                        out.add(path + ": " + extra.keySet());
                    }
                } else {
                    unknownFields(v, path + "." + g.getName().substring(3), out);
                }
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        }
    }

    static Container container(PodSpec pod, String name) {
        return pod.getContainers().stream().filter(c -> c.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name));
    }

    static Volume volume(PodSpec pod, String name) {
        return pod.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    static VolumeMount mountAt(Container c, String path) {
        return c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(path)).findFirst()
                .orElseThrow(() -> new AssertionError("container " + c.getName() + " mounts nothing at " + path));
    }

    static String env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).map(EnvVar::getValue).findFirst().orElse(null);
    }

    static int port(Container c, String name) {
        return c.getPorts().stream().filter(p -> name.equals(p.getName())).map(ContainerPort::getContainerPort).findFirst()
                .orElseThrow(() -> new AssertionError("container " + c.getName() + " has no port " + name));
    }

    /** The value after {@code option} in args (null when absent). */
    static String arg(List<String> args, String option) {
        int i = args.indexOf(option);
        return i < 0 || i + 1 >= args.size() ? null : args.get(i + 1);
    }

    static Map<String, String> cfg(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (!line.isBlank()) {
                int eq = line.indexOf('=');
                assertTrue(eq > 0, "key=value: " + line);
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return m;
    }

    /** Each PID of docs/configuration.md (generated from the bundles' Metatype) and its keys. */
    static Map<String, Set<String>> documentedKeys() throws Exception {
        Map<String, Set<String>> pids = new HashMap<>();
        Set<String> keys = null;
        for (String line : Files.readAllLines(repo.resolve("docs/configuration.md"))) {
            Matcher h = Pattern.compile("^## `([^`]+)`").matcher(line);
            Matcher k = Pattern.compile("^\\| `([^`]+)` \\|").matcher(line);
            if (h.find()) {
                keys = pids.computeIfAbsent(h.group(1), x -> new TreeSet<>());
            } else if (keys != null && k.find()) {
                keys.add(k.group(1));
            }
        }
        assertTrue(pids.containsKey("dev.xq.http") && pids.get("dev.xq.host").contains("socketPath"), "docs/configuration.md read");
        return pids;
    }

    /** What in the node's ConfigMap is no PID or key of the node's bundles. */
    static List<String> cfgProblems(ConfigMap cm) throws Exception {
        Map<String, Set<String>> doc = documentedKeys();
        List<String> bad = new ArrayList<>();
        cm.getData().forEach((file, text) -> {
            String pid = file.replaceFirst("\\.cfg$", "");
            Set<String> keys = doc.get(pid);
            if (keys == null && pid.contains("-")) {
                keys = doc.get(pid.substring(0, pid.lastIndexOf('-'))); // a factory configuration, PID-NAME.cfg
            }
            if (!file.endsWith(".cfg") || keys == null) {
                bad.add(file + ": no such PID");
                return;
            }
            for (String key : cfg(text).keySet()) {
                if (!keys.contains(key)) {
                    bad.add(pid + ": no key " + key);
                }
            }
        });
        return bad;
    }

    static X509Certificate pem(String text) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(text.getBytes(StandardCharsets.US_ASCII)));
    }

    static String data(Secret s, String key) {
        String v = s.getData().get(key);
        assertNotNull(v, s.getMetadata().getName() + " has " + key);
        return new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8);
    }

    @Test
    void lintFindsNothing() {
        LintResult r = new Helm(chart).lint().strict().call();
        assertFalse(r.isFailed(), "helm lint --strict: " + r.getMessages());
        for (String m : r.getMessages()) {
            assertFalse(m.contains("[ERROR]") || m.contains("[WARNING]"), m);
        }
    }

    @Test
    void theNodeAndTheDevicePluginShareTheHostsFoldersAsTheCodeNamesThem() throws Exception {
        Rendered r = render(null);
        DaemonSet ds = r.one(DaemonSet.class, "xq-node");
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertTrue(pod.getHostPID(), "hostPID: the node reads its processes' /proc entries by the pids their sockets carry");
        assertTrue(pod.getHostNetwork(), "hostNetwork: the probes reach the node's loopback API");
        assertEquals(ds.getSpec().getSelector().getMatchLabels(), filter(ds.getSpec().getTemplate().getMetadata().getLabels(),
                ds.getSpec().getSelector().getMatchLabels().keySet()), "the selector matches the pod's labels");

        // the device plugin: its command line as Main takes it
        Container plugin = container(pod, "device-plugin");
        List<String> cmd = plugin.getCommand();
        assertEquals("/opt/xq/.jre/bin/java", cmd.getFirst());
        assertEquals(List.of("-jar", "/opt/xq/k8s/target/xq-k8s.jar", "device-plugin"), cmd.subList(cmd.size() - 3, cmd.size()));
        List<String> args = plugin.getArgs();
        for (String a : args) {
            assertTrue(!a.startsWith("--") || Main.USAGE.contains("[" + a + " "), a + " is an option of Main's device-plugin");
        }
        List<String> parsed = new ArrayList<>(args);
        if (arg(args, "--gpus") == null) {
            parsed.addAll(List.of("--gpus", "0")); // no GPU here to find
        }
        DevicePlugin.Settings s = Main.devicePlugin(parsed.toArray(String[]::new));
        assertEquals(8, s.replicas());
        assertEquals("xq.sock", s.endpoint());
        assertEquals(Path.of("/dev"), s.devDir());

        // the kubelet's folder: mounted where the plugin serves and finds kubelet.sock, from the same host path
        Volume plugins = volume(pod, mountAt(plugin, s.pluginDir().toString()).getName());
        assertEquals(s.pluginDir().toString(), plugins.getHostPath().getPath());
        assertEquals("/var/lib/kubelet/device-plugins", plugins.getHostPath().getPath());

        // the node's socket folder: the plugin looks for node.sock where it names the host folder to the
        // kubelet, and the node serves it in the folder Allocate mounts into pods (XQ_SOCKET)
        VolumeMount pluginRun = mountAt(plugin, s.nodeSocketDir().toString());
        Volume run = volume(pod, pluginRun.getName());
        assertEquals(s.nodeSocketDir().toString(), run.getHostPath().getPath());
        Container node = container(pod, "node");
        VolumeMount nodeRun = mountAt(node, DevicePlugin.CONTAINER_RUN);
        assertEquals(run.getName(), nodeRun.getName(), "node and plugin share the socket folder");
        assertNotEquals(Boolean.TRUE, nodeRun.getReadOnly(), "the node creates its socket there");
        ConfigMap cm = r.one(ConfigMap.class, "xq-node-config");
        assertEquals(DevicePlugin.CONTAINER_RUN + "/node.sock", cfg(cm.getData().get("dev.xq.host.cfg")).get("socketPath"));
        assertEquals(DevicePlugin.CONTAINER_RUN + "/node.sock", new DevicePlugin(s).allocate(allocateRequest()).getEnvsMap().get("XQ_SOCKET"));

        // the interposers: the node makes the host folder that the plugin names to the kubelet, under a
        // mounted host folder above it (so that it can remove it again), and copies them there
        String base = env(node, "XQ_INTERPOSERS_BASE");
        Volume lib = volume(pod, mountAt(node, base).getName());
        assertEquals("Directory", lib.getHostPath().getType(), "the base is not made by the kubelet, so it is never left behind");
        String out = env(node, "XQ_INTERPOSERS_OUT");
        assertTrue(out.startsWith(base + "/"), out);
        assertEquals(s.interposerDir().toString(), lib.getHostPath().getPath() + out.substring(base.length()));
        assertEquals("/opt", lib.getHostPath().getPath());

        // the node's start script, its configuration and token as it reads them
        String start = Files.readString(repo.resolve("deploy/image/node-start.sh"));
        assertEquals(List.of("/opt/xq/deploy/node-start.sh"), node.getCommand());
        for (EnvVar e : node.getEnv()) {
            assertTrue(!e.getName().startsWith("XQ_") || start.contains(e.getName()) || e.getName().equals("XQ_JAVA_OPTS"),
                    e.getName() + " is read by node-start.sh");
        }
        assertEquals("xq-node-config", volume(pod, mountAt(node, env(node, "XQ_CONFIG_DIR")).getName()).getConfigMap().getName());
        Path token = Path.of(env(node, "XQ_TOKEN_FILE"));
        Volume tokenVolume = volume(pod, mountAt(node, token.getParent().toString()).getName());
        assertEquals("xq-metrics", tokenVolume.getSecret().getSecretName());
        assertEquals(token.getFileName().toString(), tokenVolume.getSecret().getItems().getFirst().getPath());
        assertEquals(0400, tokenVolume.getSecret().getDefaultMode());
        String secretToken = data(r.one(Secret.class, "xq-metrics"), "token");
        assertTrue(secretToken.matches("[A-Za-z0-9]{40}"), "a generated token");

        // the image has what the pod runs
        String dockerfile = Files.readString(repo.resolve("deploy/image/Dockerfile"));
        String build = Files.readString(repo.resolve("deploy/image/build.sh"));
        assertTrue(dockerfile.contains("COPY deploy/ /opt/xq/deploy/") && build.contains("deploy/image/node-start.sh\" \"$ctx/deploy/\""));
        assertTrue(dockerfile.contains("COPY k8s/ /opt/xq/k8s/") && build.contains("k8s/target/xq-k8s.jar\" \"$ctx/k8s/target/\""));
        assertTrue(dockerfile.contains("ADD jre.tar.xz /opt/xq/.jre/") && build.contains("jdk.httpserver"));

        // the node's API: the chart's port in its .cfg, probed on loopback, named for the metrics Service
        Map<String, String> http = cfg(cm.getData().get("dev.xq.http.cfg"));
        int api = Integer.parseInt(http.get("port"));
        assertEquals(50000, api);
        assertEquals(api, port(node, "http"));
        for (var probe : List.of(node.getLivenessProbe(), node.getReadinessProbe())) {
            assertEquals("127.0.0.1", probe.getHttpGet().getHost());
            assertEquals(api, probe.getHttpGet().getPort().getIntVal());
            assertEquals("/api/v1/scheduler", probe.getHttpGet().getPath());
        }
        assertEquals("0.0.0.0", http.get("bindAddress"), "metrics on: beyond loopback, with the token");
        assertNull(http.get("token"), "the token is in a Secret, not in the ConfigMap");
        Service metrics = r.one(Service.class, "xq-metrics");
        assertEquals(ds.getSpec().getSelector().getMatchLabels(), metrics.getSpec().getSelector());
        assertEquals("http", metrics.getSpec().getPorts().getFirst().getTargetPort().getStrVal());
        assertEquals(List.of(), cfgProblems(cm));

        // no permissions anywhere: no RBAC object (parse refuses any) and no token mounted
        for (ServiceAccount sa : r.all(ServiceAccount.class)) {
            assertEquals(Boolean.FALSE, sa.getAutomountServiceAccountToken(), sa.getMetadata().getName());
        }
        assertEquals(Boolean.FALSE, pod.getAutomountServiceAccountToken());
        assertEquals(List.of(), r.all(GenericKubernetesResource.class), "no ServiceMonitor by default");
    }

    private static dev.xq.k8s.deviceplugin.v1beta1.ContainerAllocateRequest allocateRequest() {
        return dev.xq.k8s.deviceplugin.v1beta1.ContainerAllocateRequest.newBuilder().addDevicesIds(DevicePlugin.id(0, 0)).build();
    }

    private static <K, V> Map<K, V> filter(Map<K, V> m, Set<K> keys) {
        Map<K, V> out = new HashMap<>(m);
        out.keySet().retainAll(keys);
        return out;
    }

    private static void assertNotEquals(Object a, Object b, String why) {
        org.junit.jupiter.api.Assertions.assertNotEquals(a, b, why);
    }

    @Test
    void theWebhookIsReachedAtItsPortWithTheCertificateTheApiServerTrusts() throws Exception {
        Rendered r = render(null);
        Deployment d = r.one(Deployment.class, "xq-webhook");
        PodSpec pod = d.getSpec().getTemplate().getSpec();
        Container c = container(pod, "webhook");
        List<String> args = c.getArgs();
        for (String a : args) {
            assertTrue(!a.startsWith("--") || Webhook.USAGE.contains(a + " "), a + " is an option of the webhook");
        }
        assertEquals("webhook", c.getCommand().getLast());
        int port = Integer.parseInt(arg(args, "--port"));
        assertEquals(port, port(c, "https"));
        assertEquals("HTTPS", c.getReadinessProbe().getHttpGet().getScheme());
        assertEquals(Webhook.HEALTH, c.getReadinessProbe().getHttpGet().getPath());

        Service svc = r.one(Service.class, "xq-webhook");
        ServicePort sp = svc.getSpec().getPorts().getFirst();
        assertEquals("https", sp.getTargetPort().getStrVal(), "the Service sends to the container's port by name");
        assertEquals(d.getSpec().getSelector().getMatchLabels(), svc.getSpec().getSelector());
        assertEquals(svc.getSpec().getSelector(), filter(d.getSpec().getTemplate().getMetadata().getLabels(), svc.getSpec().getSelector().keySet()));

        MutatingWebhookConfiguration mwc = r.all(MutatingWebhookConfiguration.class).getFirst();
        MutatingWebhook w = mwc.getWebhooks().getFirst();
        assertEquals(svc.getMetadata().getName(), w.getClientConfig().getService().getName());
        assertEquals(NS, w.getClientConfig().getService().getNamespace());
        assertEquals(sp.getPort(), w.getClientConfig().getService().getPort());
        assertEquals(Webhook.MUTATE, w.getClientConfig().getService().getPath());
        assertEquals("Ignore", w.getFailurePolicy(), "a webhook that is down never blocks pod creation");
        assertEquals("None", w.getSideEffects());
        assertEquals(List.of("v1"), w.getAdmissionReviewVersions());
        assertEquals(List.of("pods"), w.getRules().getFirst().getResources());
        assertEquals(List.of("CREATE"), w.getRules().getFirst().getOperations());
        assertTrue(w.getNamespaceSelector().getMatchExpressions().getFirst().getValues().containsAll(List.of(NS, "kube-system")));

        // the Secret the pod mounts holds what --cert and --key name, and the CA the API server is given
        Secret tls = r.one(Secret.class, pod.getVolumes().stream().filter(v -> v.getSecret() != null).findFirst().orElseThrow().getSecret()
                .getSecretName());
        assertEquals("kubernetes.io/tls", tls.getType());
        String mount = mountAt(c, Path.of(arg(args, "--cert")).getParent().toString()).getMountPath();
        assertEquals(mount, Path.of(arg(args, "--key")).getParent().toString());
        String crt = data(tls, Path.of(arg(args, "--cert")).getFileName().toString());
        String key = data(tls, Path.of(arg(args, "--key")).getFileName().toString());
        String ca = new String(Base64.getDecoder().decode(w.getClientConfig().getCaBundle()), StandardCharsets.US_ASCII);
        assertEquals(ca, data(tls, "ca.crt"));
        assertTrue(key.startsWith("-----BEGIN PRIVATE KEY-----"), "PKCS#8, the form the webhook reads");
        X509Certificate server = pem(crt);
        server.verify(pem(ca).getPublicKey()); // signed by the caBundle's CA
        String dns = svc.getMetadata().getName() + "." + NS + ".svc";
        assertTrue(server.getSubjectAlternativeNames().stream().anyMatch(n -> dns.equals(n.get(1))), dns + " in " + server.getSubjectAlternativeNames());

        // the webhook serves that pair; a client that trusts only the caBundle and checks the name the
        // API server uses (the Service's) is answered
        Files.writeString(dir.resolve("tls.crt"), crt);
        Files.writeString(dir.resolve("tls.key"), key);
        try (Webhook hook = new Webhook(new PodMutator(new PriorityMapper(Map.of())))) {
            int at = hook.start("127.0.0.1", 0, dir.resolve("tls.crt"), dir.resolve("tls.key"), PemKeys.RELOAD_MS);
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", pem(ca));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            try (Socket plain = new Socket("127.0.0.1", at);
                    SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(plain, dns, at, true)) {
                SSLParameters p = s.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                s.setSSLParameters(p);
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write(("GET " + Webhook.HEALTH + " HTTP/1.1\r\nHost: " + dns + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = s.getInputStream();
                String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                assertTrue(answer.startsWith("HTTP/1.1 200") && answer.endsWith("ok\n"), answer);
            }
        }
    }

    @Test
    void valuesOverridden() throws Exception {
        Path values = Path.of(getClass().getResource("/chart-values-override.yaml").toURI());
        Rendered r = render(values);
        // webhook replicas and a configured class
        Deployment d = r.one(Deployment.class, "xq-webhook");
        assertEquals(3, d.getSpec().getReplicas());
        List<String> args = container(d.getSpec().getTemplate().getSpec(), "webhook").getArgs();
        assertEquals("inference-critical=900", arg(args, "--class"));
        assertEquals("9443", arg(args, "--port"));
        assertEquals(9443, port(container(d.getSpec().getTemplate().getSpec(), "webhook"), "https"));

        // the device plugin with GPUs and shares given
        PodSpec pod = r.one(DaemonSet.class, "xq-node").getSpec().getTemplate().getSpec();
        DevicePlugin.Settings s = Main.devicePlugin(container(pod, "device-plugin").getArgs().toArray(String[]::new));
        assertEquals(List.of(0, 1), s.gpus());
        assertEquals(4, s.replicas());
        assertEquals(Path.of("/var/run/xq"), s.nodeSocketDir());
        assertEquals("/var/run/xq", volume(pod, mountAt(container(pod, "node"), DevicePlugin.CONTAINER_RUN).getName()).getHostPath().getPath());
        assertEquals(Map.of("xq.dev/gpu-host", "yes"), pod.getNodeSelector());

        // the node's settings
        ConfigMap cm = r.one(ConfigMap.class, "xq-node-config");
        assertEquals("edf", cfg(cm.getData().get("dev.xq.scheduler.cfg")).get("policy"));
        assertEquals("17179869184", cfg(cm.getData().get("dev.xq.hal.sim.cfg")).get("memoryBytes"), "a large integer as written");
        assertEquals("false", cfg(cm.getData().get("dev.xq.hal.sim.cfg")).get("enabled"));
        assertEquals("0.5", cfg(cm.getData().get("dev.xq.policy.hpf-aging.cfg")).get("aging.rate"));
        assertEquals("51000", cfg(cm.getData().get("dev.xq.http.cfg")).get("port"));
        assertEquals(51000, container(pod, "node").getReadinessProbe().getHttpGet().getPort().getIntVal());
        assertEquals(List.of(), cfgProblems(cm));
        // the check above can fail: a key no bundle has
        ConfigMap wrong = new io.fabric8.kubernetes.api.model.ConfigMapBuilder().withData(Map.of("dev.xq.scheduler.cfg", "polcy=edf\n",
                "dev.xq.nothing.cfg", "a=b\n")).build();
        assertEquals(Set.of("dev.xq.scheduler: no key polcy", "dev.xq.nothing.cfg: no such PID"), new HashSet<>(cfgProblems(wrong)));
        assertEquals("s3cret-token-of-20-chars", data(r.one(Secret.class, "xq-metrics"), "token"));

        // the ServiceMonitor: it selects the metrics Service, scrapes its port with the token's Secret
        GenericKubernetesResource sm = r.all(GenericKubernetesResource.class).getFirst();
        assertEquals("ServiceMonitor", sm.getKind());
        Service metrics = r.one(Service.class, "xq-metrics");
        @SuppressWarnings("unchecked")
        Map<String, Object> spec = (Map<String, Object>) sm.getAdditionalProperties().get("spec");
        @SuppressWarnings("unchecked")
        Map<String, String> match = (Map<String, String>) ((Map<String, Object>) spec.get("selector")).get("matchLabels");
        assertEquals(match, filter(metrics.getMetadata().getLabels(), match.keySet()), "the ServiceMonitor selects the Service");
        @SuppressWarnings("unchecked")
        Map<String, Object> endpoint = ((List<Map<String, Object>>) spec.get("endpoints")).getFirst();
        assertEquals(metrics.getSpec().getPorts().getFirst().getName(), endpoint.get("port"));
        assertEquals("/metrics", endpoint.get("path"));
        assertEquals("15s", endpoint.get("interval"));
        assertEquals(Map.of("name", "xq-metrics", "key", "token"), ((Map<?, ?>) endpoint.get("authorization")).get("credentials"));
        assertEquals("prom", sm.getMetadata().getLabels().get("release"));

        // the dashboard: only metrics the node exports
        ConfigMap dash = r.one(ConfigMap.class, "xq-dashboard");
        assertEquals("1", dash.getMetadata().getLabels().get("grafana_dashboard"));
        Set<String> used = metricNames(dash.getData().get("xq.json"));
        assertTrue(used.size() >= 15, used.toString());
        Set<String> exported = exportedMetrics();
        for (String m : used) {
            assertTrue(exported.contains(m), m + " is not a metric of http/.../Metrics.java: " + exported);
        }
        assertFalse(exported.contains("xq_queue_pending_total"), "a gauge has no _total");
    }

    static Set<String> metricNames(String dashboard) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("\\bxq_[a-z0-9_]+").matcher(dashboard);
        while (m.find()) {
            if (!m.group().equals("xq_gpu_scheduling")) {
                out.add(m.group());
            }
        }
        return out;
    }

    /** The series names /metrics writes, from Metrics.java: counters with _total, the histogram's three, the info's. */
    static Set<String> exportedMetrics() throws Exception {
        String src = Files.readString(repo.resolve("http/src/main/java/dev/xq/http/Metrics.java"));
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("(counter|gauge|gauge1|CounterSnapshot\\.builder\\(\\)\\.name|GaugeSnapshot\\.builder\\(\\)\\.name|"
                + "HistogramSnapshot\\.builder\\(\\)\\.name|InfoSnapshot\\.builder\\(\\)\\.name)\\(\"(xq_[a-z0-9_]+)\"").matcher(src);
        while (m.find()) {
            String kind = m.group(1);
            String name = m.group(2);
            if (kind.startsWith("counter") || kind.startsWith("Counter")) {
                out.add(name + "_total");
            } else if (kind.startsWith("Histogram")) {
                out.addAll(List.of(name + "_bucket", name + "_sum", name + "_count"));
            } else if (kind.startsWith("Info")) {
                out.add(name + "_info");
            } else {
                out.add(name);
            }
        }
        assertTrue(out.contains("xq_device_busy_seconds_total") && out.contains("xq_scheduler_decision_seconds_bucket"), out.toString());
        return out;
    }

    @Test
    void badValuesAreRefusedByName() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("devicePlugin:\n  replicas: 0\n", "devicePlugin.replicas 0 is outside [1, 1000]");
        cases.put("devicePlugin:\n  gpus: all\n", "devicePlugin.gpus 'all' must be GPU ordinals");
        cases.put("devicePlugin:\n  endpoint: kubelet.sock\n", "must not be kubelet.sock");
        cases.put("hostPaths:\n  interposerBase: /usr\n", "hostPaths.interposerBase '/usr' must be an absolute folder above");
        cases.put("webhook:\n  classes:\n    batch: 2000\n", "webhook.classes.batch: 2000 is outside the XQ priorities [-1000, 1000]");
        cases.put("webhook:\n  tls:\n    certificate: x\n", "give certificate, key and caCertificate together");
        cases.put("node:\n  config:\n    dev.xq.http:\n      token: abcdefghijklmnopqrstu\n", "node.config.dev.xq.http.token is the chart's");
        cases.put("node:\n  config:\n    dev.xq.host:\n      socketPath: /tmp/x.sock\n", "node.config.dev.xq.host.socketPath is the chart's");
        cases.put("metrics:\n  token: short\n", "metrics.token must be at least 16");
        cases.put("metrics:\n  enabled: false\n  serviceMonitor:\n    enabled: true\n", "metrics.serviceMonitor.enabled needs metrics.enabled");
        for (var e : cases.entrySet()) {
            Path v = Files.writeString(dir.resolve("bad.yaml"), e.getKey());
            Exception x = assertThrows(Exception.class, () -> render(v), e.getKey());
            assertTrue(x.getMessage().contains(e.getValue()), e.getKey() + " -> " + x.getMessage());
        }
    }

    /** node-start.sh as the chart's pod runs it, with a stand-in for the launcher that says what it was given. */
    String start(Path home, Path config, Path token, Path hot, Path libs, Path base) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", repo.resolve("deploy/image/node-start.sh").toString()).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.put("XQ_HOME", home.toString());
        env.put("XQ_CONFIG_DIR", config.toString());
        env.put("XQ_HOT_DEPLOY", hot.toString());
        env.put("XQ_INTERPOSERS_OUT", libs.toString());
        env.put("XQ_INTERPOSERS_BASE", base.toString());
        env.put("XQ_SYNC_SECONDS", "0");
        env.remove("XQ_TOKEN_FILE");
        if (token != null) {
            env.put("XQ_TOKEN_FILE", token.toString());
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @Test
    void theNodesStartScriptCopiesItsConfigurationTokenAndInterposers() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "no bash here");
        Path home = Files.createDirectories(dir.resolve("opt/xq"));
        // the launcher's stand-in says what it was given and which interposers the host has while it runs
        Files.writeString(home.resolve("xq"), "#!/bin/sh\necho \"launcher: $*\"\n"
                + "echo \"host has: $(cat \"$XQ_INTERPOSERS_OUT/libxq-cuda.so\" \"$XQ_INTERPOSERS_OUT/libxq-hip.so\")\"\n");
        home.resolve("xq").toFile().setExecutable(true);
        Path built = Files.createDirectories(home.resolve("interpose/target"));
        Files.writeString(built.resolve("libxq-cuda.so"), "cuda");
        Files.writeString(built.resolve("libxq-hip.so"), "hip");
        Path config = Files.createDirectories(dir.resolve("config"));
        // the ConfigMap as rendered
        ConfigMap cm = render(null).one(ConfigMap.class, "xq-node-config");
        for (var e : cm.getData().entrySet()) {
            Files.writeString(config.resolve(e.getKey()), e.getValue());
        }
        Path token = Files.writeString(dir.resolve("token"), "abcdEFGH1234ijklMNOP");
        Path hot = dir.resolve("state/bundles");
        Path base = Files.createDirectories(dir.resolve("host-opt"));
        Path libs = base.resolve("xq/lib");
        String out = start(home, config, token, hot, libs, base);
        assertTrue(out.contains("launcher: serve --bundles " + hot), out);
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(hot)));
        for (String f : cm.getData().keySet()) {
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(hot.resolve(f))), f);
        }
        Map<String, String> http = cfg(Files.readString(hot.resolve("dev.xq.http.cfg")));
        assertEquals("abcdEFGH1234ijklMNOP", http.get("token"));
        assertEquals("50000", http.get("port"));
        assertEquals(cm.getData().get("dev.xq.scheduler.cfg"), Files.readString(hot.resolve("dev.xq.scheduler.cfg")));
        assertTrue(out.contains("host has: cudahip"), out);
        // the node stopped: the interposers and the folders made for them are gone, the base stays
        assertFalse(Files.exists(libs.getParent()), out);
        assertTrue(Files.isDirectory(base));
        // a folder that holds something else stays
        Files.createDirectories(libs);
        Files.writeString(libs.getParent().resolve("other"), "x");
        start(home, config, token, hot, libs, base);
        assertFalse(Files.exists(libs));
        assertTrue(Files.exists(libs.getParent().resolve("other")));
        Files.delete(libs.getParent().resolve("other"));

        // again without a token (metrics off) and with a PID gone from the ConfigMap
        Files.delete(config.resolve("dev.xq.scheduler.cfg"));
        out = start(home, config, null, hot, libs, base);
        assertTrue(out.contains("dev.xq.scheduler.cfg removed") && out.contains("dev.xq.http.cfg written"), out);
        assertFalse(Files.exists(hot.resolve("dev.xq.scheduler.cfg")));
        assertNull(cfg(Files.readString(hot.resolve("dev.xq.http.cfg"))).get("token"));
        // a token the node would refuse is not written
        Files.writeString(token, "short");
        out = start(home, config, token, hot, libs, base);
        assertTrue(out.contains("is not 16 or more"), out);
        assertNull(cfg(Files.readString(hot.resolve("dev.xq.http.cfg"))).get("token"));
    }

    @Test
    void gpuZeroGivenAsANumberIsKept() throws Exception {
        // `--set devicePlugin.gpus=0` and `gpus: 0` are the number 0, which `with` once dropped: the plugin
        // then found no GPU and exited (seen on the e2e cluster, k8s/cluster/e2e.sh)
        Path v = Files.writeString(dir.resolve("gpu0.yaml"), "devicePlugin:\n  gpus: 0\n");
        PodSpec pod = render(v).one(DaemonSet.class, "xq-node").getSpec().getTemplate().getSpec();
        assertEquals("0", arg(container(pod, "device-plugin").getArgs(), "--gpus"));
    }

    @Test
    void metricsOffKeepsTheApiOnLoopbackWithoutAToken() throws Exception {
        Path v = Files.writeString(dir.resolve("off.yaml"), "metrics:\n  enabled: false\nwebhook:\n  enabled: false\ndevicePlugin:\n  enabled: false\n");
        Rendered r = render(v);
        assertEquals(List.of("ServiceAccount/xq-node", "ConfigMap/xq-node-config", "DaemonSet/xq-node"), r.names());
        ConfigMap cm = r.one(ConfigMap.class, "xq-node-config");
        assertEquals("127.0.0.1", cfg(cm.getData().get("dev.xq.http.cfg")).get("bindAddress"));
        PodSpec pod = r.one(DaemonSet.class, "xq-node").getSpec().getTemplate().getSpec();
        assertEquals(List.of("node"), pod.getContainers().stream().map(Container::getName).toList());
        assertNull(env(pod.getContainers().getFirst(), "XQ_TOKEN_FILE"));
        if (r.all(MutatingWebhookConfiguration.class).size() > 0) {
            fail("no webhook configuration without the webhook");
        }
    }
}
