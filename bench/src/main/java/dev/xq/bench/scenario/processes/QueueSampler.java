package dev.xq.bench.scenario.processes;

import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

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

    /** How often the queues are read. */
    static final long PERIOD_MILLIS = 50;

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
