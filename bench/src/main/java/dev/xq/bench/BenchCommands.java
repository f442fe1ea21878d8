package dev.xq.bench;

import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueueService;
import dev.xq.bench.args.BenchArguments;
import dev.xq.bench.args.UsageException;
import dev.xq.bench.report.Json;
import dev.xq.bench.report.Plots;
import dev.xq.bench.report.ScenarioReport;
import dev.xq.bench.report.TextTable;
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.scenario.inprocess.DemoScenario;
import dev.xq.bench.scenario.suite.Scenarios;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.felix.service.command.Descriptor;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;

/**
 * The shell commands {@code xq:demo} and {@code xq:bench}. Progress goes to the session's
 * output while a scenario runs; the returned text is the final table. Bad arguments throw
 * before anything runs; a goal that is missed is a figure in the table, while a failure of
 * the run itself propagates so that a scripted caller exits non-zero.
 */
@Component(service = BenchCommands.class, property = {
        "osgi.command.scope=xq",
        "osgi.command.function=demo",
        "osgi.command.function=bench"})
public class BenchCommands {

    @Reference
    private XQueueService xq;

    @Reference
    private SchedulerControl scheduler;

    @Reference(service = LoggerFactory.class)
    private Logger log;

    private BundleContext bundles;

    // Two runs at once would measure each other.
    private final ReentrantLock running = new ReentrantLock();

    @Activate
    void activate(BundleContext context) {
        this.bundles = context;
    }

    /**
     * xq:bench SCENARIO [--device sim|cuda|hip] [--json FILE] [--plot DIR] [--wide] [key=value ...]. The
     * words stay one variadic list: a scenario's key=value parameters are open-ended, and
     * {@link BenchArguments} parses them for {@code ./xq bench} too, with the same refusals.
     * @return the table of figures
     */
    @Descriptor("runs a scenario on every mode and prints its figures (xq:bench --help lists the scenarios)")
    public String bench(@Descriptor("SCENARIO [--device sim|cuda|hip] [--json FILE] [--plot DIR] [--wide] [key=value ...], or --help [SCENARIO]")
            String... args) throws Exception {
        BenchArguments a = BenchArguments.parseBench(List.of(args), Scenarios.params());
        if (a.help()) {
            return a.scenario().isEmpty() ? usage() : usageOf(Scenarios.byName(a.scenario()));
        }
        return execute(Scenarios.byName(a.scenario()), a);
    }

    /**
     * xq:demo [--json FILE] [--plot DIR] [--wide] [seconds=N ...]
     * @return the table of figures with a line of explanation per mode
     */
    @Descriptor("runs the demo on the sim device: the same work under each mode, with a line of explanation per mode")
    public String demo(@Descriptor("[--json FILE] [--plot DIR] [--wide] [key=value ...], or --help") String... args) throws Exception {
        DemoScenario demo = new DemoScenario();
        BenchArguments a = BenchArguments.parseDemo(List.of(args), demo.params());
        if (a.help()) {
            return "xq:demo [--json FILE] [--plot DIR] [--wide] [key=value ...]\n" + BenchArguments.usage(demo.name(), demo.summary(), demo.params());
        }
        if (!a.device().equals("sim")) {
            throw new UsageException("xq:demo runs on the sim device only; --device " + a.device() + " is not allowed");
        }
        return execute(demo, a);
    }

    /** @return the usage of every scenario */
    static String usage() {
        List<String> lines = new ArrayList<>();
        lines.add("xq:bench SCENARIO [--device sim|cuda|hip] [--json FILE] [--plot DIR] [--wide] [key=value ...]");
        lines.add("scenarios and their parameters (key=default):");
        for (Scenario s : Scenarios.all()) {
            lines.add(BenchArguments.usage(s.name(), s.summary(), s.params()));
        }
        return String.join("\n", lines);
    }

    private static String usageOf(Scenario s) {
        return "xq:bench " + s.name() + " [--device sim|cuda|hip] [--json FILE] [--plot DIR] [--wide] [key=value ...]\n"
                + BenchArguments.usage(s.name(), s.summary(), s.params());
    }

    private String execute(Scenario scenario, BenchArguments a) throws Exception {
        Path json = a.json() == null ? null : a.json().toAbsolutePath();
        Path plots = a.plotDir() == null ? null : a.plotDir().toAbsolutePath();
        checkWritable(json, plots);
        if (!running.tryLock()) {
            throw new IllegalStateException("another xq:bench or xq:demo is running on this node; wait for it to end. Nothing was run.");
        }
        try {
            // Bound here, on the shell's thread: the shell routes System.out per thread.
            var out = System.out;
            log.info("scenario {} starting on --device {} with {}", scenario.name(), a.device(), a.params().asMap());
            ScenarioReport report;
            try (ScenarioContext ctx = ScenarioContext.open(xq, scheduler, bundles, out::println, a.device())) {
                if (json != null) {
                    // a long scenario's parts as they end (the family's mixes): a run killed by a
                    // time limit leaves a JSON file of what was done, its summary saying partial
                    ctx.onCheckpoint(sofar -> writeWhole(json, Json.write(sofar.toJsonObject())));
                }
                report = scenario.run(ctx, a.params());
            }
            StringBuilder text = new StringBuilder(TextTable.render(report, a.wide()));
            if (json != null) {
                writeWhole(json, Json.write(report.toJsonObject()));
                text.append("wrote ").append(json).append('\n');
            }
            if (plots != null) {
                try {
                    for (Path p : Plots.write(report, plots)) {
                        text.append("wrote ").append(p).append('\n');
                    }
                } catch (IOException | RuntimeException | Error e) {
                    // The figures are complete: show them, then fail for what was asked and not done.
                    out.print(text);
                    throw new IllegalStateException("plots not written to " + plots + ": " + e
                            + " (the table above" + (json == null ? "" : " and " + json) + " are complete; "
                            + "drawing needs fonts, e.g. the fontconfig and fonts-dejavu-core packages)", e);
                }
            }
            log.info("scenario {} finished: {} modes, counts {}", scenario.name(), report.modes().size(), report.totalCounts());
            return text.toString();
        } finally {
            running.unlock();
        }
    }

    /**
     * Writes {@code text} to {@code file} whole or not at all (a file beside it, then moved over
     * it), so that a run killed while writing never leaves half a JSON file.
     */
    static void writeWhole(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".part");
        Files.writeString(tmp, text);
        try {
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (java.nio.file.AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static void checkWritable(Path json, Path plots) {
        if (json != null) {
            if (Files.isDirectory(json)) {
                throw new UsageException("--json " + json + " is a directory; give a file name");
            }
            Path parent = json.getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                throw new UsageException("--json " + json + ": folder " + parent + " does not exist");
            }
        }
        if (plots != null && Files.exists(plots) && !Files.isDirectory(plots)) {
            throw new UsageException("--plot " + plots + " is a file; give a folder (it is created if missing)");
        }
    }
}
