package dev.xq.bench.scenario.inprocess;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueException;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.scenario.Measures;
import dev.xq.bench.scenario.Mode;
import dev.xq.bench.scenario.ModeRun;
import dev.xq.bench.scenario.QueueSettings;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeoutException;

/**
 * Fig. 11a: how long a short high-priority command waits for a background tenant that keeps
 * the device busy with spin-T commands, at each preemption level.
 */
public final class PreemptionLatencyScenario implements Scenario {

    @Override
    public String name() {
        return "preemption-latency";
    }

    @Override
    public String summary() {
        return "fg submit -> fg start while bg runs spin-T back to back, per preemption level (policy hpf, fg higher)";
    }

    @Override
    public List<ParamSpec> params() {
        List<ParamSpec> p = new ArrayList<>(List.of(
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one bg command, us"),
                ParamSpec.integer("fgT", 50, 0, 1_000_000, "spin time of the fg probe command, us"),
                ParamSpec.integer("samples", 200, 1, 1_000_000, "fg probes per level (the scenario asks for >= 200)"),
                ParamSpec.integers("levels", List.of(1L, 2L, 3L), 1, 3, "levels to measure"),
                ParamSpec.integer("depth", 32, 1, 100_000, "bg commands kept submitted and not yet ended"),
                ParamSpec.integer("seed", 1, 0, Long.MAX_VALUE, "seed of the random probe instants")));
        p.addAll(QueueSettings.params(0, 8, 4, -1));
        p.removeIf(s -> s.name().equals("level"));
        return p;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf");
        long t = p.longValue("T");
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        if (ctx.deviceInfo().engines() != 1) {
            report.note("device " + ctx.device() + " has " + ctx.deviceInfo().engines() + " engines: fg may start beside a running bg "
                    + "command, so start - submit can understate the preemption latency");
        }
        QueueConfig base = ctx.service().defaults().withThreshold(p.intValue("threshold"));
        if (p.intValue("batch") > base.threshold()) {
            throw new IllegalArgumentException("batch=" + p.longValue("batch") + " is out of range; allowed: [1, threshold=" + base.threshold() + "]");
        }
        base = base.withBatch(p.intValue("batch"));
        if (p.longValue("window") >= 0) {
            base = base.withWindowMicros(p.longValue("window"));
        }
        SplittableRandom random = new SplittableRandom(p.longValue("seed"));
        for (long lv : p.longs("levels")) {
            PreemptionLevel level = PreemptionLevel.of((int) lv);
            QueueConfig cfg = base.withLevel(level);
            Mode mode = Mode.xq("hpf", cfg).labelled("xq:hpf Lv" + lv);
            ctx.out().line("mode " + mode.label() + " (" + QueueSettings.describe(cfg) + "), " + p.longValue("samples") + " probes");
            ModeRun run = new ModeRun(ctx, mode);
            XQueue bg = run.queue("bg", "bg", 0, new Hint.Priority(1));
            XQueue fg = run.queue("fg", "fg", 0, new Hint.Priority(2));
            PreemptionLevel used = bg.status().level();
            if (used != level) {
                run.finish(Duration.ofSeconds(5));
                report.note("level " + lv + " skipped: queues on " + ctx.device() + " offer Lv" + used.number() + " at most");
                continue;
            }
            Command probe = Command.spin(p.longValue("fgT"));
            // The probe alone, device idle: what submit -> end costs without any bg in the way.
            double[] alone = new double[20];
            for (int i = 0; i < alone.length; i++) {
                CommandResult r = run.ledger().submit(fg, probe).await(Duration.ofSeconds(60));
                alone[i] = (r.endNanos() - r.submitNanos()) / 1e3;
            }
            double baseline = Percentiles.of(alone).at(50);
            run.add(TaskStream.backToBack("bg", bg, run.ledger(), TaskShape.spins(1, t), p.intValue("depth")));
            double[] us = new double[p.intValue("samples")];
            double[] endUs = new double[us.length];
            int[] done = {0};
            // Probes run on this thread; bg runs on its own.
            run.start();
            long started = System.nanoTime();
            Thread.sleep(Math.max(50, 20 * t / 1000));
            long nextPrint = System.nanoTime() + 1_000_000_000L;
            for (int i = 0; i < us.length; i++) {
                // Random instants, so probes land anywhere within a bg command.
                long gapMicros = random.nextLong(2 * t, 10 * t + 1);
                Thread.sleep(gapMicros / 1000, (int) (gapMicros % 1000) * 1000);
                Submission s = run.ledger().submit(fg, probe);
                CommandResult r;
                try {
                    r = s.await(Duration.ofSeconds(60));
                } catch (TimeoutException e) {
                    throw new IllegalStateException("fg probe " + (i + 1) + " did not end within 60 s at " + mode.label(), e);
                } catch (XQueueException e) {
                    throw new IllegalStateException("fg probe " + (i + 1) + " failed at " + mode.label() + ": " + e.getMessage(), e);
                }
                us[i] = (r.startNanos() - r.submitNanos()) / 1e3;
                endUs[i] = Math.max(0, (r.endNanos() - r.submitNanos()) / 1e3 - baseline);
                done[0]++;
                if (System.nanoTime() >= nextPrint) {
                    ctx.out().line("  [" + mode.label() + "] " + done[0] + "/" + us.length + " probes");
                    nextPrint += 1_000_000_000L;
                }
                run.checkStreams();
            }
            var counts = run.finish(Duration.ofSeconds(60));
            Percentiles pc = Percentiles.of(us);
            ModeResult m = new ModeResult(mode.label());
            m.put("level", lv);
            m.put("p50_us", Measures.round(pc.at(50)));
            m.put("p99_us", Measures.round(pc.at(99)));
            m.put("p99_over_T", Measures.round(pc.at(99) / t));
            m.put("max_us", Measures.round(pc.max()));
            Percentiles pe = Percentiles.of(endUs);
            m.put("end_p50_us", Measures.round(pe.at(50)));
            m.put("end_p99_us", Measures.round(pe.at(99)));
            m.put("end_p99_over_T", Measures.round(pe.at(99) / t));
            m.put("probe_alone_us", Measures.round(baseline));
            m.put("seconds", Measures.round((System.nanoTime() - started) / 1e9));
            m.samples("preemption latency us", us);
            m.samples("end-based preemption latency us", endUs);
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        report.note("preemption latency = fg probe's start - its submit (CommandResult), with bg spinning " + t + " us commands");
        report.note("end_* = the probe's submit -> end minus its median submit -> end with the device idle (probe_alone_us): "
                + "the delay bg caused, whatever the driver calls the start (a CUDA start event marks when the stream reached "
                + "the kernel, not when its blocks got SMs)");
        report.barFigure("p99_us");
        return report;
    }
}
