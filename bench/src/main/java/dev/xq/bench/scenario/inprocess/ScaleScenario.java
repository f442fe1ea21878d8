package dev.xq.bench.scenario.inprocess;

import dev.xq.api.Command;
import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.scenario.Measures;
import dev.xq.bench.scenario.Mode;
import dev.xq.bench.scenario.ModeRun;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.scenario.SimDevice;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Many queues at once: 1,000 XQueues with 100 zero-length commands each. */
public final class ScaleScenario implements Scenario {

    @Override
    public String name() {
        return "scale";
    }

    @Override
    public String summary() {
        return "1,000 queues x 100 spin(0) commands; submit-to-launch latency, decision time, heap and threads";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("queues", 1000, 1, 100_000, "queues"),
                ParamSpec.integer("commands", 100, 1, 1_000_000, "zero-length commands per queue"),
                ParamSpec.integer("threads", 4, 1, 256, "submitting threads"),
                ParamSpec.integer("engines", 0, 0, 1_000_000, "0 = the --device as it is; N = a sim device of N engines made for the run"),
                ParamSpec.choice("policy", "hpf", List.of("native", "hpf", "hpf-aging", "edf", "kedf", "lax", "drf", "bandwidth",
                        "bandwidth-group"), "policy deciding"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        String policy = p.string("policy");
        ctx.requirePolicies(policy);
        String device = ctx.device();
        if (p.intValue("engines") > 0) {
            SimDevice dev = SimDevice.create(ctx, new SimDevice.Spec("sim-scale", p.intValue("engines"), 1L << 34, 3, "stall", -1, -1, -1));
            ctx.onClose(dev);
            device = dev.id();
            ctx.out().line("created sim device " + device + " with " + p.intValue("engines") + " engines");
        }
        ScenarioReport report = new ScenarioReport(name(), device, p.asMap());
        Mode mode = policy.equals("native") ? Mode.nativeMode() : Mode.xq(policy);
        int nq = p.intValue("queues");
        int nc = p.intValue("commands");
        int nt = Math.min(p.intValue("threads"), nq);
        ctx.out().line("mode " + mode.label() + ": " + nq + " queues x " + nc + " commands from " + nt + " threads");
        ModeRun run = new ModeRun(ctx, mode);
        long c0 = System.nanoTime();
        List<XQueue> queues = new ArrayList<>(nq);
        for (int i = 0; i < nq; i++) {
            queues.add(run.queueOn(device, "q" + i, "g" + (i % 10), 0, new Hint.Priority(i % 10)));
        }
        double createMs = (System.nanoTime() - c0) / 1e6;
        ctx.out().line(String.format(java.util.Locale.ROOT, "  created %d queues in %.1f ms", nq, createMs));
        Command zero = Command.spin(0);
        List<List<Submission>> perThread = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        Throwable[] error = new Throwable[1];
        run.start();
        // Decision timing then covers this load only.
        ctx.scheduler().resetStats();
        long s0 = System.nanoTime();
        for (int t = 0; t < nt; t++) {
            int first = t;
            List<Submission> mine = new ArrayList<>();
            perThread.add(mine);
            threads.add(Thread.ofPlatform().daemon().name("xq-bench-scale-" + t).start(() -> {
                try {
                    // Round robin over this thread's queues, so every queue has work early.
                    for (int k = 0; k < nc; k++) {
                        for (int q = first; q < nq; q += nt) {
                            mine.add(run.ledger().submit(queues.get(q), zero));
                        }
                    }
                } catch (Throwable e) {
                    synchronized (error) {
                        error[0] = e;
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        double submitMs = (System.nanoTime() - s0) / 1e6;
        if (error[0] != null) {
            throw new IllegalStateException("submitting failed: " + error[0], error[0]);
        }
        ctx.out().line(String.format(java.util.Locale.ROOT, "  submitted %d commands in %.1f ms; waiting for them",
                (long) nq * nc, submitMs));
        long deadline = System.nanoTime() + 120_000_000_000L;
        long nextPrint = System.nanoTime() + 1_000_000_000L;
        while (run.ledger().outstanding() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
            if (System.nanoTime() >= nextPrint) {
                ctx.out().line("  commands not yet ended: " + run.ledger().outstanding());
                nextPrint += 1_000_000_000L;
            }
        }
        double allMs = (System.nanoTime() - s0) / 1e6;
        List<Double> lat = new ArrayList<>();
        for (List<Submission> subs : perThread) {
            for (Submission s : subs) {
                CommandResult r = TaskRecord.resultOf(s);
                if (r != null) {
                    lat.add((r.startNanos() - r.submitNanos()) / 1e3);
                }
            }
        }
        int threadCount = ManagementFactory.getThreadMXBean().getThreadCount();
        var stats = ctx.scheduler().stats();
        var counts = run.finish(Duration.ofSeconds(10));
        System.gc();
        Runtime rt = Runtime.getRuntime();
        double heapMb = (rt.totalMemory() - rt.freeMemory()) / (1024.0 * 1024.0);
        double[] us = lat.stream().mapToDouble(Double::doubleValue).toArray();
        Percentiles pc = Percentiles.of(us);
        ModeResult m = new ModeResult(mode.label());
        m.put("submit_to_launch_p50_us", Measures.round(pc.at(50)));
        m.put("submit_to_launch_p99_us", Measures.round(pc.at(99)));
        m.put("decision_p99_us", Measures.round(stats.decisionP99Micros()));
        m.put("heap_mb_after", Measures.round(heapMb));
        m.put("threads", threadCount);
        m.put("create_ms", Measures.round(createMs));
        m.put("commands_per_s", Measures.round(us.length / (allMs / 1e3)));
        m.samples("submit to start us", us);
        m.counts(counts);
        report.add(m);
        report.note("submit_to_launch uses CommandResult.startNanos - submitNanos (the device start) as the proxy for launch; "
                + "on a device with fewer engines than queues it includes waiting behind other queues' commands (engines=N gives "
                + "each queue room); "
                + "threads = live JVM threads while the queues were open; heap_mb_after = used heap after the queues closed and a GC");
        return report;
    }
}
