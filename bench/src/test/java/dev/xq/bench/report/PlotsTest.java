package dev.xq.bench.report;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlotsTest {

    @Test
    void cdfPointsAreSortedAndEndAtHundredPercent() {
        double[][] xy = Plots.cdfPoints(new double[] {3, 1, 2, 4}, 100);
        assertArrayEquals(new double[] {1, 1, 2, 3, 4, 4}, xy[0]);
        assertArrayEquals(new double[] {0, 12.5, 37.5, 62.5, 87.5, 100}, xy[1]);
    }

    @Test
    void cdfPointsAreThinnedButKeepTheTail() {
        double[] v = new double[10_001];
        for (int i = 0; i < v.length; i++) {
            v[i] = i;
        }
        double[][] xy = Plots.cdfPoints(v, 1000);
        assertTrue(xy[0].length <= 1004, "points: " + xy[0].length);
        assertEquals(10_000, xy[0][xy[0].length - 1]);
        assertEquals(100.0, xy[1][xy[1].length - 1]);
        assertEquals(0.0, xy[0][0]);
    }

    @Test
    void slugsAreFileNameSafe() {
        assertEquals("fg-task-latency-ms", Plots.slug("fg task latency ms"));
        assertEquals("request-latency-ms-at-load-0-30", Plots.slug("request latency ms at load 0.30"));
    }

    @Test
    void writesReadablePngs(@TempDir Path dir) throws IOException {
        ScenarioReport r = new ScenarioReport("fixed-priority", "sim0", Map.of());
        r.add(new ModeResult("native").put("bg_tasks_per_s", 40.0).samples("fg task latency ms", new double[] {19, 20, 21}));
        r.add(new ModeResult("xq:hpf").put("bg_tasks_per_s", 38.0).samples("fg task latency ms", new double[] {10, 10.5, 11}));
        r.barFigure("bg_tasks_per_s");
        r.barFigure("not_there");
        List<Path> files = Plots.write(r, dir.resolve("plots"));
        assertEquals(List.of(dir.resolve("plots/fixed-priority-fg-task-latency-ms-cdf.png"),
                dir.resolve("plots/fixed-priority-bg-tasks-per-s.png")), files);
        for (Path f : files) {
            var img = ImageIO.read(f.toFile());
            assertEquals(900, img.getWidth());
            assertEquals(560, img.getHeight());
            assertTrue(Files.size(f) > 1000);
        }
    }
}
