package dev.xq.bench.args;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchArgumentsTest {

    private static final Map<String, List<ParamSpec>> SCENARIOS = new LinkedHashMap<>();

    static {
        SCENARIOS.put("fixed-priority", List.of(
                ParamSpec.integer("T", 500, 0, 1_000_000, "spin us"),
                ParamSpec.decimal("load", 0.2, 0.01, 1.0, "fg load"),
                ParamSpec.decimals("loads", List.of(0.3, 0.5), 0.01, 2.0, "loads"),
                ParamSpec.integers("levels", List.of(1L, 2L, 3L), 1, 3, "levels"),
                ParamSpec.choice("policy", "hpf", List.of("hpf", "edf"), "policy")));
        SCENARIOS.put("drf", List.of(ParamSpec.integer("T", 2000, 1, 1_000_000, "spin us")));
    }

    private static BenchArguments parse(String... args) {
        return BenchArguments.parseBench(List.of(args), SCENARIOS);
    }

    private static String error(String... args) {
        return assertThrows(UsageException.class, () -> parse(args)).getMessage();
    }

    @Test
    void defaultsFillWhatIsNotGiven() {
        BenchArguments a = parse("fixed-priority");
        assertEquals("fixed-priority", a.scenario());
        assertEquals("sim", a.device());
        assertNull(a.json());
        assertNull(a.plotDir());
        assertFalse(a.help());
        assertEquals(500L, a.params().longValue("T"));
        assertEquals(0.2, a.params().doubleValue("load"));
        assertEquals(List.of(1L, 2L, 3L), a.params().longs("levels"));
        assertEquals(List.of("T", "load", "loads", "levels", "policy"), List.copyOf(a.params().asMap().keySet()));
    }

    @Test
    void optionsAndOverridesInAnyOrder() {
        BenchArguments a = parse("fixed-priority", "T=100", "--device", "cuda", "--json", "out.json", "loads=0.1, 0.9",
                "--plot=plots", "levels=3", "policy=edf");
        assertEquals("cuda", a.device());
        assertEquals(Path.of("out.json"), a.json());
        assertEquals(Path.of("plots"), a.plotDir());
        assertEquals(100, a.params().intValue("T"));
        assertEquals(List.of(0.1, 0.9), a.params().doubles("loads"));
        assertEquals(List.of(3L), a.params().longs("levels"));
        assertEquals("edf", a.params().string("policy"));
    }

    @Test
    void unknownScenarioListsTheScenarios() {
        String m = error("fixed_priority");
        assertTrue(m.contains("'fixed_priority'") && m.contains("fixed-priority, drf"), m);
        assertTrue(error().contains("no scenario given; allowed: fixed-priority, drf"));
    }

    @Test
    void unknownKeyListsTheAllowedKeys() {
        String m = error("drf", "t=5");
        assertTrue(m.contains("'t'") && m.contains("allowed: T"), m);
    }

    @Test
    void badValuesNameTheValueAndTheRange() {
        String m = error("fixed-priority", "T=-1");
        assertTrue(m.contains("T=-1") && m.contains("[0, 1000000]"), m);
        m = error("fixed-priority", "T=abc");
        assertTrue(m.contains("T=abc is not a whole number"), m);
        m = error("fixed-priority", "load=1.5");
        assertTrue(m.contains("load=1.5") && m.contains("[0.01, 1]"), m);
        m = error("fixed-priority", "load=NaN");
        assertTrue(m.contains("load=NaN"), m);
        m = error("fixed-priority", "levels=1,,3");
        assertTrue(m.contains("empty item"), m);
        m = error("fixed-priority", "levels=4");
        assertTrue(m.contains("levels=4") || m.contains("4 is out of range"), m);
        m = error("fixed-priority", "policy=fifo");
        assertTrue(m.contains("policy=fifo") && m.contains("hpf, edf"), m);
    }

    @Test
    void badOptionsAreRefused() {
        assertTrue(error("drf", "--device", "rocm").contains("allowed: sim, cuda"));
        assertTrue(error("drf", "--json").contains("--json needs a value"));
        assertTrue(error("drf", "--json=").contains("non-empty"));
        assertTrue(error("drf", "--verbose", "x").contains("option --verbose is unknown"));
        assertTrue(error("drf", "--device", "sim", "--device", "cuda").contains("twice"));
        assertTrue(error("drf", "T=1", "T=2").contains("'T' is given twice"));
        assertTrue(error("drf", "T").contains("argument 'T' is not key=value"));
        assertTrue(error("drf", "=5").contains("not key=value"));
    }

    @Test
    void helpIsNotAnError() {
        assertTrue(parse("--help").help());
        assertTrue(parse("drf", "--help").help());
        assertEquals("drf", parse("drf", "--help").scenario());
    }

    @Test
    void demoTakesItsOwnParameters() {
        List<ParamSpec> demo = List.of(ParamSpec.decimal("seconds", 4, 1, 600, "length"));
        BenchArguments a = BenchArguments.parseDemo(List.of("seconds=2", "--json", "d.json"), demo);
        assertEquals("demo", a.scenario());
        assertEquals(2.0, a.params().doubleValue("seconds"));
        assertEquals(4.0, BenchArguments.parseDemo(List.of(), demo).params().doubleValue("seconds"));
        var e = assertThrows(UsageException.class, () -> BenchArguments.parseDemo(List.of("T=3"), demo));
        assertTrue(e.getMessage().contains("unknown for demo; allowed: seconds"), e.getMessage());
    }

    @Test
    void usageListsEveryParameterWithDefaultAndRange() {
        String u = BenchArguments.usage("fixed-priority", "what it does", SCENARIOS.get("fixed-priority"));
        assertTrue(u.contains("T=500  spin us (allowed: [0, 1000000])"), u);
        assertTrue(u.contains("loads=0.3,0.5"), u);
        assertTrue(u.contains("policy=hpf  policy (allowed: hpf, edf)"), u);
    }

    @Test
    void paramsRefuseUndeclaredNames() {
        BenchArguments a = parse("drf");
        var e = assertThrows(IllegalStateException.class, () -> a.params().longValue("X"));
        assertTrue(e.getMessage().contains("'X'"));
    }
}
