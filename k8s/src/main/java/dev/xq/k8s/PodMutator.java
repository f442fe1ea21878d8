package dev.xq.k8s;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the webhook changes in a pod it admits: in each container (and init container) that asks
 * for the resource {@value #RESOURCE}, the environment the interposer reads, {@code XQ_PRIORITY}
 * (from {@link PriorityMapper}) and {@code XQ_NAME} (namespace, pod and container, so that the
 * node's {@code xq:processes} names it); and the annotation {@value #DECIDED} saying what was set
 * and why. A variable the pod sets itself is left as it is. A pod that asks for no XQ GPU is not
 * changed. The result is a JSON Patch (RFC 6902), as the admission API wants it.
 */
final class PodMutator {

    /** The extended resource of a shared XQ GPU (advertised by the device plugin). */
    static final String RESOURCE = "xq.dev/gpu";
    /** The annotation the webhook writes: the XQ priority given and where it came from. */
    static final String DECIDED = "xq.dev/decided";

    private final PriorityMapper priorities;

    PodMutator(PriorityMapper priorities) {
        this.priorities = priorities;
    }

    /**
     * @return the JSON Patch operations (empty: the pod is left as it is)
     * @throws PriorityMapper.Refused when the pod asks for an XQ priority that cannot be had
     */
    List<Map<String, Object>> patch(Pod pod, String namespace) throws PriorityMapper.Refused {
        List<Map<String, Object>> ops = new ArrayList<>();
        if (pod.getSpec() == null) {
            return ops;
        }
        List<String> touched = new ArrayList<>();
        PriorityMapper.Decision d = null;
        String[] kinds = {"initContainers", "containers"};
        for (String kind : kinds) {
            List<Container> cs = kind.equals("containers") ? pod.getSpec().getContainers() : pod.getSpec().getInitContainers();
            if (cs == null) {
                continue;
            }
            for (int i = 0; i < cs.size(); i++) {
                Container c = cs.get(i);
                if (!asksForXq(c)) {
                    continue;
                }
                if (d == null) {
                    d = priorities.of(pod);
                }
                Map<String, String> want = new LinkedHashMap<>();
                if (d.priority() != null) {
                    want.put("XQ_PRIORITY", Integer.toString(d.priority()));
                }
                want.put("XQ_NAME", name(pod, namespace, c));
                String base = "/spec/" + kind + "/" + i + "/env";
                List<EnvVar> env = c.getEnv();
                if (env == null || env.isEmpty()) {
                    List<Map<String, String>> vars = new ArrayList<>();
                    want.forEach((k, v) -> vars.add(Map.of("name", k, "value", v)));
                    ops.add(op("add", base, vars));
                } else {
                    for (var e : want.entrySet()) {
                        if (env.stream().noneMatch(v -> e.getKey().equals(v.getName()))) {
                            ops.add(op("add", base + "/-", Map.of("name", e.getKey(), "value", e.getValue())));
                        }
                    }
                }
                touched.add(c.getName());
            }
        }
        if (d == null) {
            return ops;
        }
        String said = (d.priority() == null ? "no XQ priority" : "XQ priority " + d.priority()) + " from " + d.source() + " for "
                + String.join(", ", touched);
        Map<String, String> ann = pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
        if (ann == null) {
            ops.add(op("add", "/metadata/annotations", Map.of(DECIDED, said)));
        } else {
            ops.add(op(ann.containsKey(DECIDED) ? "replace" : "add", "/metadata/annotations/" + escape(DECIDED), said));
        }
        return ops;
    }

    static boolean asksForXq(Container c) {
        if (c.getResources() == null) {
            return false;
        }
        Map<String, Quantity> limits = c.getResources().getLimits();
        Map<String, Quantity> requests = c.getResources().getRequests();
        return (limits != null && limits.containsKey(RESOURCE)) || (requests != null && requests.containsKey(RESOURCE));
    }

    private static String name(Pod pod, String namespace, Container c) {
        String ns = namespace != null && !namespace.isEmpty() ? namespace
                : pod.getMetadata() != null && pod.getMetadata().getNamespace() != null ? pod.getMetadata().getNamespace() : "default";
        String p = pod.getMetadata() == null ? null : pod.getMetadata().getName();
        if (p == null || p.isEmpty()) {
            String g = pod.getMetadata() == null ? null : pod.getMetadata().getGenerateName();
            p = g == null || g.isEmpty() ? "pod" : g.endsWith("-") ? g.substring(0, g.length() - 1) : g;
        }
        return ns + "." + p + "." + c.getName();
    }

    /** A JSON Pointer token (RFC 6901): '~' and '/' escaped. */
    static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }

    private static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", op);
        m.put("path", path);
        m.put("value", value);
        return m;
    }
}
