package dev.xq.hal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * GPU smoke test and measurement harness for the CUDA adapter, without OSGi: put the bundle's
 * classes, its test classes and the runtime bundle on the class path and run
 * {@code java --enable-native-access=ALL-UNNAMED dev.xq.hal.cuda.CudaSmoke [--out DIR] [--n N]}.
 * It opens cuda0 and measures: spin device time against T, the host cost of cuLaunchKernel
 * (and of the whole HwQueue.launch), completion latency (host report time minus device end
 * time) and the device gap between chained commands for every completion mode, and the effect
 * of stream priorities on a short high-priority command while a low-priority stream is
 * saturated. Writes {@code cuda-smoke.json} to the output folder and a table to stdout.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
public final class CudaSmoke {

    private final Map<String, Object> json = new LinkedHashMap<>();
    private final int n;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final List<String> problems = new ArrayList<>();
    private final java.util.function.Function<CudaSettings, CudaPlatform> opener;

    private CudaSmoke(int n, java.util.function.Function<CudaSettings, CudaPlatform> opener) {
        this.n = n;
        this.opener = opener;
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(System.getenv().getOrDefault("OUT", "."));
        int n = 400;
        String library = CudaSettings.DEFAULT_LIBRARY;
        boolean dry = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--n" -> n = Integer.parseInt(args[++i]);
                case "--library" -> library = args[++i];
                case "--double" -> dry = true;
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; allowed: --out DIR, --n N, --library PATH, --double (dry run on the CPU test double)");
            }
        }
        Files.createDirectories(out);
        CudaDouble fake = dry ? new CudaDouble() : null;
        CudaSmoke s = new CudaSmoke(n, dry ? st -> CudaPlatform.start(fake.api(), st, new StdLog())
                : st -> CudaPlatform.start(st, new StdLog()));
        int rc = s.run(CudaSettings.defaults().withLibrary(library));
        Files.writeString(out.resolve("cuda-smoke.json"), Json.write(s.json) + "\n");
        System.out.println("wrote " + out.resolve("cuda-smoke.json"));
        System.exit(rc);
    }

    private int run(CudaSettings base) throws Exception {
        json.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        json.put("cpus", Runtime.getRuntime().availableProcessors());
        json.put("n", n);
        try (CudaPlatform p = opener.apply(base)) {
            json.put("status", p.status());
            System.out.println("status: " + p.status());
            if (p.devices().isEmpty()) {
                return 2;
            }
            DeviceDescriptor d = p.devices().get(0);
            Map<String, Object> dev = new LinkedHashMap<>();
            dev.put("id", d.id());
            dev.put("name", d.name());
            dev.put("sms", d.engines());
            dev.put("memoryBytes", d.memoryBytes());
            dev.put("properties", new LinkedHashMap<>(d.properties()));
            json.put("device", dev);
            CudaDevice cd = p.device("cuda0");
            json.put("clockCalibrationWidthUs", cd.clock().widthNanos() / 1000.0);
            json.put("sanity", sanity(p, cd));
            json.put("hostCost", hostCost(p, cd));
        }
        json.put("parkOvershoot", parkOvershoot());
        Map<String, Object> modes = new LinkedHashMap<>();
        record Variant(String name, CudaSettings settings) { }
        List<Variant> variants = List.of(
                new Variant("poll", base.withCompletion(CompletionMode.POLL)),
                new Variant("poll early=5us", base.withCompletion(CompletionMode.POLL).withPolling(5, 200, 1000)),
                new Variant("poll early=50us", base.withCompletion(CompletionMode.POLL).withPolling(50, 200, 1000)),
                new Variant("poll early=20us os-slack", base.withCompletion(CompletionMode.POLL).withPolling(20, 200, 0)),
                new Variant("sync-spin", base.withCompletion(CompletionMode.SYNC_SPIN)),
                new Variant("sync-block", base.withCompletion(CompletionMode.SYNC_BLOCK)),
                new Variant("hostfunc", base.withCompletion(CompletionMode.HOST_FUNC)));
        for (Variant v : variants) {
            Map<String, Object> m = new LinkedHashMap<>();
            try (CudaPlatform p = opener.apply(v.settings())) {
                CudaDevice cd = p.device("cuda0");
                for (long t : new long[] {100, 500}) {
                    m.put("serial T=" + t, chain(p, cd, t, 1));
                    m.put("depth8 T=" + t, chain(p, cd, t, 8));
                }
                m.put("mixed", mixed(p, cd));
                m.put("timerSlack", cd.watcher().timerSlack());
                m.put("clock", clockStats(cd));
            }
            modes.put(v.name(), m);
            System.out.println("mode " + v.name() + " done");
        }
        json.put("completion", modes);
        try (CudaPlatform p = opener.apply(base)) {
            json.put("priority", priority(p));
        }
        json.put("problems", problems);
        printSummary();
        return problems.isEmpty() ? 0 : 1;
    }

    // ------------------------------------------------------------------ sanity

    private Map<String, Object> sanity(CudaPlatform p, CudaDevice cd) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        CudaApi api = p.api();
        Recorder rec = new Recorder(8);
        HwQueue q = p.open("cuda0", new HwQueueOptions("sanity", null), rec);
        cd.makeCurrent();
        long dev = api.memAlloc(4096);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment host = a.allocate(4096, 64);
            host.fill((byte) 0);
            Command.Kernel probe = new Command.Kernel("spin", "xq_probe", new Command.Dim3(1, 1, 1), new Command.Dim3(1, 1, 1),
                    0, List.of(new Arg.Ptr(dev), new Arg.I32(-123456), new Arg.I64(0x1234_5678_9abc_def0L),
                            new Arg.F32(3.25f), new Arg.F64(-1e300)));
            q.check(probe);
            q.launch(new HwCommand(0, probe));
            q.launch(new HwCommand(1, new Command.Copy(host.address(), dev, 24)));
            q.launch(new HwCommand(2, new Command.Memset(dev + 1024, (byte) 0x5A, 1024)));
            q.launch(new HwCommand(3, new Command.Copy(host.address() + 1024, dev + 1024, 1024)));
            q.launch(new HwCommand(4, Command.spin(1000)));
            rec.await(5);
            boolean probeOk = host.get(JAVA_INT, 0) == -123456 && host.get(JAVA_FLOAT, 4) == 3.25f
                    && host.get(JAVA_LONG, 8) == 0x1234_5678_9abc_def0L && host.get(JAVA_DOUBLE, 16) == -1e300;
            boolean memOk = true;
            for (int i = 1024; i < 2048; i++) {
                memOk &= host.get(JAVA_BYTE, i) == 0x5A;
            }
            r.put("reports", rec.describe());
            r.put("probeArgsRoundTrip", probeOk);
            r.put("memsetCopyRoundTrip", memOk);
            r.put("spin1000usDeviceUs", rec.count() >= 5 ? (rec.end[4] - rec.start[4]) / 1000.0 : -1);
            check(probeOk, "xq_probe did not store its arguments as passed");
            check(memOk, "memset + copy round trip failed");
            check(rec.allCompleted(5), "sanity commands did not all complete: " + rec.describe());
        }
        api.memFree(dev);
        // does cuEventElapsedTime give negative values when the second event came first?
        MemorySegment s = api.streamCreate(CudaApi.CU_STREAM_NON_BLOCKING, 0);
        MemorySegment e1 = api.eventCreate(0);
        MemorySegment e2 = api.eventCreate(0);
        api.eventRecord(e1, s);
        api.eventRecord(e2, s);
        api.streamSynchronize(s);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ms = a.allocate(JAVA_FLOAT);
            int rc = api.elapsed(ms, e2, e1);
            r.put("elapsedReversed", rc == 0 ? "rc 0, " + ms.get(JAVA_FLOAT, 0) + " ms" : api.name(rc));
        }
        api.eventDestroy(e1);
        api.eventDestroy(e2);
        api.streamDestroy(s);
        q.close();
        return r;
    }

    // ------------------------------------------------------------------ host costs

    private Map<String, Object> hostCost(CudaPlatform p, CudaDevice cd) {
        Map<String, Object> r = new LinkedHashMap<>();
        CudaApi api = p.api();
        cd.makeCurrent();
        MemorySegment ctx = cd.context();
        int reps = 20_000;
        long[] t = new long[reps];
        for (int i = 0; i < reps; i++) {
            long a = System.nanoTime();
            api.setCurrent(ctx);
            t[i] = System.nanoTime() - a;
        }
        r.put("cuCtxSetCurrent_ns", Stats.of(t).map());
        MemorySegment s = api.streamCreate(CudaApi.CU_STREAM_NON_BLOCKING, 0);
        MemorySegment ev = api.eventCreate(0);
        api.eventRecord(ev, s);
        api.streamSynchronize(s);
        for (int i = 0; i < reps; i++) {
            long a = System.nanoTime();
            api.eventQuery(ev);
            t[i] = System.nanoTime() - a;
        }
        r.put("cuEventQuery_done_ns", Stats.of(t).map());
        long nanoCost = nanoTimeCost();
        r.put("nanoTime_ns", nanoCost);
        // cuLaunchKernel alone: spin kernels of 2 us, synchronized every 100 so the push buffer never fills
        CudaDevice.KernelFunction spin = cd.spinFunction();
        try (Arena a = Arena.ofConfined()) {
            KernelArgs ka = new KernelArgs(a);
            int launches = 4000;
            long[] lt = new long[launches];
            long[] rt = new long[launches];
            for (int i = 0; i < launches; i++) {
                if (i % 100 == 0) {
                    api.streamSynchronize(s);
                }
                MemorySegment params = ka.marshalLong(2000);
                long t0 = System.nanoTime();
                int rc = api.launchKernel(spin.handle(), cd.spinBlocks(), 1, 1, CudaDevice.SPIN_BLOCK_THREADS, 1, 1, 0, s, params);
                long t1 = System.nanoTime();
                api.eventRecord(ev, s);
                long t2 = System.nanoTime();
                lt[i] = t1 - t0;
                rt[i] = t2 - t1;
                if (rc != 0) {
                    problems.add("cuLaunchKernel failed: " + api.describe(rc));
                    break;
                }
            }
            api.streamSynchronize(s);
            r.put("cuLaunchKernel_spin_ns", Stats.of(Arrays.copyOfRange(lt, 200, launches)).map());
            r.put("cuEventRecord_ns", Stats.of(Arrays.copyOfRange(rt, 200, launches)).map());
        }
        api.eventDestroy(ev);
        api.streamDestroy(s);
        // the whole HwQueue.launch (context, two events, kernel, bookkeeping), 2 us spins, in bursts of 50
        Recorder rec = new Recorder(4000);
        HwQueue q = p.open("cuda0", new HwQueueOptions("launch-cost", null), rec);
        long[] qt = new long[4000];
        for (int i = 0; i < 4000; i++) {
            if (i % 50 == 0) {
                rec.await(i);
            }
            long t0 = System.nanoTime();
            q.launch(new HwCommand(i, Command.spin(2)));
            qt[i] = System.nanoTime() - t0;
        }
        rec.await(4000);
        q.close();
        r.put("hwQueueLaunch_spin_ns", Stats.of(Arrays.copyOfRange(qt, 200, 4000)).map());
        return r;
    }

    private static long nanoTimeCost() {
        long a = System.nanoTime();
        long x = 0;
        for (int i = 0; i < 100_000; i++) {
            x += System.nanoTime();
        }
        return (System.nanoTime() - a) / 100_000 + (x == 42 ? 1 : 0);
    }

    /** How far parkNanos overshoots, with the OS timer slack and with 1 us. */
    private Map<String, Object> parkOvershoot() throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        for (int slack : new int[] {0, 1000}) {
            for (long want : new long[] {10_000, 50_000}) {
                AtomicReference<Map<String, Object>> res = new AtomicReference<>();
                Thread t = Thread.ofPlatform().start(() -> {
                    if (slack > 0) {
                        setSlack(slack);
                    }
                    long[] over = new long[500];
                    for (int i = 0; i < over.length; i++) {
                        long a = System.nanoTime();
                        LockSupport.parkNanos(want);
                        over[i] = System.nanoTime() - a - want;
                    }
                    res.set(Stats.of(over).map());
                });
                t.join();
                r.put("park " + want / 1000 + "us " + (slack == 0 ? "os-slack" : "slack=1us"), res.get());
            }
        }
        return r;
    }

    private static void setSlack(int nanos) {
        try {
            var linker = java.lang.foreign.Linker.nativeLinker();
            var h = linker.downcallHandle(linker.defaultLookup().find("prctl").orElseThrow(),
                    java.lang.foreign.FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG),
                    java.lang.foreign.Linker.Option.firstVariadicArg(1));
            int rc = (int) h.invokeExact(29, (long) nanos);
            if (rc != 0) {
                throw new IllegalStateException("prctl " + rc);
            }
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // ------------------------------------------------------------------ completion modes

    /**
     * Runs n spin-T commands on one queue, keeping {@code depth} in flight and launching the next
     * from inside completed (as the runtime does).
     */
    private Map<String, Object> chain(CudaPlatform p, CudaDevice cd, long micros, int depth) throws Exception {
        int total = n + 20;
        Recorder rec = new Recorder(total);
        AtomicReference<HwQueue> qr = new AtomicReference<>();
        long[] launchCost = new long[total];
        AtomicInteger next = new AtomicInteger();
        rec.onCompleted = () -> {
            int i = next.getAndIncrement();
            if (i < total) {
                long t0 = System.nanoTime();
                qr.get().launch(new HwCommand(i, Command.spin(micros)));
                launchCost[i] = System.nanoTime() - t0;
            }
        };
        HwQueue q = p.open("cuda0", new HwQueueOptions("chain", null), rec);
        qr.set(q);
        long cpu0 = threads.getThreadCpuTime(cd.watcher().thread().threadId());
        long proc0 = processCpu();
        long wall0 = System.nanoTime();
        for (int k = 0; k < depth; k++) {
            int i = next.getAndIncrement();
            long t0 = System.nanoTime();
            q.launch(new HwCommand(i, Command.spin(micros)));
            launchCost[i] = System.nanoTime() - t0;
        }
        boolean ok = rec.await(total);
        long wall = System.nanoTime() - wall0;
        long cpu = threads.getThreadCpuTime(cd.watcher().thread().threadId()) - cpu0;
        long proc = processCpu() - proc0;
        q.close();
        check(ok && rec.allCompleted(total), "chain T=" + micros + " depth " + depth + " " + cd.watcher().mode().label()
                + ": " + rec.describe());
        int from = 20;
        int m = total - from;
        long[] dev = new long[m];
        long[] lat = new long[m];
        long[] gap = new long[m - 1];
        for (int i = from; i < total; i++) {
            dev[i - from] = rec.end[i] - rec.start[i];
            lat[i - from] = rec.seen[i] - rec.end[i];
            if (i > from) {
                gap[i - from - 1] = rec.start[i] - rec.end[i - 1];
            }
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("deviceTime_us", Stats.of(dev).micros());
        r.put("completionLatency_us", Stats.of(lat).micros());
        r.put("gapBetweenCommands_us", Stats.of(gap).micros());
        r.put("hwQueueLaunch_us", Stats.of(Arrays.copyOfRange(launchCost, from, total)).micros());
        r.put("wall_ms", wall / 1e6);
        r.put("deviceBusy_pct", 100.0 * total * micros * 1000 / wall);
        r.put("watcherCpu_pct", 100.0 * cpu / wall);
        r.put("processCpu_pct", 100.0 * proc / wall);
        return r;
    }

    /**
     * Two queues at once, each launching its next command from completed: A runs spin-50, B
     * spin-1000. Shows whether a short command's completion is seen while the thread could be
     * waiting for a long one on another stream.
     */
    private Map<String, Object> mixed(CudaPlatform p, CudaDevice cd) throws Exception {
        int cap = 100_000;
        Recorder a = new Recorder(cap);
        Recorder b = new Recorder(cap);
        AtomicReference<HwQueue> qa = new AtomicReference<>();
        AtomicReference<HwQueue> qb = new AtomicReference<>();
        AtomicInteger na = new AtomicInteger(1);
        AtomicInteger nb = new AtomicInteger(1);
        a.onCompleted = () -> {
            if (!a.stop) {
                qa.get().launch(new HwCommand(na.getAndIncrement(), Command.spin(50)));
            }
        };
        b.onCompleted = () -> {
            if (!b.stop) {
                qb.get().launch(new HwCommand(nb.getAndIncrement(), Command.spin(1000)));
            }
        };
        qa.set(p.open("cuda0", new HwQueueOptions("mixed-a", null), a));
        qb.set(p.open("cuda0", new HwQueueOptions("mixed-b", null), b));
        long cpu0 = threads.getThreadCpuTime(cd.watcher().thread().threadId());
        long wall0 = System.nanoTime();
        qb.get().launch(new HwCommand(0, Command.spin(1000)));
        qa.get().launch(new HwCommand(0, Command.spin(50)));
        Thread.sleep(500);
        a.stop = true;
        b.stop = true;
        int la = na.get();
        int lb = nb.get();
        a.await(la);
        b.await(lb);
        long wall = System.nanoTime() - wall0;
        long cpu = threads.getThreadCpuTime(cd.watcher().thread().threadId()) - cpu0;
        qa.get().close();
        qb.get().close();
        check(a.allCompleted(Math.min(la, cap)) && b.allCompleted(Math.min(lb, cap)), "mixed run: " + a.describe() + " / "
                + b.describe());
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("aCommands", la);
        r.put("bCommands", lb);
        r.put("aCompletionLatency_us", Stats.of(diff(a.seen, a.end, Math.min(la, cap))).micros());
        r.put("bCompletionLatency_us", Stats.of(diff(b.seen, b.end, Math.min(lb, cap))).micros());
        r.put("watcherCpu_pct", 100.0 * cpu / wall);
        return r;
    }

    private static Map<String, Object> clockStats(CudaDevice cd) {
        DeviceClock c = cd.clock();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("calibrations", c.calibrations());
        r.put("rejected", c.rejected());
        r.put("lastWidthUs", c.widthNanos() / 1000.0);
        r.put("maxJumpUs", c.maxJumpNanos() / 1000.0);
        r.put("meanJumpUs", c.meanJumpNanos() / 1000.0);
        r.put("fittedRatePpm", c.ratePpm());
        return r;
    }

    private static long processCpu() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return 0;
    }

    // ------------------------------------------------------------------ priorities

    /**
     * A low-priority queue kept saturated with spin-500 (16 in flight) while a high-priority
     * queue launches one spin-100 every 2-3 ms; the high one's latency (launch to report) and
     * start delay (launch to device start) with and without a stream priority difference.
     */
    private Map<String, Object> priority(CudaPlatform p) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        int[] range = p.device("cuda0").priorityRange();
        r.put("cudaRange", range[0] + ".." + range[1]);
        r.put("hp alone", hpRun(p, null, 1000, 0));
        r.put("hp prio 1000 vs lp -1000", hpRun(p, -1000, 1000, 500));
        r.put("hp and lp both -1000", hpRun(p, -1000, -1000, 500));
        r.put("hp prio 1000 vs lp -1000, lp T=2000", hpRun(p, -1000, 1000, 2000));
        r.put("hp and lp both -1000, lp T=2000", hpRun(p, -1000, -1000, 2000));
        return r;
    }

    private Map<String, Object> hpRun(CudaPlatform p, Integer lpPrio, int hpPrio, long lpMicros) throws Exception {
        int samples = 150;
        HwQueue lp = null;
        AtomicInteger lpNext = new AtomicInteger();
        Recorder lpRec = new Recorder(1_000_000);
        if (lpPrio != null) {
            AtomicReference<HwQueue> lr = new AtomicReference<>();
            lpRec.onCompleted = () -> {
                if (!lpRec.stop) {
                    lr.get().launch(new HwCommand(lpNext.getAndIncrement(), Command.spin(lpMicros)));
                }
            };
            lp = p.open("cuda0", new HwQueueOptions("lp", lpPrio), lpRec);
            lr.set(lp);
            for (int i = 0; i < 16; i++) {
                lp.launch(new HwCommand(lpNext.getAndIncrement(), Command.spin(lpMicros)));
            }
            Thread.sleep(20);
        }
        Recorder hp = new Recorder(samples);
        HwQueue hq = p.open("cuda0", new HwQueueOptions("hp", hpPrio), hp);
        long[] launched = new long[samples];
        Random rnd = new Random(42);
        for (int i = 0; i < samples; i++) {
            launched[i] = System.nanoTime();
            hq.launch(new HwCommand(i, Command.spin(100)));
            hp.await(i + 1);
            LockSupport.parkNanos(2_000_000 + rnd.nextInt(1_000_000));
        }
        lpRec.stop = true;
        if (lp != null) {
            lpRec.await(lpNext.get());
            lp.close();
        }
        hq.close();
        long[] lat = new long[samples];
        long[] startDelay = new long[samples];
        for (int i = 0; i < samples; i++) {
            lat[i] = hp.seen[i] - launched[i];
            startDelay[i] = hp.start[i] - launched[i];
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("hpLatency_us", Stats.of(lat).micros());
        r.put("hpStartDelay_us", Stats.of(startDelay).micros());
        r.put("hpDeviceTime_us", Stats.of(diff(hp.end, hp.start, samples)).micros());
        r.put("lpCompleted", lpRec.count());
        check(hp.allCompleted(samples), "hp commands did not all complete: " + hp.describe());
        return r;
    }

    private static long[] diff(long[] a, long[] b, int n) {
        long[] d = new long[n];
        for (int i = 0; i < n; i++) {
            d[i] = a[i] - b[i];
        }
        return d;
    }

    // ------------------------------------------------------------------ helpers

    private void check(boolean ok, String problem) {
        if (!ok) {
            problems.add(problem);
            System.out.println("PROBLEM: " + problem);
        }
    }

    @SuppressWarnings("unchecked")
    private void printSummary() {
        System.out.println();
        System.out.println("device: " + ((Map<String, Object>) json.get("device")).get("name"));
        Map<String, Object> host = (Map<String, Object>) json.get("hostCost");
        for (String k : List.of("cuLaunchKernel_spin_ns", "cuEventRecord_ns", "cuCtxSetCurrent_ns", "hwQueueLaunch_spin_ns")) {
            Map<String, Object> s = (Map<String, Object>) host.get(k);
            System.out.printf(Locale.ROOT, "%-24s p50 %6s ns  p99 %6s ns%n", k, s.get("p50"), s.get("p99"));
        }
        System.out.printf(Locale.ROOT, "%-26s %-10s %9s %9s %9s %9s %9s %7s%n", "mode", "run", "dev p50", "lat p50",
                "lat p99", "gap p50", "gap p99", "cpu%");
        Map<String, Object> modes = (Map<String, Object>) json.get("completion");
        for (var e : modes.entrySet()) {
            for (var r : ((Map<String, Object>) e.getValue()).entrySet()) {
                if (!(r.getValue() instanceof Map) || r.getKey().equals("mixed") || r.getKey().equals("clock")) {
                    continue;
                }
                Map<String, Object> m = (Map<String, Object>) r.getValue();
                Map<String, Object> dev = (Map<String, Object>) m.get("deviceTime_us");
                Map<String, Object> lat = (Map<String, Object>) m.get("completionLatency_us");
                Map<String, Object> gap = (Map<String, Object>) m.get("gapBetweenCommands_us");
                System.out.printf(Locale.ROOT, "%-26s %-10s %9s %9s %9s %9s %9s %7.1f%n", e.getKey(), r.getKey(), dev.get("p50"),
                        lat.get("p50"), lat.get("p99"), gap.get("p50"), gap.get("p99"), m.get("watcherCpu_pct"));
            }
        }
        for (var e : modes.entrySet()) {
            Map<String, Object> mx = (Map<String, Object>) ((Map<String, Object>) e.getValue()).get("mixed");
            Map<String, Object> la = (Map<String, Object>) mx.get("aCompletionLatency_us");
            System.out.printf(Locale.ROOT, "mixed %-24s spin-50 next to spin-1000: latency p50 %7s us p99 %7s us, %s + %s commands%n",
                    e.getKey(), la.get("p50"), la.get("p99"), mx.get("aCommands"), mx.get("bCommands"));
        }
        for (var e : modes.entrySet()) {
            System.out.println("clock " + e.getKey() + ": " + ((Map<String, Object>) e.getValue()).get("clock"));
        }
        Map<String, Object> prio = (Map<String, Object>) json.get("priority");
        for (var e : prio.entrySet()) {
            if (e.getValue() instanceof Map<?, ?> m) {
                Map<String, Object> lat = (Map<String, Object>) m.get("hpLatency_us");
                System.out.printf(Locale.ROOT, "priority %-38s hp latency p50 %9s us  p99 %9s us%n", e.getKey(), lat.get("p50"),
                        lat.get("p99"));
            }
        }
        System.out.println("problems: " + problems);
    }

    /** Records reports into arrays indexed by sequence, with the host time each arrived. */
    static final class Recorder implements HwQueueListener {
        final long[] start;
        final long[] end;
        final long[] seen;
        final String[] what;
        private final AtomicInteger count = new AtomicInteger();
        volatile Runnable onCompleted;
        volatile boolean stop;
        private final List<String> trouble = new java.util.concurrent.CopyOnWriteArrayList<>();

        Recorder(int capacity) {
            start = new long[Math.min(capacity, 100_000)];
            end = new long[start.length];
            seen = new long[start.length];
            what = new String[start.length];
        }

        @Override
        public void completed(HwCommand command, long startNanos, long endNanos) {
            long now = System.nanoTime();
            int i = (int) command.sequence();
            if (i < start.length) {
                start[i] = startNanos;
                end[i] = endNanos;
                seen[i] = now;
                what[i] = "completed";
            }
            count.incrementAndGet();
            Runnable r = onCompleted;
            if (r != null) {
                r.run();
            }
        }

        @Override
        public void failed(HwCommand command, Throwable cause) {
            int i = (int) command.sequence();
            if (i < what.length) {
                what[i] = "failed: " + cause.getMessage();
            }
            trouble.add("#" + i + " failed: " + cause.getMessage());
            count.incrementAndGet();
        }

        @Override
        public void lost(Throwable cause) {
            trouble.add("lost: " + cause.getMessage());
        }

        int count() {
            return count.get();
        }

        boolean await(int k) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (count.get() < k && trouble.stream().noneMatch(t -> t.startsWith("lost"))) {
                if (System.nanoTime() > until) {
                    return false;
                }
                Thread.onSpinWait();
            }
            return count.get() >= k;
        }

        boolean allCompleted(int k) {
            for (int i = 0; i < Math.min(k, what.length); i++) {
                if (!"completed".equals(what[i])) {
                    return false;
                }
            }
            return true;
        }

        String describe() {
            return count.get() + " reports" + (trouble.isEmpty() ? "" : ", " + trouble.subList(0, Math.min(3, trouble.size())));
        }
    }

    /** Percentiles of a sample. */
    record Stats(long[] sorted, double mean) {
        static Stats of(long[] v) {
            long[] s = v.clone();
            Arrays.sort(s);
            double mean = Arrays.stream(s).average().orElse(Double.NaN);
            return new Stats(s, mean);
        }

        long pct(double p) {
            if (sorted.length == 0) {
                return 0;
            }
            int i = (int) Math.min(sorted.length - 1, Math.round(p / 100.0 * (sorted.length - 1)));
            return sorted[i];
        }

        Map<String, Object> map() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("n", sorted.length);
            m.put("min", sorted.length == 0 ? 0 : sorted[0]);
            m.put("p50", pct(50));
            m.put("p90", pct(90));
            m.put("p99", pct(99));
            m.put("max", sorted.length == 0 ? 0 : sorted[sorted.length - 1]);
            m.put("mean", Math.round(mean));
            return m;
        }

        Map<String, Object> micros() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("n", sorted.length);
            m.put("min", us(sorted.length == 0 ? 0 : sorted[0]));
            m.put("p50", us(pct(50)));
            m.put("p90", us(pct(90)));
            m.put("p99", us(pct(99)));
            m.put("max", us(sorted.length == 0 ? 0 : sorted[sorted.length - 1]));
            m.put("mean", Math.round(mean / 100.0) / 10.0);
            return m;
        }

        private static double us(long nanos) {
            return Math.round(nanos / 100.0) / 10.0;
        }
    }

    /** Just enough JSON for maps, lists, strings, numbers and booleans. */
    static final class Json {
        static String write(Object o) {
            StringBuilder b = new StringBuilder();
            write(b, o, "");
            return b.toString();
        }

        private static void write(StringBuilder b, Object o, String indent) {
            switch (o) {
                case null -> b.append("null");
                case Map<?, ?> m -> {
                    b.append("{");
                    String in = indent + "  ";
                    boolean first = true;
                    for (var e : m.entrySet()) {
                        b.append(first ? "\n" : ",\n").append(in);
                        string(b, String.valueOf(e.getKey()));
                        b.append(": ");
                        write(b, e.getValue(), in);
                        first = false;
                    }
                    b.append(first ? "}" : "\n" + indent + "}");
                }
                case List<?> l -> {
                    b.append("[");
                    for (int i = 0; i < l.size(); i++) {
                        b.append(i == 0 ? "" : ", ");
                        write(b, l.get(i), indent);
                    }
                    b.append("]");
                }
                case Double d -> b.append(d.isNaN() || d.isInfinite() ? "null" : String.format(Locale.ROOT, "%.3f", d));
                case Number num -> b.append(num);
                case Boolean bo -> b.append(bo);
                default -> string(b, o.toString());
            }
        }

        private static void string(StringBuilder b, String s) {
            b.append('"');
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            b.append('"');
        }
    }

    private static final class StdLog implements RuntimeLog {
        @Override
        public void info(String message) {
            System.out.println("[info] " + message);
        }

        @Override
        public void warn(String message) {
            System.out.println("[warn] " + message);
        }

        @Override
        public void error(String message, Throwable cause) {
            System.out.println("[error] " + message + (cause == null ? "" : ": " + cause));
        }
    }
}
