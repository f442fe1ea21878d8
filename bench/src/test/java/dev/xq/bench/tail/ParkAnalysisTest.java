package dev.xq.bench.tail;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.bench.tail.ParkAnalysis.Park;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ParkAnalysisTest {

    @Test
    void lateParksAreCountedPerThreadAndOnTimeOnesAreNot() {
        List<Park> parks = new ArrayList<>();
        for (int i = 0; i < 98; i++) {
            parks.add(new Park("xq-cuda-completion-cuda0", 480_000, 520_000)); // 40 us late: on time
        }
        parks.add(new Park("xq-cuda-completion-cuda0", 10_000, 3_410_000)); // 3.4 ms late
        parks.add(new Park("xq-cuda-completion-cuda0", 476_000, 2_476_000)); // 2.0 ms late
        parks.add(new Park("xq-watchdog", 5_000_000, 5_090_000)); // on time
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ParkAnalysis.analyse(parks, 1_000_000, new PrintStream(buf, true, StandardCharsets.UTF_8));
        String out = buf.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("timed parks recorded (those of 200 us or more): 101"), out);
        assertTrue(out.matches("(?s).*xq-cuda-completion-cuda0\\s+100\\s+2\\s+2\\.00%\\s+3\\.40 ms\\s+3\\.40 ms.*"), out);
        assertTrue(!out.contains("xq-watchdog"), "a thread with no late park is not listed: " + out);
    }
}
