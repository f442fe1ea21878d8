package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class ProcessStateTest {

    @Test
    void theStateIsTheFieldAfterTheLastParenthesis() {
        assertTrue(ProcessState.stoppedState("4242 (python3) T 1 4242 4242 0 -1"));
        assertTrue(ProcessState.stoppedState("4242 (gdb target) t 1 4242"), "stopped by a tracer");
        assertFalse(ProcessState.stoppedState("4242 (python3) S 1 4242"));
        assertFalse(ProcessState.stoppedState("4242 (python3) R 1 4242"));
        // a command name with spaces and parentheses: only the last ')' closes it
        assertTrue(ProcessState.stoppedState("7 (a) S (b) T 1 7"));
        assertFalse(ProcessState.stoppedState("7 (x T) S 1 7"));
        assertFalse(ProcessState.stoppedState("garbage"));
        assertFalse(ProcessState.stoppedState("7 (x)"));
    }

    @Test
    void noSuchProcessIsNotStopped() {
        assertFalse(ProcessState.stopped(0));
        assertFalse(ProcessState.stopped(-1));
        assertFalse(ProcessState.stopped(Integer.MAX_VALUE), "no such pid");
    }

    /** A real child process, stopped with SIGSTOP and continued with SIGCONT. */
    @Test
    void aRealProcessStoppedAndContinued() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "Linux /proc");
        Process p = new ProcessBuilder("sleep", "30").start();
        try {
            long pid = p.pid();
            assertTrue(eventually(() -> !ProcessState.stopped(pid)), "running (sleeping) at first");
            signal("-STOP", pid);
            assertTrue(eventually(() -> ProcessState.stopped(pid)), "stopped after SIGSTOP");
            signal("-CONT", pid);
            assertTrue(eventually(() -> !ProcessState.stopped(pid)), "not stopped after SIGCONT");
        } finally {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
    }

    static void signal(String sig, long pid) throws Exception {
        Process k = new ProcessBuilder("kill", sig, Long.toString(pid)).inheritIO().start();
        assertTrue(k.waitFor(5, TimeUnit.SECONDS) && k.exitValue() == 0, "kill " + sig + " " + pid);
    }

    private static boolean eventually(BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - end < 0) {
            if (c.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return c.getAsBoolean();
    }
}
