package dev.xq.http;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Who owns a queue: the pid XSched's clients expect, and that process's command line. */
final class Processes {

    /** This node's process: the owner of the queues of applications inside the node. */
    static final long NODE_PID = ProcessHandle.current().pid();

    private Processes() {
    }

    /** @return the owning process of a queue whose status says {@code pid} (0: inside the node) */
    static long owner(long pid) {
        return pid == 0 ? NODE_PID : pid;
    }

    /** @return the process's command line, arguments separated by spaces, or empty when it cannot be read */
    static String cmdline(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            int end = raw.length;
            while (end > 0 && raw[end - 1] == 0) {
                end--;
            }
            StringBuilder sb = new StringBuilder(end);
            String s = new String(raw, 0, end, java.nio.charset.StandardCharsets.UTF_8);
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                sb.append(c == 0 ? ' ' : c);
            }
            return sb.toString();
        } catch (IOException | RuntimeException e) {
            return ProcessHandle.of(pid).flatMap(p -> p.info().commandLine()).orElse("");
        }
    }
}
