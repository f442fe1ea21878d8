package dev.xq.hal.kfd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs gcc and small native programs for the tests; fails with gcc's output on any error. */
final class NativeBuild {

    private NativeBuild() {
    }

    /** @return the process's stdout; throws with stdout+stderr if it exits non-zero */
    static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("timed out: " + command);
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IllegalStateException(command + " exited " + p.exitValue() + ":\n" + text);
        }
        return text;
    }

    static Path compile(Path source, Path output, String... extra) throws IOException, InterruptedException {
        Files.createDirectories(output.getParent());
        List<String> cmd = new ArrayList<>(List.of("gcc", "-Wall", "-Wextra", "-Werror", "-idirafter",
                source.getParent().resolve("stub").toString(), "-o", output.toString(), source.toString()));
        cmd.addAll(List.of(extra));
        run(cmd);
        return output;
    }
}
