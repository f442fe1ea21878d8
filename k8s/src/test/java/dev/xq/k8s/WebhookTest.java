package dev.xq.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.zjsonpatch.JsonPatch;
import java.io.InputStream;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The webhook on AdmissionReview objects as the API server sends them (a ReplicaSet's pod with a
 * PriorityClass, init and app containers, one without the resource, one that sets its own
 * priority): the patch it answers, applied with a JSON Patch library, gives the pod the
 * environment the interposer reads, and nothing else changes.
 */
class WebhookTest {

    private final ObjectMapper json = new ObjectMapper();
    private final Webhook hook = new Webhook(new PodMutator(new PriorityMapper(Map.of("batch-low", -200))));

    private ObjectNode sample() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/review-pod.json")) {
            return (ObjectNode) json.readTree(in);
        }
    }

    private JsonNode answer(JsonNode review) throws Exception {
        return json.readTree(hook.review(json.writeValueAsBytes(review)));
    }

    private static String env(JsonNode container, String name) {
        for (JsonNode e : container.path("env")) {
            if (name.equals(e.path("name").asString())) {
                return e.path("value").asString();
            }
        }
        return null;
    }

    @Test
    void aPodsPriorityClassBecomesTheXqPriorityOfItsGpuContainers() throws Exception {
        ObjectNode review = sample();
        JsonNode out = answer(review);
        assertEquals("AdmissionReview", out.path("kind").asString());
        assertEquals("admission.k8s.io/v1", out.path("apiVersion").asString());
        JsonNode r = out.path("response");
        assertEquals("705ab4f5-6393-11e8-b7cc-42010a800002", r.path("uid").asString(), "the request's uid echoed");
        assertTrue(r.path("allowed").asBoolean());
        assertEquals("JSONPatch", r.path("patchType").asString());
        JsonNode patch = json.readTree(Base64.getDecoder().decode(r.path("patch").asString()));
        JsonNode pod = review.path("request").path("object");
        JsonNode after = JsonPatch.apply(patch, pod);
        int xq = PriorityMapper.compress(1_000_000);
        assertEquals(643, xq, "1,000,000 on the log scale");
        JsonNode serve = after.path("spec").path("containers").get(0);
        assertEquals(Integer.toString(xq), env(serve, "XQ_PRIORITY"));
        assertEquals("serving.resnet-serve-7d9f8b6c5.serve", env(serve, "XQ_NAME"));
        assertEquals("resnet50", env(serve, "MODEL"), "its own variables kept");
        JsonNode warm = after.path("spec").path("initContainers").get(0);
        assertEquals(Integer.toString(xq), env(warm, "XQ_PRIORITY"), "init containers too");
        JsonNode sidecar = after.path("spec").path("containers").get(1);
        assertEquals(pod.path("spec").path("containers").get(1), sidecar, "a container without " + PodMutator.RESOURCE + " untouched");
        JsonNode batch = after.path("spec").path("containers").get(2);
        assertEquals("-5", env(batch, "XQ_PRIORITY"), "a priority the pod sets itself is kept");
        assertEquals("serving.resnet-serve-7d9f8b6c5.batch", env(batch, "XQ_NAME"));
        String decided = after.path("metadata").path("annotations").path(PodMutator.DECIDED).asString();
        assertEquals("XQ priority 643 from PriorityClass inference-critical, priority 1000000 for warm, serve, batch", decided);
        assertEquals("true", after.path("metadata").path("annotations").path("prometheus.io/scrape").asString());
        assertEquals(pod.path("spec").path("priority"), after.path("spec").path("priority"));
    }

    @Test
    void theAnnotationWinsAndABadOneRefusesThePodByName() throws Exception {
        ObjectNode review = sample();
        ObjectNode ann = (ObjectNode) review.path("request").path("object").path("metadata").path("annotations");
        ann.put(PriorityMapper.ANNOTATION, "7");
        JsonNode r = answer(review).path("response");
        JsonNode after = JsonPatch.apply(json.readTree(Base64.getDecoder().decode(r.path("patch").asString())),
                review.path("request").path("object"));
        assertEquals("7", env(after.path("spec").path("containers").get(0), "XQ_PRIORITY"));
        for (String bad : new String[] {"high", "1e3", "1001", "-1001", "99999999999"}) {
            ann.put(PriorityMapper.ANNOTATION, bad);
            JsonNode refused = answer(review).path("response");
            assertFalse(refused.path("allowed").asBoolean(), bad);
            assertEquals(400, refused.path("status").path("code").asInt());
            String msg = refused.path("status").path("message").asString();
            assertTrue(msg.contains("'" + bad + "'") && msg.contains("[-1000, 1000]"), msg);
            assertTrue(refused.path("patch").isMissingNode() || refused.path("patch").isNull(), "nothing changed: " + refused);
        }
    }

    @Test
    void aConfiguredClassValueAndPodsWithoutTheResourceOrPriority() throws Exception {
        ObjectNode review = sample();
        ObjectNode spec = (ObjectNode) review.path("request").path("object").path("spec");
        spec.put("priorityClassName", "batch-low");
        JsonNode r = answer(review).path("response");
        JsonNode after = JsonPatch.apply(json.readTree(Base64.getDecoder().decode(r.path("patch").asString())),
                review.path("request").path("object"));
        assertEquals("-200", env(after.path("spec").path("containers").get(0), "XQ_PRIORITY"), "the configured value");
        // no priority at all: the name only, and the annotation says so
        spec.remove("priorityClassName");
        spec.remove("priority");
        r = answer(review).path("response");
        after = JsonPatch.apply(json.readTree(Base64.getDecoder().decode(r.path("patch").asString())), review.path("request").path("object"));
        assertNull(env(after.path("spec").path("containers").get(0), "XQ_PRIORITY"));
        assertTrue(after.path("metadata").path("annotations").path(PodMutator.DECIDED).asString().startsWith("no XQ priority from no priority"));
        // no container asks for the resource: allowed, no patch
        for (JsonNode c : spec.withArray("containers")) {
            ((ObjectNode) c).remove("resources");
        }
        spec.remove("initContainers");
        r = answer(review).path("response");
        assertTrue(r.path("allowed").asBoolean());
        assertTrue(r.path("patch").isMissingNode() || r.path("patch").isNull(), r.toString());
        // not a pod creation: allowed as it is
        ((ObjectNode) review.path("request")).put("operation", "UPDATE");
        assertTrue(answer(review).path("response").path("allowed").asBoolean());
    }

    @Test
    void whatIsNoReviewIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> hook.review("{\"kind\":\"Pod\"}".getBytes()));
        assertEquals("the body is not an AdmissionReview with a request and its uid", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> hook.review("not json".getBytes()));
        assertTrue(e.getMessage().startsWith("the body is not JSON"), e.getMessage());
    }

    @Test
    void theLogScaleKeepsOrderAndSign() {
        assertEquals(0, PriorityMapper.compress(0));
        assertEquals(322, PriorityMapper.compress(1000));
        assertEquals(964, PriorityMapper.compress(1_000_000_000));
        assertEquals(997, PriorityMapper.compress(2_000_001_000));
        assertEquals(-322, PriorityMapper.compress(-1000));
        assertEquals(1000, PriorityMapper.compress(Integer.MAX_VALUE));
        assertEquals(-1000, PriorityMapper.compress(Integer.MIN_VALUE));
        int last = Integer.MIN_VALUE;
        for (int k : new int[] {-2_000_000, -1, 0, 1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 1_000_000_000}) {
            int v = PriorityMapper.compress(k);
            assertTrue(v > last, k + " -> " + v + " after " + last);
            last = v;
        }
        assertThrows(IllegalArgumentException.class, () -> new PriorityMapper(Map.of("x", 1001)));
    }
}
