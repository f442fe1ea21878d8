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
import dev.xq.bench.scenario.Scenario;
import dev.xq.bench.scenario.ScenarioContext;
import dev.xq.bench.workload.TaskShape;
import dev.xq.bench.workload.TaskStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code chpf}: the GPU order follows the processes' CPU priority. The scenario starts two idle
 * processes ({@code sleep}), one at the node's nice value and one {@code nice}d by {@code lpNice}
 * steps, and names its two tenants' groups after them ({@code <pid>:fg}, {@code <pid>:bg}), the
 * form the node gives a process's queues, so that {@code chpf} reads their {@code /proc/<pid>/stat}.
 * The tenants' priority hints say the opposite (bg 2 over fg 1): under {@code hpf} bg goes first,
 * under {@code chpf} the nice values decide and fg goes first. The workload is
 * {@code fixed-priority}'s: fg periodic at a share of its standalone throughput, bg back to back.
 */
public final class ChpfScenario implements Scenario {

    @Override
    public String name() {
        return "chpf";
    }

    @Override
    public String summary() {
        return "fixed-priority's fg/bg with groups of two real processes, fg's at the node's nice, bg's reniced; hints inverted "
                + "(bg above fg); modes standalone, native, xq:hpf (hints), xq:chpf (nice)";
    }

    @Override
    public List<ParamSpec> params() {
        return List.of(
                ParamSpec.integer("T", 500, 0, 1_000_000, "spin time of one command, us"),
                ParamSpec.integer("n", 20, 1, 100_000, "commands per task"),
                ParamSpec.decimal("load", 0.2, 0.01, 1.0, "fg load as a share of its standalone throughput"),
                ParamSpec.integer("lpNice", 10, 1, 19, "how many nice steps bg's process is below fg's"),
                ParamSpec.decimal("seconds", 10, 0.5, 3600, "length of each mode"),
                ParamSpec.integer("calibrate", 5, 1, 1000, "standalone tasks timed to derive fg's period"));
    }

    @Override
    public ScenarioReport run(ScenarioContext ctx, Params p) throws Exception {
        ctx.requirePolicies("hpf", "chpf");
        Process fgProc = spawn(ctx, List.of("sleep", "3600"));
        Process bgProc = spawn(ctx, List.of("nice", "-n", Integer.toString(p.intValue("lpNice")), "sleep", "3600"));
        int fgNice = awaitNice(fgProc, null);
        int bgNice = awaitNice(bgProc, fgNice + p.intValue("lpNice"));
        String fgGroup = fgProc.pid() + ":fg";
        String bgGroup = bgProc.pid() + ":bg";
        ctx.out().line("processes: fg group " + fgGroup + " nice " + fgNice + ", bg group " + bgGroup + " nice " + bgNice);
        ScenarioReport report = new ScenarioReport(name(), ctx.device(), p.asMap());
        double seconds = p.doubleValue("seconds");
        FgBgWorkload w = FgBgWorkload.calibrate(ctx, TaskShape.spins(p.intValue("n"), p.longValue("T")),
                p.doubleValue("load"), p.intValue("calibrate"));
        List<Mode> modes = new ArrayList<>(List.of(Mode.standalone(), Mode.nativeMode()));
        if (ctx.gpu()) {
            modes.add(Mode.prio());
        }
        modes.add(Mode.xq("hpf"));
        modes.add(Mode.xq("chpf"));
        for (Mode mode : modes) {
            ctx.out().line("mode " + mode.label() + " for " + seconds + " s");
            ModeRun run = new ModeRun(ctx, mode);
            // Inverted hints: a policy that reads them puts bg first.
            XQueue fg = run.queue(FgBgWorkload.FG, fgGroup, FgBgWorkload.FG_STREAM_PRIORITY, new Hint.Priority(1));
            run.add(TaskStream.periodic(FgBgWorkload.FG, fg, run.ledger(), w.shape, w.periodNanos));
            if (!mode.label().equals("standalone")) {
                XQueue bg = run.queue(FgBgWorkload.BG, bgGroup, FgBgWorkload.BG_STREAM_PRIORITY, new Hint.Priority(2));
                run.add(TaskStream.backToBack(FgBgWorkload.BG, bg, run.ledger(), w.shape, 1));
            }
            run.run(Duration.ofNanos((long) (seconds * 1e9)), List.of());
            var counts = run.finish(Duration.ofSeconds(60));
            ModeResult m = w.figures(run, run.startNanos() + FgBgWorkload.warmupNanos(seconds), run.endNanos());
            if (mode.label().equals("standalone")) {
                counts = counts.plus(w.calibrationCounts);
            }
            m.counts(counts);
            if (!run.drainNote().isEmpty()) {
                m.note(run.drainNote());
            }
            report.add(m);
        }
        double nativeBg = report.modes().get(1).number("bg_tasks_per_s");
        for (ModeResult m : report.modes()) {
            m.put("bg_vs_native", Measures.round(Measures.ratio(m.number("bg_tasks_per_s"), nativeBg)));
        }
        report.summary().put("standalone_task_ms", Measures.round(w.standaloneNanos / 1e6));
        report.summary().put("fg_nice", fgNice);
        report.summary().put("bg_nice", bgNice);
        report.note("fg's group " + fgGroup + " (process nice " + fgNice + ", priority hint 1), bg's group " + bgGroup
                + " (process nice " + bgNice + ", priority hint 2); chpf ranks a process's queues at -nice, hpf at the hint");
        report.note("fg latency = submit of a task's first command to the end of its last; fg_p99_over_standalone divides by the "
                + "standalone task time measured before the modes (" + Measures.round(w.standaloneNanos / 1e6) + " ms)");
        ModeResult chpf = report.modes().getLast();
        ModeResult hpf = report.modes().get(report.modes().size() - 2);
        ModeResult nat = report.modes().get(1);
        report.goal("under xq:chpf fg (the process with the higher CPU priority) has P99 within 1.25 x its standalone task time",
                chpf.number("fg_p99_over_standalone") <= 1.25,
                "xq:chpf " + chpf.figure("fg_p99_over_standalone") + " x, xq:hpf (inverted hints) " + hpf.figure("fg_p99_over_standalone")
                        + " x, native " + nat.figure("fg_p99_over_standalone") + " x");
        report.goal("under xq:chpf bg keeps at least 0.9 of its native throughput", chpf.number("bg_vs_native") >= 0.9,
                "bg_vs_native " + chpf.figure("bg_vs_native"));
        report.barFigure("fg_p99");
        report.barFigure("bg_tasks_per_s");
        return report;
    }

    private static Process spawn(ScenarioContext ctx, List<String> command) throws IOException {
        Process proc;
        try {
            proc = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new IOException("could not start " + String.join(" ", command) + " (the chpf scenario needs sleep and nice on the "
                    + "node's PATH): " + e.getMessage(), e);
        }
        ctx.onClose(() -> {
            proc.destroy();
            if (!proc.waitFor(5, TimeUnit.SECONDS)) {
                proc.destroyForcibly();
            }
        });
        return proc;
    }

    /**
     * Waits until the process has exec'd {@code sleep} and returns its nice value from
     * {@code /proc/<pid>/stat} (field 19).
     * @param expect the nice value it should have, or null for any
     * @throws IllegalStateException if /proc cannot be read, the process ends, or its nice value is not {@code expect}
     */
    private static int awaitNice(Process proc, Integer expect) throws InterruptedException {
        Path stat = Path.of("/proc", Long.toString(proc.pid()), "stat");
        long deadline = System.nanoTime() + 5_000_000_000L;
        String last = "";
        while (System.nanoTime() < deadline) {
            if (!proc.isAlive()) {
                throw new IllegalStateException("helper process " + proc.pid() + " ended with exit code " + proc.exitValue()
                        + " before the scenario could read its nice value");
            }
            try {
                last = Files.readString(stat, StandardCharsets.ISO_8859_1);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + stat + " (chpf reads /proc; is this Linux?): " + e.getMessage(), e);
            }
            int open = last.indexOf('(');
            int close = last.lastIndexOf(')');
            if (open >= 0 && close > open && last.substring(open + 1, close).equals("sleep")) {
                String[] f = last.substring(close + 1).strip().split("\\s+");
                int nice = Integer.parseInt(f[19 - 3]);
                if (expect != null && nice != Math.min(19, expect)) {
                    throw new IllegalStateException("helper process " + proc.pid() + " has nice " + nice + ", expected "
                            + Math.min(19, expect) + " (is the node itself reniced near 19?)");
                }
                return nice;
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException("helper process " + proc.pid() + " did not exec sleep within 5 s; last " + stat + ": " + last);
    }
}
