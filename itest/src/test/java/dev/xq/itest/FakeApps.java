package dev.xq.itest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Unmodified CUDA and HIP programs for the tests: interpose's test programs on the fake
 * libcuda and on the HIP test double, started as separate processes with the interposer preloaded
 * (as {@code ./xq run} does).
 * Processes started with one lock file share one simulated GPU.
 */
final class FakeApps {

    private FakeApps() {
    }

    static Path dir() {
        return Path.of(System.getProperty("xq.interpose.dir", "../interpose/target")).toAbsolutePath().normalize();
    }

    static Path interposer() {
        return dir().resolve("libxq-cuda.so");
    }

    static Path app() {
        return dir().resolve("fakecuda/xq-cuda-app");
    }

    /** The random driver-API program whose results are known (interpose's xq-cuda-fuzz). */
    static Path fuzz() {
        return dir().resolve("fakecuda/xq-cuda-fuzz");
    }

    static Path hipInterposer() {
        return dir().resolve("libxq-hip.so");
    }

    /** The HIP test program on the HIP test double (interpose/target/fakehip). */
    static Path hipApp() {
        return dir().resolve("fakehip/xq-hip-app");
    }

    /**
     * Starts the HIP test program (its module is added); processes started with one lock file
     * share one simulated GPU.
     *
     * @param socket the node's socket, or null for no interposer at all
     * @param kfd whether the fake KFD is preloaded too and the double gives each stream a KFD queue (Lv3)
     */
    static App startHip(Path work, Path socket, Path gpuLock, boolean kfd, Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(hipApp().toString());
        cmd.addAll(List.of("--module", dir().resolve("fakehip/xq-spin.hipdouble").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("XQ_HIPDOUBLE_GPU", gpuLock.toString());
        if (socket != null) {
            pb.environment().put("LD_PRELOAD", (kfd ? dir().resolve("fakehip/libfakekfd.so") + ":" : "") + hipInterposer());
            pb.environment().put("XQ_SOCKET", socket.toString());
        }
        if (kfd) {
            pb.environment().put("XQ_HIPDOUBLE_KFD", "1");
        }
        pb.environment().putAll(env);
        Files.createDirectories(work);
        Path out = Files.createTempFile(work, "hip", ".out");
        Path err = Files.createTempFile(work, "hip", ".err");
        pb.redirectOutput(out.toFile());
        pb.redirectError(err.toFile());
        return new App(pb.start(), out, err);
    }

    /** A started program; its stdout and stderr go to files. */
    record App(Process process, Path out, Path err) {
        int waitFor(long seconds) throws InterruptedException, IOException {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("app " + process.pid() + " still running after " + seconds + " s; stderr: " + stderr());
            }
            return process.exitValue();
        }

        String stdout() throws IOException {
            return Files.readString(out, StandardCharsets.UTF_8);
        }

        String stderr() throws IOException {
            return Files.readString(err, StandardCharsets.UTF_8);
        }

        /** @return a number from the app's JSON result line */
        double figure(String key) throws IOException {
            Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*(-?[0-9.eE+-]+)").matcher(stdout());
            if (!m.find()) {
                throw new AssertionError("no \"" + key + "\" in the app's output: " + stdout() + "; stderr: " + stderr());
            }
            return Double.parseDouble(m.group(1));
        }

        long pid() {
            return process.pid();
        }
    }

    /**
     * Starts the test program.
     *
     * @param socket the node's socket, or null for no interposer at all
     * @param env more variables (XQ_NAME, XQ_PRIORITY, ...)
     */
    static App start(Path work, Path socket, Path gpuLock, Map<String, String> env, String... args) throws IOException {
        return start(app(), work, socket, gpuLock, env, args);
    }

    /** Starts program (one of the fake libcuda's test programs) as {@link #start} starts the test program. */
    static App start(Path program, Path work, Path socket, Path gpuLock, Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(program.toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("LD_LIBRARY_PATH", dir().resolve("fakecuda").toString());
        pb.environment().put("FAKECUDA_GPU", gpuLock.toString());
        if (socket != null) {
            pb.environment().put("LD_PRELOAD", interposer().toString());
            pb.environment().put("XQ_SOCKET", socket.toString());
        }
        pb.environment().putAll(env);
        Files.createDirectories(work);
        Path out = Files.createTempFile(work, "app", ".out");
        Path err = Files.createTempFile(work, "app", ".err");
        pb.redirectOutput(out.toFile());
        pb.redirectError(err.toFile());
        return new App(pb.start(), out, err);
    }
}
