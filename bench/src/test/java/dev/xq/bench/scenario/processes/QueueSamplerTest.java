package dev.xq.bench.scenario.processes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueState;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QueueSamplerTest {

    private static XQueueStatus status(long handle, String name, long pid, boolean held, XQueueStatus.Limits limits, int share,
                                       long completed) {
        return new XQueueStatus(handle, name, "cuda0", pid + ":1", pid, QueueState.READY, QueueConfig.defaults(),
                PreemptionLevel.BLOCK, PreemptionLevel.BLOCK, held, false, 0, 3, completed + 3, completed, 0, 0, 2100, 0,
                List.of(), "", limits, share, 0, 0, 132, 24, 132);
    }

    private static XQueue queue(java.util.function.Supplier<XQueueStatus> s) {
        return (XQueue) Proxy.newProxyInstance(QueueSamplerTest.class.getClassLoader(), new Class<?>[] {XQueue.class},
                (self, m, a) -> m.getName().equals("status") ? s.get() : null);
    }

    private static XQueueService service(List<XQueue> queues) {
        return (XQueueService) Proxy.newProxyInstance(QueueSamplerTest.class.getClassLoader(), new Class<?>[] {XQueueService.class},
                (self, m, a) -> m.getName().equals("queues") ? queues : null);
    }

    /** Each sample has a line per process queue with what the node decided for it; the node's own queues are left out. */
    @Test
    void eachSampleHasALinePerProcessQueueWithTheNodesDecision(@TempDir Path tmp) throws Exception {
        AtomicInteger done = new AtomicInteger();
        XQueue gemm = queue(() -> status(7, "gemm", 4242, false, XQueueStatus.Limits.NARROWED, 37, done.incrementAndGet()));
        XQueue trainer = queue(() -> status(8, "train", 4343, true, XQueueStatus.Limits.CONFIGURED, 100, 5));
        XQueue app = queue(() -> status(9, "app", 0, false, XQueueStatus.Limits.ALONE, 100, 1));
        try (QueueSampler s = QueueSampler.start(service(List.of(gemm, app, trainer)), tmp)) {
            long until = System.currentTimeMillis() + 5_000;
            while (s.lines() < 6 && System.currentTimeMillis() < until) {
                Thread.sleep(10);
            }
        }
        List<String> lines = Files.readAllLines(tmp.resolve(QueueSampler.FILE));
        assertEquals(QueueSampler.HEADER, lines.get(0));
        List<String> rows = lines.subList(1, lines.size());
        assertTrue(rows.size() >= 6 && rows.size() % 2 == 0, "two process queues a sample: " + rows);
        assertFalse(rows.stream().anyMatch(l -> l.contains("\tapp\t")), "the node's own queue is not sampled: " + rows);
        String[] g = rows.get(0).split("\t");
        String[] t = rows.get(1).split("\t");
        assertEquals(List.of("4242", "gemm", "ready", "0", "narrowed", "37", "3", "0", "1", "2100", "132", "24", "132"),
                List.of(g).subList(1, g.length));
        assertEquals(List.of("4343", "train", "1", "configured", "100"), List.of(t[1], t[2], t[4], t[5], t[6]));
        // the samples come on a beat: the gemm's completed count moves from one to the next
        assertEquals("2", rows.get(2).split("\t")[9]);
        long t0 = Long.parseLong(g[0]);
        long t1 = Long.parseLong(rows.get(2).split("\t")[0]);
        assertTrue(t1 - t0 >= QueueSampler.PERIOD_MILLIS - 5, "samples " + (t1 - t0) + " ms apart");
    }

    /**
     * Against every beat of whole tens of milliseconds the family uses (20-200 ms), 8 s of samples
     * land in every 5 ms of the beat: a sampler locked to the beat (50 ms against 100 ms) would
     * see one or two phases of it only, and never the inside of a short request.
     */
    @Test
    void theSamplesWalkThroughEveryPhaseOfABeat() {
        for (long beat = 20; beat <= 200; beat += 10) {
            boolean[] seen = new boolean[(int) ((beat + 4) / 5)];
            for (long t = 0; t < 8_000; t += QueueSampler.PERIOD_MILLIS) {
                seen[(int) ((t % beat) / 5)] = true;
            }
            for (int i = 0; i < seen.length; i++) {
                assertTrue(seen[i], "a beat of " + beat + " ms: no sample in its " + (5 * i) + "-" + (5 * i + 5)
                        + " ms at a period of " + QueueSampler.PERIOD_MILLIS + " ms");
            }
        }
    }

    /**
     * The summary per tenant takes its busiest queue's samples with work outside its process's
     * stops: the GEMM's second stream (more completed) narrowed in two of its three such samples at
     * 24 and 36 % and held in the third; the stopped sample and the idle one count for nothing.
     */
    @Test
    void theSummaryPerTenantIsItsBusiestQueuesSamplesWithWorkOutsideItsStops(@TempDir Path tmp) throws Exception {
        String h = QueueSampler.HEADER + "\n";
        String rows = String.join("\n",
                "1\t7\tgemm/default\tready\t0\tconfigured\t100\t1\t0\t0\t100\t132\t132\t132",
                "1\t7\tgemm/s1\tready\t0\tnarrowed\t24\t1\t0\t10\t20000\t132\t132\t132",
                "1\t9\tgraph/default\tidle\t0\ton_top\t100\t0\t0\t5\t1700\t132\t132\t132",
                "2\t7\tgemm/default\tready\t0\tconfigured\t100\t1\t0\t1\t100\t132\t132\t132",
                "2\t7\tgemm/s1\tready\t0\tnarrowed\t36\t1\t1\t12\t20000\t132\t132\t132",
                "2\t9\tgraph/default\tready\t0\ton_top\t100\t1\t0\t6\t1700\t132\t132\t132",
                "3\t7\tgemm/s1\tsuspended\t1\tconfigured\t100\t1\t0\t12\t20000\t132\t132\t132",
                "4\t7\tgemm/s1\tidle\t0\tconfigured\t100\t0\t0\t13\t20000\t132\t132\t132",
                "5\t7\tgemm/s1\tready\t1\tconfigured\t100\t0\t1\t14\t20000\t132\t132\t132") + "\n";
        Files.writeString(tmp.resolve(QueueSampler.FILE), h + rows);
        var sum = QueueSampler.summary(tmp);
        assertEquals(java.util.Set.of("gemm", "graph"), sum.keySet());
        var g = sum.get("gemm");
        assertEquals(3, g.get("samples_with_work"));
        assertEquals(0.667, g.get("narrowed"));
        assertEquals(0.333, g.get("held"));
        assertEquals(36, g.get("narrowed_sm_share_percent_p50"), "the upper median of 24 and 36");
        var gr = sum.get("graph");
        assertEquals(1, gr.get("samples_with_work"));
        assertEquals(1.0, gr.get("on_top"));
        assertFalse(gr.containsKey("narrowed_sm_share_percent_p50"), "never narrowed");
        assertTrue(QueueSampler.summary(tmp.resolve("none")).isEmpty(), "no file, nothing");
    }

    /** A mode without process queues (native sharing) leaves no file. */
    @Test
    void noProcessQueueNoFile(@TempDir Path tmp) throws Exception {
        XQueue app = queue(() -> status(9, "app", 0, false, XQueueStatus.Limits.ALONE, 100, 1));
        try (QueueSampler s = QueueSampler.start(service(List.of(app)), tmp)) {
            Thread.sleep(3 * QueueSampler.PERIOD_MILLIS);
            assertEquals(0, s.lines());
        }
        assertFalse(Files.exists(tmp.resolve(QueueSampler.FILE)));
    }
}
