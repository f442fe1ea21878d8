package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

/**
 * Replays an eager batch's busy periods as the interposer recorded them on the H200 (session 42:
 * every run of the batch beside GEMMs, {@code docs/results/h200/2026-11-30-s42}) through the
 * node's arrival guards, a GEMM process (21 ms commands) behind it, once with the beat of
 * requests in fragments and once without: the batch's own requests do not depend on the node
 * (it is never held), so its recorded timeline is what the node would see again, up to the
 * GEMMs' effect on its lengths in the run recorded. Idle gaps under {@link #IDLE_SEEN_NANOS} are
 * taken as not seen by the node (it sees an idle only at a decision). The GEMMs are ready
 * throughout (in the runs they came back at some point around the batch's first requests, which
 * began a spell of learning of its own; here the spell is the one its warm-up began).
 */
class RecordedBeatsTest {

    static final long MS = 1_000_000L;
    /**
     * Idle gaps shorter than this are merged into one busy period: the node sees an idle only at a
     * decision, how soon after it goes idle is not recorded; both are replayed.
     */
    static final long[] IDLE_SEEN_NANOS = {200_000L, 500_000L};
    /** How long after the batch's first request for real the replay goes on. */
    static final long REPLAY_NANOS = 1_500 * MS;

    /**
     * The runs replayed: session 42's, or any folder of runs laid out as the GPU scripts write them
     * ({@code -Dxq.replay.dir=DIR}: every {@code .../xq/bulk.log.gz} under it with its {@code bulk.json},
     * and every {@code graph.log.gz} that has the busy periods the node was shown;
     * the minimum count of runs and the comparison still apply).
     */
    static final Path RECORDED = Path.of(System.getProperty("xq.replay.dir", Path.of("..", "docs", "results", "h200", "2026-11-30-s42").toString()));

    /** The wide latency-critical tenants replayed: the eager batch, and the CUDA graph where its log has what the node was shown. */
    static final java.util.Set<String> LATENCY_CRITICAL = java.util.Set.of("bulk.log.gz", "graph.log.gz");

    private static final Pattern CLOCK = Pattern.compile("xq: timeline clock: monotonic (\\d+) ns, realtime (\\d+) ns");
    private static final Pattern WINDOW = Pattern.compile("xq: timeline default: launched (\\d+), from \\d+, end (\\d+),");
    /** The busy periods the node was shown (interposers from session 43 on, XQ_LOG=3): used where present. */
    private static final Pattern SHOWN = Pattern.compile("xq: arrivals default: arrived (\\d+), idle (\\d+)");
    private static final Pattern FIRST_T = Pattern.compile("\"t_ms\": \\[([0-9.]+)");

    /** A run's busy periods (monotonic ns) and its first request for real. */
    record Recorded(String name, List<long[]> busy, long go) {
    }

    static Recorded load(Path log, long idleSeen) throws IOException {
        String text;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(log))) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        long mono = -1;
        long real = -1;
        List<long[]> windows = new ArrayList<>();
        List<long[]> shown = new ArrayList<>();
        for (String line : text.split("\n")) {
            Matcher a = SHOWN.matcher(line);
            if (a.find() && Long.parseLong(a.group(2)) != 0) {
                shown.add(new long[] {Long.parseLong(a.group(1)), Long.parseLong(a.group(2))});
            }
            Matcher c = CLOCK.matcher(line);
            if (c.find()) {
                mono = Long.parseLong(c.group(1));
                real = Long.parseLong(c.group(2));
            }
            Matcher w = WINDOW.matcher(line);
            if (w.find()) {
                windows.add(new long[] {Long.parseLong(w.group(1)), Long.parseLong(w.group(2))});
            }
        }
        String tenant = log.getFileName().toString().replace(".log.gz", "");
        if (!tenant.equals("bulk") && shown.isEmpty()) {
            return null; // a graph's timeline holds its warm-up only: nothing to replay
        }
        Matcher t = FIRST_T.matcher(json(log.resolveSibling(tenant + ".json")));
        assertTrue(mono > 0 && t.find() && (!windows.isEmpty() || !shown.isEmpty()), "a timeline, its clock and the requests' times in " + log);
        long go = (long) (Double.parseDouble(t.group(1)) * 1e6) - real + mono;
        if (!shown.isEmpty()) {
            windows = shown; // what the node was shown, not the long runs the timeline keeps
        }
        windows.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> busy = new ArrayList<>();
        for (long[] w : windows) {
            long[] lastBusy = busy.isEmpty() ? null : busy.getLast();
            if (lastBusy != null && w[0] <= lastBusy[1] + idleSeen) {
                lastBusy[1] = Math.max(lastBusy[1], w[1]);
            } else {
                busy.add(new long[] {w[0], w[1]});
            }
        }
        Path base = RECORDED.toAbsolutePath().normalize();
        Path run = log.toAbsolutePath().normalize().getParent().getParent();
        String name = run.startsWith(base) ? base.relativize(run).toString() : run.getFileName().toString();
        return new Recorded(tenant.equals("bulk") ? name : name + " (" + tenant + ")", busy, go);
    }

    /** What the GEMM process got: {first request (ms after go) at whose end it ran whole, decisions narrowed after go}. */
    static long[] replay(Recorded r, boolean requestBeats) {
        ArrivalGuards guards = new ArrivalGuards();
        guards.requestBeats(requestBeats);
        long wholeAt = -1;
        long narrowed = 0;
        List<long[]> busy = r.busy();
        for (int i = 0; i < busy.size(); i++) {
            long[] b = busy.get(i);
            if (b[0] - r.go() > REPLAY_NANOS) {
                break;
            }
            boolean[] arrival = ArrivalGuardsTest.step(guards, b[0], 132, true, b[0]);
            boolean[] idle = ArrivalGuardsTest.step(guards, b[1], 132, false, 0);
            // and halfway to the next busy period, where that is far: between two requests
            long next = i + 1 < busy.size() ? busy.get(i + 1)[0] : b[1] + 100 * MS;
            boolean[] between = next - b[1] > 20 * MS ? ArrivalGuardsTest.step(guards, (b[1] + next) / 2, 132, false, 0) : null;
            if (b[0] - r.go() > -50 * MS) {
                narrowed += (arrival[1] ? 1 : 0) + (idle[1] ? 1 : 0) + (between != null && between[1] ? 1 : 0);
                if (wholeAt < 0 && between != null && !between[0] && !between[1]) {
                    wholeAt = (b[0] - r.go()) / MS;
                }
            }
        }
        return new long[] {wholeAt, narrowed};
    }

    @Test
    void theRecordedBatchesBeatsWithAndWithoutRequestsInFragments() throws IOException {
        assertTrue(Files.isDirectory(RECORDED), "the recorded runs at " + RECORDED.toAbsolutePath());
        List<Path> logs;
        try (Stream<Path> s = Files.walk(RECORDED)) {
            logs = s.filter(p -> LATENCY_CRITICAL.contains(p.getFileName().toString()) && p.getParent().getFileName().toString().equals("xq"))
                    .sorted().toList();
        }
        assertTrue(logs.size() >= (System.getProperty("xq.replay.dir") == null ? 20 : 1), "the batch's runs beside GEMMs: " + logs.size());
        StringBuilder table = new StringBuilder("run: first request after which the GEMMs ran whole between two (ms after the first"
                + " request; -1: none in 1.5 s), decisions that narrowed them; without / with the beat of requests in fragments\n");
        int better = 0;
        int worse = 0;
        for (long idleSeen : IDLE_SEEN_NANOS) {
          table.append("idle seen from ").append(idleSeen / 1000).append(" us:\n");
          for (Path log : logs) {
            Recorded r = load(log, idleSeen);
            if (r == null) {
                continue;
            }
            long[] without = replay(r, false);
            long[] with = replay(r, true);
            table.append(String.format("  %-48s %6d ms %3d  /  %6d ms %3d%n", r.name(), without[0], without[1], with[0], with[1]));
            long w0 = without[0] < 0 ? Long.MAX_VALUE : without[0];
            long w1 = with[0] < 0 ? Long.MAX_VALUE : with[0];
            if (w1 > w0 || with[1] > without[1]) {
                worse++;
            } else if (w1 < w0 || with[1] < without[1]) {
                better++;
            }
          }
        }
        System.out.print(table);
        assertTrue(worse == 0 && better > 0, "with the beat of requests in fragments: better in " + better + ", worse in " + worse + "\n" + table);
    }

    /** Where the log has the busy periods the node was shown, those are replayed, not the timeline's long runs. */
    @Test
    void theBusyPeriodsShownAreTakenOverTheTimeline(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path xq = Files.createDirectories(dir.resolve("run/xq"));
        String log = String.join("\n",
                "xq: timeline clock: monotonic 5000000000 ns, realtime 1800000000000000000 ns",
                "xq: timeline default: launched 1000000000, from 1000000000, end 1009000000, estimate 1, horizon 0, commands 300, width 1024/1024",
                "xq: arrivals default: arrived 1000000000, idle 1003000000",
                "xq: arrivals default: arrived 1003400000, idle 1009000000",
                "xq: arrivals default: arrived 1100000000, idle 0", "");
        try (java.io.OutputStream out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(xq.resolve("bulk.log.gz")))) {
            out.write(log.getBytes(StandardCharsets.UTF_8));
        }
        Files.writeString(xq.resolve("bulk.json"), "{\"t_ms\": [1799999996000.0]}");
        Recorded r = load(xq.resolve("bulk.log.gz"), 200_000);
        assertTrue(r.busy().size() == 2 && r.busy().get(0)[1] == 1_003_000_000L && r.busy().get(1)[0] == 1_003_400_000L,
                "the two shown busy periods (the one still open at exit left out), apart: " + r.busy().stream().map(java.util.Arrays::toString).toList());
        assertTrue(r.go() == 1_000_000_000L, "the first request at monotonic 1 s: " + r.go());
        Recorded merged = load(xq.resolve("bulk.log.gz"), 500_000);
        assertTrue(merged.busy().size() == 1, "an idle of 400 us not seen from 500 us: one busy period");
    }

    /**
     * A graph service's streams, each with the width the node read at each arrival where the log
     * says it (interposers from 1 Dec on): a stream the node never knew the width of is replayed
     * as such, and it keeps the GEMM narrowed beside the graph's first requests while it counts as
     * arrived lately (the lines of older logs, without a width, replay every stream as wide as the device).
     */
    @Test
    void aStreamsWidthIsTakenFromTheLogWhereItSaysIt(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path xq = Files.createDirectories(dir.resolve("run/xq"));
        List<String> lines = new ArrayList<>(List.of("xq: timeline clock: monotonic 5000000000 ns, realtime 1800000000000000000 ns"));
        long go = 2_000_000_000L;
        // a side stream of two launches whose width the node did not know, 10 ms before the first request
        lines.add("xq: arrivals s1: arrived " + (go - 10 * MS) + ", idle " + (go - 9 * MS) + ", width 0 of 0");
        for (int i = 0; i < 70; i++) { // past the replay's end
            long t = go + i * 25 * MS;
            lines.add("xq: arrivals default: arrived " + t + ", idle " + (t + 1_700_000L) + ", width 132 of 132");
        }
        // its warm-up, long before (its width seen)
        for (int i = 0; i < 5; i++) {
            long t = go - 1500 * MS + i * 9 * MS;
            lines.add("xq: arrivals default: arrived " + t + ", idle " + (t + 8 * MS) + ", width 132 of 132");
        }
        try (java.io.OutputStream out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(xq.resolve("graph.log.gz")))) {
            out.write(String.join("\n", lines).getBytes(StandardCharsets.UTF_8));
        }
        Files.writeString(xq.resolve("graph.json"), "{\"t_ms\": [" + ((1_800_000_000_000_000_000L - 5_000_000_000L + go) / 1_000_000) + ".0]}");
        Streams r = loadStreams(xq.resolve("graph.log.gz"));
        assertTrue(r != null && r.busy().get("s1").get(0)[2] == 0 && r.busy().get("default").get(0)[2] == (132 | 132L << 16),
                "each busy period with the width read at its arrival");
        int[] unknown = replayStreams(r);
        assertTrue(unknown[0] > 0, "a stream of unknown width that arrived lately keeps the GEMM narrowed beside the requests: " + unknown[0]);
        assertTrue(unknown[1] > 0, "and it runs whole between them once that stream is quiet: " + unknown[1]);
        // the same log without widths (an older interposer's): every stream as wide as the device
        List<String> old = lines.stream().map(l -> l.replaceAll(", width \\d+ of \\d+", "")).toList();
        try (java.io.OutputStream out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(xq.resolve("graph.log.gz")))) {
            out.write(String.join("\n", old).getBytes(StandardCharsets.UTF_8));
        }
        int[] wide = replayStreams(loadStreams(xq.resolve("graph.log.gz")));
        assertTrue(wide[0] == 0 && wide[1] > 0, "all wide: never narrowed beside the requests, whole between them: " + java.util.Arrays.toString(wide));
    }

    /**
     * A ResNet-50 graph's busy periods as its interposer showed them to the node on the H200
     * (session 44's first call, the run whose GEMM starved): one request of 3.4 ms among ones of
     * 1.7 ms, on a 25 ms beat, a 21.5 ms GEMM behind it. Its requests never stall, so the slow one
     * holds nothing after it: the GEMM runs whole in every gap after the beat is known, under a
     * guard that leaves it its command. Before (the hold the longest of the latest 16 requests) the
     * replay narrowed it from the slow request on for sixteen requests (3.4 ms held after each
     * arrival left it 20.2 ms, less than its command), as the GPU run starved it there.
     */
    @Test
    void aGraphsSlowRequestDoesNotKeepTheGemmOutOfItsGaps() throws IOException {
        Path log = Path.of("..", "docs", "results", "h200", "2026-11-30-s44", "call1", "1-s43", "logs-2", "graph+gemm", "xq", "graph.log.gz");
        Recorded r = load(log, 1);
        ArrivalGuards guards = new ArrivalGuards();
        List<long[]> busy = r.busy();
        int narrowed = 0;
        int whole = 0;
        int gaps = 0;
        int slow = 0;
        long beatKnown = -1;
        for (int i = 0; i < busy.size(); i++) {
            long[] b = busy.get(i);
            long next = i + 1 < busy.size() ? busy.get(i + 1)[0] : b[1] + 25 * MS;
            boolean[] arrival = ArrivalGuardsTest.step(guards, b[0], 132, true, b[0]);
            boolean[] idle = ArrivalGuardsTest.step(guards, b[1], 132, false, 0);
            boolean[] later = next - b[1] > 2 * MS ? ArrivalGuardsTest.step(guards, b[1] + MS / 2, 132, false, 0) : null;
            if (beatKnown < 0 && later != null && !later[0] && !later[1]) {
                beatKnown = i;
            }
            if (beatKnown >= 0 && next - b[1] > 20 * MS) {
                gaps++;
                narrowed += (arrival[1] ? 1 : 0) + (idle[1] ? 1 : 0) + (later != null && later[1] ? 1 : 0);
                ArrivalGuards.Guard g = guards.given().get(ArrivalGuardsTest.B);
                if (later != null && !later[0] && !later[1] && g != null && g.horizonNanos() - (b[1] + MS / 2) > 21_500_000L) {
                    whole++;
                }
                if (b[1] - b[0] > 3 * MS) {
                    slow++;
                }
            }
        }
        assertTrue(beatKnown > 0 && beatKnown < 60, "the graph's beat found in its first requests: " + beatKnown);
        assertTrue(slow >= 5, "the recorded run has its slow requests: " + slow);
        assertTrue(narrowed == 0, "the GEMM narrowed in " + narrowed + " decisions of " + gaps + " gaps");
        assertTrue(whole >= gaps - slow, "whole with its command's room under the guard in " + whole + " of " + gaps + " gaps (" + slow + " after a slow request)");
    }

    /** Every stream's busy periods as the interposer showed them to the node (XQ_LOG=3). */
    private static final Pattern SHOWN_ANY = Pattern.compile("xq: arrivals (\\S+): arrived (\\d+), idle (\\d+)(?:, width (\\d+) of (\\d+))?");

    /**
     * A graph service's streams, each its busy periods (idles under 200 us merged): {arrival, idle,
     * width the node read at the arrival (multiprocessors, the device's in the high 16 bits; 0 not
     * known; -1 where the log does not say, interposers before 1 Dec)}, and its first request for real.
     */
    record Streams(String name, Map<String, List<long[]>> busy, long go) {
    }

    /** A tenant's JSON as recorded: plain, or gzipped beside its log (results over 20 KB are kept as {@code .gz}). */
    static String json(Path file) throws IOException {
        if (Files.exists(file)) {
            return Files.readString(file);
        }
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file.resolveSibling(file.getFileName() + ".gz")))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static Streams loadStreams(Path log) throws IOException {
        String text;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(log))) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        long mono = -1;
        long real = -1;
        Map<String, List<long[]>> shown = new TreeMap<>();
        for (String line : text.split("\n")) {
            Matcher a = SHOWN_ANY.matcher(line);
            if (a.find() && Long.parseLong(a.group(3)) != 0) {
                long width = a.group(4) == null ? -1 : Long.parseLong(a.group(4)) | Long.parseLong(a.group(5)) << 16;
                shown.computeIfAbsent(a.group(1), k -> new ArrayList<>()).add(new long[] {Long.parseLong(a.group(2)), Long.parseLong(a.group(3)), width});
            }
            Matcher c = CLOCK.matcher(line);
            if (c.find()) {
                mono = Long.parseLong(c.group(1));
                real = Long.parseLong(c.group(2));
            }
        }
        if (shown.size() < 2 || !shown.containsKey("default")) {
            return null;
        }
        Matcher t = FIRST_T.matcher(json(log.resolveSibling("graph.json")));
        assertTrue(mono > 0 && t.find(), "the timeline's clock and the requests' times in " + log);
        long go = (long) (Double.parseDouble(t.group(1)) * 1e6) - real + mono;
        Map<String, List<long[]>> busy = new TreeMap<>();
        for (Map.Entry<String, List<long[]>> e : shown.entrySet()) {
            List<long[]> w = e.getValue();
            w.sort((x, y) -> Long.compare(x[0], y[0]));
            List<long[]> merged = new ArrayList<>();
            for (long[] p : w) {
                if (!merged.isEmpty() && p[0] <= merged.getLast()[1] + 200_000L) {
                    merged.getLast()[1] = Math.max(merged.getLast()[1], p[1]);
                } else {
                    merged.add(new long[] {p[0], p[1], p[2]});
                }
            }
            busy.put(e.getKey(), merged);
        }
        Path base = Path.of("..", "docs", "results", "h200").toAbsolutePath().normalize();
        Path run = log.toAbsolutePath().normalize().getParent().getParent();
        return new Streams(run.startsWith(base) ? base.relativize(run).toString() : run.toString(), busy, go);
    }

    /**
     * Replays all of a graph service's streams (each a queue of priority 2 as wide as the device)
     * with a GEMM process (21 ms commands, narrowed by the policy at every decision) ready
     * throughout, deciding at every busy period's start and end and halfway through gaps over
     * 20 ms, from the service's first arrival to 1.5 s after its first request for real.
     *
     * @return {decisions after the first request that left the GEMM narrowed, decisions in the
     *     last half second that let it run on the whole device}
     */
    static int[] replayStreams(Streams r) {
        return replayStreams(r, Long.MIN_VALUE);
    }

    /** {@link #replayStreams(Streams)} with the GEMM process there from {@code bFrom} (monotonic ns) on. */
    static int[] replayStreams(Streams r, long bFrom) {
        Map<String, Long> handles = new HashMap<>();
        List<long[]> events = new ArrayList<>(); // {time, handle, 1 arrival / 0 idle, width word}
        for (Map.Entry<String, List<long[]>> e : r.busy().entrySet()) {
            long h = e.getKey().equals("default") ? ArrivalGuardsTest.A : 10 + handles.size();
            handles.put(e.getKey(), h);
            for (long[] b : e.getValue()) {
                events.add(new long[] {b[0], h, 1, b[2]});
                events.add(new long[] {b[1], h, 0, b[2]});
            }
        }
        events.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[2], y[2]));
        ArrivalGuards guards = new ArrivalGuards();
        Map<Long, Long> since = new HashMap<>();
        // each stream's width as the node read it at its latest arrival (where the log says; else
        // as wide as the device, a CUDA graph's), not known before its first
        Map<Long, dev.xq.policy.spi.QueueSpace> widths = new HashMap<>();
        for (long h : handles.values()) {
            since.put(h, 0L);
            widths.put(h, new dev.xq.policy.spi.QueueSpace(false, 132, 132));
        }
        long end = r.go() + REPLAY_NANOS;
        int narrowed = 0;
        int wholeLate = 0;
        for (int i = 0; i < events.size(); i++) {
            long[] ev = events.get(i);
            if (ev[0] > end) {
                break;
            }
            since.put(ev[1], ev[2] == 1 ? ev[0] : 0L);
            if (ev[2] == 1 && ev[3] >= 0) {
                widths.put(ev[1], new dev.xq.policy.spi.QueueSpace(false, (int) (ev[3] & 0xffff), (int) (ev[3] >> 16)));
            }
            List<Long> at = new ArrayList<>(List.of(ev[0]));
            long next = i + 1 < events.size() ? events.get(i + 1)[0] : ev[0] + 100 * MS;
            if (next - ev[0] > 20 * MS) {
                at.add((ev[0] + next) / 2);
            }
            if (bFrom > ev[0] && bFrom < next) {
                at.add(bFrom);
            }
            for (long now : at) {
                ArrivalGuardsTest.TestSpace sp = ArrivalGuardsTest.space(132, 1, List.of());
                List<dev.xq.policy.spi.QueueView> views = new ArrayList<>();
                for (Map.Entry<Long, Long> q : since.entrySet()) {
                    sp.spaces.put(q.getKey(), widths.get(q.getKey()));
                    views.add(ArrivalGuardsTest.prioritized(q.getKey(), 2, q.getValue() != 0, q.getValue(), 0));
                }
                if (now < bFrom) {
                    guards.update("hpf", now, views, new HashMap<>(), sp);
                    continue;
                }
                views.add(bFrom == Long.MIN_VALUE ? ArrivalGuardsTest.behind(21 * MS, now) : new dev.xq.policy.spi.QueueView(ArrivalGuardsTest.B, "q2",
                        "d0", "g2", true, false, false, bFrom, 0, 0, 1, 0, now / MS, 21 * MS, List.of(new dev.xq.api.Hint.Priority(1)),
                        dev.xq.api.PreemptionLevel.BLOCK));
                Map<Long, Boolean> decided = new HashMap<>(Map.of(ArrivalGuardsTest.B, true));
                guards.update("hpf", now, views, decided, sp);
                boolean isNarrowed = sp.narrowed(ArrivalGuardsTest.B) > 0;
                if (now >= r.go() && isNarrowed) {
                    narrowed++;
                }
                if (now > end - 500 * MS && !isNarrowed && Boolean.FALSE.equals(decided.get(ArrivalGuardsTest.B))) {
                    wholeLate++;
                }
            }
        }
        return new int[] {narrowed, wholeLate};
    }

    /** Where the GEMM process came back, in ms from the graph's first request for real (none: ready throughout). */
    static final long[] GEMM_FROM_MS = {-300, -100, 0, 30, 60, 100, 120, 150, 200, 300};

    /**
     * Every recorded run of the ResNet-50 graph service whose interposer showed the node all its
     * streams (sessions 44-57; {@code -Dxq.replay.dir} for others), replayed with a GEMM behind it
     * ready throughout and coming back at each of {@link #GEMM_FROM_MS}: the capture stream works
     * without a beat before the first request for real and falls silent as the main stream's
     * requests begin. Where the graph and the GEMM were the only tenants (the replay leaves the
     * others out), the GEMM is never narrowed beside the graph's requests, and it runs on the whole
     * device between them by the end. The table prints every run's counts (the mixes with other
     * tenants too: their replay lacks those, so it is not held against them).
     */
    @Test
    void aGraphServicesStreamsNeverLeaveTheGemmNarrowedBesideItsRequests() throws IOException {
        Path dir = Path.of(System.getProperty("xq.replay.dir", Path.of("..", "docs", "results", "h200").toString()));
        List<Path> logs;
        try (Stream<Path> s = Files.walk(dir)) {
            logs = s.filter(p -> p.getFileName().toString().equals("graph.log.gz") && p.getParent().getFileName().toString().equals("xq")).sorted().toList();
        }
        StringBuilder table = new StringBuilder("run: decisions after the first request that left the GEMM narrowed / decisions in the last"
                + " 0.5 s that let it run whole; the GEMM ready throughout, then back at " + java.util.Arrays.toString(GEMM_FROM_MS) + " ms\n");
        int runs = 0;
        int pairs = 0;
        List<String> failed = new ArrayList<>();
        for (Path log : logs) {
            Streams r = loadStreams(log);
            if (r == null) {
                continue;
            }
            runs++;
            // the mix of the two alone (not bulk+graph+gemm, whose replay lacks the batch above the graph)
            boolean pair = r.name().endsWith("/graph+gemm") || r.name().equals("graph+gemm");
            pairs += pair ? 1 : 0;
            table.append(String.format("  %-66s", r.name()));
            for (int k = -1; k < GEMM_FROM_MS.length; k++) {
                int[] got = k < 0 ? replayStreams(r) : replayStreams(r, r.go() + GEMM_FROM_MS[k] * MS);
                table.append(String.format(" %3d/%2d", got[0], got[1]));
                if (pair && (got[0] > 0 || got[1] == 0)) {
                    failed.add(r.name() + (k < 0 ? " (ready throughout)" : " (back at " + GEMM_FROM_MS[k] + " ms)"));
                }
            }
            table.append("\n");
        }
        System.out.print(table);
        assertTrue(runs >= (System.getProperty("xq.replay.dir") == null ? 90 : 1) && (pairs > 0 || System.getProperty("xq.replay.dir") != null),
                "graph runs with their streams shown: " + runs + ", of them beside a GEMM alone: " + pairs);
        assertTrue(failed.isEmpty(), "the GEMM narrowed beside the graph's requests, or never whole at the end, in " + failed + "\n" + table);
    }

    /**
     * Replays a graph service's streams with a queue of short commands behind them (a trainer's,
     * 200 us), held in time as hpf holds it: held while a stream of the service works, let run
     * while none does, the node's space telling widths only; decisions at every busy period's
     * start and end, halfway through gaps over 20 ms, and when the guards ask to decide again.
     *
     * @return {the graph's requests 2-4 after its first for real before which the trainer ran in
     *     the gap with no guard, ms the trainer was held while no stream worked in the 1.5 s from
     *     the first request}
     */
    static long[] replayShort(Streams r) {
        Map<String, Long> handles = new HashMap<>();
        List<long[]> events = new ArrayList<>();
        for (Map.Entry<String, List<long[]>> e : r.busy().entrySet()) {
            long h = e.getKey().equals("default") ? ArrivalGuardsTest.A : 10 + handles.size();
            handles.put(e.getKey(), h);
            for (long[] b : e.getValue()) {
                events.add(new long[] {b[0], h, 1, b[2]});
                events.add(new long[] {b[1], h, 0, b[2]});
            }
        }
        events.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[2], y[2]));
        ArrivalGuards guards = new ArrivalGuards();
        Map<Long, Long> since = new HashMap<>();
        Map<Long, dev.xq.policy.spi.QueueSpace> widths = new HashMap<>();
        for (long h : handles.values()) {
            since.put(h, 0L);
            widths.put(h, new dev.xq.policy.spi.QueueSpace(false, 132, 132));
        }
        widths.put(ArrivalGuardsTest.B, new dev.xq.policy.spi.QueueSpace(true, 8, 132));
        long end = r.go() + REPLAY_NANOS;
        int requests = 0; // the default stream's arrivals from the first request for real on
        boolean ranUnguarded = false;
        long unguardedBefore = 0;
        long heldIdle = 0;
        long lastAt = 0;
        boolean lastHeldIdle = false;
        long wake = Long.MAX_VALUE;
        for (int i = 0; i < events.size(); i++) {
            long[] ev = events.get(i);
            if (ev[0] > end) {
                break;
            }
            if (ev[1] == ArrivalGuardsTest.A && ev[2] == 1 && ev[0] >= r.go()) {
                requests++;
                if (requests >= 2 && requests <= 4 && ranUnguarded) {
                    unguardedBefore++;
                }
                ranUnguarded = false;
            }
            since.put(ev[1], ev[2] == 1 ? ev[0] : 0L);
            if (ev[2] == 1 && ev[3] >= 0) {
                widths.put(ev[1], new dev.xq.policy.spi.QueueSpace(false, (int) (ev[3] & 0xffff), (int) (ev[3] >> 16)));
            }
            long next = i + 1 < events.size() ? events.get(i + 1)[0] : ev[0] + 100 * MS;
            List<Long> at = new ArrayList<>(List.of(ev[0]));
            if (next - ev[0] > 20 * MS) {
                at.add((ev[0] + next) / 2);
            }
            for (int k = 0; k < at.size(); k++) {
                long now = at.get(k);
                boolean anyReady = since.values().stream().anyMatch(v -> v != 0);
                if (lastAt != 0 && lastHeldIdle && lastAt >= r.go()) {
                    heldIdle += Math.min(now, end) - lastAt;
                }
                List<dev.xq.policy.spi.QueueView> views = new ArrayList<>();
                for (Map.Entry<Long, Long> q : since.entrySet()) {
                    views.add(ArrivalGuardsTest.prioritized(q.getKey(), 2, q.getValue() != 0, q.getValue(), 0));
                }
                views.add(ArrivalGuardsTest.behind(200_000L, now));
                Map<Long, Boolean> decided = new HashMap<>(Map.of(ArrivalGuardsTest.B, anyReady));
                guards.update("hpf", now, views, decided, ArrivalGuards.Space.widths(h -> widths.getOrDefault(h, dev.xq.policy.spi.QueueSpace.NONE)));
                boolean held = Boolean.TRUE.equals(decided.get(ArrivalGuardsTest.B));
                if (!held && !anyReady && guards.given().get(ArrivalGuardsTest.B) == null) {
                    ranUnguarded = true;
                }
                lastAt = now;
                lastHeldIdle = held && !anyReady;
                wake = guards.lingerWake();
                if (wake > now && wake < next && (k + 1 == at.size() || wake < at.get(k + 1))) {
                    at.add(k + 1, wake); // the scheduler decides again when the guards ask
                }
            }
        }
        return new long[] {unguardedBefore, heldIdle / MS};
    }

    /**
     * Every recorded graph run replayed with a trainer's short commands behind it: before the
     * graph's beat is known the trainer is held between its requests (it ran into requests 2-4,
     * unguarded, in 15 of 16 such runs on the H200; replayed before the rule, before 194 of the
     * 303 requests 2-4 of these 101 runs), at the cost of a few of its periods (45 ms median).
     */
    @Test
    void aGraphsFirstRequestsFindTheShortCommandsBehindItHeld() throws IOException {
        Path dir = Path.of(System.getProperty("xq.replay.dir", Path.of("..", "docs", "results", "h200").toString()));
        List<Path> logs;
        try (Stream<Path> s = Files.walk(dir)) {
            logs = s.filter(p -> p.getFileName().toString().equals("graph.log.gz") && p.getParent().getFileName().toString().equals("xq")).sorted().toList();
        }
        StringBuilder table = new StringBuilder("run: the graph's requests 2-4 with the trainer let run unguarded before them, ms it was held with no stream working (1.5 s)\n");
        int runs = 0;
        long unguarded = 0;
        long mostHeld = 0;
        List<Long> held = new ArrayList<>();
        for (Path log : logs) {
            Streams r = loadStreams(log);
            if (r == null) {
                continue;
            }
            runs++;
            long[] got = replayShort(r);
            table.append(String.format("  %-66s %d %4d%n", r.name(), got[0], got[1]));
            unguarded += got[0];
            mostHeld = Math.max(mostHeld, got[1]);
            held.add(got[1]);
        }
        System.out.print(table);
        java.util.Collections.sort(held);
        System.out.println("held with no stream working, ms: median " + (held.isEmpty() ? 0 : held.get(held.size() / 2)) + ", most " + mostHeld);
        assertTrue(runs >= (System.getProperty("xq.replay.dir") == null ? 90 : 1), "graph runs with their streams shown: " + runs);
        // before the rule (session 58's build): 194 of the 303 requests, in all 101 runs, and held 0 ms
        assertTrue(unguarded * 100 <= 3L * runs, unguarded + " of the graph's " + 3 * runs
                + " requests 2-4 found the trainer let run unguarded before them (at most 1 %)\n" + table);
        // the first arrival after a quiet spell alone may hold it up to 100 ms (the cap of a hold:
        // ArrivalGuards.firstArrivals), and a late request or two adds to it: 69 ms at most in the
        // runs of sessions 44-66, 96 in session 70's, 137 in one of session 74's (a graph on an exact
        // 25 ms beat, its warm-up over 1.5 s before)
        assertTrue(mostHeld < 150, "the trainer held up to " + mostHeld + " ms of 1.5 s with no stream working\n" + table);
    }

    /** A recorded array of numbers from a tenant's JSON ({@code "t_ms": [..]}, {@code "lat_ms": [..]}). */
    static double[] numbers(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": \\[([^\\]]*)\\]").matcher(json);
        if (!m.find() || m.group(1).isBlank()) {
            return new double[0];
        }
        return java.util.Arrays.stream(m.group(1).split(",")).mapToDouble(v -> Double.parseDouble(v.trim())).toArray();
    }

    /**
     * Every recorded run of a service whose requests come at random under the node ({@code graphp}
     * since session 40, {@code bulkp} since session 82; {@code -Dxq.replay.dir} for others),
     * replayed as its requests came (their times and lengths as the tenant measured them) with a
     * queue of short commands behind it (a trainer's), with {@code randomReturns} on and off, and
     * looked at between its requests (4 ms after one ended, where the next is more than 8 ms
     * away) after its first 2 s. A batch at random gaps of 100 ms on average has a gap of 250 ms
     * or more about once in twelve requests, and off, each such return holds the trainer through
     * its next four requests; on, once two returns found no beat, almost never. Replayed on the 72
     * runs recorded by session 82: the batch held in 126 of 414 looks off, none on; the graph in
     * 2,347 of 18,021 off, 494 on (its first two returns, before they are judged).
     */
    @Test
    void recordedServicesAtRandomHoldNothingBetweenTheirRequestsOnceTheirReturnsFindNoBeat() throws IOException {
        Path dir = Path.of(System.getProperty("xq.replay.dir", Path.of("..", "docs", "results", "h200").toString()));
        List<Path> runs;
        try (Stream<Path> s = Files.walk(dir)) {
            runs = s.filter(p -> p.getParent() != null && p.getParent().getFileName().toString().equals("xq")
                    && (p.getFileName().toString().equals("graphp.json") || p.getFileName().toString().equals("bulkp.json"))).sorted().toList();
        }
        Map<String, long[]> byKind = new TreeMap<>(); // kind -> {looks, held on, held off, runs}
        StringBuilder table = new StringBuilder("run: looks between requests, held with randomReturns on / off\n");
        for (Path run : runs) {
            String json = json(run);
            double[] t = numbers(json, "t_ms");
            double[] lat = numbers(json, "lat_ms");
            if (t.length < 50 || t.length != lat.length) {
                continue;
            }
            long[] held = new long[2];
            long looks = 0;
            for (int k = 0; k < 2; k++) {
                ArrivalGuards guards = new ArrivalGuards();
                guards.randomReturns(k == 0);
                long base = 1000 * MS;
                looks = 0;
                for (int i = 0; i < t.length; i++) {
                    long at = base + (long) ((t[i] - t[0]) * 1e6);
                    long end = at + (long) (lat[i] * 1e6);
                    long next = i + 1 < t.length ? base + (long) ((t[i + 1] - t[0]) * 1e6) : end + 100 * MS;
                    ArrivalGuardsTest.stepShort(guards, at, true, at, true);
                    ArrivalGuardsTest.stepShort(guards, end, false, 0, true);
                    if (next - end > 8 * MS && at - base > 2000 * MS) {
                        looks++;
                        held[k] += (Boolean) ArrivalGuardsTest.stepShort(guards, end + 4 * MS, false, 0, true)[0] ? 1 : 0;
                    }
                }
            }
            String kind = run.getFileName().toString().replace(".json", "");
            long[] sum = byKind.computeIfAbsent(kind, x -> new long[4]);
            sum[0] += looks;
            sum[1] += held[0];
            sum[2] += held[1];
            sum[3]++;
            table.append(dir.relativize(run)).append(": ").append(looks).append(", ").append(held[0]).append(" / ").append(held[1]).append('\n');
        }
        System.out.print(table);
        long[] bulk = byKind.get("bulkp");
        long[] graph = byKind.get("graphp");
        assertTrue(bulk != null && bulk[3] >= 3 && graph != null && graph[3] >= 10, "the recorded runs of both kinds: " + byKind.keySet() + "\n" + table);
        assertTrue(bulk[2] * 10 > bulk[0], "bulkp, off: held between its requests " + bulk[2] + " of " + bulk[0] + "\n" + table);
        assertTrue(bulk[1] * 50 <= bulk[0], "bulkp, on: held between its requests " + bulk[1] + " of " + bulk[0] + "\n" + table);
        // the graph's gaps (25 ms on average) run past a quiet spell's length rarely; what it still
        // holds on is its first two returns, before they are judged (8 looks a run in most)
        assertTrue(graph[1] * 3 <= graph[2] && graph[1] * 25 <= graph[0], "graphp, on: held " + graph[1] + " of " + graph[0] + " (off " + graph[2] + ")\n"
                + table);
    }
}
