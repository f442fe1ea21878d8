package dev.xq.bench.scenario.policies;

import dev.xq.api.Hint;
import dev.xq.api.Submission;
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
import dev.xq.bench.stats.LogNormalArrivals;
import dev.xq.bench.stats.Percentiles;
import dev.xq.bench.workload.TaskRecord;
import dev.xq.bench.workload.TaskShape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Paella-style serving: clients send requests with bursty (log-normal) gaps; each request must
 * finish within slo x its standalone time. Each request gets a queue of its own from its
 * client's pool, so its Deadline hint describes exactly that request.
 */
public final class EdfScenario implements Scenario {

    static final String KEDF_PID = "dev.xq.policy.kedf";
    static final String EDF_PID = "dev.xq.policy.edf";
    /** The label of edf run with edf.demote.hopeless=false. */
    static final String PLAIN = "xq:edf-plain";

    @Override
    public String name() {
        return "edf";
    }

    @Override
    public String summary() {
        return "clients send requests (n x spin T) with log-normal gaps at a total load; deadline = slo x standalone; "
                + "modes native, xq:hpf, xq:edf-plain (textbook EDF), xq:edf, xq:kedf; miss rate and P99 per load";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("clients", 4, 1, 256, "tenants sending requests"),
                ParamSpec.integer("T", 500, 1, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 10, 1, 100_000, "commands per request"),
                ParamSpec.decimals("loads", List.of(0.3, 0.5, 0.7), 0.01, 2.0, "total offered loads (1 = the device's standalone capacity)"),
                ParamSpec.decimal("slo", 4.0, 1.0, 1000, "deadline as a multiple of the standalone request time"),
                ParamSpec.decimal("sigma", 2.0, 0.1, 5.0, "shape of the log-normal gaps"),
                ParamSpec.decimal("seconds", 5, 0.5, 3600, "length of each mode at each load"),
                ParamSpec.integer("pool", 8, 1, 256, "queues per client: requests in flight at once per client"),
                ParamSpec.integer("k", 4, 1, 4096, "K of kedf (set through Config Admin PID " + KEDF_PID + " for the run)"),
                ParamSpec.integer("seed", 1, 0, Long.MAX_VALUE, "seed of the arrivals (the same in every mode)"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf", "edf", "kedf");
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        ctx.onClose(PolicySettings.apply(ctx, KEDF_PID, java.util.Map.of("kedf.k", p.intValue("k"))));
        ctx.onClose(PolicySettings.apply(ctx, EDF_PID, java.util.Map.of("edf.demote.hopeless", true)));
        TaskShape shape = TaskShape.spins(p.intValue("n"), p.longValue("T"));
        FgBgWorkload cal = FgBgWorkload.calibrate(ctx, shape, 1.0, 5);
        long standalone = cal.standaloneNanos;
        long deadlineMicros = Math.max(1, (long) (p.doubleValue("slo") * standalone / 1e3));
        double seconds = p.doubleValue("seconds");
        int clients = p.intValue("clients");
        boolean first = true;
        for (double load : p.doubles("loads")) {
            for (Mode mode : List.of(Mode.nativeMode(), Mode.xq("hpf"), Mode.xq("edf").labelled(PLAIN), Mode.xq("edf"),
                    Mode.xq("kedf"))) {
                ctx.out().line(String.format(Locale.ROOT, "mode %s at load %.2f for %.1f s", mode.label(), load, seconds));
                demoteHopeless(ctx, !mode.label().equals(PLAIN));
                ModeRun run = new ModeRun(ctx, mode);
                double meanGap = clients * standalone / load;
                List<Client> cs = new ArrayList<>();
                for (int c = 0; c < clients; c++) {
                    // Static priorities for hpf: client 0 most important.
                    List<XQueue> pool = new ArrayList<>();
                    for (int k = 0; k < p.intValue("pool"); k++) {
                        pool.add(run.queue("client" + c + "-" + k, "client" + c, clients - c, new Hint.Priority(clients - c)));
                    }
                    cs.add(new Client("client" + c, pool, run, shape, deadlineMicros,
                            new LogNormalArrivals(meanGap, p.doubleValue("sigma"), new SplittableRandom(p.longValue("seed") * 1000 + c))));
                }
                run.start();
                for (Client c : cs) {
                    c.start();
                }
                long end = run.startNanos() + (long) (seconds * 1e9);
                long nextPrint = run.startNanos() + 1_000_000_000L;
                while (System.nanoTime() < end) {
                    Thread.sleep(Math.max(1, Math.min(end, nextPrint) - System.nanoTime()) / 1_000_000 + 1);
                    if (System.nanoTime() >= nextPrint) {
                        int sent = cs.stream().mapToInt(Client::sent).sum();
                        ctx.out().line(String.format(Locale.ROOT, "  [%s load %.2f] %.0f s: %d requests, pending commands %d",
                                mode.label(), load, (System.nanoTime() - run.startNanos()) / 1e9, sent, run.ledger().outstanding()));
                        nextPrint += 1_000_000_000L;
                    }
                    for (Client c : cs) {
                        if (c.error != null) {
                            throw new IllegalStateException("client " + c.name + " failed: " + c.error, c.error);
                        }
                    }
                }
                for (Client c : cs) {
                    c.stop();
                }
                for (Client c : cs) {
                    c.join();
                }
                var counts = run.finish(Duration.ofSeconds(60));
                List<Double> lat = new ArrayList<>();
                long missed = 0;
                long total = 0;
                for (Client c : cs) {
                    for (TaskRecord r : c.records()) {
                        total++;
                        long l = r.ok() ? r.endNanos() - r.releaseNanos() : -1;
                        if (l < 0 || l > deadlineMicros * 1000) {
                            missed++;
                        }
                        if (l >= 0) {
                            lat.add(l / 1e6);
                        }
                    }
                }
                double[] ms = lat.stream().mapToDouble(Double::doubleValue).toArray();
                Percentiles pc = Percentiles.of(ms);
                ModeResult m = new ModeResult(mode.label());
                m.put("load", load);
                m.put("miss_rate", Measures.round(Measures.ratio(missed, total)));
                m.put("p50", Measures.round(pc.at(50)));
                m.put("p99", Measures.round(pc.at(99)));
                m.put("requests", total);
                m.samples(String.format(Locale.ROOT, "request latency ms at load %.2f", load), ms);
                m.counts(first ? counts.plus(cal.calibrationCounts) : counts);
                first = false;
                if (!run.drainNote().isEmpty()) {
                    m.note(run.drainNote());
                }
                report.add(m);
            }
        }
        report.summary().put("standalone_request_ms", Measures.round(standalone / 1e6));
        report.summary().put("deadline_ms", Measures.round(deadlineMicros / 1e3));
        report.note("request latency = arrival to the end of its last command; a request misses when that exceeds the deadline "
                + "(slo x standalone); every request uses a queue of its own from its client's pool (requests beyond the pool wait)");
        report.note("xq:edf-plain is edf with edf.demote.hopeless=false (textbook EDF); xq:edf and xq:kedf put queues that can "
                + "only miss behind those that can still make it (the default)");
        double[] highest = {Double.NaN, Double.NaN, Double.NaN};
        for (ModeResult m : report.modes()) {
            if (m.number("load") == p.doubles("loads").getLast()) {
                switch (m.mode()) {
                    case "native" -> highest[0] = m.number("miss_rate");
                    case "xq:edf" -> highest[1] = m.number("miss_rate");
                    case "xq:kedf" -> highest[2] = m.number("miss_rate");
                    default -> { }
                }
            }
        }
        double best = Math.min(highest[1], highest[2]);
        report.goal(String.format(Locale.ROOT, "at the highest load (%.2f) xq:edf or xq:kedf misses at most half as often as native",
                p.doubles("loads").getLast()), best <= highest[0] / 2,
                String.format(Locale.ROOT, "edf %.3f, kedf %.3f, native %.3f", highest[1], highest[2], highest[0]));
        report.barFigure("miss_rate");
        return report;
    }

    /**
     * Sets edf.demote.hopeless and waits until the edf policy says it runs with it (Config Admin
     * delivers the update on its own thread).
     */
    private static void demoteHopeless(ScenarioContext ctx, boolean on) throws Exception {
        PolicySettings.apply(ctx, EDF_PID, java.util.Map.of("edf.demote.hopeless", on));
        long until = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < until) {
            for (var info : ctx.scheduler().policies()) {
                if (info.name().equals("edf") && info.description().contains("can only miss") == on) {
                    return;
                }
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException("policy edf did not take edf.demote.hopeless=" + on + " within 5 s");
    }

    /** One client: its own thread sends requests at log-normal gaps onto free queues of its pool. */
    private static final class Client {
        final String name;
        final BlockingQueue<XQueue> free;
        final ModeRun run;
        final TaskShape shape;
        final long deadlineMicros;
        final LogNormalArrivals gaps;
        final List<TaskRecord> records = new ArrayList<>();
        volatile boolean stopping;
        volatile Throwable error;
        final Object submitLock = new Object();
        Thread thread;

        Client(String name, List<XQueue> pool, ModeRun run, TaskShape shape, long deadlineMicros, LogNormalArrivals gaps) {
            this.name = name;
            this.free = new ArrayBlockingQueue<>(pool.size(), false, pool);
            this.run = run;
            this.shape = shape;
            this.deadlineMicros = deadlineMicros;
            this.gaps = gaps;
        }

        void start() {
            thread = Thread.ofPlatform().daemon().name("xq-bench-" + name).start(this::loop);
        }

        /** When this returns the client submits nothing more. */
        void stop() {
            synchronized (submitLock) {
                stopping = true;
            }
            LockSupport.unpark(thread);
        }

        void join() throws InterruptedException {
            if (!thread.join(Duration.ofSeconds(30))) {
                throw new IllegalStateException("client " + name + " did not stop within 30 s");
            }
        }

        synchronized int sent() {
            return records.size();
        }

        synchronized List<TaskRecord> records() {
            return List.copyOf(records);
        }

        private void loop() {
            try {
                long next = System.nanoTime() + gaps.nextGapNanos();
                while (!stopping) {
                    long now;
                    while (!stopping && (now = System.nanoTime()) < next) {
                        LockSupport.parkNanos(next - now);
                    }
                    if (stopping) {
                        return;
                    }
                    long arrival = next;
                    next += gaps.nextGapNanos();
                    XQueue q = null;
                    while (q == null && !stopping) {
                        q = free.poll(10, TimeUnit.MILLISECONDS);
                    }
                    if (q == null) {
                        return;
                    }
                    List<Submission> subs = new ArrayList<>(shape.count());
                    synchronized (submitLock) {
                        if (stopping) {
                            return;
                        }
                        // The deadline counts from when the queue becomes ready, i.e. this submit.
                        q.hint(new Hint.Deadline(deadlineMicros));
                        for (int i = 0; i < shape.count(); i++) {
                            subs.add(run.ledger().submit(q, shape.command()));
                        }
                    }
                    XQueue back = q;
                    subs.getLast().stage().whenComplete((r, e) -> free.offer(back));
                    synchronized (this) {
                        records.add(new TaskRecord(name, arrival, subs));
                    }
                }
            } catch (Throwable t) {
                error = t;
            }
        }
    }
}
