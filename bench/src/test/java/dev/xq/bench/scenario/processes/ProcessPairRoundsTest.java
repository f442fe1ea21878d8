package dev.xq.bench.scenario.processes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.xq.bench.args.BenchArguments;
import dev.xq.bench.args.UsageException;
import dev.xq.bench.report.ModeResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The overhead mode's rounds: alternated, and each mode's latencies pooled over its rounds. */
class ProcessPairRoundsTest {

    @Test
    void roundsAlternateAndPoolIntoOneModeEach() {
        var modes = ProcessPairScenario.overheadRounds(3);
        assertEquals(List.of("standalone r1", "hp-xq r1", "standalone r2", "hp-xq r2", "standalone r3", "hp-xq r3"),
                modes.stream().map(m -> m.label()).toList());
        assertEquals(List.of("standalone", "hp-xq", "standalone", "hp-xq", "standalone", "hp-xq"),
                modes.stream().map(m -> m.pool()).toList());
        assertEquals(List.of(false, true, false, true, false, true), modes.stream().map(m -> m.xq()).toList());
        assertEquals(List.of("standalone", "hp-xq"), ProcessPairScenario.overheadRounds(1).stream().map(m -> m.label()).toList());
    }

    @Test
    void pooledFiguresComeFromEveryRoundTogether() {
        // round 1 is fast, round 2 slow: the pooled median lies between them, the P99 in round 2's tail
        double[] fast = new double[100];
        double[] slow = new double[100];
        for (int i = 0; i < 100; i++) {
            fast[i] = 1 + i / 1000.0;
            slow[i] = 2 + i / 100.0;
        }
        ModeResult m = ProcessPairScenario.pooledResult("hp-xq", List.of(fast, slow));
        assertEquals(200, ((Number) m.figure("hp_requests")).intValue());
        assertEquals(2, ((Number) m.figure("rounds")).intValue());
        double p50 = m.number("hp_p50_ms");
        double p99 = m.number("hp_p99_ms");
        assertEquals(true, p50 > 1.099 && p50 < 2.0, "pooled P50 " + p50);
        assertEquals(true, p99 > 2.9 && p99 <= 2.99, "pooled P99 " + p99);
        assertEquals(200, m.samples().get("hp latency ms").length);
    }

    @Test
    void roundsOutsideTheirRangeAreRefusedByName() {
        var s = new ProcessPairScenario(false);
        var e = assertThrows(UsageException.class,
                () -> BenchArguments.parseBench(List.of("process-pair", "rounds=0"), Map.of("process-pair", s.params())));
        assertEquals(true, e.getMessage().contains("rounds") && e.getMessage().contains("0"), e.getMessage());
        var ok = BenchArguments.parseBench(List.of("process-pair", "modes=overhead", "rounds=3"), Map.of("process-pair", s.params()));
        assertEquals(3, ok.params().intValue("rounds"));
    }
}
