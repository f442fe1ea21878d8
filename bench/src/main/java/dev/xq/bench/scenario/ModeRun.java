package dev.xq.bench.scenario;

import dev.xq.api.Hint;
import dev.xq.api.XQueue;
import dev.xq.bench.report.Counts;
import dev.xq.bench.workload.Ledger;
import dev.xq.bench.workload.TaskStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One mode's run: selects its policy, opens its queues, runs its task streams for a while
 * with progress lines, then drains and closes everything and counts the commands.
 */
public final class ModeRun {

    /** Something to do at a moment of the run, on the command thread. */
    public record TimedAction(Duration at, Action action) { }

    /** An action of a {@link TimedAction}. */
    @FunctionalInterface
    public interface Action {
        void run() throws Exception;
    }

    private final ScenarioContext ctx;
    private final Mode mode;
    private final Ledger ledger = new Ledger();
    private final List<XQueue> queues = new ArrayList<>();
    private final List<TaskStream> streams = new ArrayList<>();
    private long startNanos;
    private long endNanos;
    private String drainNote = "";

    public ModeRun(ScenarioContext ctx, Mode mode) throws InterruptedException {
        this.ctx = ctx;
        this.mode = mode;
        ctx.selectPolicy(mode.policy(), 0);
    }

    public Mode mode() {
        return mode;
    }

    public Ledger ledger() {
        return ledger;
    }

    /** Opens a queue on the scenario's device. */
    public XQueue queue(String name, String group, int nativePriority, Hint... hints) {
        return queueOn(ctx.device(), name, group, nativePriority, hints);
    }

    /** Opens a queue on another device (e.g. a sim device the scenario created). */
    public XQueue queueOn(String device, String name, String group, int nativePriority, Hint... hints) {
        XQueue q = ctx.open(mode, device, name, group, nativePriority, hints);
        queues.add(q);
        return q;
    }

    /** Adds a stream to start with {@link #run}. */
    public TaskStream add(TaskStream s) {
        streams.add(s);
        return s;
    }

    public List<TaskStream> streams() {
        return streams;
    }

    /** @return when {@link #run} started the streams ({@link System#nanoTime()}) */
    public long startNanos() {
        return startNanos;
    }

    /** @return when {@link #run} stopped issuing tasks */
    public long endNanos() {
        return endNanos;
    }

    /**
     * Starts the streams, runs for {@code length} printing a progress line every second and
     * doing each action at its moment, then stops issuing tasks.
     */
    public void run(Duration length, List<TimedAction> actions) throws Exception {
        start();
        List<TimedAction> todo = new ArrayList<>(actions);
        todo.sort((a, b) -> a.at().compareTo(b.at()));
        long total = length.toNanos();
        long nextPrint = 1_000_000_000L;
        while (true) {
            long now = System.nanoTime() - startNanos;
            if (now >= total) {
                break;
            }
            while (!todo.isEmpty() && todo.getFirst().at().toNanos() <= now) {
                todo.removeFirst().action().run();
            }
            checkStreams();
            if (now >= nextPrint) {
                ctx.out().line(status(now));
                nextPrint += 1_000_000_000L;
            }
            long wake = Math.min(total, Math.min(nextPrint, todo.isEmpty() ? Long.MAX_VALUE : todo.getFirst().at().toNanos()));
            Thread.sleep(Math.max(1, (wake - now) / 1_000_000));
        }
        for (TimedAction a : todo) {
            a.action().run();
        }
        endNanos = System.nanoTime();
        stopAll();
    }

    /** Starts the streams without a timed loop; the caller paces the run and then calls {@link #finish}. */
    public void start() {
        startNanos = System.nanoTime();
        for (TaskStream s : streams) {
            s.start();
        }
    }

    /** Fails if a stream stopped on an error. */
    public void checkStreams() {
        for (TaskStream s : streams) {
            if (s.error() != null) {
                stopAll();
                throw new IllegalStateException("workload " + s.tenant() + " in mode " + mode.label() + " failed: "
                        + s.error(), s.error());
            }
        }
    }

    private String status(long elapsed) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "  [%s] %.0f s:", mode.label(), elapsed / 1e9));
        if (streams.size() <= 4) {
            for (TaskStream s : streams) {
                var st = s.queue().status();
                sb.append(' ').append(s.tenant()).append(' ').append(s.completedTasks()).append(" tasks (")
                        .append(st.state().name().toLowerCase(Locale.ROOT)).append(", ").append(st.pending()).append(" pending, ")
                        .append(st.inFlight()).append(" in flight),");
            }
        } else {
            sb.append(' ').append(streams.size()).append(" queues ").append(streams.stream().mapToInt(TaskStream::completedTasks).sum())
                    .append(" tasks,");
        }
        sb.append(" commands not yet ended ").append(ledger.outstanding());
        return sb.toString();
    }

    private void stopAll() {
        for (TaskStream s : streams) {
            s.stop();
        }
    }

    /**
     * Lets submitted work finish (up to {@code drain}), closes the queues, and returns the
     * counts. Commands still pending when the drain time is up are cancelled by the close.
     */
    public Counts finish(Duration drain) throws InterruptedException {
        if (endNanos == 0) {
            endNanos = System.nanoTime();
        }
        stopAll();
        Counts c = ledger.settle(drain);
        if (c.lost() > 0) {
            drainNote = c.lost() + " commands had not ended after a drain of " + drain.toSeconds()
                    + " s; their queues were closed";
            ctx.out().line("  [" + mode.label() + "] " + drainNote);
        }
        for (TaskStream s : streams) {
            s.abandon();
        }
        for (XQueue q : queues) {
            ctx.closeQueue(q);
        }
        c = ledger.settle(Duration.ofSeconds(10));
        for (TaskStream s : streams) {
            s.join(Duration.ofSeconds(10));
        }
        return c;
    }

    /** @return a note about an incomplete drain, or empty */
    public String drainNote() {
        return drainNote;
    }
}
