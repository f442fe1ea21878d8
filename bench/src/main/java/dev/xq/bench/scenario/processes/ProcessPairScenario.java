package dev.xq.bench.scenario.processes;

import dev.xq.api.XQueue;
import dev.xq.api.XQueueStatus;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.scenario.Measures;
import dev.xq.bench.scenario.Mode;
import dev.xq.bench.scenario.PolicySettings;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Two unmodified processes on one GPU: a latency-critical one (hp) and a best-effort one (lp).
 * Modes: hp alone, lp alone, both without XQ (native), both under the interposer with the node's
 * policy deciding (hp priority 2, lp 1), and hp alone under the interposer (its overhead).
 *
 * <p>{@code torch-pair}: PyTorch processes (bench/torch/*.py) on a real CUDA GPU.
 * {@code process-pair}: the interposer's test program on the fake libcuda, whose processes share
 * one simulated GPU through a lock file; runs anywhere gcc built interpose.
 */
public final class ProcessPairScenario implements Scenario {

    private final boolean torch;

    public ProcessPairScenario(boolean torch) {
        this.torch = torch;
    }

    @Override
    public String name() {
        return torch ? "torch-pair" : "process-pair";
    }

    @Override
    public String summary() {
        return torch
                ? "two unmodified PyTorch processes: ResNet-50 fp16 inference (hp) beside ResNet-50 fp32 training (lp); hp latency, lp it/s"
                : "two unmodified processes on the fake libcuda sharing one simulated GPU: hp task latency, lp throughput";
    }

    @Override
    public List<ParamSpec> params() {
        List<ParamSpec> l = new ArrayList<>(List.of(
                ParamSpec.decimal("seconds", torch ? 20 : 5, 1, 3600, "measured length of each mode"),
                ParamSpec.choice("policy", "hpf", Processes.POLICIES, "policy deciding in the xq modes"),
                ParamSpec.choice("modes", "all", List.of("all", "pair", "overhead", "lp"),
                        "all: standalone, lp-alone, native, xq, hp-xq; pair: standalone, native, xq; overhead: standalone, hp-xq; "
                                + "lp: lp-alone, lp-xq (lp alone under the interposer: what throttling alone costs it)"),
                ParamSpec.integer("rounds", 1, 1, 20, "overhead mode: standalone and hp-xq alternated this many times (each "
                        + "for seconds), hp's latencies pooled per mode: the machine's drift falls on both alike"),
                ParamSpec.integer("threshold", 0, 0, 1 << 20, "process queues' threshold (0: the node's default)"),
                ParamSpec.integer("window", -1, -1, 60_000_000, "process queues' window in us (-1: the node's default)"),
                ParamSpec.choice("guards", "on", List.of("on", "off"),
                        "arrival guards in the xq modes (dev.xq.scheduler arrivalGuards): keep the device clear for hp's next foreseen request")));
        if (torch) {
            l.add(ParamSpec.choice("hp", "graph", List.of("graph", "eager"), "hp: batch 8 as a CUDA graph, or batch 1 eager"));
            l.add(ParamSpec.decimal("period_ms", 25, 0, 10_000, "hp request period"));
            l.add(ParamSpec.choice("python", "python3", List.of("python3", "python"), "the Python to run"));
        } else {
            l.add(ParamSpec.integer("T", 1000, 10, 1_000_000, "kernel time, us"));
            l.add(ParamSpec.integer("n", 10, 1, 10_000, "kernels per task"));
            l.add(ParamSpec.decimal("period_ms", 40, 0, 10_000, "hp task period"));
        }
        return l;
    }

    /** pool: the mode whose figures this round's latencies join (null: a mode of its own) */
    record Mode(String label, boolean hp, boolean lp, boolean xq, String pool) {
        Mode(String label, boolean hp, boolean lp, boolean xq) {
            this(label, hp, lp, xq, null);
        }
    }

    /** The overhead modes, alternated round after round. */
    static List<Mode> overheadRounds(int rounds) {
        if (rounds == 1) {
            return List.of(new Mode("standalone", true, false, false), new Mode("hp-xq", true, false, true));
        }
        List<Mode> l = new ArrayList<>();
        for (int r = 1; r <= rounds; r++) {
            l.add(new Mode("standalone r" + r, true, false, false, "standalone"));
            l.add(new Mode("hp-xq r" + r, true, false, true, "hp-xq"));
        }
        return l;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        Path home = Processes.home();
        Path interposer = Processes.interposer(home);
        String socket = Processes.hostSocket(ctx);
        String policy = p.string("policy");
        ctx.requirePolicies(policy);
        double seconds = p.doubleValue("seconds");
        List<Mode> modes = switch (p.string("modes")) {
            case "pair" -> List.of(new Mode("standalone", true, false, false), new Mode("native", true, true, false),
                    new Mode("xq:" + policy, true, true, true));
            case "overhead" -> overheadRounds(p.intValue("rounds"));
            case "lp" -> List.of(new Mode("lp-alone", false, true, false), new Mode("lp-xq", false, true, true));
            default -> List.of(new Mode("standalone", true, false, false), new Mode("lp-alone", false, true, false),
                    new Mode("native", true, true, false), new Mode("xq:" + policy, true, true, true),
                    new Mode("hp-xq", true, false, true));
        };
        Path runDir = Files.createTempDirectory("xq-" + name() + "-");
        ctx.out().line(name() + ": processes' logs in " + runDir + "; node socket " + socket);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        Map<String, String> hpResult = new LinkedHashMap<>();
        Map<String, String> lpResult = new LinkedHashMap<>();
        try (PolicySettings guards = PolicySettings.apply(ctx, "dev.xq.scheduler", Map.of("arrivalGuards", p.string("guards").equals("on")))) {
            runModes(ctx, p, modes, home, interposer, socket, policy, seconds, runDir, report, hpResult, lpResult);
        }
        return finish(report);
    }

    private void runModes(ScenarioContext ctx, Params p, List<Mode> modes, Path home, Path interposer, String socket, String policy,
                          double seconds, Path runDir, ScenarioReport report, Map<String, String> hpResult,
                          Map<String, String> lpResult) throws Exception {
        Map<String, List<double[]>> pooled = new LinkedHashMap<>();
        for (Mode mode : modes) {
            if (mode.xq) {
                ctx.selectPolicy(policy, 10_000);
            }
            ctx.out().line("mode " + mode.label + " (" + seconds + " s measured)");
            Path dir = Files.createDirectories(runDir.resolve(mode.label.replace(':', '-')));
            Map<String, String> env = torch ? Map.of() : Processes.fakeGpu(home, dir);
            List<TenantProcess> started = new ArrayList<>();
            try {
                TenantProcess lp = null;
                TenantProcess hp = null;
                if (mode.lp) {
                    lp = TenantProcess.start("lp", command(p, home, false, seconds), tenantEnv(env, mode, interposer, socket, "train", 1), dir);
                    started.add(lp);
                    if (torch) {
                        lp.awaitReady(600);
                    }
                }
                if (mode.hp) {
                    hp = TenantProcess.start("hp", command(p, home, true, seconds), tenantEnv(env, mode, interposer, socket, "serve", 2), dir);
                    started.add(hp);
                    if (torch) {
                        hp.awaitReady(600);
                    }
                }
                QueueTuner tuner = mode.xq ? new QueueTuner(ctx, p, started) : null;
                if (torch) {
                    for (TenantProcess t : started) {
                        t.go();
                    }
                }
                List<String> seen = new ArrayList<>();
                if (tuner != null) {
                    tuner.runUntil(System.nanoTime() + (long) (seconds * 0.5e9), seen);
                }
                ModeResult m = new ModeResult(mode.label);
                if (hp != null) {
                    String r = hp.awaitResult((long) seconds + 600);
                    hpResult.put(mode.label, r);
                    double[] lat = TenantProcess.numbers(r, "lat_ms");
                    Percentiles pc = lat.length > 0 ? Percentiles.of(lat) : null;
                    m.put("hp_p50_ms", pc != null ? Measures.round(pc.at(50)) : TenantProcess.number(r, "p50_ms"));
                    m.put("hp_p99_ms", pc != null ? Measures.round(pc.at(99)) : TenantProcess.number(r, "p99_ms"));
                    m.put("hp_requests", pc != null ? lat.length : TenantProcess.number(r, "tasks"));
                    if (lat.length > 0) {
                        m.samples("hp latency ms", lat);
                        if (mode.pool != null) {
                            pooled.computeIfAbsent(mode.pool, k -> new ArrayList<>()).add(lat);
                        }
                    }
                }
                if (lp != null) {
                    String r = lp.awaitResult((long) seconds + 600);
                    lpResult.put(mode.label, r);
                    double rate = torch ? TenantProcess.number(r, "it_per_s") : TenantProcess.number(r, "tasks") / seconds;
                    m.put("lp_it_per_s", Measures.round(rate));
                }
                if (mode.xq) {
                    m.put("xq_queues", String.join(" ", seen));
                }
                report.add(m);
            } finally {
                for (TenantProcess t : started) {
                    t.close();
                }
            }
        }
        for (var e : pooled.entrySet()) {
            report.add(pooledResult(e.getKey(), e.getValue()));
        }
        summarise(report, hpResult, lpResult, policy);
    }

    /** One mode's figures from the latencies of all its rounds together. */
    static ModeResult pooledResult(String label, List<double[]> rounds) {
        int n = 0;
        for (double[] r : rounds) {
            n += r.length;
        }
        double[] all = new double[n];
        int i = 0;
        for (double[] r : rounds) {
            System.arraycopy(r, 0, all, i, r.length);
            i += r.length;
        }
        Percentiles pc = Percentiles.of(all);
        ModeResult m = new ModeResult(label);
        m.put("hp_p50_ms", Measures.round(pc.at(50)));
        m.put("hp_p99_ms", Measures.round(pc.at(99)));
        m.put("hp_requests", n);
        m.put("rounds", rounds.size());
        m.samples("hp latency ms", all);
        return m;
    }

    private static ScenarioReport finish(ScenarioReport report) {
        report.barFigure("hp_p99_ms");
        report.barFigure("lp_it_per_s");
        return report;
    }

    private static Map<String, String> tenantEnv(Map<String, String> base, Mode mode, Path interposer, String socket, String name,
                                                 int priority) {
        return mode.xq ? Processes.interposed(base, interposer, socket, name, priority) : new HashMap<>(base);
    }

    private List<String> command(Params p, Path home, boolean hp, double seconds) {
        if (torch) {
            List<String> c = new ArrayList<>(List.of(p.string("python"), "-u",
                    home.resolve(hp ? "bench/torch/hp_infer.py" : "bench/torch/lp_train.py").toString(),
                    "--seconds", Double.toString(seconds), "--wait-go"));
            if (hp) {
                c.addAll(List.of("--mode", p.string("hp"), "--period-ms", Double.toString(p.doubleValue("period_ms"))));
            }
            return c;
        }
        return List.of(Processes.fakeApp(home).toString(), "--seconds", Double.toString(seconds),
                "--kernels", Integer.toString(p.intValue("n")), "--us", Integer.toString(p.intValue("T")),
                "--period-ms", hp ? Double.toString(p.doubleValue("period_ms")) : "0", "--check", "--latencies");
    }

    private static void summarise(ScenarioReport report, Map<String, String> hp, Map<String, String> lp, String policy) {
        String xq = "xq:" + policy;
        ModeResult standalone = find(report, "standalone");
        ModeResult pair = find(report, xq);
        ModeResult nat = find(report, "native");
        ModeResult over = find(report, "hp-xq");
        ModeResult lpAlone = find(report, "lp-alone");
        ModeResult lpXq = find(report, "lp-xq");
        if (lpAlone != null && lpXq != null) {
            double r = lpXq.number("lp_it_per_s") / lpAlone.number("lp_it_per_s");
            lpXq.put("lp_vs_alone", Measures.round(r));
            report.summary().put("lp_xq_vs_alone", Measures.round(r));
        }
        if (standalone != null && pair != null) {
            double r = pair.number("hp_p99_ms") / standalone.number("hp_p99_ms");
            pair.put("hp_p99_over_standalone", Measures.round(r));
            report.summary().put("hp_p99_over_standalone", Measures.round(r));
            report.goal("hp P99 under " + xq + " <= 1.2 x standalone P99", r <= 1.2, Measures.round(r) + " x");
        }
        if (standalone != null && nat != null) {
            nat.put("hp_p99_over_standalone", Measures.round(nat.number("hp_p99_ms") / standalone.number("hp_p99_ms")));
        }
        if (nat != null && pair != null) {
            double r = pair.number("lp_it_per_s") / nat.number("lp_it_per_s");
            pair.put("lp_vs_native", Measures.round(r));
            report.summary().put("lp_vs_native", Measures.round(r));
            report.goal("lp throughput under " + xq + " >= 0.85 x native pair", r >= 0.85, Measures.round(r) + " x");
        }
        if (standalone != null && over != null) {
            double p50 = 100 * (over.number("hp_p50_ms") / standalone.number("hp_p50_ms") - 1);
            double p99 = 100 * (over.number("hp_p99_ms") / standalone.number("hp_p99_ms") - 1);
            over.put("overhead_p50_pct", Measures.round(p50));
            over.put("overhead_p99_pct", Measures.round(p99));
            report.summary().put("overhead_p50_pct", Measures.round(p50));
            report.summary().put("overhead_p99_pct", Measures.round(p99));
            report.goal("interposer overhead on hp alone <= 2 % at P50 and P99", p50 <= 2 && p99 <= 2,
                    Measures.round(p50) + " % / " + Measures.round(p99) + " %");
        }
        // Results must not depend on the interposer: the same input gives the same output.
        String ref = hp.get("standalone") != null ? hp.get("standalone") : hp.get("standalone r1");
        if (ref != null) {
            double c0 = TenantProcess.number(ref, "checksum");
            boolean same = true;
            for (var e : hp.entrySet()) {
                double c = TenantProcess.number(e.getValue(), "checksum");
                if (!Double.isNaN(c0) && !(Math.abs(c - c0) <= 1e-3 * Math.max(1, Math.abs(c0)))) {
                    same = false;
                    report.note("hp output checksum in " + e.getKey() + ": " + c + " vs standalone " + c0);
                }
                if (e.getValue().contains("\"check\":\"bad\"")) {
                    same = false;
                    report.note("hp result check failed in " + e.getKey());
                }
            }
            report.summary().put("hp_results_identical", same);
        }
        String lpRef = lp.get("lp-alone") != null ? lp.get("lp-alone") : lp.get("native");
        if (lpRef != null) {
            double[] l0 = TenantProcess.numbers(lpRef, "losses");
            double worst = 0;
            boolean ok = true;
            for (var e : lp.entrySet()) {
                double[] l = TenantProcess.numbers(e.getValue(), "losses");
                for (int i = 0; i < Math.min(l.length, l0.length); i++) {
                    worst = Math.max(worst, Math.abs(l[i] - l0[i]) / Math.max(1e-9, Math.abs(l0[i])));
                }
                if (e.getValue().contains("\"check\":\"bad\"")) {
                    ok = false;
                    report.note("lp result check failed in " + e.getKey());
                }
            }
            if (l0.length > 0) {
                report.summary().put("lp_loss_max_rel_diff", worst);
            }
            report.summary().put("lp_results_ok", ok);
        }
        report.note("hp: " + (hp.isEmpty() ? "-" : "latency = request issued to result on the host, after warm-up")
                + "; lp: iterations (or tasks) per second over the measured window");
        report.note("xq modes: both processes unmodified, default stream, LD_PRELOAD of the interposer; hp XQ_PRIORITY 2, lp 1");
    }

    private static ModeResult find(ScenarioReport r, String label) {
        for (ModeResult m : r.modes()) {
            if (m.mode().equals(label)) {
                return m;
            }
        }
        return null;
    }

    /**
     * Applies the scenario's queue limits to the processes' queues as they appear, and notes
     * which queues the node sees (name, group).
     */
    private static final class QueueTuner {
        private final ScenarioContext ctx;
        private final int threshold;
        private final long window;
        private final List<Long> pids = new ArrayList<>();

        QueueTuner(ScenarioContext ctx, Params p, List<TenantProcess> tenants) {
            this.ctx = ctx;
            this.threshold = p.intValue("threshold");
            this.window = p.longValue("window");
            for (TenantProcess t : tenants) {
                pids.add(t.pid());
            }
        }

        void runUntil(long untilNanos, List<String> seen) throws InterruptedException {
            List<Long> tuned = new ArrayList<>();
            do {
                for (XQueue q : ctx.service().queues()) {
                    XQueueStatus st = q.status();
                    if (tuned.contains(st.handle()) || !pids.stream().anyMatch(pid -> st.group().startsWith(pid + ":"))) {
                        continue;
                    }
                    tuned.add(st.handle());
                    seen.add(st.name() + "@" + st.group());
                    var c = st.config();
                    if (threshold > 0) {
                        c = c.withThreshold(threshold).withBatch(Math.min(c.batch(), threshold));
                    }
                    if (window >= 0) {
                        c = c.withWindowMicros(window);
                    }
                    if (!c.equals(st.config())) {
                        q.configure(c);
                    }
                }
                Thread.sleep(20);
            } while (System.nanoTime() < untilNanos);
        }
    }
}
