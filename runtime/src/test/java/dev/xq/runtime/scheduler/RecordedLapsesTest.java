package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.policy.spi.QueueView;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

/**
 * Replays two latency-critical tenants' busy periods as the interposer showed them to the node on
 * the H200 (an eager decoder and a CUDA graph on a 25 ms beat, every recorded run of a mix with
 * both, {@code docs/results/h200}) through the node's arrival guards, a best-effort queue ready
 * throughout behind both, and counts the graph's arrivals before which that queue had no guard in
 * force against them, with and without the decision the node now makes just past a guard's lapse
 * ({@link ArrivalGuards#lapseWake}). The decoder's guard for its next token, after a request's last,
 * lapses while the graph's next arrival is still to come; without a decision then, the queue ran
 * free into it (an fp32 trainer before three of the graph's five slowest requests, session 73).
 * The tenants' own timing does not depend on the node (they are never held), so their recorded
 * busy periods are what the node would see again; the node decides at each of them (in the runs
 * it also decided at the best-effort tenants' events, which only adds chances to give a guard).
 */
class RecordedLapsesTest {

    static final long MS = 1_000_000L;
    static final long DECODE = 1;
    static final long BEHIND = 2;
    static final long GRAPH = 3;
    /** How long before the graph's arrival a best-effort command launched unguarded runs into it. */
    static final long EXPOSED_NANOS = 1_500_000L;
    /** The graph's first second of requests for real (its beat learnt) is left out. */
    static final long SETTLE_NANOS = 1_000 * MS;
    static final Path RESULTS = Path.of("..", "docs", "results", "h200");
    static final Map<String, Long> REASONS = new TreeMap<>();
    private static final Pattern SHOWN = Pattern.compile("xq: arrivals default: arrived (\\d+), idle (\\d+)");

    static List<long[]> busy(Path log) throws IOException {
        String text;
        try (InputStream in = log.toString().endsWith(".gz") ? new GZIPInputStream(Files.newInputStream(log)) : Files.newInputStream(log)) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<long[]> out = new ArrayList<>();
        Matcher m = SHOWN.matcher(text);
        while (m.find()) {
            long idle = Long.parseLong(m.group(2));
            if (idle != 0) {
                out.add(new long[] {Long.parseLong(m.group(1)), idle});
            }
        }
        return out;
    }

    private static final Pattern CLOCK = Pattern.compile("xq: timeline clock: monotonic (\\d+) ns, realtime (\\d+) ns");
    private static final Pattern FIRST_T = Pattern.compile("\"t_ms\": \\[([0-9.]+)");

    /** The graph's first request for real on the interposer's clock (its JSON's first t_ms), or -1. */
    static long firstRequest(Path dir) throws IOException {
        Path log = log(dir, "graph");
        String text;
        try (InputStream in = log.toString().endsWith(".gz") ? new GZIPInputStream(Files.newInputStream(log)) : Files.newInputStream(log)) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher c = CLOCK.matcher(text);
        Path json = dir.resolve("graph.json");
        if (!c.find() || !Files.exists(json)) {
            return -1;
        }
        Matcher t = FIRST_T.matcher(Files.readString(json));
        if (!t.find()) {
            return -1;
        }
        return (long) (Double.parseDouble(t.group(1)) * 1e6) - Long.parseLong(c.group(2)) + Long.parseLong(c.group(1));
    }

    static Path log(Path dir, String tenant) {
        Path plain = dir.resolve(tenant + ".log");
        return Files.exists(plain) ? plain : dir.resolve(tenant + ".log.gz");
    }

    /** A view: the queue behind is a trainer's, its commands 1.3 ms on average. */
    static QueueView view(long handle, boolean ready, long since, AtomicLong done) {
        return new QueueView(handle, "q" + handle, "d0", "g" + handle, ready, false, false, ready ? since : 0, 0, 0, ready ? 1 : 0, 0,
                handle == BEHIND ? done.incrementAndGet() : 0, handle == BEHIND ? 1_300_000L : 0, List.of(), PreemptionLevel.BLOCK);
    }

    /**
     * {graph arrivals counted, of them with the queue behind under a lapsed guard just before} for
     * one run; {@link #REASONS} gets every arrival's case (held by the decision, no guard, lapsed,
     * a guard whose horizon is past the arrival, guarded). The replay finds no beat for the graph
     * at some arrivals where the node, which also counts each request's commands, may have one:
     * "no guard" is the replay's, and the same with and without the decision past a lapse.
     */
    static long[] replay(List<long[]> decode, List<long[]> graph, long go, boolean lapses) {
        // events: time -> {queue, 1 arrival / 0 idle}; a busy period's idle at the same time as another's arrival comes first
        TreeMap<Long, List<long[]>> events = new TreeMap<>();
        for (long[] b : decode) {
            events.computeIfAbsent(b[0], k -> new ArrayList<>()).add(new long[] {DECODE, 1});
            events.computeIfAbsent(b[1], k -> new ArrayList<>()).add(0, new long[] {DECODE, 0});
        }
        for (long[] b : graph) {
            events.computeIfAbsent(b[0], k -> new ArrayList<>()).add(new long[] {GRAPH, 1});
            events.computeIfAbsent(b[1], k -> new ArrayList<>()).add(0, new long[] {GRAPH, 0});
        }
        ArrivalGuards guards = new ArrivalGuards();
        AtomicLong done = new AtomicLong();
        long[] since = new long[4];
        boolean[] up = new boolean[4];
        long start = go; // the graph's first request for real; its first second left out (SETTLE_NANOS)
        long counted = 0;
        long lapsed = 0;
        long lastDecision = events.firstKey();
        for (Map.Entry<Long, List<long[]>> e : events.entrySet()) {
            long now = e.getKey();
            // the decision past a lapse, where it comes before this event
            long wake = guards.lapseWake();
            if (lapses && wake != Long.MAX_VALUE && wake - lastDecision > 0 && now - wake > 0) {
                decide(guards, wake, up, since, done);
                lastDecision = wake;
            }
            boolean graphArrives = false;
            boolean heldBefore = up[(int) DECODE] || up[(int) GRAPH];
            for (long[] ev : e.getValue()) {
                up[(int) ev[0]] = ev[1] == 1;
                since[(int) ev[0]] = ev[1] == 1 ? now : 0;
                graphArrives |= ev[0] == GRAPH && ev[1] == 1;
            }
            if (graphArrives && now - start > SETTLE_NANOS) {
                // the guard in force for the queue behind just before the graph's arrival: one
                // whose horizon is at or before the arrival and that has not lapsed by then
                ArrivalGuards.Guard g = guards.given().get(BEHIND);
                counted++;
                if (heldBefore) {
                    REASONS.merge("held", 1L, Long::sum);
                } else if (g == null) {
                    REASONS.merge("no guard", 1L, Long::sum);
                } else if (g.untilNanos() - (now - EXPOSED_NANOS) < 0) {
                    REASONS.merge("lapsed", 1L, Long::sum);
                    lapsed++;
                } else if (g.horizonNanos() - now > 0) {
                    REASONS.merge("horizon past the arrival", 1L, Long::sum);
                } else {
                    REASONS.merge("guarded", 1L, Long::sum);
                }
            }
            decide(guards, now, up, since, done);
            lastDecision = now;
        }
        return new long[] {counted, lapsed};
    }

    static void decide(ArrivalGuards guards, long now, boolean[] up, long[] since, AtomicLong done) {
        boolean held = up[(int) DECODE] || up[(int) GRAPH];
        guards.update("hpf", now, List.of(view(DECODE, up[(int) DECODE], since[(int) DECODE], done), view(GRAPH, up[(int) GRAPH], since[(int) GRAPH], done),
                view(BEHIND, true, 5, done)), new java.util.HashMap<>(Map.of(BEHIND, held)));
    }

    @Test
    void theDecisionPastALapseGuardsTheQueueBehindBeforeTheGraphsArrivals() throws IOException {
        List<Path> runs = new ArrayList<>();
        try (Stream<Path> s = Files.walk(RESULTS)) {
            s.filter(p -> p.getFileName().toString().equals("xq") && Files.isDirectory(p))
                    .filter(p -> Files.exists(log(p, "decode")) && Files.exists(log(p, "graph")))
                    .sorted()
                    .forEach(runs::add);
        }
        long counted = 0;
        long before = 0;
        long after = 0;
        int replayed = 0;
        StringBuilder report = new StringBuilder();
        for (Path run : runs) {
            List<long[]> decode = busy(log(run, "decode"));
            List<long[]> graph = busy(log(run, "graph"));
            long go = firstRequest(run);
            if (decode.size() < 100 || graph.size() < 100 || go < 0) {
                continue; // an interposer that did not show its busy periods (before session 43)
            }
            REASONS.clear();
            long[] without = replay(decode, graph, go, false);
            String w0 = REASONS.toString();
            REASONS.clear();
            long[] with = replay(decode, graph, go, true);
            String w1 = REASONS.toString();
            replayed++;
            counted += with[0];
            before += without[1];
            after += with[1];
            report.append(String.format("%n  %s: %d arrivals, under a lapsed guard %d without, %d with: %s -> %s",
                    RESULTS.relativize(run.getParent().getParent()), with[0], without[1], with[1], w0, w1));
        }
        System.out.println("recorded lapses: " + replayed + " runs, " + counted + " graph arrivals; the queue behind under a lapsed guard just before them: "
                + before + " without the decision past a lapse, " + after + " with it" + report);
        assertTrue(replayed >= 3, "runs of a decoder and a graph replayed: " + replayed);
        assertTrue(before >= 20 && after * 2 <= before, "at most half as many graph arrivals met the queue behind under a lapsed guard: " + before + " -> " + after);
    }
}
