package dev.xq.bench.scenario.processes;

import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import dev.xq.bench.args.UsageException;
import dev.xq.bench.report.ModeResult;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.scenario.Measures;
import dev.xq.bench.scenario.PolicySettings;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.stats.Percentiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The workload family: mixes of two to four unmodified processes sharing one GPU, each mix run
 * in the modes {@code standalone} (each latency-critical tenant alone, no interposer),
 * {@code native} (all together, no interposer) and {@code xq} (all together under the
 * interposer, the node's policy deciding by {@code XQ_PRIORITY}), plus {@code mps} on request
 * (all together as clients of an MPS server, the best-effort ones at a share of the SMs), and
 * {@code xq-alone} on request (each latency-critical tenant alone under the interposer: its
 * overhead on a tenant alone, against standalone, with a goal line of its own per kind).
 *
 * <p>A tenant is latency-critical (LC: periodic requests, measured by their latency) or best
 * effort (BE: back to back, measured by its rate) by its kind. On {@code --device cuda} each is
 * {@code bench/torch/family/tenant.py --kind KIND}; on any other device the fake libcuda's test
 * program stands in with a shape per kind (how many kernels, how long, how often), so every mix
 * also runs where there is no GPU: the shape of the contention, not its speed.
 *
 * <p>A mix meets its goals when every LC tenant's P99 under xq is within 1.10 of its standalone
 * P99 (and not above native's where native is within that too), every BE tenant keeps 0.9 of its
 * native rate (under the paired reading, of its rate between the stops: {@link #steadyRate}),
 * results are the same in every mode, and every tenant of every mode reported.
 */
public final class MixScenario implements Scenario {

    /** LC's bound on P99 under xq, as a multiple of its standalone P99. */
    static final double LC_BOUND = 1.10;
    /** BE's floor on its rate under xq, as a fraction of its native rate. */
    static final double BE_FLOOR = 0.9;
    /**
     * Intervals between a best-effort tenant's synchronizations with no stop between them, in
     * both native and the mode judged, from which the paired reading judges its rate between the
     * stops ({@link #steadyRate}).
     */
    static final int MIN_STEADY_GAPS = 5;
    /** How far two checksums may differ, relatively: kernels may change with the SMs a process gets. */
    static final double CHECKSUM_TOLERANCE = 1e-3;

    enum Role { LC, BE }

    /**
     * A tenant kind, and the fake-libcuda shape that stands in for it off CUDA: tasks of
     * {@code kernels} kernels of {@code us} microseconds, every {@code periodMs} (LC) or back to
     * back (BE).
     */
    enum Kind {
        /** a small model's inference replayed as one CUDA graph: a burst of short kernels */
        GRAPH(Role.LC, 40, 10, 300),
        /** the same at random times (exponential gaps, the period on average), as a server's requests come: no beat */
        GRAPHP(Role.LC, 40, 10, 300, true),
        /** token-by-token decoding: many tiny kernels per step, often */
        DECODE(Role.LC, 30, 20, 100),
        /** the same decoder at random times (exponential gaps, the period on average), as a chat server's requests come */
        DECODEP(Role.LC, 30, 20, 100, true),
        /**
         * an LLM served from CUDA graphs (as serving engines do): one graph replay and one
         * synchronize a token, each step memory-bound; on the fake libcuda, a request of 32 kernels
         */
        DECODEG(Role.LC, 60, 32, 500),
        /**
         * an LLM chat service served eagerly (a generate loop with a token streamer), its requests
         * at random: each a prompt of its own length, whose prefill covers the device for a few
         * ms, then tokens one at a time, launch-bound, a synchronize a token; on the fake libcuda,
         * a request of 24 kernels
         */
        CHAT(Role.LC, 100, 24, 300, true),
        /** large-batch inference: a few long kernels, seldom */
        BULK(Role.LC, 60, 4, 2000),
        /** the same batch at random times, as an offline-scoring service's requests come */
        BULKP(Role.LC, 60, 4, 2000, true),
        /** fp32 training: long kernels */
        TRAIN32(Role.BE, 0, 10, 3000),
        /** bf16 training: more, shorter kernels */
        TRAINBF16(Role.BE, 0, 10, 1000),
        /**
         * training fed by its host: a CPU input step before each device step, so the device waits for
         * the process every step; on the fake libcuda, bf16 training's shape
         */
        TRAINIO(Role.BE, 0, 10, 1000),
        /** large GEMMs: one long kernel at a time */
        GEMM(Role.BE, 0, 2, 3000),
        /** Triton-generated kernels: many mid-sized ones */
        TRITON(Role.BE, 0, 20, 500);

        final Role role;
        final double periodMs;
        final int kernels;
        final int us;
        final boolean poisson;

        Kind(Role role, double periodMs, int kernels, int us) {
            this(role, periodMs, kernels, us, false);
        }

        Kind(Role role, double periodMs, int kernels, int us, boolean poisson) {
            this.role = role;
            this.periodMs = periodMs;
            this.kernels = kernels;
            this.us = us;
            this.poisson = poisson;
        }

        /** @return the name on the command line and in {@code tenant.py --kind} */
        String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** One process of a mix: its kind, its {@code XQ_PRIORITY}, and its name in the mix (the kind, numbered if it repeats). */
    record Tenant(String name, Kind kind, int priority, Sizes sizes) {

        Tenant(String name, Kind kind, int priority) {
            this(name, kind, priority, Sizes.NONE);
        }

        /** @return what the tenant alone is measured as: its kind, and its sizes where it has its own */
        String shape() {
            return kind.id() + sizes.suffix();
        }
    }

    /**
     * A tenant's own sizes (a custom mix's {@code KIND@OPTION=VALUE}), each left to its kind where
     * not given: {@code period} (ms between an LC tenant's requests; on the fake libcuda too),
     * {@code batch} (the LC kinds, train32, trainbf16), {@code size} (gemm: the matrices' n;
     * triton: rows), {@code layers} (decode, decodep, decodeg, chat, trainbf16) and {@code sync}
     * (the best-effort kinds: steps between synchronizes): PyTorch's tenants only, for the fake
     * libcuda has one shape per kind.
     */
    record Sizes(Map<String, Number> given) {

        static final Sizes NONE = new Sizes(Map.of());

        /** Each option, the kinds that take it, and its range. */
        static final Map<String, List<Kind>> KINDS = Map.of(
                "period", List.of(Kind.GRAPH, Kind.GRAPHP, Kind.DECODE, Kind.DECODEP, Kind.DECODEG, Kind.CHAT, Kind.BULK, Kind.BULKP),
                "batch", List.of(Kind.GRAPH, Kind.GRAPHP, Kind.DECODE, Kind.DECODEP, Kind.DECODEG, Kind.CHAT, Kind.BULK, Kind.BULKP,
                        Kind.TRAIN32, Kind.TRAINBF16, Kind.TRAINIO),
                "size", List.of(Kind.GEMM, Kind.TRITON),
                "layers", List.of(Kind.DECODE, Kind.DECODEP, Kind.DECODEG, Kind.CHAT, Kind.TRAINBF16),
                // how many steps a best-effort process runs between its synchronizes (tenant.py's
                // --sync-every; the kinds' own: training 1, gemm 4, triton 16): under native time
                // slicing a process that waits on the device often keeps less of it (docs/processes.md,
                // "A model of native's split, to be tested")
                "sync", List.of(Kind.TRAIN32, Kind.TRAINBF16, Kind.TRAINIO, Kind.GEMM, Kind.TRITON));

        /** The order the options are written in a tenant's name and passed to tenant.py. */
        static final List<String> ORDER = List.of("period", "batch", "size", "layers", "sync");

        /**
         * @param kind the tenant's kind
         * @param options {@code OPTION=VALUE} each
         * @param spec the whole mix, for the message
         * @throws UsageException naming the option or value that is wrong and what is allowed
         */
        static Sizes parse(Kind kind, List<String> options, String spec) {
            Map<String, Number> given = new java.util.TreeMap<>(java.util.Comparator.comparingInt(ORDER::indexOf));
            for (String o : options) {
                int eq = o.indexOf('=');
                String key = eq < 0 ? o : o.substring(0, eq);
                List<Kind> kinds = KINDS.get(key);
                if (kinds == null) {
                    throw new UsageException("custom=" + spec + ": '" + o + "' of " + kind.id() + " is not an option; allowed: "
                            + String.join(", ", ORDER.stream().map(k -> k + "=N").toList()));
                }
                if (!kinds.contains(kind)) {
                    throw new UsageException("custom=" + spec + ": " + key + " is not an option of " + kind.id() + "; " + key
                            + " is for " + String.join(", ", kinds.stream().map(Kind::id).toList()));
                }
                if (given.containsKey(key)) {
                    throw new UsageException("custom=" + spec + ": " + key + " of " + kind.id() + " given twice");
                }
                String v = eq < 0 ? "" : o.substring(eq + 1);
                if (key.equals("period")) {
                    double ms;
                    try {
                        ms = Double.parseDouble(v);
                    } catch (NumberFormatException e) {
                        ms = Double.NaN;
                    }
                    if (!(ms >= 1 && ms <= 10_000) || !v.matches("[0-9]+(\\.[0-9]+)?")) {
                        throw new UsageException("custom=" + spec + ": period '" + v + "' of " + kind.id()
                                + " is not allowed; allowed: 1 to 10000 (ms)");
                    }
                    given.put(key, ms);
                } else {
                    int max = key.equals("size") ? 1 << 20 : key.equals("layers") ? 96 : 4096;
                    if (!v.matches("[0-9]{1,7}") || Integer.parseInt(v) < 1 || Integer.parseInt(v) > max) {
                        throw new UsageException("custom=" + spec + ": " + key + " '" + v + "' of " + kind.id()
                                + " is not allowed; allowed: 1 to " + max);
                    }
                    given.put(key, Integer.parseInt(v));
                }
            }
            return given.isEmpty() ? NONE : new Sizes(java.util.Collections.unmodifiableMap(given));
        }

        /** @return {@code @period=10@size=4096} as given (empty for none): the tenant's part of the mix's name */
        String suffix() {
            StringBuilder b = new StringBuilder();
            given.forEach((k, v) -> b.append('@').append(k).append('=').append(text(v)));
            return b.toString();
        }

        /** @return tenant.py's options for these sizes */
        List<String> args() {
            List<String> a = new ArrayList<>();
            given.forEach((k, v) -> {
                a.add("--" + (k.equals("period") ? "period-ms" : k.equals("sync") ? "sync-every" : k));
                a.add(text(v));
            });
            return a;
        }

        /** @return the LC period in ms: the given one, else the kind's */
        double periodMs(Kind kind) {
            Number p = given.get("period");
            return p == null ? kind.periodMs : p.doubleValue();
        }

        private static String text(Number v) {
            return v instanceof Double d && d == Math.rint(d) ? Long.toString(d.longValue()) : v.toString();
        }
    }

    /** A mix: its name (the kinds joined by '+') and its tenants. */
    record Mix(String name, List<Tenant> tenants) {

        /** @param spec {@code kind:priority} per tenant */
        static Mix of(String... spec) {
            return of(java.util.Collections.nCopies(spec.length, Sizes.NONE), spec);
        }

        /**
         * @param sizes each tenant's own sizes, in the order of {@code spec}
         * @param spec {@code kind:priority} per tenant
         */
        static Mix of(List<Sizes> sizes, String... spec) {
            List<Kind> kinds = new ArrayList<>();
            for (String s : spec) {
                kinds.add(Kind.valueOf(s.substring(0, s.indexOf(':')).toUpperCase(Locale.ROOT)));
            }
            List<Tenant> tenants = new ArrayList<>();
            for (int i = 0; i < spec.length; i++) {
                Kind k = kinds.get(i);
                int priority = Integer.parseInt(spec[i].substring(spec[i].indexOf(':') + 1));
                // XQ_NAME and the figures tell two tenants of one kind apart by a number
                int same = 0;
                int nth = 0;
                for (int j = 0; j < kinds.size(); j++) {
                    if (kinds.get(j) == k) {
                        same++;
                        if (j <= i) {
                            nth++;
                        }
                    }
                }
                tenants.add(new Tenant(same > 1 ? k.id() + "-" + nth : k.id(), k, priority, sizes.get(i)));
            }
            return new Mix(String.join("+", tenants.stream().map(Tenant::shape).toList()), List.copyOf(tenants));
        }
    }

    /** The family, in the order a run goes through it. */
    static final List<Mix> MIXES = List.of(
            Mix.of("decode:2", "trainbf16:1"),
            Mix.of("decode:2", "gemm:1"),
            Mix.of("decode:2", "trainbf16:1", "gemm:1"),
            Mix.of("graph:2", "train32:1"),
            Mix.of("bulk:2", "trainbf16:1"),
            Mix.of("decode:3", "graph:2", "train32:1"),
            Mix.of("graph:2", "triton:1", "gemm:1"),
            Mix.of("bulk:2", "gemm:1", "triton:1"),
            Mix.of("decode:3", "graph:2", "trainbf16:1", "gemm:1"),
            // two LC tenants at two priorities (the node's latency-critical class is priority 2 and
            // above: at 2 and 1 the second decoder was best-effort to the node, judged as LC here)
            Mix.of("decode:3", "decode:2"),
            Mix.of("graphp:2", "train32:1"),
            Mix.of("graphp:2", "gemm:1"),
            Mix.of("graph:2", "gemm:1"),
            Mix.of("bulk:2", "gemm:1"),
            // the mix a hand-made MPS setup failed on (the second LC tenant at 18 x its standalone P99)
            Mix.of("decode:3", "decode:2", "train32:1"),
            // added in session 37, first run as mixes of one's own: two processes alike beside a
            // batch's beat, and a decoder on top of a batch, GEMMs and Triton
            Mix.of("bulk:2", "gemm:1", "gemm:1"),
            Mix.of("decode:3", "bulk:2", "gemm:1", "triton:1"),
            // added in session 38, first run as a mix of one's own: a CUDA graph on a beat beside bf16
            // training, where both goals were missed (the graph at 1.81 x, the training at 0.66)
            Mix.of("graph:2", "trainbf16:1"),
            // added in session 39, first run as a mix of one's own: three processes alike beside a
            // batch's beat, where thirds of the device made each kernel longer than the gap and the
            // GEMMs got 0.32, 0.32 and 0.74 of native sharing
            Mix.of("bulk:2", "gemm:1", "gemm:1", "gemm:1"),
            // added in session 68, first run as mixes of one's own: a wide tenant on top of a
            // large batch and an eager decoder (XQ worse than native sharing for all three LC
            // tenants: the graph 5.73-5.95 x against 2.65, the GEMM narrowed to half beside its
            // requests, unguarded), and best-effort processes only (the bf16 trainer at 0.52)
            Mix.of("graph:3", "decode:2", "bulk:2", "gemm:1"),
            Mix.of("gemm:1", "triton:1", "trainbf16:1"),
            // added in session 70, first run as a mix of one's own with sizes the family never had:
            // a batch of 128 every 150 ms beside GEMMs of n=16384 (~165 ms a kernel): under XQ
            // 23.9-24.9 x its P99 alone (natively 2.1-2.3 x), each request waiting for the GEMM's
            // green-context-narrowed kernel to end; capped by MPS's thread percentage instead, 1.50 x
            Mix.of(List.of(Sizes.parse(Kind.BULK, List.of("batch=128", "period=150"), "the family"),
                    Sizes.parse(Kind.GEMM, List.of("size=16384"), "the family")), "bulk:2", "gemm:1"),
            // added in session 82, first run as custom mixes that session: services whose requests
            // come at random, as a chat or scoring service's do (the family's other LC tenants but
            // graphp keep a beat the node can learn); beside a random-arrival batch, bf16 training
            // ran at 0.71 of native sharing until returns that find no beat stopped holding it
            Mix.of("decodep:2", "trainbf16:1"),
            Mix.of("bulkp:2", "trainbf16:1"),
            Mix.of("decodep:3", "graphp:2", "train32:1"),
            // added in session 98, not yet run on a GPU: an LLM served from CUDA graphs, each token
            // a memory-bound step of its own (a synchronize a token), beside bf16 training, and
            // beside a memory-bound Triton loop and long GEMMs: space that splits multiprocessors
            // does not split memory bandwidth
            Mix.of("decodeg:2", "trainbf16:1"),
            Mix.of("decodeg:2", "triton:1", "gemm:1"),
            // added in session 98, not yet run on a GPU: training that waits for its host's input
            // step every step (gaps of its own), beside Triton only and beside a decoder and GEMMs
            Mix.of("trainio:1", "triton:1"),
            Mix.of("decode:2", "trainio:1", "gemm:1"),
            // added in session 102, first run as mixes of one's own: three best-effort processes
            // beside an eager decoder (their returns from the paired reading's stops, one at a
            // time, kept the node's measured cut from ever weighing: the GEMMs at 0.67 of native
            // sharing, Triton 2.27), and a random batch beside fp32 training and Triton (the
            // trainer's rate alone read low, the cut moved away from it: 0.52)
            Mix.of("decode:2", "trainbf16:1", "gemm:1", "triton:1"),
            Mix.of("bulkp:2", "train32:1", "triton:1"),
            // added in session 107, first run as mixes of one's own: a graph at random above GEMMs
            // and Triton (the graph 1.84 x, native 3.99; the GEMMs 0.58 of native sharing), and an
            // eager decoder above two GEMM processes (1.19 x where native sharing gave it 0.70)
            Mix.of("graphp:2", "gemm:1", "triton:1"),
            Mix.of("decode:2", "gemm:1", "gemm:1"),
            // added in session 109, first run as mixes of one's own with sizes the family never had
            // (H100): a decoder of 16 layers, launch-bound past its 40 ms period, beside input-bound
            // training and Triton (its device part at P99 8.7-10 ms against native's 4.0-4.4: Triton's
            // memory traffic; met in 1 of 2 runs); two eager decoders at two priorities beside GEMMs of
            // n=6144 (each missed once by its host, 1.35 and 1.13); two random services at two
            // priorities beside 21 ms GEMMs (the GEMM 0.55: random arrivals beside kernels no level
            // can cut); a graph above a random decoder of 12 layers beside bf16 training of 12 (the
            // decoder 1.04 against native's 1.03)
            Mix.of(List.of(Sizes.parse(Kind.DECODE, List.of("period=40", "layers=16"), "the family"), Sizes.NONE, Sizes.NONE),
                    "decode:2", "trainio:1", "triton:1"),
            Mix.of(List.of(Sizes.NONE, Sizes.parse(Kind.DECODEP, List.of("layers=12"), "the family"),
                    Sizes.parse(Kind.GEMM, List.of("size=6144"), "the family")), "decode:3", "decodep:2", "gemm:1"),
            Mix.of("decodep:3", "bulkp:2", "gemm:1"),
            Mix.of(List.of(Sizes.NONE, Sizes.parse(Kind.DECODEP, List.of("layers=12"), "the family"),
                    Sizes.parse(Kind.TRAINBF16, List.of("layers=12"), "the family")), "graph:3", "decodep:2", "trainbf16:1"),
            // added in session 112, not yet run on a GPU: an LLM chat service served eagerly, its
            // requests at random, each a prefill across the whole device (128-1024 tokens) and then
            // launch-bound tokens read one by one: wide and narrow in one request, beside bf16
            // training, beside long GEMMs and Triton, and above an eager decoder beside fp32 training
            Mix.of("chat:2", "trainbf16:1"),
            Mix.of("chat:2", "gemm:1", "triton:1"),
            Mix.of("chat:3", "decode:2", "train32:1"));

    /** The modes, in the order each mix runs them; {@code mps} only when asked for. */
    static final List<String> MODES = List.of("standalone", "xq-alone", "xq-ab", "mps-alone", "native", "xq", "xq-hold", "xq-free", "xq-alt", "mps");

    /** The modes a run has unless {@code modes} says otherwise. */
    static final List<String> DEFAULT_MODES = List.of("standalone", "native", "xq");

    /** The interposer's overhead on an LC tenant alone (xq-alone against standalone) that its goal allows, at P50 and at P99. */
    static final double OVERHEAD_BOUND = 0.02;

    @Override
    public String name() {
        return "mix";
    }

    @Override
    public String summary() {
        return "the workload family: mixes of 2-4 unmodified processes on one GPU (PyTorch on cuda, the fake libcuda elsewhere); "
                + "LC P99 against standalone, BE rate against native, per mix";
    }

    @Override
    public List<ParamSpec> params() {
        List<String> mixes = new ArrayList<>(List.of("all", "none"));
        MIXES.forEach(m -> mixes.add(m.name()));
        return List.of(
                ParamSpec.decimal("seconds", 0, 0, 3600, "measured length of each mode (0: 10 on --device cuda, 3 otherwise)"),
                ParamSpec.choices("mixes", List.of("all"), mixes, "the mixes of the family to run (none: only the custom ones)")
                        .otherwise("a mix of your own goes in custom= (e.g. custom=decode:3+graph:2+gemm)"),
                ParamSpec.text("custom", "", "mixes of your own, run after the family's: KIND[:PRIORITY][@OPTION=N...]+... "
                        + "separated by ';' (2 to 4 tenants; kinds " + String.join(", ", KIND_IDS) + "; priority 1-9, by default 2 "
                        + "for the latency-critical kinds and 1 for the others; a tenant's own sizes: period=MS (LC kinds), "
                        + "batch=N (graph, graphp, decode, decodep, decodeg, bulk, bulkp, train32, trainbf16, trainio), size=N (gemm: n of its matrices, "
                        + "8192 by default; triton: rows), layers=N (decode, decodep, decodeg, trainbf16), PyTorch's tenants only but period; e.g. bulk+gemm+trainbf16, "
                        + "decode:3+graph:2+triton or graph:3@period=10+gemm@size=12288)"),
                ParamSpec.choices("modes", DEFAULT_MODES, MODES, "the modes to run for each mix: standalone: each LC kind alone, "
                        + "no interposer; xq-alone: each LC kind alone under the interposer with the node (what ./xq run costs a "
                        + "tenant alone, interposer and MPS together, against standalone; measured once per kind like standalone); xq-ab: each LC "
                        + "kind alone under the interposer with the node, every other request with the interposer's launch path "
                        + "bypassed, in one process (the launch path's own cost, the two halves in the same context and MPS "
                        + "client, the host's drift cancelled pair by pair); mps-alone: each LC kind alone as a client of the "
                        + "node's MPS daemon (or mps_pipe's), no interposer: MPS's own price, which xq-alone holds too (the "
                        + "overhead goal line says how much of it is MPS's); native: all together, no "
                        + "interposer; xq: all together under the interposer; xq-hold and xq-free are xq with "
                        + "the host's mpsHoldBestEffort set true or false for the mode (what holding best-effort MPS clients in time "
                        + "adds to their share); xq-alt: xq with the host settings of alt; mps: by hand, without XQ, on the node's MPS "
                        + "daemon unless mps_pipe names another"),
                ParamSpec.text("alt", "", "xq-alt mode: dev.xq.host settings for that mode, KEY:VALUE[;KEY:VALUE] (e.g. "
                        + "mpsBestEffortShare:50), integers and true/false as such; PID/KEY:VALUE another component's; "
                        + "env/XQ_NAME:VALUE an interposer variable for that mode's tenants (e.g. env/XQ_GUARD_PAD:0)"),
                ParamSpec.choice("order", "alternate", List.of("alternate", "fixed", "listed"), "the order of the modes within "
                        + "each mix: fixed, " + String.join(", ", MODES) + "; alternate, the first, third, ... mix in the fixed "
                        + "order and the second, fourth, ... with xq-alone before standalone and the modes after them reversed (xq "
                        + "before native: the host's speed drifts over minutes, and a reading across modes run always one way "
                        + "round reads that drift); listed, standalone and xq-alone first, each group as modes= lists it (an "
                        + "A/B run both ways round: modes=native,xq-alt,xq)"),
                ParamSpec.choice("policy", "hpf", Processes.POLICIES, "policy deciding in the xq mode"),
                ParamSpec.choice("python", "python3", List.of("python3", "python"), "the Python to run (cuda)"),
                ParamSpec.integer("be_share", 50, 1, 100, "mps mode: BE tenants' CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
                ParamSpec.text("mps_pipe", "", "mps mode: CUDA_MPS_PIPE_DIRECTORY of a running MPS control daemon (empty: the node's)"),
                ParamSpec.integer("runs", 1, 1, 20, "each mix this many times, round by round (every mix once, then again), "
                        + "the modes' order alternating run by run where order=alternate; each run judged by itself (its name "
                        + "MIX#N, the JSON's run), then every mix by whether it met its goals in every run (a goal counts as met "
                        + "when it holds run after run; the JSON's run_after_run, summary mixes_met_every_run); the alone modes "
                        + "are measured once per kind, as across mixes"),
                ParamSpec.decimal("pause", 0, 0, 60, "paired reading: in the modes that run a mix together, stop the BE tenants "
                        + "(SIGSTOP) for PAUSE s of every 2 x PAUSE s, and judge each LC tenant by its P99 while they ran over its "
                        + "P99 while they were stopped, in the same run (the host's speed moves in phases of seconds; 0: off)"));
    }

    /** The kinds by their names on the command line. */
    static final List<String> KIND_IDS = java.util.Arrays.stream(Kind.values()).map(Kind::id).toList();

    /**
     * A mix of the user's own.
     *
     * @param spec {@code KIND[:PRIORITY]+...}, 2 to 4 tenants
     * @throws UsageException naming the part that is wrong and what is allowed
     */
    static Mix custom(String spec) {
        String[] parts = spec.trim().split("\\+", -1);
        if (parts.length < 2 || parts.length > 4) {
            throw new UsageException("custom=" + spec + ": a mix has 2 to 4 tenants joined by '+', not " + parts.length);
        }
        List<String> tenants = new ArrayList<>();
        List<Sizes> sizes = new ArrayList<>();
        for (String part : parts) {
            String t = part.trim().toLowerCase(Locale.ROOT);
            List<String> options = new ArrayList<>(List.of(t.split("@", -1)));
            t = options.removeFirst();
            int colon = t.indexOf(':');
            String kind = colon < 0 ? t : t.substring(0, colon);
            if (!KIND_IDS.contains(kind)) {
                throw new UsageException("custom=" + spec + ": '" + part + "' is not a kind; allowed: " + String.join(", ", KIND_IDS));
            }
            Role role = Kind.valueOf(kind.toUpperCase(Locale.ROOT)).role;
            int priority = role == Role.LC ? 2 : 1;
            if (colon >= 0) {
                String pr = t.substring(colon + 1);
                if (!pr.matches("[1-9]")) {
                    throw new UsageException("custom=" + spec + ": priority '" + pr + "' of " + kind + " is not allowed; allowed: 1 to 9");
                }
                priority = Integer.parseInt(pr);
            }
            tenants.add(kind + ":" + priority);
            sizes.add(Sizes.parse(Kind.valueOf(kind.toUpperCase(Locale.ROOT)), options, spec));
        }
        // best-effort kinds alone (two training jobs on one GPU) are a mix too: judged by their
        // rates against native sharing, with no latency-critical tenant to pair or to run alone
        return Mix.of(sizes, tenants.toArray(String[]::new));
    }

    /** @return the family's mixes {@code names} asks for, then the custom ones of {@code custom} (';'-separated) */
    static List<Mix> select(List<String> names, String custom) {
        List<Mix> out = new ArrayList<>(names.contains("none") ? List.of() : select(names));
        if (custom != null && !custom.isBlank()) {
            for (String c : custom.split(";")) {
                if (!c.isBlank()) {
                    out.add(custom(c));
                }
            }
        }
        if (out.isEmpty()) {
            throw new UsageException("mixes=none and no custom mix: nothing to run; name a mix, all, or custom=KIND+KIND");
        }
        return out;
    }

    /** @return the mixes {@code names} asks for ({@code all}: every one), each once, in the order given */
    static List<Mix> select(List<String> names) {
        if (names.contains("all")) {
            return MIXES;
        }
        List<Mix> out = new ArrayList<>();
        for (String n : new LinkedHashSet<>(names)) {
            if (n.equals("none")) {
                continue;
            }
            out.add(MIXES.stream().filter(m -> m.name().equals(n)).findFirst().orElseThrow(() -> new UsageException(
                    "mixes=" + n + " is unknown; allowed: all, " + String.join(", ", MIXES.stream().map(Mix::name).toList()))));
        }
        return out;
    }

    // ------------------------------------------------------------------ the goals' arithmetic

    /**
     * An LC tenant's goal: its P99 under xq within {@link #LC_BOUND} of standalone; and where
     * native already is within that bound, xq must not be worse than native.
     */
    static boolean lcMet(double standaloneP99, double nativeP99, double xqP99) {
        double bound = LC_BOUND * standaloneP99;
        return xqP99 <= bound && (nativeP99 >= bound || xqP99 <= nativeP99);
    }

    /** A BE tenant's goal: at least {@link #BE_FLOOR} of its native rate under xq. */
    static boolean beMet(double nativeRate, double xqRate) {
        return xqRate >= BE_FLOOR * nativeRate && nativeRate > 0;
    }

    /** @return whether two checksums agree within {@link #CHECKSUM_TOLERANCE}, relatively (NaN on either side: nothing to compare) */
    static boolean sameResult(double reference, double other) {
        if (Double.isNaN(reference) || Double.isNaN(other) || reference == other) {
            return true;
        }
        return Math.abs(other - reference) <= CHECKSUM_TOLERANCE * Math.max(Math.abs(reference), Math.abs(other));
    }

    /**
     * @return the goal line of what running under {@code ./xq run} costs {@code shape} (a kind, with its sizes where its
     *     own) alone: the interposer's launch path, the node, and MPS, whose client every process of the node is (on the
     *     H200 MPS alone, no XQ, made a ResNet-50 graph's device time 7 % longer: bench/gpu/mps-alone.sh; the interposer's
     *     own part is read request by request in one process by bench/gpu/ab-interposer.sh)
     */
    static String overheadGoal(String shape) {
        return "cost of ./xq run (interposer, node, MPS) on " + shape + " alone <= " + Math.round(OVERHEAD_BOUND * 100)
                + " % at P50 and P99";
    }

    /** @return "+x.x %" ("-" when not a number) */
    static String percent(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "-" : String.format(Locale.ROOT, "%+.1f %%", v * 100);
    }

    /**
     * The interposer's overhead on an LC tenant alone: its P50 and P99 under xq-alone over those of
     * standalone, less one; within the goal when both are at most {@link #OVERHEAD_BOUND} and the
     * results are the same.
     */
    record Overhead(double p50, double p99, boolean sameResults, String measured, double mpsP50, double mpsP99) {

        static Overhead of(Outcome standalone, Outcome xqAlone) {
            return of(standalone, xqAlone, null);
        }

        /**
         * @param mpsAlone the same kind alone as a plain MPS client (mode mps-alone), or null: where it has a result,
         *     MPS's own part is said beside the whole (the goal stays on the whole: it is what ./xq run costs)
         */
        static Overhead of(Outcome standalone, Outcome xqAlone, Outcome mpsAlone) {
            double p50 = Measures.ratio(xqAlone.p50(), standalone.p50()) - 1;
            double p99 = Measures.ratio(xqAlone.p99(), standalone.p99()) - 1;
            boolean same = !xqAlone.checkFailed() && sameResult(standalone.checksum(), xqAlone.checksum());
            boolean mps = mpsAlone != null && mpsAlone.ok();
            double m50 = mps ? Measures.ratio(mpsAlone.p50(), standalone.p50()) - 1 : Double.NaN;
            double m99 = mps ? Measures.ratio(mpsAlone.p99(), standalone.p99()) - 1 : Double.NaN;
            String mpsText = !mps ? "" : "; MPS alone, no interposer, P50 " + percent(m50) + ", P99 " + percent(m99) + " (" + fmt(mpsAlone.p50())
                    + " / " + fmt(mpsAlone.p99()) + " ms), the interposer and the node over it P50 "
                    + percent(Measures.ratio(xqAlone.p50(), mpsAlone.p50()) - 1) + ", P99 "
                    + percent(Measures.ratio(xqAlone.p99(), mpsAlone.p99()) - 1);
            return new Overhead(p50, p99, same, "P50 " + percent(p50) + ", P99 " + percent(p99) + " (standalone "
                    + fmt(standalone.p50()) + " / " + fmt(standalone.p99()) + " ms, xq-alone " + fmt(xqAlone.p50()) + " / "
                    + fmt(xqAlone.p99()) + " ms)" + mpsText + (same ? "" : "; results differ"), m50, m99);
        }

        boolean met() {
            return overheadMet(p50, p99) && sameResults;
        }
    }

    /** @return whether an overhead at P50 and at P99 (relative: 0.02 is 2 %) is within {@link #OVERHEAD_BOUND} */
    static boolean overheadMet(double p50, double p99) {
        return p50 <= OVERHEAD_BOUND && p99 <= OVERHEAD_BOUND;
    }

    /** @return the goal line of the interposer's launch path on {@code shape} alone, read in one process (xq-ab) */
    static String launchPathGoal(String shape) {
        return "the interposer's launch path on " + shape + " alone <= " + Math.round(OVERHEAD_BOUND * 100)
                + " % at P50 and P99 (every other request bypassed, one process)";
    }

    /**
     * The interposer's launch path on an LC tenant alone, read in one process (mode xq-ab): its requests made with the
     * launch path (interposed) and those made with it bypassed ({@code xq_bench_bypass}), pair by pair, in the same
     * context and MPS client, so that neither MPS nor the host's drift is in the comparison.
     *
     * @param p50 interposed P50 over bypassed P50, less one
     * @param p99 interposed P99 over bypassed P99, less one
     * @param pairs the median over the pairs of one request each way of interposed over bypassed, less one
     */
    record LaunchPath(double p50, double p99, double pairs, int interposed, int bypassed, double onP50, double onP99,
                      double offP50, double offP99) {

        /** @return the figures from a tenant's latencies and its {@code bypassed} list, null without both halves */
        static LaunchPath of(Outcome o) {
            if (o == null || !o.ok() || o.json() == null) {
                return null;
            }
            double[] lat = o.lat();
            double[] by = TenantProcess.numbers(o.json(), "bypassed");
            if (lat.length == 0 || by.length != lat.length) {
                return null;
            }
            List<Double> on = new ArrayList<>();
            List<Double> off = new ArrayList<>();
            List<Double> pairs = new ArrayList<>();
            for (int i = 0; i < lat.length; i++) {
                (by[i] != 0 ? off : on).add(lat[i]);
                if (i % 2 == 0 && i + 1 < lat.length && (by[i] != 0) != (by[i + 1] != 0)) {
                    pairs.add(by[i] != 0 ? lat[i + 1] / lat[i] : lat[i] / lat[i + 1]);
                }
            }
            if (on.isEmpty() || off.isEmpty() || pairs.isEmpty()) {
                return null;
            }
            Percentiles a = Percentiles.of(on.stream().mapToDouble(Double::doubleValue).toArray());
            Percentiles b = Percentiles.of(off.stream().mapToDouble(Double::doubleValue).toArray());
            double median = Percentiles.of(pairs.stream().mapToDouble(Double::doubleValue).toArray()).at(50);
            return new LaunchPath(Measures.ratio(a.at(50), b.at(50)) - 1, Measures.ratio(a.at(99), b.at(99)) - 1, median - 1,
                    on.size(), off.size(), a.at(50), a.at(99), b.at(50), b.at(99));
        }

        /** Within the goal at P50 and P99, as the issue states it (the pairs' median is reported beside). */
        boolean met() {
            return overheadMet(p50, p99);
        }

        String measured() {
            return "P50 " + percent(p50) + ", P99 " + percent(p99) + ", pairs' median " + percent(pairs) + " (interposed "
                    + fmt(onP50) + " / " + fmt(onP99) + " ms, bypassed " + fmt(offP50) + " / " + fmt(offP99) + " ms; "
                    + interposed + " + " + bypassed + " requests)";
        }

        Map<String, Object> json() {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("p50", Measures.round(p50));
            j.put("p99", Measures.round(p99));
            j.put("pairs_median", Measures.round(pairs));
            j.put("interposed_p50_ms", Measures.round(onP50));
            j.put("interposed_p99_ms", Measures.round(onP99));
            j.put("bypassed_p50_ms", Measures.round(offP50));
            j.put("bypassed_p99_ms", Measures.round(offP99));
            j.put("requests", List.of(interposed, bypassed));
            j.put("goal_met", met());
            return j;
        }
    }

    /** Requests left out of the steady P99 (a diagnostic): the first ones, before the node can know a beat. */
    static final int STEADY_SKIP = 15;

    /** @return the P99 of the tenant's requests after its first {@link #STEADY_SKIP}, NaN without its latencies (or too few) */
    static double steadyP99(Outcome o) {
        if (o == null || !o.ok() || o.lat().length <= STEADY_SKIP + 10) {
            return Double.NaN;
        }
        return Percentiles.of(java.util.Arrays.copyOfRange(o.lat(), STEADY_SKIP, o.lat().length)).at(99);
    }

    /**
     * @return when a best-effort tenant's work was seen done (epoch ms): the PyTorch tenants'
     *     synchronizations ({@code sync_ms}), or the fake app's tasks' ends (each start plus its
     *     latency); empty where it reports neither
     */
    static double[] doneTimes(String json) {
        double[] sync = TenantProcess.numbers(json, "sync_ms");
        if (sync.length > 0) {
            return sync;
        }
        double[] t = TenantProcess.numbers(json, "t_ms");
        double[] lat = TenantProcess.numbers(json, "lat_ms");
        if (t.length == 0 || t.length != lat.length) {
            return new double[0];
        }
        double[] done = new double[t.length];
        for (int i = 0; i < t.length; i++) {
            done[i] = t[i] + lat[i];
        }
        return done;
    }

    /** @return each mode's pace around the paired reading's stops (only the modes that were paired and report their work's ends) */
    static Map<String, Pauses.Resume> resumes(Map<String, Outcome> mine) {
        Map<String, Pauses.Resume> by = new LinkedHashMap<>();
        mine.forEach((mode, oc) -> {
            if (oc.ok() && oc.json() != null && !oc.stops().isEmpty()) {
                Pauses.Resume r = Pauses.resume(doneTimes(oc.json()), oc.stops());
                if (r != null) {
                    by.put(mode, r);
                }
            }
        });
        return by;
    }

    /**
     * A best-effort tenant's rate between the paired reading's stops in {@code mode} as a fraction
     * of native's: the ratio of the mean intervals between two of its synchronizations with no stop
     * between them, where both modes have {@value #MIN_STEADY_GAPS} such intervals or more.
     *
     * @return NaN where the reading has too few (or no stops): the tenant is judged by its rate
     */
    static double steadyRate(Map<String, Pauses.Resume> by, String mode) {
        Pauses.Resume nat = by.get("native");
        Pauses.Resume r = by.get(mode);
        if (nat == null || r == null || nat.steadyGaps() < MIN_STEADY_GAPS || r.steadyGaps() < MIN_STEADY_GAPS) {
            return Double.NaN;
        }
        return Measures.ratio(nat.steadyMeanMs(), r.steadyMeanMs());
    }

    /**
     * A best-effort tenant's pace around the paired reading's stops, into its JSON ({@code paired_pace}:
     * per mode the first synchronization after each continue and the steady interval, median and
     * mean; {@code steady_rate_vs_native} (by the mean: what the goal reads) and {@code
     * steady_vs_native} (by the median) per mode) and as text for its line: the rate counts the
     * stops, in which a held process has nothing queued on the device and a natively sharing one
     * has (see {@link Pauses#resume}); the steady figures leave them out.
     */
    static String resumeText(Map<String, Pauses.Resume> by, Map<String, Object> o) {
        if (by.isEmpty()) {
            return "";
        }
        Map<String, Object> pairs = new LinkedHashMap<>();
        List<String> after = new ArrayList<>();
        by.forEach((mode, r) -> {
            Map<String, Object> pm = new LinkedHashMap<>();
            List<Double> ms = new ArrayList<>();
            for (double d : r.afterContMs()) {
                ms.add(Double.isNaN(d) ? null : Measures.round(d));
            }
            pm.put("first_done_after_continue_ms", ms);
            pm.put("first_done_after_continue_median_ms", Measures.round(r.medianAfterContMs()));
            pm.put("steady_sync_ms", Measures.round(r.steadyMs()));
            pm.put("steady_mean_sync_ms", Measures.round(r.steadyMeanMs()));
            pm.put("steady_intervals", r.steadyGaps());
            pm.put("start_syncs_per_s", Measures.round(r.startPerSec()));
            pm.put("after_start_syncs_per_s", Measures.round(r.afterStartPerSec()));
            pairs.put(mode, pm);
            double med = r.medianAfterContMs();
            after.add(mode + " " + (Double.isNaN(med) ? "-" : Math.round(med) + " ms"));
        });
        o.put("paired_pace", pairs);
        Pauses.Resume nat = by.get("native");
        Map<String, Object> steady = new LinkedHashMap<>();
        Map<String, Object> steadyRate = new LinkedHashMap<>();
        Map<String, Object> start = new LinkedHashMap<>();
        Map<String, Object> afterStart = new LinkedHashMap<>();
        if (nat != null) {
            by.forEach((mode, r) -> {
                if (!mode.equals("native")) {
                    double a = Measures.ratio(r.startPerSec(), nat.startPerSec());
                    double b = Measures.ratio(r.afterStartPerSec(), nat.afterStartPerSec());
                    if (!Double.isNaN(a) && !Double.isNaN(b)) {
                        start.put(mode, Measures.round(a));
                        afterStart.put(mode, Measures.round(b));
                    }
                    double v = Measures.ratio(nat.steadyMs(), r.steadyMs());
                    if (!Double.isNaN(v)) {
                        steady.put(mode, Measures.round(v));
                    }
                    double m = steadyRate(by, mode);
                    if (!Double.isNaN(m)) {
                        steadyRate.put(mode, Measures.round(m));
                    }
                }
            });
        }
        if (!steady.isEmpty()) {
            o.put("steady_vs_native", steady);
        }
        if (!steadyRate.isEmpty()) {
            o.put("steady_rate_vs_native", steadyRate);
        }
        if (!start.isEmpty()) {
            // the run's start against the stretches after it: a scheduler that learns the set pays at the start
            o.put("start_rate_vs_native", start);
            o.put("after_start_rate_vs_native", afterStart);
        }
        return " (" + (steadyRate.isEmpty() ? "" : "between the stops " + ratios(steadyRate) + "; ")
                + (steady.isEmpty() ? "" : "median interval " + ratios(steady) + "; ")
                + (start.isEmpty() ? "" : "to the first stop " + ratios(start) + ", after it " + ratios(afterStart) + "; ")
                + "first done after a continue, median: " + String.join(", ", after) + ")";
    }

    // ------------------------------------------------------------------ one tenant's result

    /**
     * What one tenant reported in one mode: its JSON line and the figures read from it, or why
     * there is none.
     */
    record Outcome(String json, String error, double p50, double p99, long requests, double rate, double checksum, double[] lat,
                   Pauses.Paired paired, double[] phases, List<Pauses.Span> stops) {

        Outcome(String json, String error, double p50, double p99, long requests, double rate, double checksum, double[] lat) {
            this(json, error, p50, p99, requests, rate, checksum, lat, null, null, List.of());
        }

        /** A paired reading without its stops nor its phases. */
        Outcome(String json, String error, double p50, double p99, long requests, double rate, double checksum, double[] lat,
                Pauses.Paired paired) {
            this(json, error, p50, p99, requests, rate, checksum, lat, paired, null, List.of());
        }

        static Outcome failed(String error) {
            return new Outcome(null, error, Double.NaN, Double.NaN, 0, Double.NaN, Double.NaN, new double[0]);
        }

        /** @return this with its paired reading split by {@code stops} (none: unchanged) */
        Outcome pairedBy(List<Pauses.Span> stops) {
            return pairedBy(stops, Pauses.SETTLE_MS);
        }

        /** @return this with its paired reading split by {@code stops}, alone from {@code aloneSettleMs} into each */
        Outcome pairedBy(List<Pauses.Span> stops, long aloneSettleMs) {
            if (json == null || stops.isEmpty()) {
                return this;
            }
            if (lat.length == 0 && !Double.isNaN(rate)) {
                // a best-effort tenant: its stops are kept for its pace around them (Pauses.resume)
                return new Outcome(json, error, p50, p99, requests, rate, checksum, lat, null, null, List.copyOf(stops));
            }
            double[] t = TenantProcess.numbers(json, "t_ms");
            Pauses.Paired p = Pauses.split(t, lat, stops, aloneSettleMs);
            return p == null ? this : new Outcome(json, error, p50, p99, requests, rate, checksum, lat, p, Pauses.byPhase(t, lat, stops),
                    List.copyOf(stops));
        }

        /** @param seconds the measured length: the fake app's rate is its tasks over it */
        static Outcome of(String json, Role role, double seconds) {
            double checksum = TenantProcess.number(json, "checksum");
            if (role == Role.BE) {
                double rate = TenantProcess.number(json, "it_per_s");
                if (Double.isNaN(rate)) {
                    rate = TenantProcess.number(json, "tasks") / seconds;
                }
                return new Outcome(json, null, Double.NaN, Double.NaN, 0, rate, checksum, new double[0]);
            }
            double[] lat = TenantProcess.numbers(json, "lat_ms");
            if (lat.length > 0) {
                Percentiles pc = Percentiles.of(lat);
                return new Outcome(json, null, pc.at(50), pc.at(99), lat.length, Double.NaN, checksum, lat);
            }
            double n = TenantProcess.number(json, "requests");
            return new Outcome(json, null, TenantProcess.number(json, "p50_ms"), TenantProcess.number(json, "p99_ms"),
                    (long) (Double.isNaN(n) ? TenantProcess.number(json, "tasks") : n), Double.NaN, checksum, lat);
        }

        boolean ok() {
            return error == null;
        }

        /** the fake app's own check of its results */
        boolean checkFailed() {
            return json != null && json.contains("\"check\":\"bad\"");
        }
    }

    // ------------------------------------------------------------------ the run

    /** The configuration PID of the node's process host, where alt's keys go unless they name another. */
    static final String HOST_PID = "dev.xq.host";
    /** In {@link #modeSettings}: not a component but the xq-alt tenants' environment ({@code env/XQ_NAME:VALUE}). */
    static final String ENV = "env";

    /** The dev.xq.host settings a mode runs with (empty: the node's own). */
    static Map<String, Object> hostSettings(String mode, String alt) {
        return modeSettings(mode, alt).getOrDefault(HOST_PID, Map.of());
    }

    /**
     * The settings a mode runs with, by configuration PID (empty: the node's own). {@code alt}'s
     * keys are dev.xq.host's, or {@code PID/KEY} for another one (a policy's, say
     * {@code dev.xq.policy.hpf/holdBehindWide:false}).
     */
    /**
     * The modes in the order each mix runs them: {@code fixed}, the order of {@link #MODES};
     * {@code listed}, the modes a mix is judged against run alone ({@code standalone},
     * {@code xq-alone}) first, then the others in the order given (each once); {@code alternate},
     * the fixed order for mixes 0, 2, 4, ... of a run and for mixes 1, 3, ... the alone modes first,
     * then the others reversed.
     */
    /**
     * The modes one mix runs: {@code given}, with {@code standalone} added where its latency-critical
     * tenants could not be judged without it: native and xq are asked for but no paired reading can
     * be taken (no pause, or no best-effort tenant to stop, as in {@code decode+decode}). Without it
     * such a mix ran every mode and came back "not judged" (H200, session 83: a minute of device
     * time for no verdict).
     */
    static List<String> modesFor(Mix mix, List<String> given, double pause) {
        boolean lc = mix.tenants().stream().anyMatch(t -> t.kind().role == Role.LC);
        boolean be = mix.tenants().stream().anyMatch(t -> t.kind().role == Role.BE);
        if (!lc || given.contains("standalone") || !given.contains("native") || !given.contains("xq") || (pause > 0 && be)) {
            return given;
        }
        List<String> out = new ArrayList<>(given.size() + 1);
        out.add("standalone");
        out.addAll(given);
        return out;
    }

    /**
     * Whether a mix that ran native and xq, with a paired reading asked for, has none for one of its
     * latency-critical tenants (too few of its requests fell while the company was stopped) and no
     * standalone run to judge it by instead: a long period beside long kernels, whose settle after
     * each stop takes half of it (session 121, H100: a batch of 128 every 150 ms beside GEMMs of
     * n=16384 had 8 requests alone of the 10 a side needs, in native and in xq, and came back "not
     * judged" as in session 116). The bench then runs standalone for it (its alone run, as
     * {@link #modesFor} adds where no pause can be taken), so that the mix gets a verdict. A tenant
     * that failed in either mode rescues nothing: the mix is not judged anyway.
     */
    static boolean needsStandalone(Mix mix, Map<String, Map<String, Outcome>> byMode) {
        if (byMode.containsKey("standalone") || !byMode.containsKey("native") || !byMode.containsKey("xq")) {
            return false;
        }
        List<Tenant> lc = mix.tenants().stream().filter(t -> t.kind().role == Role.LC).toList();
        boolean missing = false;
        for (Tenant t : lc) {
            Outcome n = byMode.get("native").get(t.name());
            Outcome x = byMode.get("xq").get(t.name());
            if (n == null || x == null || !n.ok() || !x.ok()) {
                return false;
            }
            missing |= Double.isNaN(pairedRatio(n)) || Double.isNaN(pairedRatio(x));
        }
        return missing;
    }

    static List<String> modeOrder(List<String> given, String order, int mixIndex) {
        if (order.equals("alternate")) {
            List<String> fixed = modeOrder(given, "fixed", 0);
            if (mixIndex % 2 == 0) {
                return fixed;
            }
            // the alone pair too: xq-alone against standalone is the interposer's cost, a few per cent,
            // and the host's drift over one mix is more than that
            List<String> out = new ArrayList<>(fixed.stream().filter(MixScenario::alone).toList());
            java.util.Collections.reverse(out);
            List<String> together = new ArrayList<>(fixed.stream().filter(m -> !alone(m)).toList());
            java.util.Collections.reverse(together);
            out.addAll(together);
            return out;
        }
        if (!order.equals("listed")) {
            return MODES.stream().filter(given::contains).toList();
        }
        List<String> out = new ArrayList<>();
        for (String m : given) {
            if (alone(m) && !out.contains(m)) {
                out.add(m);
            }
        }
        for (String m : given) {
            if (!out.contains(m)) {
                out.add(m);
            }
        }
        return out;
    }

    private static boolean alone(String mode) {
        return mode.equals("standalone") || mode.equals("xq-alone") || mode.equals("xq-ab") || mode.equals("mps-alone");
    }

    /**
     * @return whether {@code mode}'s results count in a goal line of their own, not in the mix's (xq-alone, xq-ab),
     *     or only beside one (mps-alone: MPS's part of the overhead)
     */
    private static boolean ownGoal(String mode) {
        return mode.equals("xq-alone") || mode.equals("xq-ab") || mode.equals("mps-alone");
    }

    static Map<String, Map<String, Object>> modeSettings(String mode, String alt) {
        Map<String, Map<String, Object>> m = new LinkedHashMap<>();
        switch (mode) {
            case "xq-hold" -> m.put(HOST_PID, Map.of("mpsHoldBestEffort", true));
            case "xq-free" -> m.put(HOST_PID, Map.of("mpsHoldBestEffort", false));
            case "xq-alt" -> {
                for (String kv : alt.split(";")) {
                    if (kv.isBlank()) {
                        continue;
                    }
                    int c = kv.indexOf(':');
                    if (c <= 0) {
                        throw new UsageException("alt '" + alt + "': '" + kv + "' is not KEY:VALUE or PID/KEY:VALUE");
                    }
                    String k = kv.substring(0, c).trim();
                    String v = kv.substring(c + 1).trim();
                    String pid = HOST_PID;
                    int slash = k.lastIndexOf('/');
                    if (slash >= 0) {
                        pid = k.substring(0, slash).trim();
                        k = k.substring(slash + 1).trim();
                        if (pid.isEmpty() || k.isEmpty()) {
                            throw new UsageException("alt '" + alt + "': '" + kv + "' needs a PID and a key around its '/'");
                        }
                    }
                    if (pid.equals(ENV)) {
                        // an interposer variable for the mode's tenants: the interposer's own names, plain values
                        if (!k.matches("XQ_[A-Z0-9_]+") || !v.matches("[A-Za-z0-9._:,+-]*")) {
                            throw new UsageException("alt '" + alt + "': '" + kv + "' sets an environment variable: its name must be "
                                    + "XQ_ followed by A-Z, 0-9 or _ (the interposer's variables), its value of A-Z a-z 0-9 . _ : , + -");
                        }
                        if (k.equals("XQ_SOCKET") || k.equals("XQ_NAME") || k.equals("XQ_PRIORITY")) {
                            throw new UsageException("alt '" + alt + "': '" + kv + "': " + k + " is the mix's own (each tenant's "
                                    + "socket, name and priority); set another interposer variable");
                        }
                        m.computeIfAbsent(ENV, x -> new LinkedHashMap<>()).put(k, v);
                        continue;
                    }
                    m.computeIfAbsent(pid, x -> new LinkedHashMap<>()).put(k, v.equals("true") || v.equals("false")
                            ? (Object) Boolean.valueOf(v) : v.matches("-?[0-9]+") ? (Object) Long.valueOf(v) : v);
                }
                if (m.isEmpty()) {
                    throw new UsageException("mode xq-alt needs alt=KEY:VALUE[;KEY:VALUE] (dev.xq.host settings, or PID/KEY:VALUE)");
                }
            }
            default -> { }
        }
        return m;
    }

    /** What the whole run needs to start tenants. */
    private record Setup(boolean torch, Path home, Path interposer, String socket, String policy, double seconds, String python,
                         int beShare, String mpsPipe, Path runDir, double pause, Map<String, String> altEnv) { }

    /** The xq-alt tenants' own environment variables from {@code alt} ({@code env/XQ_NAME:VALUE}), none where there are none. */
    static Map<String, String> altEnv(String alt) {
        if (alt == null || alt.isBlank()) {
            return Map.of();
        }
        Map<String, Object> e = modeSettings("xq-alt", alt).getOrDefault(ENV, Map.of());
        Map<String, String> out = new LinkedHashMap<>();
        e.forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        // A mix is PyTorch only on CUDA; elsewhere (sim, and hip, where tenant.py does not run) the fake stands in.
        boolean torch = ctx.device().equals("cuda0");
        double seconds = p.doubleValue("seconds") > 0 ? p.doubleValue("seconds") : torch ? 10 : 3;
        double pause = p.doubleValue("pause");
        if (pause > 0 && 4 * pause > seconds) {
            throw new UsageException("pause=" + pause + " with seconds=" + seconds + ": a paired reading needs at least two stops, "
                    + "so seconds must be at least 4 x pause (or pause=0, the default: no stops). Nothing was run.");
        }
        List<Mix> mixes = select(p.strings("mixes"), p.string("custom"));
        int runs = p.intValue("runs");
        List<String> modes = modeOrder(p.strings("modes"), p.string("order"), 0);
        String mpsPipe = p.string("mps_pipe");
        boolean usesMps = modes.contains("mps") || modes.contains("mps-alone");
        if (usesMps && mpsPipe.isBlank()) {
            mpsPipe = Processes.hostMpsPipe(ctx);
        }
        if (usesMps) {
            if (mpsPipe.isBlank()) {
                throw new UsageException("modes=" + String.join(",", p.strings("modes")) + " has "
                        + (modes.contains("mps") ? "mps" : "mps-alone") + ", which needs mps_pipe=DIR "
                        + "(the CUDA_MPS_PIPE_DIRECTORY of a running MPS control daemon, nvidia-cuda-mps-control -d) where the node "
                        + "runs none (xq:processes says why). Nothing was run.");
            }
            if (torch && !Files.isDirectory(Path.of(mpsPipe))) {
                throw new UsageException("mps_pipe=" + mpsPipe + " is not a directory; give the CUDA_MPS_PIPE_DIRECTORY of a running "
                        + "MPS control daemon. Nothing was run.");
            }
        }
        String policy = p.string("policy");
        Path home = Processes.home();
        Path interposer = null;
        String socket = null;
        if (modes.stream().anyMatch(m -> m.startsWith("xq"))) {
            ctx.requirePolicies(policy);
            interposer = Processes.interposer(home);
            socket = Processes.hostSocket(ctx);
        }
        Path program = torch ? home.resolve("bench/torch/family/tenant.py") : Processes.fakeApp(home);
        if (!Files.isRegularFile(program)) {
            throw new IllegalStateException("the tenant program " + program + " is missing"
                    + (torch ? "" : "; build interpose (mvn install -DskipTests)"));
        }
        Path runDir = Files.createTempDirectory("xq-mix-");
        ctx.out().line("mix: " + mixes.size() + " mixes" + (runs > 1 ? " x " + runs + " runs" : "") + " x " + modes + ", " + seconds + " s each, on "
                + (torch ? "PyTorch" : "the fake libcuda") + "; processes' logs in " + runDir);
        Setup setup = new Setup(torch, home, interposer, socket, policy, seconds, p.string("python"), p.intValue("be_share"), mpsPipe,
                runDir, pause, altEnv(p.string("alt")));

        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        Map<String, Outcome> standalone = new HashMap<>();
        Map<String, String> standaloneFrom = new HashMap<>();
        // xq-alone's own cache, kept like standalone's; the kinds tried, in order, for its goal lines
        Map<String, Outcome> xqAlone = new HashMap<>();
        Map<String, String> xqAloneFrom = new HashMap<>();
        LinkedHashSet<String> xqAloneTried = new LinkedHashSet<>();
        LinkedHashSet<String> overheadJudged = new LinkedHashSet<>();
        int overheadMet = 0;
        // xq-ab's cache, and each LC kind's launch-path figures as judged (once per kind)
        Map<String, Outcome> xqAb = new HashMap<>();
        Map<String, String> xqAbFrom = new HashMap<>();
        // mps-alone's cache: each LC kind alone as a plain MPS client, MPS's part of xq-alone's cost
        Map<String, Outcome> mpsAlone = new HashMap<>();
        Map<String, String> mpsAloneFrom = new HashMap<>();
        Map<String, Object> launchJudged = new LinkedHashMap<>();
        int launchMet = 0;
        List<Object> mixJson = new ArrayList<>();
        List<List<String>> rows = new ArrayList<>();
        int met = 0;
        int mpsMixesMet = 0;
        // run after run (runs > 1): each mix's verdicts, in its runs' order (null: not judged)
        Map<String, List<Boolean>> verdicts = new LinkedHashMap<>();
        int total = runs * mixes.size();
        for (int i = 0; i < total; i++) {
            int run = i / mixes.size();
            Mix mix = mixes.get(i % mixes.size());
            // the order index: a mix's modes go the other way round in its next run, whatever the count of mixes
            int orderIndex = i % mixes.size() + run;
            String runName = runName(mix, run, runs);
            Map<String, Map<String, Outcome>> byMode = new LinkedHashMap<>();
            Map<String, Object> nodeByMode = new LinkedHashMap<>();
            List<String> mixModes = modesFor(mix, p.strings("modes"), pause);
            if (mixModes.size() > p.strings("modes").size()) {
                ctx.out().line("mix " + mix.name() + ": standalone added to its modes: " + (pause > 0
                        ? "no best-effort tenant to stop for a paired reading" : "no paired reading (pause=0)")
                        + ", and its latency-critical tenants are judged against their standalone P99");
            }
            for (String mode : modeOrder(mixModes, p.string("order"), orderIndex)) {
                ModeResult m = new ModeResult(runName + " " + mode);
                if (mode.equals("standalone")) {
                    byMode.put(mode, alone(ctx, setup, mix, mode, standalone, standaloneFrom, m));
                } else if (mode.equals("xq-alone")) {
                    ctx.selectPolicy(policy, 10_000);
                    mix.tenants().stream().filter(t -> t.kind().role == Role.LC).forEach(t -> xqAloneTried.add(t.shape()));
                    byMode.put(mode, alone(ctx, setup, mix, mode, xqAlone, xqAloneFrom, m));
                } else if (mode.equals("mps-alone")) {
                    byMode.put(mode, alone(ctx, setup, mix, mode, mpsAlone, mpsAloneFrom, m));
                } else if (mode.equals("xq-ab")) {
                    ctx.selectPolicy(policy, 10_000);
                    byMode.put(mode, alone(ctx, setup, mix, mode, xqAb, xqAbFrom, m));
                    // each LC kind's launch-path goal, once, from its first result
                    for (Tenant t : mix.tenants()) {
                        Outcome o = xqAb.get(t.shape());
                        if (t.kind().role != Role.LC || launchJudged.containsKey(t.shape())) {
                            continue;
                        }
                        LaunchPath lp = o == null ? null : LaunchPath.of(o);
                        String measured = lp != null ? lp.measured() : o == null ? "xq-ab gave no result"
                                : "no halves to compare (the tenant reported no 'bypassed' list, or one half is empty)";
                        boolean ok = lp != null && lp.met();
                        report.goal(launchPathGoal(t.shape()), ok, measured);
                        ctx.out().line(launchPathGoal(t.shape()) + ": " + (ok ? "MET" : "MISSED") + " (" + measured + ")");
                        launchJudged.put(t.shape(), lp == null ? Map.of("error", measured) : lp.json());
                        launchMet += ok ? 1 : 0;
                    }
                } else {
                    if (mode.startsWith("xq")) {
                        ctx.selectPolicy(policy, 10_000);
                    }
                    ctx.out().line("mix " + runName + ": " + mode + " (" + seconds + " s)");
                    Map<String, Outcome> o;
                    Map<String, Map<String, Object>> settings = modeSettings(mode, p.string("alt"));
                    Map<String, Object> host = settings.getOrDefault(HOST_PID, Map.of());
                    List<PolicySettings> others = new ArrayList<>();
                    for (var e : settings.entrySet()) {
                        if (!e.getKey().equals(HOST_PID) && !e.getKey().equals(ENV)) {
                            others.add(PolicySettings.apply(ctx, e.getKey(), e.getValue()));
                        }
                    }
                    if (!others.isEmpty()) {
                        Thread.sleep(500); // Config Admin hands the update to its component on a thread of its own
                    }
                    try {
                    if (!host.isEmpty()) {
                        // a change restarts the host: wait for it to serve with the settings, and again with the old ones after
                        long before = Processes.hostServiceId(ctx);
                        try (PolicySettings h = PolicySettings.apply(ctx, "dev.xq.host", host)) {
                            long with = Processes.awaitNewHost(ctx, before);
                            o = timed(ctx, runName, mode, () -> sampled(ctx, runDir.resolve(runName).resolve(mode),
                                    () -> together(setup, mix.tenants(), mode, runDir.resolve(runName).resolve(mode))));
                            before = with;
                        }
                        Processes.awaitNewHost(ctx, before);
                    } else {
                        o = timed(ctx, runName, mode, () -> sampled(ctx, runDir.resolve(runName).resolve(mode),
                                () -> together(setup, mix.tenants(), mode, runDir.resolve(runName).resolve(mode))));
                    }
                    } finally {
                        for (PolicySettings s : others) {
                            s.close();
                        }
                    }
                    byMode.put(mode, o);
                    Map<String, Map<String, Object>> node = QueueSampler.summary(runDir.resolve(runName).resolve(mode));
                    if (!node.isEmpty()) {
                        nodeByMode.put(mode, node);
                    }
                    figures(m, mix.tenants(), o, true);
                }
                report.add(m);
            }
            if (needsStandalone(mix, byMode)) {
                ctx.out().line("mix " + runName + ": too few requests with the company stopped for a paired reading; standalone "
                        + "added, and its latency-critical tenants are judged against their standalone P99");
                ModeResult m = new ModeResult(runName + " standalone");
                byMode.put("standalone", alone(ctx, setup, mix, "standalone", standalone, standaloneFrom, m));
                report.add(m);
            }
            MixVerdict v = judge(mix, byMode);
            if (!nodeByMode.isEmpty()) {
                // what the node decided for each tenant, per mode (QueueSampler.summary)
                v.json().put("node_decisions", nodeByMode);
            }
            if (runs > 1) {
                v.json().put("run", run + 1);
            }
            mixJson.add(v.json());
            List<String> row = row(mix, v, modes);
            row.set(0, runName);
            rows.add(row);
            v.notes().forEach(report::note);
            verdicts.computeIfAbsent(mix.name(), k -> new ArrayList<>()).add(v.met());
            if (v.met() != null) {
                report.goal("mix " + runName + ": family goals", v.met(), v.measured());
                met += v.met() ? 1 : 0;
            }
            Object mpsMet = v.json().get("mps_goals_met");
            if (mpsMet instanceof Boolean b) {
                mpsMixesMet += b ? 1 : 0;
            }
            ctx.out().line("mix " + runName + " done (" + (i + 1) + "/" + total + "): " + v.measured() + "; goals "
                    + (v.met() == null ? "not judged (a mode left out)" : v.met() ? "MET" : "MISSED")
                    + (mpsMet instanceof Boolean b ? "; plain MPS by the same goals " + (b ? "MET" : "MISSED") : ""));
            // the mixes so far to the --json file: a family cut short by a time limit keeps them
            report.extra("mixes", mixJson);
            report.summary().put("partial", true);
            report.summary().put("mixes_done", (i + 1) + " of " + total);
            report.summary().put("mixes_goals_met", met);
            ctx.checkpoint(report);
            // each LC kind's overhead goal, once, as soon as both of its alone modes have a result: its own line, not the mix's goals
            for (String k : xqAloneTried) {
                if (!overheadJudged.contains(k) && xqAlone.containsKey(k) && standalone.containsKey(k)) {
                    overheadJudged.add(k);
                    Overhead ov = Overhead.of(standalone.get(k), xqAlone.get(k), mpsAlone.get(k));
                    report.goal(overheadGoal(k), ov.met(), ov.measured());
                    overheadMet += ov.met() ? 1 : 0;
                    ctx.out().line(overheadGoal(k) + ": " + (ov.met() ? "MET" : "MISSED") + " (" + ov.measured() + ")");
                }
            }
        }
        // a kind whose xq-alone never gave a result misses its overhead goal (where standalone ran to compare it with)
        if (modes.contains("standalone")) {
            for (String k : xqAloneTried) {
                if (!overheadJudged.contains(k)) {
                    overheadJudged.add(k);
                    report.goal(overheadGoal(k), false, xqAlone.containsKey(k) ? "standalone gave no result to compare with"
                            : "xq-alone gave no result");
                }
            }
        }
        report.extra("mixes", mixJson);
        // the checkpoints' members go; the final summary is written in its own order below
        report.summary().remove("partial");
        report.summary().remove("mixes_done");
        report.summary().remove("mixes_goals_met");
        if (runs > 1) {
            List<Object> after = new ArrayList<>();
            int everyRun = 0;
            for (var e : verdicts.entrySet()) {
                RunAfterRun rr = RunAfterRun.of(e.getValue());
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("name", e.getKey());
                j.putAll(rr.json());
                after.add(j);
                if (rr.judged() > 0) {
                    report.goal("mix " + e.getKey() + ": family goals in every run", rr.everyRun(), rr.measured());
                }
                everyRun += rr.everyRun() ? 1 : 0;
            }
            report.extra("run_after_run", after);
            report.summary().put("runs", runs);
            report.summary().put("mixes_met_every_run", everyRun);
        }
        List<String> header = new ArrayList<>(List.of("mix"));
        header.add(lcHeader(modes));
        header.add(beHeader(modes));
        if (modes.contains("standalone") && modes.contains("xq-alone")) {
            header.add("LC alone under XQ P50/P99");
        }
        header.add("goals");
        report.table(header, rows);
        report.summary().put("seconds", seconds);
        report.summary().put("mixes_run", mixes.size());
        if (runs > 1) {
            report.summary().put("mix_runs", total);
        }
        report.summary().put("mixes_goals_met", met);
        if (modes.contains("mps")) {
            report.summary().put("mixes_mps_goals_met", mpsMixesMet);
        }
        if (modes.contains("xq-alone") && modes.contains("standalone")) {
            report.summary().put("overhead_goals_met", overheadMet + " of " + overheadJudged.size());
        }
        if (modes.contains("xq-ab")) {
            report.extra("launch_path", launchJudged);
            report.summary().put("launch_path_goals_met", launchMet + " of " + launchJudged.size());
        }
        notes(report, setup, modes);
        return report;
    }

    /**
     * The standalone or xq-alone mode of a mix: each of its LC kinds alone (xq-alone: under the
     * interposer), measured the first time a mix needs it and reused after (device time is scarce;
     * the tenant alone does not depend on the mix). Each mode has its own {@code cache}.
     */
    private Map<String, Outcome> alone(ScenarioContext ctx, Setup s, Mix mix, String mode, Map<String, Outcome> cache,
                                       Map<String, String> from, ModeResult m) throws Exception {
        Map<String, Outcome> out = new LinkedHashMap<>();
        LinkedHashSet<String> reused = new LinkedHashSet<>();
        for (Tenant t : mix.tenants()) {
            if (t.kind().role != Role.LC) {
                continue;
            }
            String shape = t.shape();
            Outcome o = cache.get(shape);
            if (o == null) {
                ctx.out().line("mix " + mix.name() + ": " + mode + " " + shape + " (" + s.seconds() + " s)");
                Tenant alone = new Tenant(t.kind().id(), t.kind(), t.priority(), t.sizes());
                o = timed(ctx, mix.name(), mode + " " + shape, () -> together(s, List.of(alone), mode,
                        s.runDir().resolve(mode + "-" + shape))).get(alone.name());
                // a failure is not kept: the next mix that needs the kind tries again
                if (o.ok()) {
                    cache.put(shape, o);
                    from.put(shape, mix.name());
                }
                figures(m, List.of(t), Map.of(t.name(), o), true);
            } else {
                // two tenants of one kind in this mix: the second shares the first's measurement
                if (!from.get(shape).equals(mix.name())) {
                    reused.add(shape + " from " + from.get(shape));
                }
                figures(m, List.of(t), Map.of(t.name(), o), false);
            }
            out.put(t.name(), o);
        }
        if (!reused.isEmpty()) {
            m.put("reused", String.join(", ", reused));
        }
        return out;
    }

    /** A step of the run that takes GPU time. */
    @FunctionalInterface
    private interface Step<T> {
        T run() throws Exception;
    }

    /**
     * Runs {@code step} between the lines {@code mix MIX: LABEL started at MS} and {@code ... ended
     * at MS} (epoch milliseconds), by which samples of the GPU's clocks taken meanwhile are split by
     * mode (bench/gpu/clocks-by-mode.py).
     */
    private static <T> T timed(ScenarioContext ctx, String mix, String label, Step<T> step) throws Exception {
        ctx.out().line("mix " + mix + ": " + label + " started at " + System.currentTimeMillis());
        try {
            return step.run();
        } finally {
            ctx.out().line("mix " + mix + ": " + label + " ended at " + System.currentTimeMillis());
        }
    }

    /**
     * Runs {@code step} with the node's process queues sampled into {@code dir}
     * ({@link QueueSampler}: what the node decided for each tenant meanwhile).
     */
    private static <T> T sampled(ScenarioContext ctx, Path dir, Step<T> step) throws Exception {
        try (QueueSampler s = QueueSampler.start(ctx.service(), dir)) {
            return step.run();
        }
    }

    /** @return whether {@code mode} runs all of a mix's tenants together under the interposer or MPS (BE rates against native) */
    static boolean togetherMode(String mode) {
        return mode.equals("xq") || mode.equals("xq-hold") || mode.equals("xq-free") || mode.equals("xq-alt") || mode.equals("mps");
    }

    /**
     * Runs {@code tenants} at once in {@code mode} (standalone, xq-alone, native, xq or mps): starts every
     * one, waits until all are ready, says GO to all, and collects each one's result.
     * @return tenant name -> its outcome, a failed one for each tenant that gave no result
     */
    private static Map<String, Outcome> together(Setup s, List<Tenant> tenants, String mode, Path dir) throws IOException,
            InterruptedException {
        Files.createDirectories(dir);
        Map<String, Outcome> out = new LinkedHashMap<>();
        List<TenantProcess> started = new ArrayList<>();
        List<Pauses.Span> stops = java.util.Collections.synchronizedList(new ArrayList<>());
        IOException[] pauseError = new IOException[1];
        Thread pauser = null;
        try {
            for (Tenant t : tenants) {
                started.add(TenantProcess.start(t.name(), command(s, t, mode), env(s, t, mode, dir), dir));
            }
            // The fake app has no READY/GO: it starts at once, and all start within milliseconds.
            if (s.torch()) {
                for (int i = 0; i < tenants.size(); i++) {
                    try {
                        started.get(i).awaitReady(600);
                    } catch (IOException e) {
                        // without all of them the mode measures another mix: none runs
                        for (Tenant t : tenants) {
                            out.put(t.name(), Outcome.failed(t == tenants.get(i) ? e.getMessage()
                                    : "not run: " + tenants.get(i).name() + " was not ready"));
                        }
                        return out;
                    }
                }
                for (TenantProcess t : started) {
                    t.go();
                }
            }
            List<Long> bePids = new ArrayList<>();
            for (int i = 0; i < tenants.size(); i++) {
                if (tenants.get(i).kind().role == Role.BE) {
                    bePids.add(started.get(i).pid());
                }
            }
            if (s.pause() > 0 && (mode.equals("native") || togetherMode(mode)) && !bePids.isEmpty() && bePids.size() < tenants.size()) {
                long start = System.currentTimeMillis();
                long pauseMs = Math.round(s.pause() * 1000);
                long endMs = start + Math.round(s.seconds() * 1000);
                pauser = Thread.ofPlatform().name("xq-mix-pauses").start(() -> {
                    try {
                        stops.addAll(Pauses.alternate(bePids, start, pauseMs, endMs, Pauses.KILL, Pauses.WALL));
                    } catch (IOException e) {
                        pauseError[0] = e;
                    }
                });
            }
            for (int i = 0; i < tenants.size(); i++) {
                Tenant t = tenants.get(i);
                try {
                    String json = started.get(i).awaitResult((long) s.seconds() + (s.torch() ? 600 : 60));
                    out.put(t.name(), Outcome.of(json, t.kind().role, s.seconds()));
                } catch (IOException e) {
                    out.put(t.name(), Outcome.failed(e.getMessage()));
                }
            }
            if (pauser != null) {
                pauser.join();
                pauser = null;
                if (pauseError[0] != null) {
                    throw new IOException("stopping the BE tenants for the paired reading failed: " + pauseError[0].getMessage(),
                            pauseError[0]);
                }
                List<double[]> dones = new ArrayList<>();
                for (Tenant t : tenants) {
                    Outcome o = out.get(t.name());
                    if (t.kind().role == Role.BE && o != null && o.json() != null) {
                        dones.add(doneTimes(o.json()));
                    }
                }
                long settle = Pauses.aloneSettleMs(dones, stops);
                out.replaceAll((name, o) -> o.pairedBy(stops, settle));
            }
            return out;
        } finally {
            if (pauser != null) {
                // the BE processes are continued before anything waits on them or closes them
                pauser.interrupt();
                pauser.join();
            }
            for (TenantProcess t : started) {
                t.close();
            }
        }
    }

    private static List<String> command(Setup s, Tenant t, String mode) {
        String seconds = Double.toString(s.seconds());
        boolean ab = mode.equals("xq-ab");
        if (s.torch()) {
            List<String> c = new ArrayList<>(List.of(s.python(), "-u", s.home().resolve("bench/torch/family/tenant.py").toString(),
                    "--kind", t.kind().id(), "--seconds", seconds, "--wait-go"));
            c.addAll(t.sizes().args());
            if (ab) {
                c.add("--ab-interposer");
            }
            return c;
        }
        Kind k = t.kind();
        List<String> c = new ArrayList<>(List.of(Processes.fakeApp(s.home()).toString(), "--seconds", seconds,
                "--kernels", Integer.toString(k.kernels), "--us", Integer.toString(k.us),
                "--period-ms", Double.toString(k.role == Role.LC ? t.sizes().periodMs(k) : 0), "--check"));
        c.add("--latencies"); // a BE tenant's too: its tasks' ends are its pace around the stops (doneTimes)
        if (ab) {
            c.add("--ab");
        }
        if (k.poisson) {
            c.add("--poisson");
        }
        return c;
    }

    private static Map<String, String> env(Setup s, Tenant t, String mode, Path dir) {
        Map<String, String> env = s.torch() ? new HashMap<>() : Processes.fakeGpu(s.home(), dir);
        switch (mode) {
            case "xq", "xq-alone", "xq-ab", "xq-hold", "xq-free", "xq-alt" -> {
                env = Processes.interposed(env, s.interposer(), s.socket(), t.name(), t.priority());
                if (mode.equals("xq-alt")) {
                    env.putAll(s.altEnv());
                }
            }
            case "mps-alone" -> env.put("CUDA_MPS_PIPE_DIRECTORY", s.mpsPipe());
            case "mps" -> {
                env.put("CUDA_MPS_PIPE_DIRECTORY", s.mpsPipe());
                if (t.kind().role == Role.BE) {
                    env.put("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", Integer.toString(s.beShare()));
                }
            }
            default -> { }
        }
        return env;
    }

    /** Puts one mode's figures per tenant into {@code m}; {@code samples}: keep LC latencies for plots. */
    private static void figures(ModeResult m, List<Tenant> tenants, Map<String, Outcome> outcomes, boolean samples) {
        for (Tenant t : tenants) {
            Outcome o = outcomes.get(t.name());
            if (!o.ok()) {
                m.put(t.name() + "_error", o.error());
            } else if (t.kind().role == Role.LC) {
                m.put(t.name() + "_p50_ms", Measures.round(o.p50()));
                m.put(t.name() + "_p99_ms", Measures.round(o.p99()));
                m.put(t.name() + "_requests", o.requests());
                if (samples && o.lat().length > 0) {
                    m.samples(t.name() + " latency ms", o.lat());
                }
            } else {
                m.put(t.name() + "_it_per_s", Measures.round(o.rate()));
            }
        }
    }

    // ------------------------------------------------------------------ a mix's verdict

    /**
     * @param json the mix's member of the report's {@code mixes}
     * @param met whether it met its goals; null when a mode the goals compare was not run
     * @param measured the short account the table, the progress line and its goal line show
     * @param cells per tenant, the ratios the table shows (LC: each mode's P99 / standalone; BE: rate / native)
     * @param aloneCells per LC tenant with both standalone and xq-alone, its overhead alone under XQ, "+x.x % / +y.y %" (P50 / P99)
     */
    record MixVerdict(Map<String, Object> json, Boolean met, String measured, Map<String, List<Double>> cells,
                      Map<String, String> aloneCells, List<String> notes) { }

    /** The figures and the goals of one mix from each mode's outcomes (mode -> tenant name -> outcome). */
    static MixVerdict judge(Mix mix, Map<String, Map<String, Outcome>> byMode) {
        List<Object> tenants = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        List<String> noise = new ArrayList<>();
        List<String> worse = new ArrayList<>();
        List<String> measured = new ArrayList<>();
        Map<String, List<Double>> cells = new LinkedHashMap<>();
        Map<String, String> aloneCells = new LinkedHashMap<>();
        // with a paired reading (pause) in native and xq for every LC tenant, the LC goals are judged
        // by it: shared over alone in the same run, for standalone's P99 taken at another time
        boolean paired = byMode.containsKey("native") && byMode.containsKey("xq")
                && mix.tenants().stream().anyMatch(t -> t.kind().role == Role.LC)
                && mix.tenants().stream().filter(t -> t.kind().role == Role.LC).allMatch(t ->
                        !Double.isNaN(pairedRatio(byMode.get("native").get(t.name())))
                        && !Double.isNaN(pairedRatio(byMode.get("xq").get(t.name()))));
        boolean judged = byMode.containsKey("native") && byMode.containsKey("xq")
                && (paired || byMode.containsKey("standalone") || mix.tenants().stream().noneMatch(t -> t.kind().role == Role.LC));
        boolean allOk = true;
        boolean allReported = true;
        boolean identical = true;
        // plain MPS with the BE tenants capped (mode mps, no XQ) is judged by the same goals, apart:
        // a baseline, never part of XQ's verdict
        boolean mpsJudged = judged && byMode.containsKey("mps");
        boolean mpsOk = true;
        boolean mpsReported = true;
        for (Tenant t : mix.tenants()) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("name", t.name());
            o.put("kind", t.kind().id());
            if (!t.sizes().given().isEmpty()) {
                o.put("sizes", t.sizes().given());
            }
            o.put("priority", t.priority());
            o.put("role", t.kind().role.name().toLowerCase(Locale.ROOT));
            Map<String, Outcome> mine = new LinkedHashMap<>();
            byMode.forEach((mode, outcomes) -> {
                if (outcomes.containsKey(t.name())) {
                    mine.put(mode, outcomes.get(t.name()));
                }
            });
            Map<String, Object> errors = new LinkedHashMap<>();
            mine.forEach((mode, oc) -> {
                if (!oc.ok()) {
                    errors.put(mode, oc.error());
                    notes.add(mix.name() + " " + mode + ": " + t.name() + " gave no result: " + oc.error());
                }
            });
            // xq-alone has its own goal line (the overhead) and mps is a baseline without XQ: neither
            // decides the mix's goals
            allReported &= errors.keySet().stream().allMatch(mode -> ownGoal(mode) || mode.equals("mps"));
            mpsReported &= !errors.containsKey("mps");
            List<Double> cell = new ArrayList<>();
            if (t.kind().role == Role.LC) {
                Map<String, Object> p50 = new LinkedHashMap<>();
                Map<String, Object> p99 = new LinkedHashMap<>();
                Map<String, Object> over = new LinkedHashMap<>();
                double sa = p99(mine.get("standalone"));
                Map<String, Double> overRaw = new HashMap<>();
                mine.forEach((mode, oc) -> {
                    p50.put(mode, Measures.round(oc.p50()));
                    p99.put(mode, Measures.round(oc.p99()));
                    if (!mode.equals("standalone")) {
                        double r = Measures.ratio(oc.p99(), sa);
                        over.put(mode, Measures.round(r));
                        overRaw.put(mode, r);
                    }
                });
                // the table's cell in the modes' own order (MODES), as its header names them: a mix
                // whose modes ran the other way round (order=alternate) listed xq's before native's
                // under a header that says native / xq
                for (String mode : MODES) {
                    if (overRaw.containsKey(mode)) {
                        cell.add(overRaw.get(mode));
                    }
                }
                o.put("p50_ms", p50);
                o.put("p99_ms", p99);
                o.put("p99_over_standalone", over);
                // a diagnostic beside the goal's figure: the same without each run's first requests,
                // which come before the node has learnt the tenant's beat
                Map<String, Object> steady = new LinkedHashMap<>();
                mine.forEach((mode, oc) -> {
                    if (!mode.equals("standalone")) {
                        double r = Measures.ratio(steadyP99(oc), sa);
                        if (!Double.isNaN(r)) {
                            steady.put(mode, Measures.round(r));
                        }
                    }
                });
                o.put("p99_after_first_" + STEADY_SKIP + "_over_standalone", steady);
                // the floor beside the tail: each mode's median against the standalone P99; over the
                // goal's bound, the median itself misses it (a ResNet-50 graph's beside any work
                // under MPS: its cache and MPS, H200), and no tail the node removes makes the goal
                Map<String, Object> floor = new LinkedHashMap<>();
                mine.forEach((mode, oc) -> {
                    if (!mode.equals("standalone")) {
                        double r = Measures.ratio(oc.p50(), sa);
                        if (!Double.isNaN(r)) {
                            floor.put(mode, Measures.round(r));
                        }
                    }
                });
                o.put("p50_over_standalone_p99", floor);
                double xqFloor = mine.containsKey("xq") ? Measures.ratio(mine.get("xq").p50(), sa) : Double.NaN;
                String floorText = xqFloor > LC_BOUND ? ", its xq median alone over the bound (P50 " + fmt(xqFloor)
                        + " x the standalone P99)" : "";
                double nat = p99(mine.get("native"));
                double xq = p99(mine.get("xq"));
                o.put("xq_p99_over_native", Measures.round(Measures.ratio(xq, nat)));
                Map<String, Object> pairs = new LinkedHashMap<>();
                List<String> pairText = new ArrayList<>();
                List<String> overNativeAlone = new ArrayList<>();
                Outcome natO = mine.get("native");
                double nativeAlone = natO != null && natO.ok() && natO.paired() != null ? natO.paired().aloneP99() : Double.NaN;
                mine.forEach((mode, oc) -> {
                    Pauses.Paired pr = oc.paired();
                    if (pr != null) {
                        Map<String, Object> pm = new LinkedHashMap<>();
                        pm.put("shared_over_alone_p99", Measures.round(pr.ratio()));
                        pm.put("shared_p99_ms", Measures.round(pr.sharedP99()));
                        pm.put("alone_p99_ms", Measures.round(pr.aloneP99()));
                        pm.put("shared_p50_ms", Measures.round(pr.sharedP50()));
                        pm.put("alone_p50_ms", Measures.round(pr.aloneP50()));
                        pm.put("shared_requests", pr.shared());
                        pm.put("alone_requests", pr.alone());
                        pm.put("alone_settle_ms", pr.aloneSettleMs());
                        if (nativeAlone > 0) {
                            // absolute: what all of its company costs it, the other LC tenants too (the
                            // paired ratio has them in both phases), against native sharing with the BE
                            // tenants stopped, in the same run
                            double r = pr.sharedP99() / nativeAlone;
                            pm.put("shared_over_native_alone_p99", Measures.round(r));
                            overNativeAlone.add(mode + " " + fmt(r));
                        }
                        if (pr.ranged()) {
                            pm.put("shared_over_alone_p99_range90", List.of(Measures.round(pr.ratioLow()), Measures.round(pr.ratioHigh())));
                        }
                        double[] ph = oc.phases();
                        if (ph != null) {
                            // the shared requests within 0.75 s of a continue and after (Pauses.byPhase)
                            pm.put("shared_early_p99_ms", Measures.round(ph[0]));
                            pm.put("shared_early_requests", (int) ph[1]);
                            pm.put("shared_late_p99_ms", Measures.round(ph[2]));
                            pm.put("shared_late_requests", (int) ph[3]);
                            pm.put("early_over_alone_p99", Measures.round(Measures.ratio(ph[0], pr.aloneP99())));
                            pm.put("late_over_alone_p99", Measures.round(Measures.ratio(ph[2], pr.aloneP99())));
                            // after the mix's start (Pauses.byPhase): a diagnostic, the verdict is the whole run's
                            pm.put("shared_steady_p99_ms", Measures.round(ph[4]));
                            pm.put("shared_steady_requests", (int) ph[5]);
                            pm.put("steady_over_alone_p99", Measures.round(Double.isFinite(pr.ratio())
                                    ? Measures.ratio(ph[4], pr.aloneP99()) : Double.NaN)); // as the paired ratio: both sides read
                        }
                        // the launching thread's CPU time, shared over alone (Pauses.cpuRatios): a
                        // diagnostic beside the verdict, which it does not change
                        if (oc.json() != null) {
                            double[] cpu = Pauses.cpuRatios(TenantProcess.numbers(oc.json(), "t_ms"), TenantProcess.numbers(oc.json(), "lat_ms"),
                                    TenantProcess.numbers(oc.json(), "host_cpu_ms"), oc.stops(), pr.aloneSettleMs());
                            if (Double.isFinite(cpu[0]) && Double.isFinite(cpu[1])) {
                                pm.put("cpu_shared_over_alone_p50", Measures.round(cpu[0]));
                                pm.put("cpu_shared_over_alone_p95", Measures.round(cpu[1]));
                            }
                        }
                        // the verdict's own noise (Pauses.aloneSplit): the alone half against itself, a diagnostic
                        double aa = oc.json() == null ? Double.NaN : Pauses.aloneSplit(TenantProcess.numbers(oc.json(), "t_ms"),
                                TenantProcess.numbers(oc.json(), "lat_ms"), oc.stops(), pr.aloneSettleMs());
                        if (Double.isFinite(aa)) {
                            pm.put("alone_split_p99_ratio", Measures.round(aa));
                        }
                        List<List<Long>> spans = new ArrayList<>();
                        for (Pauses.Span sp : oc.stops()) {
                            spans.add(List.of(sp.stopMs(), sp.contMs()));
                        }
                        pm.put("stops_ms", spans);
                        pairs.put(mode, pm);
                        pairText.add(mode + " " + fmt(pr.ratio()) + " (" + pr.shared() + "/" + pr.alone()
                                + (pr.ranged() ? ", " + fmt(pr.ratioLow()) + "-" + fmt(pr.ratioHigh()) : "")
                                + (Double.isFinite(aa) ? ", alone against alone " + fmt(aa) : "")
                                + (ph != null && ph[4] > 0 && Double.isFinite(pr.ratio())
                                        ? ", after the start " + fmt(Measures.ratio(ph[4], pr.aloneP99())) : "") + ")");
                    }
                });
                if (!pairs.isEmpty()) {
                    o.put("paired", pairs);
                }
                if (judged) {
                    boolean ok = paired ? lcMet(1.0, pairedRatio(mine.get("native")), pairedRatio(mine.get("xq")))
                            : lcMet(sa, nat, xq);
                    o.put("goal_met", ok);
                    o.put("goal_by", paired ? "paired" : "standalone");
                    if (paired && !ok && overNativeWithinRange(mine.get("native"), mine.get("xq"))) {
                        // the verdict stands; the reader is told that only the native clause decided it, by chance
                        o.put("over_native_within_range", true);
                        noise.add(t.name());
                    }
                    allOk &= ok;
                }
                if (worseThanNative(mine.get("native"), mine.get("xq"))) {
                    // the title's promise broken outright, whatever the bound: said per tenant and per mix
                    o.put("xq_worse_than_native", true);
                    worse.add(t.name());
                }
                if (mpsJudged) {
                    // the same goal for plain MPS with a limit (no XQ): what XQ is measured against
                    boolean ok = paired && !Double.isNaN(pairedRatio(mine.get("mps")))
                            ? lcMet(1.0, pairedRatio(mine.get("native")), pairedRatio(mine.get("mps")))
                            : lcMet(sa, nat, p99(mine.get("mps")));
                    o.put("mps_goal_met", ok);
                    if (paired && !ok && overNativeWithinRange(mine.get("native"), mine.get("mps"))) {
                        o.put("mps_over_native_within_range", true);
                    }
                    mpsOk &= ok;
                }
                String alone = "";
                Outcome saO = mine.get("standalone");
                Outcome xaO = mine.get("xq-alone");
                if (saO != null && xaO != null && saO.ok() && xaO.ok()) {
                    Overhead ov = Overhead.of(saO, xaO, mine.get("mps-alone"));
                    Map<String, Object> oh = new LinkedHashMap<>();
                    oh.put("p50", Measures.round(ov.p50()));
                    oh.put("p99", Measures.round(ov.p99()));
                    if (!Double.isNaN(ov.mpsP50())) {
                        // MPS's own part (mps-alone over standalone), which the whole holds
                        oh.put("mps_p50", Measures.round(ov.mpsP50()));
                        oh.put("mps_p99", Measures.round(ov.mpsP99()));
                    }
                    o.put("overhead", oh);
                    o.put("overhead_goal_met", ov.met());
                    alone = percent(ov.p50()) + " / " + percent(ov.p99());
                    aloneCells.put(t.name(), alone);
                    alone = ", alone under XQ P50/P99 " + alone;
                }
                // where its requests' time went (HostParts): the host's launching or the wait for the
                // device; a diagnostic beside the verdict, which it does not change
                Map<String, double[][]> marks = new LinkedHashMap<>();
                mine.forEach((mode, oc) -> {
                    if (oc.ok() && oc.json() != null) {
                        double[] host = TenantProcess.numbers(oc.json(), "host_ms");
                        double[] lat = TenantProcess.numbers(oc.json(), "lat_ms");
                        if (host.length > 0 && host.length == lat.length) {
                            marks.put(mode, new double[][] {lat, host});
                        }
                    }
                });
                Map<String, HostParts.Reading> parts = HostParts.of(marks);
                List<String> partText = new ArrayList<>();
                if (!parts.isEmpty()) {
                    Map<String, Object> pj = new LinkedHashMap<>();
                    parts.forEach((mode, r) -> {
                        pj.put(mode, r.json());
                        partText.add(mode + " " + fmt(r.deviceP99()) + " ms (" + r.hostMade() + "/" + r.deviceMade() + " of " + r.slowest() + ")");
                    });
                    o.put("host_device_parts", pj);
                }
                measured.add(t.name() + " P99/standalone " + ratios(over) + alone + floorText
                        + (pairText.isEmpty() ? "" : ", P99 shared/alone (requests) " + String.join(", ", pairText))
                        + (overNativeAlone.isEmpty() ? "" : ", shared P99 over native's alone " + String.join(", ", overNativeAlone))
                        + (partText.isEmpty() ? "" : ", the device's part of a request P99 (slowest 5 % host-made/device-made) "
                                + String.join(", ", partText)));
            } else {
                Map<String, Object> rate = new LinkedHashMap<>();
                mine.forEach((mode, oc) -> rate.put(mode, Measures.round(oc.rate())));
                o.put("it_per_s", rate);
                double nat = rate(mine.get("native"));
                double xq = rate(mine.get("xq"));
                for (String mode : List.of("xq", "xq-hold", "xq-free", "xq-alt", "mps")) {
                    if (mine.containsKey(mode)) {
                        double r = Measures.ratio(rate(mine.get(mode)), nat);
                        o.put(mode + "_vs_native", Measures.round(r));
                        cell.add(r);
                    }
                }
                // under the paired reading, by the pace between the stops (stopped, a natively
                // sharing process's queued work runs on and a held one has none queued: the
                // stops are the reading's, not the tenants')
                Map<String, Pauses.Resume> paces = resumes(mine);
                if (judged) {
                    double st = steadyRate(paces, "xq");
                    boolean ok = Double.isNaN(st) ? beMet(nat, xq) : st >= BE_FLOOR;
                    o.put("goal_met", ok);
                    o.put("goal_by", Double.isNaN(st) ? "rate" : "between_stops");
                    allOk &= ok;
                }
                if (mpsJudged) {
                    double st = steadyRate(paces, "mps");
                    boolean ok = Double.isNaN(st) ? beMet(nat, rate(mine.get("mps"))) : st >= BE_FLOOR;
                    o.put("mps_goal_met", ok);
                    mpsOk &= ok;
                }
                Map<String, Object> vs = new LinkedHashMap<>();
                for (String mode : List.of("xq", "xq-hold", "xq-free", "xq-alt", "mps")) {
                    if (o.containsKey(mode + "_vs_native")) {
                        vs.put(mode, o.get(mode + "_vs_native"));
                    }
                }
                measured.add(t.name() + " rate/native " + ratios(vs) + resumeText(resumes(mine), o));
            }
            cells.put(t.name(), cell);
            // The same input gives the same output in every mode: LC against standalone, BE against native.
            String refMode = t.kind().role == Role.LC && mine.containsKey("standalone") ? "standalone" : "native";
            Outcome ref = mine.get(refMode);
            Map<String, Object> sums = new LinkedHashMap<>();
            boolean same = true;
            boolean sameAlone = true;
            boolean sameMps = true;
            for (var e : mine.entrySet()) {
                Outcome oc = e.getValue();
                if (!oc.ok()) {
                    continue;
                }
                if (!Double.isNaN(oc.checksum())) {
                    sums.put(e.getKey(), oc.checksum());
                }
                boolean ok = true;
                if (oc.checkFailed()) {
                    ok = false;
                    notes.add(mix.name() + " " + e.getKey() + ": " + t.name() + "'s own result check failed");
                }
                if (ref != null && ref.ok() && !sameResult(ref.checksum(), oc.checksum())) {
                    ok = false;
                    notes.add(mix.name() + " " + e.getKey() + ": " + t.name() + " checksum " + oc.checksum() + " vs " + refMode + " "
                            + ref.checksum());
                }
                // xq-alone's results count in its overhead goal, not in the mix's; mps's in nothing of
                // XQ's (a capped MPS client may get other kernels: cuBLAS picks by the SMs it has)
                if (ownGoal(e.getKey())) {
                    sameAlone &= ok;
                } else if (e.getKey().equals("mps")) {
                    sameMps &= ok;
                } else {
                    same &= ok;
                }
            }
            if (!sums.isEmpty()) {
                o.put("checksum", sums);
            }
            o.put("results_identical", same);
            if (!sameAlone) {
                o.put("xq_alone_results_identical", false);
            }
            if (!sameMps) {
                o.put("mps_results_identical", false);
            }
            identical &= same;
            if (!errors.isEmpty()) {
                o.put("errors", errors);
            }
            tenants.add(o);
        }
        // A tenant that gave no result is a missed goal whatever else was measured.
        Boolean met = !allReported ? Boolean.FALSE : judged ? allOk && identical : null;
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", mix.name());
        json.put("goals_met", met);
        json.put("all_reported", allReported);
        json.put("results_identical", identical);
        // the order the modes ran in: a reading across modes (a rate over native's) reads the host's drift between them too
        json.put("modes_order", new ArrayList<>(byMode.keySet()));
        if (mpsJudged) {
            // the baseline's verdict by the same goals; its outputs are listed per tenant, not judged
            json.put("mps_goals_met", mpsReported && mpsOk);
        }
        json.put("tenants", tenants);
        if (!worse.isEmpty()) {
            json.put("lc_worse_than_native", worse);
            notes.add(mix.name() + " xq: " + String.join(", ", worse) + " worse than native sharing, beyond what the readings tell "
                    + "apart (paired: xq's range of the ratio wholly above native's, or its shared and alone P99s both over " + LC_BOUND
                    + " x native's; unpaired: xq's P99 over " + LC_BOUND
                    + " x native's): lc_worse_than_native in the JSON");
        }
        if (!noise.isEmpty()) {
            notes.add(mix.name() + " xq: " + String.join(", ", noise) + " missed only by the 'no worse than native' clause, by "
                    + "less than the paired readings' ranges (5th-95th percentile of the ratio, halves resampled) tell apart; "
                    + "the verdict stands: over_native_within_range in the JSON");
        }
        List<String> hostSlowed = new ArrayList<>();
        for (Object each : tenants) {
            if (each instanceof Map<?, ?> t && Boolean.FALSE.equals(t.get("goal_met")) && t.get("paired") instanceof Map<?, ?> pairs
                    && hostSlowed(pairs)) {
                hostSlowed.add(t.get("name") + " (its CPU time a request at P95, shared over alone: xq "
                        + fmt(cpuP95(pairs.get("xq"))) + ", native " + fmt(cpuP95(pairs.get("native"))) + ")");
            }
        }
        if (!hostSlowed.isEmpty()) {
            json.put("lc_miss_host_slowed", hostSlowed.stream().map(h -> h.substring(0, h.indexOf(' '))).toList());
            notes.add(mix.name() + " xq: " + String.join(", ", hostSlowed) + " missed with its own thread's work slower in the "
                    + "shared half than alone, by more than native sharing's: the host slowed it there, not the device; the verdict "
                    + "stands: lc_miss_host_slowed in the JSON");
        }
        List<String> withinNoise = new ArrayList<>();
        for (Object each : tenants) {
            if (each instanceof Map<?, ?> t && Boolean.FALSE.equals(t.get("goal_met")) && t.get("paired") instanceof Map<?, ?> pairs
                    && withinNoise(pairs.get("xq"))) {
                Map<?, ?> x = (Map<?, ?>) pairs.get("xq");
                withinNoise.add(t.get("name") + " (xq " + fmt(((Number) x.get("shared_over_alone_p99")).doubleValue())
                        + ", its alone half against itself " + fmt(((Number) x.get("alone_split_p99_ratio")).doubleValue()) + ")");
            }
        }
        if (!withinNoise.isEmpty()) {
            json.put("lc_miss_within_noise", withinNoise.stream().map(h -> h.substring(0, h.indexOf(' '))).toList());
            notes.add(mix.name() + " xq: " + String.join(", ", withinNoise) + " missed by a shared/alone ratio no larger than "
                    + "its alone half's two parts differ by (even stops against odd ones): this run cannot tell the miss from "
                    + "the host's chance; the verdict stands: lc_miss_within_noise in the JSON");
        }
        return new MixVerdict(json, met, String.join("; ", measured), cells, aloneCells, notes);
    }

    /**
     * Whether a latency-critical tenant's paired reading in one mode missed by no more than its
     * own noise: its shared/alone P99 ratio over {@link #LC_BOUND} but no larger than the ratio its
     * alone half reads against itself ({@code alone_split_p99_ratio}, Pauses.aloneSplit). A
     * diagnostic beside a miss: the verdict stands. False without both ratios.
     */
    static boolean withinNoise(Object mode) {
        if (!(mode instanceof Map<?, ?> m) || !(m.get("shared_over_alone_p99") instanceof Number r)
                || !(m.get("alone_split_p99_ratio") instanceof Number aa)) {
            return false;
        }
        double eps = 1e-9; // rounded to three decimals: an edge read as written counts
        return r.doubleValue() > LC_BOUND + eps && r.doubleValue() <= aa.doubleValue() + eps;
    }

    /** How far over 1 xq's CPU-time ratio (P95, shared over alone) must be, and over native's, for {@link #hostSlowed}. */
    static final double HOST_SLOWED_BY = 0.15;

    /**
     * Whether a latency-critical tenant's paired readings say its host slowed its own work in the
     * shared half under xq (Pauses.cpuRatios): xq's CPU time a request at P95, shared over alone,
     * {@link #HOST_SLOWED_BY} or more over 1 and over native sharing's in the same run. A
     * diagnostic beside a miss: the verdict stands. False without both modes' CPU times.
     */
    static boolean hostSlowed(Map<?, ?> paired) {
        double xq = cpuP95(paired.get("xq"));
        double nat = cpuP95(paired.get("native"));
        double eps = 1e-9; // the ratios are rounded to three decimals: an edge read as written counts
        return Double.isFinite(xq) && Double.isFinite(nat) && xq >= 1 + HOST_SLOWED_BY - eps && xq - nat >= HOST_SLOWED_BY - eps;
    }

    private static double cpuP95(Object mode) {
        return mode instanceof Map<?, ?> m && m.get("cpu_shared_over_alone_p95") instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** @return "mode r, mode r" with the ratios at two decimals */
    private static String ratios(Map<String, Object> byMode) {
        List<String> l = new ArrayList<>();
        byMode.forEach((mode, r) -> l.add(mode + " " + fmt(((Number) r).doubleValue())));
        return l.isEmpty() ? "-" : String.join(", ", l);
    }

    /**
     * Whether a paired LC reading missed its goal only by the "no worse than native" clause, and by
     * less than the readings' ranges tell apart: within the bound, over native's (itself within
     * it), and its range's low end at or under native's high end ({@link Pauses#range}).
     */
    static boolean overNativeWithinRange(Outcome nativeO, Outcome other) {
        if (nativeO == null || other == null || !nativeO.ok() || !other.ok() || nativeO.paired() == null || other.paired() == null) {
            return false;
        }
        Pauses.Paired n = nativeO.paired();
        Pauses.Paired o = other.paired();
        if (!n.ranged() || !o.ranged()) {
            return false;
        }
        return o.ratio() <= LC_BOUND && n.ratio() <= LC_BOUND && o.ratio() > n.ratio() && o.ratioLow() <= n.ratioHigh();
    }

    /**
     * Whether XQ left a latency-critical tenant worse off than native sharing did, by more than the
     * run can tell apart: paired with ranges, the low end of XQ's range of the ratio above the high
     * end of native's; paired without, XQ's ratio over {@value #LC_BOUND} x native's; paired either
     * way, also its shared and its alone P99 both over {@value #LC_BOUND} x native's (the paired
     * ratio has the other latency-critical tenants in both phases and cannot see what they cost it); unpaired, its
     * P99 over {@value #LC_BOUND} x native's. Whatever the goal's bound says (a tenant at 1.35 x
     * its own P99 beside natively 0.94 x is both a miss and this; at 5.73 against a native 1.80, a
     * miss either way, this is what an operator must hear first).
     */
    static boolean worseThanNative(Outcome nativeO, Outcome xqO) {
        if (nativeO == null || xqO == null || !nativeO.ok() || !xqO.ok()) {
            return false;
        }
        Pauses.Paired n = nativeO.paired();
        Pauses.Paired x = xqO.paired();
        if (n != null && x != null) {
            // in absolute terms too: the ratios hide what the other LC tenants cost it, in both
            // phases; slower in both phases alike is that, not the noise of one P99
            if (!Double.isNaN(n.ratio()) && !Double.isNaN(x.ratio()) && x.sharedP99() > LC_BOUND * n.sharedP99()
                    && x.aloneP99() > LC_BOUND * n.aloneP99()) {
                return true;
            }
            if (n.ranged() && x.ranged()) {
                return x.ratioLow() > n.ratioHigh();
            }
            return x.ratio() > LC_BOUND * n.ratio();
        }
        double nat = p99(nativeO);
        double xq = p99(xqO);
        return !Double.isNaN(nat) && !Double.isNaN(xq) && xq > LC_BOUND * nat;
    }

    /** @return an outcome's paired ratio, shared P99 over alone P99; NaN without one */
    static double pairedRatio(Outcome o) {
        return o == null || !o.ok() || o.paired() == null ? Double.NaN : o.paired().ratio();
    }

    private static double p99(Outcome o) {
        return o == null || !o.ok() ? Double.NaN : o.p99();
    }

    private static double rate(Outcome o) {
        return o == null || !o.ok() ? Double.NaN : o.rate();
    }

    private static String fmt(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
    }

    /** The mix's line of the table: each LC tenant's P99 / standalone per together-mode, each BE tenant's rate / native. */
    /** @return the name a mix's run goes by: its own with one run, MIX#N (N from 1) with several */
    static String runName(Mix mix, int run, int runs) {
        return runs > 1 ? mix.name() + "#" + (run + 1) : mix.name();
    }

    /**
     * One mix's verdicts over its runs (null: a run not judged, a mode left out or failed): met in
     * every run when every run was judged and met every goal.
     */
    record RunAfterRun(int runs, int judged, int met) {
        static RunAfterRun of(List<Boolean> verdicts) {
            int judged = (int) verdicts.stream().filter(java.util.Objects::nonNull).count();
            int met = (int) verdicts.stream().filter(Boolean.TRUE::equals).count();
            return new RunAfterRun(verdicts.size(), judged, met);
        }

        boolean everyRun() {
            return runs > 0 && judged == runs && met == runs;
        }

        String measured() {
            return "met in " + met + " of " + runs + " runs" + (judged < runs ? " (" + (runs - judged) + " not judged)" : "");
        }

        Map<String, Object> json() {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("runs", runs);
            j.put("judged", judged);
            j.put("met", met);
            j.put("met_every_run", everyRun());
            return j;
        }
    }

    /** The table's LC column: each mode's P99 over standalone, the modes in {@link #MODES}' order, as {@link #judge} fills the cells. */
    static String lcHeader(List<String> modes) {
        return "LC P99/standalone (" + String.join(" / ", MODES.stream().filter(m -> modes.contains(m) && !m.equals("standalone")).toList()) + ")";
    }

    /** The table's BE column: each together mode's rate over native's, in {@link #MODES}' order, as {@link #judge} fills the cells. */
    static String beHeader(List<String> modes) {
        return "BE rate/native (" + String.join(" / ", MODES.stream().filter(m -> modes.contains(m) && togetherMode(m)).toList()) + ")";
    }

    static List<String> row(Mix mix, MixVerdict v, List<String> modes) {
        List<String> lc = new ArrayList<>();
        List<String> be = new ArrayList<>();
        for (Tenant t : mix.tenants()) {
            String ratios = String.join(" / ", v.cells().get(t.name()).stream().map(MixScenario::fmt).toList());
            (t.kind().role == Role.LC ? lc : be).add(t.name() + " " + (ratios.isEmpty() ? "-" : ratios) + pairedCell(v, t));
        }
        String goals = v.met() == null ? "-" : v.met() ? "MET" : "MISSED";
        if (Boolean.FALSE.equals(v.json().get("all_reported"))) {
            goals += " (a tenant failed)";
        } else if (Boolean.FALSE.equals(v.json().get("results_identical"))) {
            goals += " (results differ)";
        }
        if (v.json().get("mps_goals_met") instanceof Boolean b) {
            goals += ", mps " + (b ? "MET" : "MISSED");
        }
        List<String> row = new ArrayList<>(List.of(mix.name(), lc.isEmpty() ? "-" : String.join(", ", lc),
                be.isEmpty() ? "-" : String.join(", ", be)));
        if (modes.contains("standalone") && modes.contains("xq-alone")) {
            List<String> alone = new ArrayList<>();
            v.aloneCells().forEach((t, c) -> alone.add(t + " " + c));
            row.add(alone.isEmpty() ? "-" : String.join(", ", alone));
        }
        row.add(goals);
        return row;
    }

    /** @return " [shared/alone native r, xq r]" for an LC tenant with a paired reading, else "" */
    private static String pairedCell(MixVerdict v, Tenant t) {
        if (!(v.json().get("tenants") instanceof List<?> ts)) {
            return "";
        }
        for (Object o : ts) {
            if (o instanceof Map<?, ?> m && t.name().equals(m.get("name")) && m.get("paired") instanceof Map<?, ?> pairs) {
                List<String> l = new ArrayList<>();
                pairs.forEach((mode, pm) -> l.add(mode + " " + fmt(((Number) ((Map<?, ?>) pm).get("shared_over_alone_p99")).doubleValue())));
                return " [shared/alone " + String.join(", ", l) + ("paired".equals(m.get("goal_by")) ? ", judged" : "") + "]";
            }
        }
        return "";
    }

    private static void notes(ScenarioReport report, Setup s, List<String> modes) {
        report.note("tenants: " + (s.torch() ? "bench/torch/family/tenant.py --kind KIND (PyTorch), READY then GO to all at once"
                : "xq-cuda-app on the fake libcuda, one simulated GPU per mode; a kind's shape (kernels x us, period) stands in for it"));
        report.note("goals per mix: every LC tenant's xq P99 <= " + LC_BOUND + " x standalone P99 (and <= native P99 where native is "
                + "within that too), every BE tenant's xq rate >= " + BE_FLOOR + " x native, checksums within " + CHECKSUM_TOLERANCE
                + " relative, every tenant reported; the detail is in the JSON's mixes");
        if (modes.contains("mps")) {
            report.note("mps: plain MPS, no XQ, the BE tenants capped at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + s.beShare() + " %, judged "
                    + "by the same goals apart (the table's 'mps MET|MISSED', the JSON's mps_goals_met, summary mixes_mps_goals_met); "
                    + "its outputs are listed, never judged (a capped client may get other kernels: cuBLAS picks by its SMs)");
        }
        if (modes.contains("standalone")) {
            report.note("standalone: each LC kind is measured alone once per run, in the first mix that needs it, and reused by later "
                    + "mixes (device time is scarce); a mode's 'reused' figure names where it came from");
        }
        if (modes.contains("xq-alone")) {
            report.note("xq-alone: each LC kind alone under the interposer (as in xq, policy " + s.policy() + "), measured once per "
                    + "run like standalone and reused; its overhead (P50 and P99 over standalone's, less 1) is each LC tenant's "
                    + "'overhead' in the JSON and has a goal line of its own per kind (<= " + Math.round(OVERHEAD_BOUND * 100)
                    + " %), which does not count in a mix's goals; it holds the interposer's, the node's and MPS's costs "
                    + "together (the interposer's alone: bench/gpu/ab-interposer.sh; MPS's alone: bench/gpu/mps-alone.sh)");
        }
        if (modes.contains("mps-alone")) {
            report.note("mps-alone: each LC kind alone as a client of " + (s.mpsPipe().isBlank() ? "the node's MPS daemon" : "the MPS "
                    + "daemon at " + s.mpsPipe()) + ", no interposer, measured once per run like standalone and reused: MPS's own "
                    + "price, which xq-alone holds too; the overhead goal line and the JSON's overhead (mps_p50, mps_p99) say it "
                    + "beside the whole, which stays what the goal judges (what ./xq run costs a tenant alone)");
        }
        if (modes.contains("xq-ab")) {
            report.note("xq-ab: each LC kind alone under the interposer (as in xq, policy " + s.policy() + "), every other request "
                    + "with the interposer's launch path bypassed (xq_bench_bypass), the order alternating pair by pair, in one "
                    + "process: the launch path's own cost, without MPS's (both halves are the same MPS client) or the host's "
                    + "drift; one goal line per kind (<= " + Math.round(OVERHEAD_BOUND * 100) + " % at P50 and P99, the halves' "
                    + "percentiles; the pairs' median beside), the JSON's launch_path; not in a mix's goals");
        }
        report.note("each mode's start and end are printed as 'mix MIX: MODE started at MS' / 'ended at MS' (epoch ms) to split "
                + "GPU clock samples by mode (bench/gpu/clocks-by-mode.py)");
        if (modes.contains("xq")) {
            report.note("xq: LD_PRELOAD of the interposer, XQ_NAME the tenant's name, XQ_PRIORITY as the mix gives it, policy "
                    + s.policy());
        }
        if (s.pause() > 0) {
            report.note("pause=" + s.pause() + ": in native, the xq modes and mps the BE tenants were stopped (SIGSTOP) for " + s.pause()
                    + " s of every " + 2 * s.pause() + " s; each LC tenant's requests are split into shared (the BE tenants running) "
                    + "and alone (stopped), " + Pauses.SETTLE_MS + " ms after each change, and where every LC tenant has both halves "
                    + "(" + Pauses.MIN_SIDE + "+ requests each) in native and xq its goal is judged by them: xq's shared/alone P99 <= "
                    + LC_BOUND + " (and <= native's where native's is within that), goal_by 'paired' in the JSON (mps by its own "
                    + "pairs, apart); those modes' P99 "
                    + "over standalone then mix both halves; BE rates count the stopped time in both modes");
        }
        if (modes.contains("mps")) {
            report.note("mps: every tenant a client of the MPS server at " + s.mpsPipe() + ", BE tenants at "
                    + "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + s.beShare() + (s.torch() ? "" : " (no effect on the fake libcuda)"));
        }
    }
}
