package dev.xq.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Map;

/**
 * A pod's Kubernetes priority as the XQ priority of its GPU processes ({@code XQ_PRIORITY}, an
 * integer in [-1000, 1000]: docs/processes.md).
 *
 * <p>In this order: the pod's annotation {@value #ANNOTATION} (an integer in that range, for a
 * pod that wants one value whatever its class); the value configured for its PriorityClass
 * ({@code --class NAME=N}); its priority as the API server resolved it from the PriorityClass
 * ({@code spec.priority}), compressed ({@link #compress}); none (the pod's processes get no hint)
 * when the pod has no priority at all.
 */
final class PriorityMapper {

    /** The pod annotation that sets the XQ priority outright. */
    static final String ANNOTATION = "xq.dev/priority";
    static final int MAX = 1000;
    /** The largest Kubernetes priority (system-node-critical is 2000001000; user classes at most 1000000000). */
    private static final double K8S_MAX = 2_147_483_647.0;

    /** What was decided: the priority, or null for none, and where it came from (said in the pod's annotation). */
    record Decision(Integer priority, String source) {
    }

    /** A pod that asks for an XQ priority in a way that cannot be honoured: refused with this message. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    private final Map<String, Integer> byClass;

    /**
     * @param byClass XQ priority per PriorityClass name, each in [-1000, 1000]
     * @throws IllegalArgumentException naming a value outside that range
     */
    PriorityMapper(Map<String, Integer> byClass) {
        for (var e : byClass.entrySet()) {
            if (e.getValue() == null || e.getValue() < -MAX || e.getValue() > MAX) {
                throw new IllegalArgumentException("class " + e.getKey() + "=" + e.getValue() + ": an XQ priority is an integer in [-"
                        + MAX + ", " + MAX + "]");
            }
        }
        this.byClass = Map.copyOf(byClass);
    }

    Decision of(Pod pod) throws Refused {
        Map<String, String> ann = pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
        String set = ann == null ? null : ann.get(ANNOTATION);
        if (set != null) {
            String t = set.trim();
            int v;
            try {
                if (!t.matches("[+-]?[0-9]{1,10}")) {
                    throw new NumberFormatException();
                }
                v = Integer.parseInt(t);
            } catch (NumberFormatException e) {
                throw new Refused("annotation " + ANNOTATION + "='" + set + "' is not an integer in [-" + MAX + ", " + MAX + "]");
            }
            if (v < -MAX || v > MAX) {
                throw new Refused("annotation " + ANNOTATION + "='" + set + "' is outside [-" + MAX + ", " + MAX + "]");
            }
            return new Decision(v, "annotation " + ANNOTATION);
        }
        String cls = pod.getSpec() == null ? null : pod.getSpec().getPriorityClassName();
        if (cls != null && byClass.containsKey(cls)) {
            return new Decision(byClass.get(cls), "PriorityClass " + cls + " (configured)");
        }
        Integer k = pod.getSpec() == null ? null : pod.getSpec().getPriority();
        if (k == null) {
            return new Decision(null, "no priority");
        }
        return new Decision(compress(k), (cls == null ? "priority " : "PriorityClass " + cls + ", priority ") + k);
    }

    /**
     * A Kubernetes priority (any int) as an XQ priority: order kept, sign kept, 0 stays 0, and the
     * magnitudes compressed on a log scale so that classes a factor of ten apart stay apart
     * (1000: 322, 100000: 536, 1000000: 643, 1000000000: 964, 2000001000: 997).
     */
    static int compress(int k8s) {
        if (k8s == 0) {
            return 0;
        }
        double m = Math.log10(1.0 + Math.abs((double) k8s)) / Math.log10(1.0 + K8S_MAX);
        int v = (int) Math.max(1, Math.round(MAX * m));
        return k8s < 0 ? -Math.min(MAX, v) : Math.min(MAX, v);
    }
}
