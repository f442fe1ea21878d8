package dev.xq.bench.scenario.processes;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One tenant of a process scenario: an unmodified program started as a child of the node, with
 * or without the interposer. It talks through its standard streams: it may print {@code READY}
 * and wait for {@code GO}, and it ends with one JSON line of figures. Its standard error goes to
 * a log file next to the run.
 */
final class TenantProcess implements AutoCloseable {

    private final String role;
    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;

    private TenantProcess(String role, Process process, Path log) {
        this.role = role;
        this.process = process;
        this.log = log;
        Thread reader = new Thread(this::read, "xq-bench-" + role + "-out");
        reader.setDaemon(true);
        reader.start();
    }

    static TenantProcess start(String role, List<String> command, Map<String, String> env, Path logDir) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Path log = logDir.resolve(role + ".log");
        pb.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        return new TenantProcess(role, pb.start(), log);
    }

    private void read() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            lines.add("{\"error\":\"stdout: " + e.getMessage().replace('"', '\'') + "\"}");
        }
    }

    long pid() {
        return process.pid();
    }

    /** Waits for the line {@code READY}. */
    void awaitReady(long timeoutSeconds) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            String l = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (l == null) {
                throw new IOException(role + " (pid " + process.pid() + ") not ready after " + timeoutSeconds + " s"
                        + (process.isAlive() ? "" : ", exited with " + process.exitValue()) + "; see " + log);
            }
            if (l.trim().equals("READY")) {
                return;
            }
            if (l.startsWith("{")) {
                throw new IOException(role + " ended before it was ready: " + l + "; see " + log);
            }
        }
    }

    void go() throws IOException {
        OutputStream out = process.getOutputStream();
        out.write("GO\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** Waits for the JSON line and the exit. @return the JSON line */
    String awaitResult(long timeoutSeconds) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            String l = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (l == null) {
                throw new IOException(role + " (pid " + process.pid() + ") gave no result within " + timeoutSeconds + " s"
                        + (process.isAlive() ? "" : ", exited with " + process.exitValue()) + "; see " + log);
            }
            if (l.startsWith("{")) {
                // kept beside the log: the raw result (hp's every latency) for later analysis
                Files.writeString(log.resolveSibling(role + ".json"), l + "\n");
                if (!process.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    throw new IOException(role + " printed its result but did not exit; see " + log);
                }
                if (process.exitValue() != 0) {
                    throw new IOException(role + " exited with " + process.exitValue() + " after " + l + "; see " + log);
                }
                if (l.contains("\"error\"")) {
                    throw new IOException(role + " failed: " + l + "; see " + log);
                }
                return l;
            }
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    // ------------------------------------------------------------------ reading the result line

    /** @return the number named {@code key} in a flat JSON line, or NaN */
    static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(-?[0-9.eE+-]+)").matcher(json);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    /** @return the array of numbers named {@code key}, or an empty one */
    static double[] numbers(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\\[([^\\]]*)\\]").matcher(json);
        if (!m.find() || m.group(1).isBlank()) {
            return new double[0];
        }
        List<Double> out = new ArrayList<>();
        for (String s : m.group(1).split(",")) {
            out.add(Double.parseDouble(s.trim()));
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
