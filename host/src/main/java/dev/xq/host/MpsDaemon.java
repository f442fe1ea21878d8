package dev.xq.host;

import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The NVIDIA MPS control daemon the node runs for the processes it serves (docs/processes.md,
 * "Space and time"). Under MPS the kernels of several processes run on the device at the same
 * time, each process on at most the share of multiprocessors it was given when it created its
 * context, instead of the device switching between their contexts every few milliseconds.
 *
 * <p>The node starts its own daemon with its own pipe directory (next to its socket, with the
 * socket's permissions), so it never takes over a daemon somebody else runs; a daemon an
 * earlier node left on that directory is taken over. A reaper started in a session of its own
 * asks the daemon to quit once the node's process is gone (a node killed with SIGKILL included):
 * MPS's {@code quit} waits for the clients still running, so no process loses its work.
 * {@link #stop()} does the same at once when the node stops.
 */
final class MpsDaemon {

    /** The {@code mps} setting: {@code auto} uses MPS where it can, {@code on} says loudly why it cannot, {@code off} never. */
    enum Mode {
        AUTO, ON, OFF;

        static Mode parse(String s) {
            String v = s == null ? "" : s.trim().toLowerCase(java.util.Locale.ROOT);
            return switch (v) {
                case "", "auto" -> AUTO;
                case "on" -> ON;
                case "off" -> OFF;
                default -> throw new IllegalArgumentException("mps '" + s + "' is not one of auto, on, off");
            };
        }
    }

    /** Where the control program is looked for when the configuration names none (the GPU machine's driver folder first). */
    static final List<String> SEARCH = List.of("/usr/local/nvidia/bin", "/usr/bin", "/usr/local/bin", "/usr/local/cuda/bin",
            "/opt/nvidia/bin");
    static final String PROGRAM = "nvidia-cuda-mps-control";

    private final Path pipeDir;
    private final Path logDir;
    private final RuntimeLog log;
    private volatile boolean running;
    private volatile String state;
    private Process reaper;
    private Path control;

    private MpsDaemon(Path pipeDir, Path logDir, RuntimeLog log, String state) {
        this.pipeDir = pipeDir;
        this.logDir = logDir;
        this.log = log;
        this.state = state;
    }

    /** A daemon that is not running, and why (said by {@link #state()}). */
    static MpsDaemon off(String why) {
        return new MpsDaemon(null, null, null, "off: " + why);
    }

    /**
     * Starts (or takes over) the node's daemon where the mode and the machine allow.
     *
     * @param mode the configured mode
     * @param configured the control program's path from the configuration, or blank to search
     * @param dir the folder for the pipe and log directories (the socket's)
     * @param device the NVIDIA control device whose absence means "no NVIDIA GPU here" ({@code /dev/nvidiactl})
     */
    static MpsDaemon start(Mode mode, String configured, Path dir, Path device, GroupPrincipal group, int euid, RuntimeLog log) {
        if (mode == Mode.OFF) {
            return off("disabled by configuration (" + HostConfig.PID + " mps=off)");
        }
        Path program = find(configured);
        String why = null;
        if (program == null) {
            why = configured == null || configured.isBlank()
                    ? PROGRAM + " not found in " + String.join(", ", SEARCH) + " or the PATH"
                    : "mpsControl '" + configured + "' is not an executable file";
        } else if (!Files.exists(device)) {
            why = "no NVIDIA device (" + device + " is absent)";
        } else {
            why = deviceRefusal(program);
        }
        if (why != null) {
            if (mode == Mode.ON) {
                log.error("process host: mps=on but MPS cannot be used: " + why + "; processes share the device in time only", null);
            }
            return off(why);
        }
        MpsDaemon d = new MpsDaemon(dir.resolve("mps"), dir.resolve("mps-log"), log, "starting");
        d.control = program;
        d.launch(group, euid);
        return d;
    }

    /** A compute mode or MIG setting under which the node must not run MPS, or null (nvidia-smi absent: nothing known against). */
    private static String deviceRefusal(Path program) {
        Path smi = program.resolveSibling("nvidia-smi");
        if (!Files.isExecutable(smi)) {
            return null;
        }
        List<String> out = runQuietly(List.of(smi.toString(), "--query-gpu=compute_mode,mig.mode.current", "--format=csv,noheader"),
                Map.of(), 10);
        for (String line : out) {
            String l = line.toLowerCase(java.util.Locale.ROOT);
            if (l.contains("prohibited")) {
                return "a GPU's compute mode is Prohibited (nvidia-smi: " + line.trim() + ")";
            }
            if (l.contains(", enabled")) {
                return "MIG is enabled on a GPU (nvidia-smi: " + line.trim() + "); MPS inside MIG instances is not managed by XQ";
            }
        }
        return null;
    }

    private static Path find(String configured) {
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured.trim());
            return Files.isRegularFile(p) && Files.isExecutable(p) ? p : null;
        }
        List<String> dirs = new ArrayList<>(SEARCH);
        String path = System.getenv("PATH");
        if (path != null) {
            dirs.addAll(List.of(path.split(":")));
        }
        for (String d : dirs) {
            if (d.isEmpty()) {
                continue;
            }
            Path p = Path.of(d, PROGRAM);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    private Map<String, String> env() {
        return Map.of("CUDA_MPS_PIPE_DIRECTORY", pipeDir.toString(), "CUDA_MPS_LOG_DIRECTORY", logDir.toString());
    }

    /** The directories get the socket's rules: the node's own, closed to others' writes (its group may enter with a group configured). */
    private synchronized void launch(GroupPrincipal group, int euid) {
        try {
            for (Path d : List.of(pipeDir, logDir)) {
                SocketFiles.prepareDirectory(d, group, euid);
            }
        } catch (IOException e) {
            state = "off: cannot prepare " + pipeDir + ": " + e.getMessage();
            log.error("process host: MPS " + state, null);
            return;
        }
        boolean taken = answers();
        if (!taken) {
            List<String> out = runQuietly(List.of(control.toString(), "-d"), env(), 20);
            if (!answers()) {
                state = "off: " + control + " -d did not start a daemon on " + pipeDir + (out.isEmpty() ? "" : " (" + String.join(" ", out) + ")");
                log.error("process host: MPS " + state, null);
                return;
            }
        }
        startReaper();
        running = true;
        state = "on: " + (taken ? "took over the daemon an earlier node left" : "daemon started") + ", pipe " + pipeDir;
        log.info("process host: MPS " + state);
    }

    /** Whether a control daemon answers on the pipe directory. */
    private boolean answers() {
        if (!Files.exists(pipeDir.resolve("control"))) {
            return false;
        }
        return runWithInput(List.of(control.toString()), env(), "get_server_list\n", 10) == 0;
    }

    /** Asks the daemon to quit once this JVM is gone; in a session of its own, so that a kill of the node's group spares it. */
    private void startReaper() {
        long me = ProcessHandle.current().pid();
        String script = "trap '' HUP INT TERM; while kill -0 " + me + " 2>/dev/null; do sleep 1; done; echo quit | \"$0\"";
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.addAll(List.of("/bin/sh", "-c", script, control.toString()));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().putAll(env());
            reaper = pb.start();
        } catch (IOException e) {
            log.warn("process host: MPS reaper not started (" + e.getMessage() + "); a node killed hard leaves the daemon running on "
                    + pipeDir + " (the next node takes it over)");
        }
    }

    /** Asks the daemon to quit (it waits for its clients) and ends the reaper. */
    synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        int rc = runWithInput(List.of(control.toString()), env(), "quit\n", 10);
        // quit returns before the daemon is gone: a node started next on this directory must not find it half-way
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (Files.exists(pipeDir.resolve("control")) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        Process r = reaper;
        if (r != null) {
            r.descendants().forEach(ProcessHandle::destroy);
            r.destroy();
        }
        state = "off: stopped with the node" + (rc == 0 ? "" : " (quit answered " + rc + ")");
        log.info("process host: MPS " + state);
    }

    /** @return whether processes are given MPS now */
    boolean running() {
        return running;
    }

    /** @return the pipe directory clients must name, or null when off */
    Path pipeDir() {
        return running ? pipeDir : null;
    }

    /** @return one line for operators: on and where, or off and why */
    String state() {
        return state;
    }

    private static List<String> runQuietly(List<String> cmd, Map<String, String> env, int seconds) {
        List<String> out = new ArrayList<>();
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().putAll(env);
            Process p = pb.start();
            byte[] b = p.getInputStream().readNBytes(4096);
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            for (String l : new String(b, StandardCharsets.UTF_8).split("\n")) {
                if (!l.isBlank()) {
                    out.add(l.strip());
                }
            }
        } catch (IOException e) {
            out.add(e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    private static int runWithInput(List<String> cmd, Map<String, String> env, String input, int seconds) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
            pb.environment().putAll(env);
            Process p = pb.start();
            try (var in = p.getOutputStream()) {
                in.write(input.getBytes(StandardCharsets.US_ASCII));
            }
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
