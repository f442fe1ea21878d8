package dev.xq.bench.scenario.suite;

import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.inprocess.Example3Scenario;
import dev.xq.bench.scenario.inprocess.FixedPriorityScenario;
import dev.xq.bench.scenario.inprocess.HotSwapScenario;
import dev.xq.bench.scenario.inprocess.OverheadScenario;
import dev.xq.bench.scenario.inprocess.PreemptionLatencyScenario;
import dev.xq.bench.scenario.inprocess.ScaleScenario;
import dev.xq.bench.scenario.policies.AgingScenario;
import dev.xq.bench.scenario.policies.AwfScenario;
import dev.xq.bench.scenario.policies.BandwidthScenario;
import dev.xq.bench.scenario.policies.CfsScenario;
import dev.xq.bench.scenario.policies.ChpfScenario;
import dev.xq.bench.scenario.policies.DrfFloodScenario;
import dev.xq.bench.scenario.policies.DrfScenario;
import dev.xq.bench.scenario.policies.EdfScenario;
import dev.xq.bench.scenario.policies.HhpfScenario;
import dev.xq.bench.scenario.policies.MlfqScenario;
import dev.xq.bench.scenario.processes.MixScenario;
import dev.xq.bench.scenario.processes.ProcessPairScenario;
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
