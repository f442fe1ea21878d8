package dev.xq.bench.tail;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Timed parks that overslept, per thread, from a flight recording ({@code jdk.ThreadPark} with
 * its timeout; {@code tail.jfc} records parks of 200 µs or more). A thread that asked to sleep
 * 50 µs and ran again 3 ms later was not woken by its timer in time: on a shared virtual machine
 * the host runs a halted vCPU again when it gets round to it. For the node's completion thread each
 * such wake-up delays every command a completion launches (docs/performance.md, "fifth set").
 *
 * <p>{@code java -cp dev.xq.bench.jar dev.xq.bench.tail.ParkAnalysis REC.jfr [late-ms (1)]}
 */
public final class ParkAnalysis {

    /** One timed park: its thread, what it asked for and how long it lasted, nanoseconds. */
    record Park(String thread, long timeoutNanos, long durationNanos) {
        long lateNanos() {
            return durationNanos - timeoutNanos;
        }
    }

    private ParkAnalysis() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: ParkAnalysis RECORDING.jfr [late threshold in ms (1)]");
            System.exit(2);
        }
        double lateMs = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
        List<Park> parks = new ArrayList<>();
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                if (!e.getEventType().getName().equals("jdk.ThreadPark") || !e.hasField("timeout")) {
                    continue;
                }
                Duration timeout = e.getDuration("timeout");
                // an untimed park records a negative (or absent) timeout: it waited to be woken
                if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                    continue;
                }
                RecordedThread t = e.getThread();
                parks.add(new Park(t == null ? "-" : t.getJavaName(), timeout.toNanos(), e.getDuration().toNanos()));
            }
        }
        analyse(parks, (long) (lateMs * 1_000_000), System.out);
    }

    static void analyse(List<Park> parks, long lateNanos, PrintStream out) {
        Map<String, List<Park>> byThread = new LinkedHashMap<>();
        for (Park p : parks) {
            byThread.computeIfAbsent(p.thread(), k -> new ArrayList<>()).add(p);
        }
        out.printf(Locale.ROOT, "timed parks recorded (those of 200 us or more): %d; late = woke more than %.1f ms after its timeout%n",
                parks.size(), lateNanos / 1e6);
        out.printf(Locale.ROOT, "%-34s %8s %6s %8s %10s %10s%n", "thread", "parks", "late", "late %", "late p50", "late max");
        List<Map.Entry<String, List<Park>>> rows = new ArrayList<>(byThread.entrySet());
        rows.sort(Comparator.comparingLong(e -> -late(e.getValue(), lateNanos).size()));
        for (Map.Entry<String, List<Park>> e : rows) {
            List<Long> late = late(e.getValue(), lateNanos);
            if (late.isEmpty()) {
                continue;
            }
            late.sort(null);
            out.printf(Locale.ROOT, "%-34s %8d %6d %7.2f%% %8.2f ms %8.2f ms%n", e.getKey(), e.getValue().size(), late.size(),
                    100.0 * late.size() / e.getValue().size(), late.get(late.size() / 2) / 1e6, late.getLast() / 1e6);
        }
    }

    private static List<Long> late(List<Park> ps, long lateNanos) {
        List<Long> out = new ArrayList<>();
        for (Park p : ps) {
            if (p.lateNanos() > lateNanos) {
                out.add(p.lateNanos());
            }
        }
        return out;
    }
}
