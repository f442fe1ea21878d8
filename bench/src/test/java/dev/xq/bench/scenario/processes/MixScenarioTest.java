package dev.xq.bench.scenario.processes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.bench.args.BenchArguments;
import dev.xq.bench.args.UsageException;
import dev.xq.bench.report.Json;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.report.TextTable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The workload family's goal arithmetic, its mixes and its parameters. */
class MixScenarioTest {

    private static final MixScenario MIX = new MixScenario();

    @Test
    void lcGoalBoundsXqByStandaloneAndByNativeWhereNativeIsWithinIt() {
        // native beyond the bound: xq within 1.10 x standalone is enough
        assertTrue(MixScenario.lcMet(10, 30, 11));
        assertFalse(MixScenario.lcMet(10, 30, 11.01));
        // native already within the bound: xq must not be worse than native
        assertTrue(MixScenario.lcMet(10, 10.5, 10.5));
        assertTrue(MixScenario.lcMet(10, 10.5, 10.2));
        assertFalse(MixScenario.lcMet(10, 10.5, 10.6));
        // native exactly at the bound counts as off
        assertTrue(MixScenario.lcMet(10, 11, 10.9));
        // nothing measured is no goal met
        assertFalse(MixScenario.lcMet(Double.NaN, 30, 10));
        assertFalse(MixScenario.lcMet(10, 30, Double.NaN));
    }

    @Test
    void beGoalIsNineTenthsOfNative() {
        assertTrue(MixScenario.beMet(100, 90));
        assertTrue(MixScenario.beMet(100, 120));
        assertFalse(MixScenario.beMet(100, 89.9));
        assertFalse(MixScenario.beMet(0, 0));
        assertFalse(MixScenario.beMet(100, Double.NaN));
    }

    @Test
    void checksumsAgreeWithinARelativeThousandth() {
        assertTrue(MixScenario.sameResult(1000, 1000.9));
        assertFalse(MixScenario.sameResult(1000, 1001.1));
        assertTrue(MixScenario.sameResult(0, 0));
        assertTrue(MixScenario.sameResult(Double.NaN, 5));
        assertFalse(MixScenario.sameResult(1e-6, 2e-6));
    }

    @Test
    void theFamilyInItsOrderWithRolesAndNames() {
        assertEquals(List.of("decode+trainbf16", "decode+gemm", "decode+trainbf16+gemm", "graph+train32", "bulk+trainbf16",
                "decode+graph+train32", "graph+triton+gemm", "bulk+gemm+triton", "decode+graph+trainbf16+gemm", "decode+decode"),
                MixScenario.MIXES.stream().map(MixScenario.Mix::name).toList());
        var four = MixScenario.MIXES.get(8).tenants();
        assertEquals(List.of(3, 2, 1, 1), four.stream().map(MixScenario.Tenant::priority).toList());
        assertEquals(List.of(MixScenario.Role.LC, MixScenario.Role.LC, MixScenario.Role.BE, MixScenario.Role.BE),
                four.stream().map(t -> t.kind().role).toList());
        // two of one kind are told apart by a number; one of a kind keeps the kind's name
        assertEquals(List.of("decode-1", "decode-2"), MixScenario.MIXES.get(9).tenants().stream().map(MixScenario.Tenant::name).toList());
        assertEquals(List.of("decode", "gemm"), MixScenario.MIXES.get(1).tenants().stream().map(MixScenario.Tenant::name).toList());
        assertTrue(MixScenario.MIXES.get(9).tenants().stream().allMatch(t -> t.kind().role == MixScenario.Role.LC));
    }

    @Test
    void mixesAndModesAreParsedAndUnknownOnesRefusedByName() {
        var defaults = BenchArguments.parseBench(List.of("mix"), Map.of("mix", MIX.params())).params();
        assertEquals(List.of("all"), defaults.strings("mixes"));
        assertEquals(List.of("standalone", "native", "xq"), defaults.strings("modes"));
        assertEquals(10, MixScenario.select(defaults.strings("mixes")).size());

        var two = BenchArguments.parseBench(List.of("mix", "mixes=graph+train32,decode+gemm,graph+train32", "modes=xq,mps"),
                Map.of("mix", MIX.params())).params();
        assertEquals(List.of("graph+train32", "decode+gemm"), MixScenario.select(two.strings("mixes")).stream().map(MixScenario.Mix::name).toList());
        assertEquals(List.of("xq", "mps"), two.strings("modes"));

        var e = assertThrows(UsageException.class, () -> BenchArguments.parseBench(List.of("mix", "mixes=decode+gemm,decode+nope"),
                Map.of("mix", MIX.params())));
        assertTrue(e.getMessage().contains("'decode+nope'"), e.getMessage());
        assertTrue(e.getMessage().contains("decode+trainbf16+gemm"), e.getMessage());
        var m = assertThrows(UsageException.class, () -> BenchArguments.parseBench(List.of("mix", "modes=native,fast"),
                Map.of("mix", MIX.params())));
        assertTrue(m.getMessage().contains("'fast'") && m.getMessage().contains("standalone, native, xq, xq-hold, xq-free, xq-alt, mps"),
                m.getMessage());
        assertThrows(UsageException.class, () -> MixScenario.select(List.of("nope")));
    }

    @Test
    void hostSettingsOfTheXqModesAreParsedOrRefusedByName() {
        assertEquals(Map.of(), MixScenario.hostSettings("xq", "mpsBestEffortShare:75"));
        assertEquals(Map.of("mpsHoldBestEffort", true), MixScenario.hostSettings("xq-hold", ""));
        assertEquals(Map.of("mpsHoldBestEffort", false), MixScenario.hostSettings("xq-free", ""));
        assertEquals(Map.of("mpsBestEffortShare", 75L, "mpsHoldBestEffort", false, "mps", "off"),
                MixScenario.hostSettings("xq-alt", "mpsBestEffortShare:75; mpsHoldBestEffort:false;mps:off"));
        var bad = assertThrows(UsageException.class, () -> MixScenario.hostSettings("xq-alt", "mpsBestEffortShare=75"));
        assertTrue(bad.getMessage().contains("'mpsBestEffortShare=75' is not KEY:VALUE"), bad.getMessage());
        var none = assertThrows(UsageException.class, () -> MixScenario.hostSettings("xq-alt", ""));
        assertTrue(none.getMessage().contains("xq-alt needs alt="), none.getMessage());
    }

    @Test
    void altKeysMayNameAnotherPid() {
        var m = MixScenario.modeSettings("xq-alt", "dev.xq.policy.hpf/holdBehindWide:false;mps:off");
        assertEquals(Map.of("holdBehindWide", false), m.get("dev.xq.policy.hpf"));
        assertEquals(Map.of("mps", "off"), m.get("dev.xq.host"));
        assertEquals(Map.of(), MixScenario.hostSettings("xq-alt", "dev.xq.policy.hpf/holdBehindWide:false"));
        var bad = assertThrows(UsageException.class, () -> MixScenario.modeSettings("xq-alt", "/holdBehindWide:false"));
        assertTrue(bad.getMessage().contains("needs a PID and a key"), bad.getMessage());
    }

    // ------------------------------------------------------------------ a mix's verdict

    private static MixScenario.Outcome lc(double p99, double checksum) {
        return MixScenario.Outcome.of("{\"tasks\":3,\"checksum\":" + checksum + ",\"lat_ms\":[1.0," + p99 + "," + p99 + "]}",
                MixScenario.Role.LC, 1);
    }

    private static MixScenario.Outcome be(double rate) {
        return MixScenario.Outcome.of("{\"tasks\":" + rate + ",\"check\":\"ok\"}", MixScenario.Role.BE, 1);
    }

    private static Map<String, Map<String, MixScenario.Outcome>> modes(MixScenario.Outcome sa, MixScenario.Outcome natLc,
            MixScenario.Outcome natBe, MixScenario.Outcome xqLc, MixScenario.Outcome xqBe) {
        Map<String, Map<String, MixScenario.Outcome>> m = new LinkedHashMap<>();
        m.put("standalone", Map.of("decode", sa));
        m.put("native", Map.of("decode", natLc, "gemm", natBe));
        m.put("xq", Map.of("decode", xqLc, "gemm", xqBe));
        return m;
    }

    @Test
    void aMixMeetsItsGoalsOnlyWithEveryTenantWithinItsBoundAndTheSameResults() {
        var mix = MixScenario.MIXES.get(1); // decode p2, gemm p1
        var ok = MixScenario.judge(mix, modes(lc(10, 7), lc(30, 7), be(100), lc(10.5, 7.001), be(95)));
        assertEquals(Boolean.TRUE, ok.met());
        @SuppressWarnings("unchecked")
        var tenants = (List<Map<String, Object>>) ok.json().get("tenants");
        assertEquals(3.0, ((Map<?, ?>) tenants.get(0).get("p99_over_standalone")).get("native"));
        assertEquals(0.35, tenants.get(0).get("xq_p99_over_native"));
        assertEquals(0.95, tenants.get(1).get("xq_vs_native"));
        assertEquals("be", tenants.get(1).get("role"));

        assertEquals(Boolean.FALSE, MixScenario.judge(mix, modes(lc(10, 7), lc(30, 7), be(100), lc(12, 7), be(95))).met());
        assertEquals(Boolean.FALSE, MixScenario.judge(mix, modes(lc(10, 7), lc(30, 7), be(100), lc(10.5, 7), be(80))).met());
        // a different output is a missed goal, named in a note
        var differ = MixScenario.judge(mix, modes(lc(10, 7), lc(30, 7), be(100), lc(10.5, 7.1), be(95)));
        assertEquals(Boolean.FALSE, differ.met());
        assertTrue(differ.notes().stream().anyMatch(n -> n.contains("decode checksum")), differ.notes().toString());
        // a tenant that gave no result: missed, with its error
        var failed = MixScenario.judge(mix, modes(lc(10, 7), lc(30, 7), be(100), lc(10.5, 7),
                MixScenario.Outcome.failed("gemm exited with 1")));
        assertEquals(Boolean.FALSE, failed.met());
        assertTrue(failed.notes().stream().anyMatch(n -> n.contains("gemm exited with 1")));
        // without the xq mode there is nothing to judge
        var noXq = modes(lc(10, 7), lc(30, 7), be(100), lc(10.5, 7), be(95));
        noXq.remove("xq");
        assertNull(MixScenario.judge(mix, noXq).met());
    }

    @Test
    void theMixesTravelAsATopLevelJsonMemberAndTheTableIsTheScenarios() {
        var r = new ScenarioReport("mix", "sim0", Map.of());
        var v = MixScenario.judge(MixScenario.MIXES.get(1), modes(lc(10, 7), lc(30, 7), be(100), lc(10.5, 7), be(95)));
        r.extra("mixes", List.of(v.json()));
        r.table(List.of("mix", "goals"), List.of(List.of("decode+gemm", "MET")));
        String json = Json.write(r.toJsonObject());
        assertTrue(json.contains("\"mixes\": [") && json.contains("\"goals_met\": true"), json);
        String text = TextTable.render(r);
        assertTrue(text.contains("decode+gemm") && text.contains("decode+gemm  MET") && !text.contains("completed"), text);
        assertThrows(IllegalArgumentException.class, () -> r.extra("modes", List.of()));
    }
}
