package dev.xq.example.host;

import dev.xq.api.CodeModule;
import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.Command.Dim3;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.DeviceInfo;
import dev.xq.api.Hint;
import dev.xq.api.KernelFunction;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.lang.foreign.MemorySegment;
import java.net.URL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What a host application does with XQ, end to end: load the kernels of this bundle onto a
 * device (PTX on CUDA, a sim program on the simulated device), allocate buffers, and run a
 * tiled matrix multiply as a latency-critical tenant (queue {@code example-fg}, priority 2) while
 * a best-effort tenant (queue {@code example-bg}, priority 1) keeps the device busy with bigger
 * ones. Every foreground result is copied back and compared with the CPU's, bit for bit: the
 * inputs are small whole numbers, so every sum is exact in {@code float} whatever the order.
 *
 * <p>The same work runs in several modes: {@code alone} (the foreground tenant only), then, with
 * the background tenant, under each policy asked for ({@code native}: no scheduling; {@code hpf}:
 * highest priority first). The report has the foreground's latency per task (write A and B, fill
 * C, launch, read C back) in each mode.
 */
public final class MatmulExample {

    static final int FG_PRIORITY = 2;
    static final int BG_PRIORITY = 1;
    static final int TILE = 16;
    private static final Duration LONG = Duration.ofSeconds(120);

    /** The bundle resource with the kernels for HIP devices; not shipped in this build (see {@link #run}). */
    static final String HIP_CODE_OBJECT = "hip/matmul.co";

    /**
     * What to run. {@code code}: a file with the device code to load instead of the bundle's
     * resource (a HIP code object, PTX, a sim program), or null.
     */
    public record Settings(String device, int size, int bgSize, int tasks, int bgDepth, long pauseMicros, List<String> policies,
                           Path code) {
        public Settings {
            policies = List.copyOf(policies);
        }
    }

    /** One mode's figures. */
    public record Mode(String name, String policy, int tasks, int correct, long[] latencyNanos, long bgLaunches, double seconds,
                       String firstMismatch) {
        double millis(double quantile) {
            if (latencyNanos.length == 0) {
                return 0;
            }
            long[] s = latencyNanos.clone();
            Arrays.sort(s);
            int i = (int) Math.ceil(quantile * s.length) - 1;
            return s[Math.max(0, Math.min(s.length - 1, i))] / 1e6;
        }

        boolean passed() {
            return correct == tasks;
        }
    }

    /** The whole run. */
    public record Report(DeviceInfo device, Settings settings, List<Mode> modes) {

        public boolean passed() {
            return !modes.isEmpty() && modes.stream().allMatch(Mode::passed);
        }

        public String text() {
            StringBuilder b = new StringBuilder();
            b.append(String.format(Locale.ROOT, "example: tiled matmul %dx%d (float) on %s (%s, %s); fg priority %d,"
                    + " bg priority %d running %dx%d matmuls, %d in flight%n", settings.size(), settings.size(), device.id(),
                    device.platform(), device.name(), FG_PRIORITY, BG_PRIORITY, settings.bgSize(), settings.bgSize(), settings.bgDepth()));
            b.append(String.format(Locale.ROOT, "%-8s %-8s %6s %8s %10s %10s %10s %10s%n", "mode", "policy", "tasks", "correct",
                    "fg p50 ms", "fg p99 ms", "fg max ms", "bg/s"));
            for (Mode m : modes) {
                b.append(String.format(Locale.ROOT, "%-8s %-8s %6d %8d %10.3f %10.3f %10.3f %10.1f%n", m.name(), m.policy(), m.tasks(),
                        m.correct(), m.millis(0.5), m.millis(0.99), m.millis(1.0), m.seconds() == 0 ? 0 : m.bgLaunches() / m.seconds()));
            }
            int tasks = modes.stream().mapToInt(Mode::tasks).sum();
            int correct = modes.stream().mapToInt(Mode::correct).sum();
            if (passed()) {
                b.append("check: PASSED (").append(correct).append(" of ").append(tasks)
                        .append(" results equal to the CPU's, bit for bit)\n");
            } else {
                b.append("check: FAILED (").append(correct).append(" of ").append(tasks).append(" results equal to the CPU's");
                for (Mode m : modes) {
                    if (m.firstMismatch() != null) {
                        b.append("; ").append(m.name()).append(": ").append(m.firstMismatch());
                    }
                }
                b.append(")\n");
            }
            return b.toString();
        }

        public String json() {
            StringBuilder b = new StringBuilder("{\n");
            b.append("  \"example\": \"matmul\",\n");
            b.append("  \"device\": ").append(q(device.id())).append(", \"platform\": ").append(q(device.platform()))
                    .append(", \"deviceName\": ").append(q(device.name())).append(",\n");
            b.append(String.format(Locale.ROOT, "  \"size\": %d, \"bgSize\": %d, \"bgDepth\": %d, \"pauseMicros\": %d,%n",
                    settings.size(), settings.bgSize(), settings.bgDepth(), settings.pauseMicros()));
            b.append("  \"passed\": ").append(passed()).append(",\n  \"modes\": [\n");
            for (int i = 0; i < modes.size(); i++) {
                Mode m = modes.get(i);
                b.append(String.format(Locale.ROOT, "    {\"mode\": %s, \"policy\": %s, \"tasks\": %d, \"correct\": %d, \"fgP50Ms\": %.4f,"
                        + " \"fgP99Ms\": %.4f, \"fgMaxMs\": %.4f, \"bgLaunches\": %d, \"seconds\": %.3f, \"latencyUs\": [", q(m.name()),
                        q(m.policy()), m.tasks(), m.correct(), m.millis(0.5), m.millis(0.99), m.millis(1.0), m.bgLaunches(), m.seconds()));
                for (int j = 0; j < m.latencyNanos().length; j++) {
                    b.append(j == 0 ? "" : ", ").append(m.latencyNanos()[j] / 1000);
                }
                b.append("]}").append(i + 1 < modes.size() ? ",\n" : "\n");
            }
            return b.append("  ]\n}\n").toString();
        }

        private static String q(String s) {
            return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        }
    }

    private final XQueueService xq;
    private final SchedulerControl scheduler;
    private final Function<String, URL> resources;
    private final Consumer<String> progress;

    /**
     * @param resources finds this bundle's resources ({@code ptx/matmul.ptx}, {@code sim/matmul.xqsim})
     * @param progress where a line per mode goes while it runs
     */
    public MatmulExample(XQueueService xq, SchedulerControl scheduler, Function<String, URL> resources, Consumer<String> progress) {
        this.xq = xq;
        this.scheduler = scheduler;
        this.resources = resources;
        this.progress = progress;
    }

    /** @return the resource holding the kernels for a platform */
    static String codeFor(String platform) {
        return switch (platform) {
            case "cuda" -> "ptx/matmul.ptx";
            case "sim" -> "sim/matmul.xqsim";
            case "hip" -> HIP_CODE_OBJECT;
            default -> throw new IllegalArgumentException("the example has kernels for cuda (PTX), hip (a code object) and sim devices;"
                    + " platform '" + platform + "' has none");
        };
    }

    /** @return {@code n} whole numbers in [-4, 4] as floats, from {@code seed} */
    static float[] smallIntegers(long seed, int n) {
        Random r = new Random(seed);
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = r.nextInt(9) - 4;
        }
        return f;
    }

    /** @return {@code a * b} for square row-major matrices of size {@code n}, on the CPU */
    static float[] cpuMatmul(float[] a, float[] b, int n) {
        float[] c = new float[n * n];
        for (int i = 0; i < n; i++) {
            for (int p = 0; p < n; p++) {
                float av = a[i * n + p];
                for (int j = 0; j < n; j++) {
                    c[i * n + j] += av * b[p * n + j];
                }
            }
        }
        return c;
    }

    /** @return null if equal bit for bit, else the first difference in words */
    static String mismatch(float[] got, float[] expected, int n) {
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(got[i]) != Float.floatToIntBits(expected[i])) {
                return "c[" + (i / n) + "][" + (i % n) + "] = " + got[i] + ", the CPU says " + expected[i];
            }
        }
        return null;
    }

    /** Runs every mode and restores the policy that was selected before. */
    public Report run(Settings s) throws Exception {
        DeviceInfo dev = xq.devices().stream().filter(d -> d.id().equals(s.device())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("device " + s.device() + " is not on this node; devices: "
                        + xq.devices().stream().map(DeviceInfo::id).toList()));
        URL code;
        if (s.code() != null) {
            code = s.code().toUri().toURL();
        } else {
            String resource = codeFor(dev.platform());
            code = resources.apply(resource);
            if (code == null && dev.platform().equals("hip")) {
                throw new IllegalStateException(resource + " is not in the example bundle: no HIP code object is shipped (it takes"
                        + " ROCm's compiler and the GPU's architecture); build one from example-host/src/main/hip/matmul.hip with"
                        + " hipcc --genco --offload-arch=<gfx target> -o matmul.co and give it as code=FILE, or put it at"
                        + " example-host/src/main/resources/" + resource + " and rebuild the bundle");
            }
            if (code == null) {
                throw new IllegalStateException(resource + " is missing from the example bundle");
            }
        }
        int n = s.size();
        float[] a = smallIntegers(1, n * n);
        float[] b = smallIntegers(2, n * n);
        float[] expected = cpuMatmul(a, b, n);
        String previous = scheduler.selectedPolicy();
        List<Mode> modes = new ArrayList<>();
        try (CodeModule module = xq.load(dev.id(), code);
             DeviceBuffer da = xq.allocate(dev.id(), 4L * n * n);
             DeviceBuffer db = xq.allocate(dev.id(), 4L * n * n);
             DeviceBuffer dc = xq.allocate(dev.id(), 4L * n * n);
             DeviceBuffer ba = xq.allocate(dev.id(), 4L * s.bgSize() * s.bgSize());
             DeviceBuffer bb = xq.allocate(dev.id(), 4L * s.bgSize() * s.bgSize());
             DeviceBuffer bc = xq.allocate(dev.id(), 4L * s.bgSize() * s.bgSize())) {
            KernelFunction mm = module.function("xq_matmul_tiled");
            Fg fg = new Fg(mm, da, db, dc, a, b, expected, n);
            Bg bg = new Bg(mm, ba, bb, bc, s.bgSize(), s.bgDepth());
            // a warm-up: the module's first launch (JIT of the PTX), and the host's code paths
            run("warm-up", SchedulerControl.NATIVE, dev.id(), fg, null, Math.min(3, s.tasks()), s.pauseMicros());
            modes.add(run("alone", SchedulerControl.NATIVE, dev.id(), fg, null, s.tasks(), s.pauseMicros()));
            for (String p : s.policies()) {
                modes.add(run(p.equals(SchedulerControl.NATIVE) ? "shared" : p, p, dev.id(), fg, bg, s.tasks(), s.pauseMicros()));
            }
        } finally {
            scheduler.selectPolicy(previous);
        }
        return new Report(dev, s, modes);
    }

    /** The foreground tenant's task and its check. */
    private record Fg(KernelFunction mm, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c, float[] ah, float[] bh, float[] expected, int n) {
        Command launch() {
            return new Command.Launch(mm, new Dim3((n + TILE - 1) / TILE, (n + TILE - 1) / TILE, 1), new Dim3(TILE, TILE, 1), 0,
                    List.of(new Arg.Buf(a), new Arg.Buf(b), new Arg.Buf(c), new Arg.I32(n), new Arg.I32(n), new Arg.I32(n)));
        }
    }

    /** The background tenant: back-to-back launches of a bigger matmul, a few in flight. */
    private record Bg(KernelFunction mm, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c, int n, int depth) {
        Command launch() {
            return new Command.Launch(mm, new Dim3((n + TILE - 1) / TILE, (n + TILE - 1) / TILE, 1), new Dim3(TILE, TILE, 1), 0,
                    List.of(new Arg.Buf(a), new Arg.Buf(b), new Arg.Buf(c), new Arg.I32(n), new Arg.I32(n), new Arg.I32(n)));
        }
    }

    private Mode run(String name, String policy, String device, Fg fg, Bg bg, int tasks, long pauseMicros) throws Exception {
        scheduler.selectPolicy(policy);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong bgDone = new AtomicLong();
        AtomicReference<Throwable> bgFailure = new AtomicReference<>();
        long[] latency = new long[tasks];
        int correct = 0;
        String firstMismatch = null;
        float[] c = new float[fg.n() * fg.n()];
        MemorySegment cs = MemorySegment.ofArray(c);
        MemorySegment as = MemorySegment.ofArray(fg.ah());
        MemorySegment bs = MemorySegment.ofArray(fg.bh());
        long started;
        long ended;
        try (XQueue fq = xq.create(QueueOptions.on(device).named("example-fg").inGroup("example-fg").with(new Hint.Priority(FG_PRIORITY)));
             XQueue bq = bg == null ? null
                     : xq.create(QueueOptions.on(device).named("example-bg").inGroup("example-bg").with(new Hint.Priority(BG_PRIORITY)))) {
            Thread bgThread = null;
            if (bg != null) {
                bq.submit(Command.fill(bg.a(), (byte) 0));
                bq.submit(Command.fill(bg.b(), (byte) 0));
                bgThread = Thread.ofPlatform().name("example-bg").daemon().start(() -> {
                    ArrayDeque<Submission> inFlight = new ArrayDeque<>();
                    try {
                        while (!stop.get()) {
                            inFlight.add(bq.submit(bg.launch()));
                            if (inFlight.size() >= bg.depth()) {
                                inFlight.poll().await(LONG);
                                bgDone.incrementAndGet();
                            }
                        }
                        for (Submission s : inFlight) {
                            s.await(LONG);
                        }
                    } catch (Throwable t) {
                        bgFailure.set(t);
                    }
                });
                // the foreground starts once the background is on the device
                while (bgDone.get() == 0 && bgFailure.get() == null) {
                    Thread.sleep(1);
                }
            }
            started = System.nanoTime();
            long bgAtStart = bgDone.get();
            for (int i = 0; i < tasks; i++) {
                long t0 = System.nanoTime();
                fq.submit(new Command.Write(fg.a(), 0, as));
                fq.submit(new Command.Write(fg.b(), 0, bs));
                fq.submit(Command.fill(fg.c(), (byte) 0xff)); // NaN everywhere: a stale result cannot pass
                fq.submit(fg.launch());
                fq.submit(Command.read(fg.c(), cs)).await(LONG);
                latency[i] = System.nanoTime() - t0;
                String m = mismatch(c, fg.expected(), fg.n());
                if (m == null) {
                    correct++;
                } else if (firstMismatch == null) {
                    firstMismatch = "task " + i + ": " + m;
                }
                if (pauseMicros > 0) {
                    Thread.sleep(Duration.ofNanos(pauseMicros * 1000));
                }
            }
            ended = System.nanoTime();
            long bgLaunches = bgDone.get() - bgAtStart;
            stop.set(true);
            if (bgThread != null) {
                bgThread.join();
                if (bgFailure.get() != null) {
                    throw new IllegalStateException("the background tenant failed: " + bgFailure.get(), bgFailure.get());
                }
            }
            Mode mode = new Mode(name, policy, tasks, correct, latency, bgLaunches, (ended - started) / 1e9, firstMismatch);
            if (!name.equals("warm-up")) {
                progress.accept(String.format(Locale.ROOT, "example: %s (%s): %d of %d correct, fg p50 %.3f ms, p99 %.3f ms", name, policy,
                        correct, tasks, mode.millis(0.5), mode.millis(0.99)));
            }
            return mode;
        }
    }
}
