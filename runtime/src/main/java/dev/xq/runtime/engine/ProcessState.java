package dev.xq.runtime.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A client process's run state as Linux shows it ({@code /proc/<pid>/stat}, the field after the
 * command's closing parenthesis): whether it is stopped (SIGSTOP, SIGTSTP, a tracer's stop). A
 * stopped process's interposer cannot launch nor see its commands end, so the starvation rules
 * must not read its silence as theirs to mend (on the H200 a GEMM process stopped for 1.5 s was
 * taken as starving under the wide beats four times in 12 s and left narrowed for 0.5, 1, 2 and
 * then 4 s: 0.56 of native sharing where it ran at 0.76-0.83 unstopped, session 56).
 */
final class ProcessState {

    private ProcessState() {
    }

    /** @return whether {@code pid} is stopped now; false where it is not known (no such process, no /proc, pid 0) */
    static boolean stopped(long pid) {
        if (pid <= 0) {
            return false;
        }
        try {
            return stoppedState(Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return false; // gone, or another pid namespace: not known, so not stopped
        }
    }

    /**
     * @param stat the contents of {@code /proc/<pid>/stat}: {@code pid (comm) S ...}, where comm
     *     may hold spaces and parentheses, so the state is the field after the last ')'
     * @return whether the state is T (stopped) or t (stopped by a tracer)
     */
    static boolean stoppedState(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return false;
        }
        int i = close + 1;
        while (i < stat.length() && stat.charAt(i) == ' ') {
            i++;
        }
        if (i >= stat.length()) {
            return false;
        }
        char state = stat.charAt(i);
        return state == 'T' || state == 't';
    }
}
