package dev.xq.policy.fixedpriority;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where {@code chpf} gets a process's CPU scheduling priority from; tests supply their own. */
@FunctionalInterface
interface ProcessPriorities {

    /**
     * @return the process's CPU scheduling priority now
     * @throws IOException if it cannot be read (the process is gone, or in another pid namespace)
     * @throws IllegalArgumentException if what was read makes no sense
     */
    CpuPriority read(int pid) throws IOException;

    /**
     * Reads {@code /proc/<pid>/stat}. Latin-1, since the command name may hold any bytes; the
     * file is in memory (procfs), so a read takes microseconds and waits for no other thread.
     */
    ProcessPriorities PROC = pid -> CpuPriority.parse(Files.readString(Path.of("/proc", Integer.toString(pid), "stat"), StandardCharsets.ISO_8859_1));
}
