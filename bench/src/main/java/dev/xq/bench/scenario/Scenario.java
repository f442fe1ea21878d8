package dev.xq.bench.scenario;

import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ScenarioReport;
import java.util.List;

/** One scenario of the suite (described in {@code bench/README.md}). */
public interface Scenario {

    /** @return the name used on the command line */
    String name();

    /** @return one line saying what it measures */
    String summary();

    /** @return its parameters with defaults and ranges */
    List<ParamSpec> params();

    /**
     * Runs every mode and returns the figures. Queues are closed and the policy restored by the
     * caller through {@link ScenarioContext#close()}.
     * @throws Exception when the run itself breaks (a missed goal is a figure, not an exception)
     */
    ScenarioReport run(ScenarioContext ctx, Params p) throws Exception;
}
