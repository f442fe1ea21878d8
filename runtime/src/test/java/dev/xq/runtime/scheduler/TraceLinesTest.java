package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The node's trace lines are printed off the caller's thread: a deciding thread that traces is
 * never held by stderr (a blocked pipe here), and every line comes out, in order; a line past the
 * queue's capacity is dropped and counted, not waited for.
 */
class TraceLinesTest {

    @Test
    void aTraceLineNeverWaitsForStderrAndEveryLineComesOutInOrder() throws Exception {
        PrintStream was = System.err;
        CountDownLatch release = new CountDownLatch(1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OutputStream blocking = new OutputStream() {
            @Override
            public void write(int b) {
                await(release);
                synchronized (out) {
                    out.write(b);
                }
            }

            @Override
            public void write(byte[] b, int off, int len) {
                await(release);
                synchronized (out) {
                    out.write(b, off, len);
                }
            }
        };
        System.setErr(new PrintStream(blocking, true, StandardCharsets.UTF_8));
        try {
            int n = TraceLines.CAPACITY + 100;
            // stderr blocked: the caller goes on all the same (a deadlock guard, not a speed goal)
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                for (int i = 0; i < n; i++) {
                    TraceLines.line("xq: test line " + i);
                }
            }, "a trace line waited for a blocked stderr");
            release.countDown();
            // the queue drained: its last line is CAPACITY - 1, or CAPACITY where the printer had
            // taken the first before stderr blocked it
            awaitText(out, "xq: test line " + (TraceLines.CAPACITY - 1));
            TraceLines.line("xq: test end");
            String text = awaitText(out, "xq: test end");
            List<Integer> seen = new ArrayList<>();
            for (String l : text.split("\n")) {
                if (l.startsWith("xq: test line ")) {
                    seen.add(Integer.parseInt(l.substring("xq: test line ".length()).trim()));
                }
            }
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(seen.get(i) > seen.get(i - 1), "in order: " + seen.get(i - 1) + " then " + seen.get(i));
            }
            // the queue kept CAPACITY lines (and the printer one more, where it had taken one), the rest were dropped
            assertTrue(seen.size() >= TraceLines.CAPACITY && seen.size() <= TraceLines.CAPACITY + 1, "lines printed " + seen.size() + " of " + n);
            assertTrue(text.contains("lines dropped (more than " + TraceLines.CAPACITY + " waited to be printed)"),
                    "the drop is told: " + text.substring(0, Math.min(300, text.length())));
            assertEquals(seen.size() - 1, seen.getLast(), "the lines kept are the first ones, none missing among them");
            assertTrue(text.indexOf("lines dropped") < text.indexOf("xq: test end"), "a line queued after the drop comes out, told of it first");
        } finally {
            release.countDown();
            System.setErr(was);
        }
    }

    private static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String awaitText(ByteArrayOutputStream out, String last) throws InterruptedException {
        for (int i = 0; i < 3000; i++) {
            String s;
            synchronized (out) {
                s = out.toString(StandardCharsets.UTF_8);
            }
            if (s.contains(last + "\n") || s.contains(last + "\r\n")) {
                return s;
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
        synchronized (out) {
            return out.toString(StandardCharsets.UTF_8);
        }
    }
}
