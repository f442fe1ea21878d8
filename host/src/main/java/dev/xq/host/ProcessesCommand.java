package dev.xq.host;

import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** {@code xq:processes [PID]}: the processes the node serves, or one process's streams. */
final class ProcessesCommand {

    static final String USAGE = "usage: xq:processes [PID | --wait N [--timeout MS]] (no argument: every process; PID: that "
            + "process's streams; --wait: the list once at least N processes are registered, MS 1..3600000, default 10000)";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.systemDefault());

    private ProcessesCommand() {
    }

    static String run(HostServer server, String... args) throws InterruptedException {
        if (args == null || args.length == 0) {
            return all(server);
        }
        if (args[0].equals("--wait")) {
            return await(server, args);
        }
        if (args.length > 1) {
            throw new IllegalArgumentException("xq:processes takes at most one argument, got " + args.length + "; " + USAGE);
        }
        return streams(server, args[0]);
    }

    /** {@code xq:processes PID}: that process's streams. */
    static String streams(HostServer server, String pidText) {
        if (pidText.equals("--wait")) {
            throw new IllegalArgumentException("xq:processes: wrong arguments --wait; " + USAGE);
        }
        long pid;
        try {
            pid = Long.parseLong(asciiDigits(pidText));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("xq:processes: '" + pidText + "' is not a process id; " + USAGE);
        }
        List<Session.Info> of = new ArrayList<>();
        List<Session.Info> all = server == null ? List.of() : server.sessions();
        for (Session.Info i : all) {
            if (i.pid() == pid) {
                of.add(i);
            }
        }
        if (of.isEmpty()) {
            throw new IllegalArgumentException("xq:processes: process " + pid + " has no session; served processes: "
                    + (all.isEmpty() ? "none" : all.stream().map(i -> Long.toString(i.pid())).distinct().collect(Collectors.joining(", "))));
        }
        StringBuilder sb = new StringBuilder();
        for (Session.Info i : of) {
            sb.append("process ").append(i.pid()).append(" (").append(i.name()).append("), ").append(i.state()).append(" since ")
                    .append(TIME.format(i.since())).append(", GATE lines sent ").append(i.gatesSent()).append(", dropped ")
                    .append(i.gatesDropped()).append(", runtime ").append(i.runtime()).append(", Lv3 ").append(i.lv3())
                    .append(", held streams let go by the process ").append(i.letGo()).append('\n')
                    .append(i.cmdline()).append('\n');
            // LIMITS: threshold/batch/window in force; "none" while no other tenant shares the device
            Table t = new Table("SLOT", "HANDLE", "QUEUE", "DEVICE", "GATE", "LIMITS", "KEY");
            for (Session.StreamInfo s : i.streamList()) {
                t.row(s.slot(), s.handle(), s.name(), s.device(), s.gate() == 1 ? "held" : s.gate() == 0 ? "open" : "-", s.limits(),
                        s.key());
            }
            sb.append(t);
        }
        return sb.toString();
    }

    private static String await(HostServer server, String... args) throws InterruptedException {
        if (args.length != 2 && !(args.length == 4 && args[2].equals("--timeout"))) {
            throw new IllegalArgumentException("xq:processes: wrong arguments " + String.join(" ", args) + "; " + USAGE);
        }
        return await(server, args[1], args.length == 4 ? args[3] : "10000");
    }

    /** {@code xq:processes --wait N [--timeout MS]}: the list once at least N processes are served. */
    static String await(HostServer server, String count, String timeoutMillis) throws InterruptedException {
        long n = number(count, "--wait", 1, 100_000);
        long timeout = number(timeoutMillis, "--timeout", 1, 3_600_000);
        long deadline = System.nanoTime() + timeout * 1_000_000L;
        int have;
        // served: registered (HELLO answered); a connection still on its way in does not count
        while ((have = server == null ? 0 : (int) server.sessions().stream().filter(i -> i.state().equals("registered")).count()) < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("xq:processes --wait " + n + ": " + have + " processes served after " + timeout
                        + " ms\n" + all(server));
            }
            Thread.sleep(20);
        }
        return all(server);
    }

    private static long number(String text, String option, long min, long max) {
        long v;
        try {
            v = Long.parseLong(asciiDigits(text));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("xq:processes: " + option + " '" + text + "' is not a number; " + USAGE);
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException("xq:processes: " + option + " " + v + " is out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    static String all(HostServer server) {
        ArrivalWatch watch = server == null ? null : server.arrivalWatch();
        String head = "process host: " + (server == null ? "not serving: not started" : server.status()) + "\n"
                + (watch == null ? "" : "process host: " + watch.describe() + "\n")
                + (server == null ? "" : "spatial sharing (MPS): " + server.space().state() + "\n");
        // RUNTIME: the interposer's (cuda, hip); LV2/3: "lv2" a CUDA process under XQ_STALL=1; for Lv3
        // "-" not offered, "off" not asked (host setting interruptProcesses), else the interrupts done and failed
        // SPACE: "mps N%" a client of the node's MPS server on N % of the device ("untimed": never held; "narrowed": on
        // the whole device, narrowed while preferred queues run; "narrowed, untimed": a latency-critical one, never held,
        // narrowed to half below a wider one of a higher priority; ", low": told MPS's lower client priority,
        // mpsLowPriorityBestEffort), "time" time-shared
        // LET GO: held streams the process let go itself (its watchdog: another stream of it, let launch, made no progress)
        Table t = new Table("PID", "NAME", "RUNTIME", "STREAMS", "LV2/3", "LET GO", "SPACE", "SINCE", "CMDLINE");
        if (server != null) {
            for (Session.Info i : server.sessions()) {
                t.row(i.pid(), i.name(), i.runtime(), i.streams(), i.lv3(), i.letGo(), i.space(), TIME.format(i.since()), i.cmdline());
            }
        }
        return head + t;
    }

    /** Left-aligned columns; the last one is not padded. */
    static final class Table {
        private final List<String[]> rows = new ArrayList<>();

        Table(String... head) {
            rows.add(head);
        }

        void row(Object... cells) {
            String[] r = new String[cells.length];
            for (int i = 0; i < cells.length; i++) {
                r[i] = String.valueOf(cells[i]);
            }
            rows.add(r);
        }

        @Override
        public String toString() {
            int n = rows.getFirst().length;
            int[] w = new int[n];
            for (String[] r : rows) {
                for (int i = 0; i < n; i++) {
                    w[i] = Math.max(w[i], r[i].length());
                }
            }
            StringBuilder sb = new StringBuilder();
            for (String[] r : rows) {
                for (int i = 0; i < n; i++) {
                    sb.append(i == n - 1 ? r[i] : String.format("%-" + (w[i] + 2) + "s", r[i]));
                }
                sb.append('\n');
            }
            return sb.toString();
        }
    }

    /**
     * @return {@code text} when it is a whole number written in ASCII digits (an optional sign, then
     *         0-9 only); Java's own parsing also takes other scripts' digits (Arabic-Indic, Devanagari...)
     * @throws NumberFormatException otherwise
     */
    private static String asciiDigits(String text) {
        // a loop, not a regular expression: the process protocol parses every WAKE line with it
        int n = text == null ? 0 : text.length();
        int i = n > 0 && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        if (i == n) {
            throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
        }
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
            }
        }
        return text;
    }
}
