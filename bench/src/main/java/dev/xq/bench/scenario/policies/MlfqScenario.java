package dev.xq.bench.scenario.policies;

import dev.xq.api.Hint;
import dev.xq.api.XQueue;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.scenario.FgBgWorkload;
import dev.xq.bench.scenario.Measures;
import dev.xq.bench.scenario.Mode;
import dev.xq.bench.scenario.ModeRun;
import dev.xq.bench.scenario.PolicySettings;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * MLFQ's case: a stream of short interactive tasks beside long batch tasks, and nobody declares
 * which is which (no hints at all). Under {@code mlfq} the short tenant should keep its
 * standalone tail (it uses less than the top level's slice per boost period, so it stays on
 * top while batch sinks) and batch should keep most of its throughput.
 */
public final class MlfqScenario implements Scenario {

    private static final String SHORT = "short";
    private static final String BATCH = "batch";
    private static final String PID = "dev.xq.policy.mlfq";
    /** The policy's defaults (MlfqSettings), for checking a slice or boost given alone. */
    private static final long DEFAULT_SLICE_MICROS = 10_000;
    private static final long DEFAULT_BOOST_MICROS = 100_000;

    /** @return the latencies in ms of the tasks released in [from, to) that were running at a multiple of {@code periodNanos} */
    static double[] atBoost(List<TaskRecord> tasks, long from, long to, long periodNanos) {
        List<Double> out = new ArrayList<>();
        for (TaskRecord t : tasks) {
            long start = t.firstSubmitNanos();
            long end = t.endNanos();
            if (t.releaseNanos() < from || t.releaseNanos() >= to || start < 0 || end < 0) {
                continue;
            }
            if (Math.floorDiv(end, periodNanos) > Math.floorDiv(start, periodNanos)) {
                out.add((end - start) / 1e6);
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    @Override
    public String name() {
        return "mlfq";
    }

    @Override
    public String summary() {
        return "short tasks periodic beside long batch tasks back to back, no hints; short P99 vs standalone, batch throughput vs "
                + "native; modes standalone, native, xq:mlfq";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("ns", 2, 1, 100_000, "commands per short task"),
                ParamSpec.integer("nb", 40, 1, 100_000, "commands per batch task"),
                ParamSpec.decimal("period_ms", 20, 0.1, 60_000, "release period of the short tasks, ms"),
                ParamSpec.integer("slice", 0, 0, 10_000_000, "mlfq.slice for the run in us (100 or more), 0 = the policy's setting"),
                ParamSpec.integer("boost", 0, 0, 3_600_000_000L, "mlfq.boost.period for the run in us (above slice), 0 = the policy's setting"),
                ParamSpec.choice("scope", "policy", List.of("policy", "all", "waiting"),
                        "mlfq.boost.scope for the run: which queues a boost lifts; policy = the policy's setting"),
                ParamSpec.integer("boost_phase", -1, -1, 10_000_000, "start the short tasks so that one is released this many us before "
                        + "every boost moment (period_ms must divide the boost period); -1: wherever the run's start puts them"),
                ParamSpec.choice("reference", "hpf", List.of("none", "hpf"),
                        "hpf: also a mode xq:hpf told the order by priority hints (short 2, batch 1), the best a policy can do here"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("mlfq");
        if (p.string("reference").equals("hpf")) {
            ctx.requirePolicies("hpf");
        }
        long slice = p.longValue("slice");
        long boost = p.longValue("boost");
        if (slice != 0 && slice < 100) {
            throw new IllegalArgumentException("slice=" + slice + " is out of range; allowed: 0 or [100, 10000000]");
        }
        if (boost != 0 && boost < 101) {
            throw new IllegalArgumentException("boost=" + boost + " is out of range; allowed: 0 or [101, 3600000000]");
        }
        // The policy refuses a boost period not above the slice (and keeps its old values), so check
        // here, against the policy's defaults where only one of the two is given.
        long effectiveSlice = slice != 0 ? slice : DEFAULT_SLICE_MICROS;
        long effectiveBoost = boost != 0 ? boost : DEFAULT_BOOST_MICROS;
        if (effectiveBoost <= effectiveSlice) {
            throw new IllegalArgumentException("boost=" + boost + (boost == 0 ? " (the policy's default " + DEFAULT_BOOST_MICROS + " us)" : "")
                    + " must be above slice=" + slice + (slice == 0 ? " (the policy's default " + DEFAULT_SLICE_MICROS + " us)" : "")
                    + ": mlfq.boost.period > mlfq.slice; give both");
        }
        long phase = p.longValue("boost_phase");
        long periodMicros = Math.round(p.doubleValue("period_ms") * 1000);
        if (phase >= 0 && (periodMicros == 0 || effectiveBoost % periodMicros != 0)) {
            throw new IllegalArgumentException("boost_phase=" + phase + " needs period_ms=" + p.doubleValue("period_ms")
                    + " to divide the boost period (" + effectiveBoost + " us), so that every boost falls at the same phase; "
                    + "allowed: boost_phase=-1, or a period that divides it");
        }
        Map<String, Object> knobs = new LinkedHashMap<>();
        if (slice != 0) {
            knobs.put("mlfq.slice", slice);
        }
        if (boost != 0) {
            knobs.put("mlfq.boost.period", boost);
        }
        if (!p.string("scope").equals("policy")) {
            knobs.put("mlfq.boost.scope", p.string("scope"));
        }
        if (!knobs.isEmpty()) {
            ctx.onClose(PolicySettings.apply(ctx, PID, knobs));
            ctx.out().line("policy mlfq set for this run: " + knobs);
        }
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        TaskShape shortShape = TaskShape.spins(p.intValue("ns"), p.longValue("T"));
        TaskShape batchShape = TaskShape.spins(p.intValue("nb"), p.longValue("T"));
        long period = (long) (p.doubleValue("period_ms") * 1e6);
        List<Mode> modes = new ArrayList<>(List.of(Mode.standalone(), Mode.nativeMode()));
        if (ctx.gpu()) {
            modes.add(Mode.prio());
        }
        if (p.string("reference").equals("hpf")) {
            modes.add(Mode.xq("hpf"));
        }
        modes.add(Mode.xq("mlfq"));
        double standaloneP99 = Double.NaN;
        double nativeBatch = Double.NaN;
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            boolean alone = mode.label().equals("standalone");
            // No hints: mlfq has to find out which tenant is interactive. Stream priorities (prio mode only) favour short.
            // The reference mode is told the order (short 2 over batch 1): what a policy that knows it gets on this node.
            boolean told = mode.label().equals("xq:hpf");
            XQueue s = told ? run.queue(SHORT, SHORT, 1, new Hint.Priority(2)) : run.queue(SHORT, SHORT, 1);
            if (phase >= 0) {
                // 50 ms from now, at the chosen distance before a boost moment; the period divides the boost period, so every boost.
                long boostNanos = effectiveBoost * 1000;
                long first = (Math.floorDiv(System.nanoTime() + 50_000_000L + phase * 1000, boostNanos) + 1) * boostNanos - phase * 1000;
                run.add(TaskStream.periodicFrom(SHORT, s, run.ledger(), shortShape, period, first));
            } else {
                run.add(TaskStream.periodic(SHORT, s, run.ledger(), shortShape, period));
            }
            if (!alone) {
                XQueue b = told ? run.queue(BATCH, BATCH, 0, new Hint.Priority(1)) : run.queue(BATCH, BATCH, 0);
                run.add(TaskStream.backToBack(BATCH, b, run.ledger(), batchShape, 2));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            var counts = run.finish(Duration.ofSeconds(60));
            long from = run.startNanos() + FgBgWorkload.warmupNanos(seconds);
            long to = run.endNanos();
            List<TaskRecord> shortTasks = FgBgWorkload.stream(run, SHORT).records();
            double[] ms = Measures.latencyMillis(shortTasks, from, to);
            Percentiles pc = Percentiles.of(ms);
            double[] atBoost = atBoost(shortTasks, from, to, effectiveBoost * 1000);
            if (alone) {
                standaloneP99 = pc.at(99);
            }
            TaskStream bs = FgBgWorkload.stream(run, BATCH);
            double batch = bs == null ? Double.NaN : Measures.tasksPerSecond(bs.records(), from, to);
            if (mode.label().equals("native")) {
                nativeBatch = batch;
            }
            ModeResult m = new ModeResult(mode.label());
            m.put("short_p50", Measures.round(pc.at(50)));
            m.put("short_p99", Measures.round(pc.at(99)));
            m.put("short_max", Measures.round(pc.max()));
            m.put("short_p99_over_standalone", Measures.round(Measures.ratio(pc.at(99), standaloneP99)));
            m.put("batch_tasks_per_s", Measures.round(batch));
            m.put("batch_vs_native", Measures.round(Measures.ratio(batch, nativeBatch)));
            m.put("short_tasks", ms.length);
            m.put("short_at_boost", atBoost.length);
            m.put("short_p50_at_boost", atBoost.length == 0 ? Double.NaN : Measures.round(Percentiles.of(atBoost).at(50)));
            m.samples("short task latency ms", ms);
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        double load = shortShape.count() * p.longValue("T") * 1000.0 / period;
        report.note(String.format(Locale.ROOT, "short: %d x %d us every %.3f ms (%.1f%% of the device); batch: %d x %d us back to "
                + "back; neither has a hint", p.intValue("ns"), p.longValue("T"), period / 1e6, 100 * load, p.intValue("nb"),
                p.longValue("T")));
        report.note("mlfq knobs: " + (knobs.isEmpty() ? "the policy's configuration (defaults: slice 10 ms, boost period 100 ms, boost scope waiting)"
                : knobs + " for this run"));
        report.note("short latency = submit of a task's first command to the end of its last; short_p99_over_standalone divides by "
                + "the standalone mode's P99; batch_vs_native = batch tasks/s over native's");
        report.note("short_at_boost: short tasks running at a boost moment (a multiple of the boost period, " + effectiveBoost
                + " us" + (boost == 0 ? ", the policy's default" : "") + ", on the node's clock), short_p50_at_boost their P50 latency: "
                + "the tasks a boost that lifts batch beside them would slow");
        ModeResult xq = report.modes().getLast();
        ModeResult nat = report.modes().get(1);
        report.goal("under xq:mlfq the short tasks' P99 is within 1.25 x their standalone P99",
                xq.number("short_p99_over_standalone") <= 1.25,
                "xq:mlfq " + xq.figure("short_p99_over_standalone") + " x (" + xq.figure("short_p99") + " ms), native "
                        + nat.figure("short_p99_over_standalone") + " x, standalone P99 " + Measures.round(standaloneP99) + " ms");
        report.goal("under xq:mlfq batch is not starved: at least 0.9 of its native throughput",
                xq.number("batch_vs_native") >= 0.9,
                "batch " + xq.figure("batch_tasks_per_s") + " tasks/s, " + xq.figure("batch_vs_native") + " of native's "
                        + nat.figure("batch_tasks_per_s"));
        report.barFigure("short_p99");
        report.barFigure("batch_tasks_per_s");
        return report;
    }
}
