package dev.xq.bench.tail;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * What a tenant meets when its task arrives while another tenant runs (issue 13): from a flight
 * recording with the {@code dev.xq.Command} event on (and {@code dev.xq.Suspend}, on by default),
 * for every pair of fg and bg queue instances that ran at the same time (one per benchmark mode),
 * and for each fg task (runs of {@code per-task} commands): how long after the task's first submit
 * the bg queue was suspended, when fg's first command ended, and which bg commands ran in its way:
 * those that ended after the submit and started before fg's first command ended. A bg command that
 * <i>started</i> after the suspend was either launched unheld (the runtime foresaw no suspend while
 * it ran: {@code unheld}) or escaped its hold; one that started between the submit and the suspend
 * went before the suspend could hold it. Reported for all tasks and for the slowest 1 %.
 *
 * <p>Runs as a plain Java program:
 * {@code java -cp dev.xq.bench.jar dev.xq.bench.tail.ArrivalAnalysis REC.jfr [fg [bg [per-task]]]}.
 */
public final class ArrivalAnalysis {

    /** One completed command; host times in {@link System#nanoTime()}. */
    record Cmd(long handle, String queue, long seq, long submit, long launchEnd, long start, long end, boolean unheld) { }

    /** A suspend or resume of a queue, when the hardware queue had been told. */
    record Switch(long handle, long at, boolean suspend) { }

    /** What one fg task met. Times in ns from its first submit; suspend is -1 when bg was not suspended for it. */
    record Arrival(long latency, long suspend, long firstLaunched, long firstEnd, int before, int afterHeld, int afterUnheld) { }

    private ArrivalAnalysis() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: ArrivalAnalysis RECORDING.jfr [fg queue (fg)] [bg queue (bg)] [commands per task (20)]");
            System.exit(2);
        }
        List<Cmd> cmds = new ArrayList<>();
        List<Switch> switches = new ArrayList<>();
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String type = e.getEventType().getName();
                if (type.equals("dev.xq.Command")) {
                    cmds.add(new Cmd(e.getLong("handle"), e.getString("queue"), e.getLong("sequence"), e.getLong("submitNanos"),
                            e.getLong("launchEndNanos"), e.getLong("startNanos"), e.getLong("endNanos"),
                            e.hasField("unheld") && e.getBoolean("unheld")));
                } else if ((type.equals("dev.xq.Suspend") || type.equals("dev.xq.Resume")) && e.hasField("atNanos")) {
                    switches.add(new Switch(e.getLong("handle"), e.getLong("atNanos"), type.equals("dev.xq.Suspend")));
                }
            }
        }
        analyse(cmds, switches, args.length > 1 ? args[1] : "fg", args.length > 2 ? args[2] : "bg",
                args.length > 3 ? Integer.parseInt(args[3]) : 20, System.out);
    }

    static void analyse(List<Cmd> all, List<Switch> switches, String fgName, String bgName, int perTask, PrintStream out) {
        List<Cmd> done = all.stream().filter(c -> c.start() > 0 && c.end() >= c.start()).toList();
        List<List<Cmd>> fgs = instances(done, fgName);
        List<List<Cmd>> bgs = instances(done, bgName);
        int pairs = 0;
        for (List<Cmd> fg : fgs) {
            for (List<Cmd> bg : bgs) {
                if (bg.getFirst().submit() < fg.getLast().end() && bg.getLast().end() > fg.getFirst().submit()) {
                    pairs++;
                    report(pairs, arrivals(fg, bg, switches, perTask), out);
                }
            }
        }
        if (pairs == 0) {
            out.printf(Locale.ROOT, "no instances of '%s' and '%s' with device times ran at the same time "
                    + "(was dev.xq.Command enabled?)%n", fgName, bgName);
        }
    }

    static List<List<Cmd>> instances(List<Cmd> all, String queue) {
        Map<Long, List<Cmd>> byHandle = new LinkedHashMap<>();
        for (Cmd c : all) {
            if (c.queue().equals(queue)) {
                byHandle.computeIfAbsent(c.handle(), h -> new ArrayList<>()).add(c);
            }
        }
        List<List<Cmd>> list = new ArrayList<>(byHandle.values());
        for (List<Cmd> l : list) {
            l.sort(Comparator.comparingLong(Cmd::seq));
        }
        list.sort(Comparator.comparingLong(l -> l.getFirst().submit()));
        return list;
    }

    /** @return what each complete fg task of one pair met */
    static List<Arrival> arrivals(List<Cmd> fg, List<Cmd> bg, List<Switch> switches, int perTask) {
        long bgHandle = bg.getFirst().handle();
        long[] suspends = switches.stream().filter(s -> s.suspend() && s.handle() == bgHandle).mapToLong(Switch::at).sorted().toArray();
        List<Arrival> out = new ArrayList<>();
        for (int i = 0; i + perTask <= fg.size(); i += perTask) {
            Cmd first = fg.get(i);
            Cmd last = fg.get(i + perTask - 1);
            if (last.seq() - first.seq() != perTask - 1) {
                continue; // a command of the run is missing (not recorded): not a whole task
            }
            long t0 = first.submit();
            int k = Arrays.binarySearch(suspends, t0);
            k = k < 0 ? -k - 1 : k;
            long susp = k < suspends.length && suspends[k] < first.end() ? suspends[k] : -1;
            int before = 0;
            int afterHeld = 0;
            int afterUnheld = 0;
            for (Cmd b : bg) {
                if (b.end() <= t0 || b.start() >= first.end()) {
                    continue;
                }
                if (b.start() < t0 || susp < 0 || b.start() < susp) {
                    before++;
                } else if (b.unheld()) {
                    afterUnheld++;
                } else {
                    afterHeld++;
                }
            }
            out.add(new Arrival(last.end() - t0, susp < 0 ? -1 : susp - t0, first.launchEnd() - t0, first.end() - t0, before, afterHeld,
                    afterUnheld));
        }
        return out;
    }

    static void report(int n, List<Arrival> all, PrintStream out) {
        out.printf(Locale.ROOT, "%npair %d: %d fg tasks%n", n, all.size());
        if (all.isEmpty()) {
            return;
        }
        List<Arrival> sorted = new ArrayList<>(all);
        sorted.sort(Comparator.comparingLong(Arrival::latency));
        int from = Math.min(sorted.size() - 1, (int) Math.floor(sorted.size() * 0.99));
        line("all tasks", sorted, out);
        line("slowest 1 %", sorted.subList(from, sorted.size()), out);
    }

    private static void line(String what, List<Arrival> a, PrintStream out) {
        long[] susp = a.stream().filter(x -> x.suspend() >= 0).mapToLong(Arrival::suspend).sorted().toArray();
        long[] first = a.stream().mapToLong(Arrival::firstEnd).sorted().toArray();
        long[] launched = a.stream().mapToLong(Arrival::firstLaunched).sorted().toArray();
        long[] lat = a.stream().mapToLong(Arrival::latency).sorted().toArray();
        int[] inWay = new int[4];
        int before = 0;
        int held = 0;
        int unheld = 0;
        for (Arrival x : a) {
            inWay[Math.min(3, x.before() + x.afterHeld() + x.afterUnheld())]++;
            before += x.before();
            held += x.afterHeld();
            unheld += x.afterUnheld();
        }
        out.printf(Locale.ROOT, "  %s (%d): latency p50 %s p99 %s us; bg suspended after %s us (p50, p90, p99; %d of %d tasks)%n", what,
                a.size(), us(lat, 50), us(lat, 99), us(susp, 50) + ", " + us(susp, 90) + ", " + us(susp, 99), susp.length, a.size());
        out.printf(Locale.ROOT, "    fg's first command: launch call returned after %s / %s us, ended after %s / %s / %s us (p50 / p90 / p99)%n",
                us(launched, 50), us(launched, 90), us(first, 50), us(first, 90), us(first, 99));
        out.printf(Locale.ROOT, "    bg commands in its way: none %d, one %d, two %d, three or more %d tasks; of the commands: %d began before the "
                + "suspend, %d after it held (escaped the hold), %d after it unheld%n", inWay[0], inWay[1], inWay[2], inWay[3], before, held,
                unheld);
    }

    private static String us(long[] sorted, double p) {
        if (sorted.length == 0) {
            return "-";
        }
        int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100.0 * sorted.length) - 1));
        return String.format(Locale.ROOT, "%.1f", sorted[i] / 1e3);
    }
}
