package dev.xq.bench.scenario.processes;

import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the node decided for the processes' queues during one mode of a mix, sampled: every
 * {@link #PERIOD_MILLIS} ms a line per process queue ({@code node-queues.tsv} in the mode's log
 * directory, beside the tenants' own reports), with whether the node held it, which limits were in
 * force (narrowed, on top, guarded), the share of the device's multiprocessors its launches could
 * use, its widths as its process told them, its commands in flight and completed. The tenants'
 * reports tell what each got done; these lines tell what the node did meanwhile, which is what a
 * best-effort tenant's rate against native sharing is read with (bench/gpu/node-queues.py).
 *
 * <p>Queues of applications inside the node (pid 0) are not sampled. Nothing is written for a mode
 * without process queues (native sharing, standalone): no file there.
 */
final class QueueSampler implements AutoCloseable {

    /**
     * How often the queues are read: 47 ms, prime, so that against a tenant's beat of whole tens
     * of milliseconds (the family's are 40-150 ms) the samples walk through every phase of it.
     * At 50 ms they were locked to a 100 ms beat: session 122's bulk (8 ms a request every 100 ms)
     * was never once sampled inside a request, and what the node did to its company then could
     * not be read.
     */
    static final long PERIOD_MILLIS = 47;

    static final String FILE = "node-queues.tsv";

    static final String HEADER = "t_ms\tpid\tname\tstate\theld\tlimits\tsm_share\tin_flight\tpending\tcompleted\test_us\twidth\tstretch\tdevice_sms";

    private final XQueueService service;
    private final Path file;
    private final Thread thread;
    private volatile boolean stop;
    private volatile IOException error;
    private int lines;

    private QueueSampler(XQueueService service, Path dir) {
        this.service = service;
        this.file = dir.resolve(FILE);
        this.thread = Thread.ofPlatform().daemon().name("xq-mix-queue-sampler").start(this::loop);
    }

    /** Starts sampling the node's process queues into {@code dir}/{@value #FILE}. */
    static QueueSampler start(XQueueService service, Path dir) throws IOException {
        Files.createDirectories(dir);
        return new QueueSampler(service, dir);
    }

    private void loop() {
        BufferedWriter w = null;
        try {
            while (!stop) {
                long now = System.currentTimeMillis();
                StringBuilder sb = new StringBuilder();
                List<XQueue> queues;
                try {
                    queues = service.queues();
                } catch (RuntimeException e) {
                    queues = null; // the node going away: nothing to read this time
                }
                for (XQueue q : queues == null ? List.<XQueue>of() : queues) {
                    XQueueStatus s;
                    try {
                        s = q.status();
                    } catch (RuntimeException e) {
                        continue; // closed meanwhile
                    }
                    if (s.pid() <= 0) {
                        continue;
                    }
                    sb.append(now).append('\t').append(s.pid()).append('\t').append(s.name().replace('\t', ' ')).append('\t')
                            .append(s.state().name().toLowerCase(Locale.ROOT)).append('\t').append(s.suspendedByScheduler() ? 1 : 0)
                            .append('\t').append(s.limits().name().toLowerCase(Locale.ROOT)).append('\t').append(s.smSharePercent())
                            .append('\t').append(s.inFlight()).append('\t').append(s.pending()).append('\t').append(s.completed())
                            .append('\t').append(s.estimatedCommandMicros()).append('\t').append(s.widthSms()).append('\t')
                            .append(s.stretchWidthSms()).append('\t').append(s.deviceSms()).append('\n');
                    lines++;
                }
                if (!sb.isEmpty()) {
                    if (w == null) {
                        w = Files.newBufferedWriter(file);
                        w.write(HEADER);
                        w.write('\n');
                    }
                    w.write(sb.toString());
                }
                long sleep = now + PERIOD_MILLIS - System.currentTimeMillis();
                if (sleep > 0) {
                    Thread.sleep(sleep);
                }
            }
        } catch (IOException e) {
            error = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (w != null) {
                try {
                    w.close();
                } catch (IOException e) {
                    if (error == null) {
                        error = e;
                    }
                }
            }
        }
    }

    /**
     * What the node decided for each tenant over one mode, from {@code dir}/{@value #FILE}: per
     * tenant (the queue name's part before '/', which the interposer takes from {@code XQ_NAME}),
     * over its busiest queue's samples with work whose process was not stopped (the paired
     * reading's stops suspend it): how many, and the shares held, narrowed, on top (or alone)
     * and guarded, with the median share of the device's multiprocessors while narrowed. Empty
     * where no file was written (a mode without process queues).
     */
    static Map<String, Map<String, Object>> summary(Path dir) throws IOException {
        Path f = dir.resolve(FILE);
        Map<String, Map<String, Object>> out = new java.util.TreeMap<>();
        if (!Files.isRegularFile(f)) {
            return out;
        }
        Map<String, List<String[]>> byQueue = new java.util.LinkedHashMap<>();
        List<String> lines = Files.readAllLines(f);
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            String[] c = line.split("\t", -1);
            if (c.length == 14) {
                byQueue.computeIfAbsent(c[1] + "\t" + c[2], k -> new ArrayList<>()).add(c);
            }
        }
        Map<String, long[]> busiest = new java.util.HashMap<>(); // tenant -> {completed, index into queues}
        List<List<String[]>> queues = new ArrayList<>(byQueue.values());
        for (int i = 0; i < queues.size(); i++) {
            List<String[]> rows = queues.get(i);
            String name = rows.get(0)[2];
            String tenant = name.contains("/") ? name.substring(0, name.indexOf('/')) : name;
            long done = Long.parseLong(rows.get(rows.size() - 1)[9]) - Long.parseLong(rows.get(0)[9]);
            long[] b = busiest.get(tenant);
            if (b == null || done > b[0]) {
                busiest.put(tenant, new long[] {done, i});
            }
        }
        for (Map.Entry<String, long[]> e : busiest.entrySet()) {
            List<String[]> rows = queues.get((int) e.getValue()[1]);
            int n = 0;
            int held = 0;
            int narrowed = 0;
            int top = 0;
            int guarded = 0;
            List<Integer> shares = new ArrayList<>();
            for (String[] c : rows) {
                boolean work = Integer.parseInt(c[7]) > 0 || Integer.parseInt(c[8]) > 0;
                if (!work || c[3].equals("suspended")) {
                    continue;
                }
                n++;
                held += c[4].equals("1") ? 1 : 0;
                switch (c[5]) {
                    case "narrowed" -> {
                        narrowed++;
                        shares.add(Integer.parseInt(c[6]));
                    }
                    case "on_top", "alone" -> top++;
                    case "guarded" -> guarded++;
                    default -> { }
                }
            }
            Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("samples_with_work", n);
            m.put("held", share(held, n));
            m.put("narrowed", share(narrowed, n));
            m.put("on_top", share(top, n));
            m.put("guarded", share(guarded, n));
            if (!shares.isEmpty()) {
                java.util.Collections.sort(shares);
                m.put("narrowed_sm_share_percent_p50", shares.get(shares.size() / 2));
            }
            out.put(e.getKey(), m);
        }
        return out;
    }

    private static double share(int k, int n) {
        return n == 0 ? 0.0 : Math.round(1000.0 * k / n) / 1000.0;
    }

    /** @return the lines written so far (one per queue a sample) */
    int lines() {
        return lines;
    }

    /** Stops sampling and closes the file; a write that failed is thrown here. */
    @Override
    public void close() {
        stop = true;
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (error != null) {
            throw new UncheckedIOException("writing " + file + " failed: " + error.getMessage(), error);
        }
    }
}
