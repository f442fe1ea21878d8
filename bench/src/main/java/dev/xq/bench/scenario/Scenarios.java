package dev.xq.bench.scenario;

import dev.xq.bench.args.ParamSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The scenarios of the suite, in the order the usage lists them. */
public final class Scenarios {

    private static final List<Scenario> ALL = List.of(
            new FixedPriorityScenario(),
            new PreemptionLatencyScenario(),
            new BandwidthScenario(),
            new Example3Scenario(),
            new EdfScenario(),
            new DrfScenario(),
            new DrfFloodScenario(),
            new CfsScenario(),
            new MlfqScenario(),
            new ChpfScenario(),
            new HhpfScenario(),
            new AwfScenario(),
            new AgingScenario(),
            new HotSwapScenario(),
            new OverheadScenario(),
            new ScaleScenario(),
            new ProcessPairScenario(true),
            new ProcessPairScenario(false),
            new MixScenario());

    private Scenarios() {
    }

    /** @return every scenario */
    public static List<Scenario> all() {
        return ALL;
    }

    /** @return the scenario with this name */
    public static Scenario byName(String name) {
        for (Scenario s : ALL) {
            if (s.name().equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("scenario '" + name + "' is unknown");
    }

    /** @return scenario name -> its parameters */
    public static Map<String, List<ParamSpec>> params() {
        Map<String, List<ParamSpec>> m = new LinkedHashMap<>();
        for (Scenario s : ALL) {
            m.put(s.name(), s.params());
        }
        return m;
    }
}
