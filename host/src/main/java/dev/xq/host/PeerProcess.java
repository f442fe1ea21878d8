package dev.xq.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process at the other end of a connection, as it was when it connected (docs/processes.md,
 * "Faults"): a pidfd where the kernel has them (SO_PEERPIDFD, taken at connect time, else
 * {@code pidfd_open} at accept), and its start time from {@code /proc/<pid>/stat}. A session is
 * tied to this process: a child that inherited the socket does not keep it, and a pid handed out
 * again to another process does not pass for it. Thread-safe: the session thread asks at HELLO,
 * the host's timer every {@link #CHECK_MILLIS}, and the session's end closes the pidfd.
 */
final class PeerProcess {

    /** How often the host's timer looks whether each session's process still lives. */
    static final long CHECK_MILLIS = 200;

    /** What became of the process. */
    enum Life {
        ALIVE,
        /** it exited (a zombie counts: it runs nothing any more) */
        EXITED,
        /** its pid names a process that started later (seen by the start time, where there is no pidfd) */
        REPLACED
    }

    private static final boolean PROC = Files.isReadable(Path.of("/proc/self/stat"));

    private final int pid;
    /** clock ticks after boot (field 22 of /proc/<pid>/stat), or -1 where it could not be read */
    private final long startTime;
    private final String how;
    // guarded by this: the timer polls it while the session's end may close it
    private int pidfd;
    private boolean gone;

    /** Where there is no pidfd (before Linux 5.3): by the start time alone (tests make this one directly). */
    static PeerProcess byStartTime(int pid, long startTime) {
        return new PeerProcess(pid, -1, startTime, false, "start time");
    }

    private PeerProcess(int pid, int pidfd, long startTime, boolean gone, String how) {
        this.pid = pid;
        this.pidfd = pidfd;
        this.startTime = startTime;
        this.gone = gone;
        this.how = how;
    }

    /**
     * Takes hold of the process that connected to {@code socketFd}; never throws: where neither a
     * pidfd nor {@code /proc} says anything, the process is taken as alive (and nothing is checked).
     */
    static PeerProcess of(int socketFd, int pid) {
        int fd = -1;
        boolean gone = false;
        String how = "pidfd";
        try {
            fd = Libc.peerPidfd(socketFd);
        } catch (Libc.ErrnoException e) {
            if (e.errno == Libc.ESRCH) {
                gone = true; // the kernel knows the very process that connected: it is gone
            } else {
                try {
                    fd = Libc.pidfdOpen(pid);
                } catch (Libc.ErrnoException e2) {
                    if (e2.errno == Libc.ESRCH) {
                        gone = true;
                    } else {
                        how = PROC ? "start time" : "unchecked"; // ENOSYS (before Linux 5.3), EMFILE...
                    }
                }
            }
        }
        long start = gone ? -1 : startTime(pid);
        if (fd >= 0 && exited(fd)) {
            gone = true; // exited already: the start time just read may be another process's
        } else if (fd < 0 && !gone && PROC && start < 0) {
            gone = true; // no /proc/<pid>/stat: no such process
        }
        return new PeerProcess(pid, fd, start, gone, gone ? "gone at accept" : how);
    }

    int pid() {
        return pid;
    }

    /** How the process is watched: {@code pidfd}, {@code start time}, {@code unchecked} or {@code gone at accept}. */
    String how() {
        return how;
    }

    /** @return whether the process still lives; once it did not, it never does again */
    synchronized Life life() {
        if (gone) {
            return Life.EXITED;
        }
        if (pidfd >= 0) {
            if (exited(pidfd)) {
                gone = true;
                return Life.EXITED;
            }
            return Life.ALIVE;
        }
        if (startTime < 0) {
            return Life.ALIVE; // nothing to check by (no /proc)
        }
        long now = startTime(pid);
        if (now < 0) {
            gone = true;
            return Life.EXITED;
        }
        return now == startTime ? Life.ALIVE : Life.REPLACED;
    }

    /** Lets the pidfd go; the process counts as gone from now on. */
    synchronized void close() {
        if (pidfd >= 0) {
            Libc.close(pidfd);
            pidfd = -1;
        }
        gone = true;
    }

    /** A pidfd polls readable (POLLHUP too, once reaped, on newer kernels) when its process has exited. */
    private static boolean exited(int pidfd) {
        return Libc.pollNow(pidfd, Libc.POLLIN) != 0;
    }

    /**
     * The pid the process has in its own pid namespace: the last {@code NSpid} field of
     * {@code /proc/<pid>/status} (a process in a container, without the host's pid namespace, knows
     * itself by that number; {@code SO_PEERCRED} gives the node the one of its own namespace).
     *
     * @return that pid, the same as {@code pid} outside any nested namespace, or -1 when not known
     */
    static long namespacePid(int pid) {
        try (var lines = Files.lines(Path.of("/proc", Integer.toString(pid), "status"), StandardCharsets.ISO_8859_1)) {
            return lines.filter(l -> l.startsWith("NSpid:")).findFirst().map(l -> {
                String[] f = l.substring("NSpid:".length()).trim().split("\\s+");
                return Long.parseLong(f[f.length - 1]);
            }).orElse(-1L);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The start time (field 22) of {@code /proc/<pid>/stat}, or -1 when the file cannot be read,
     * is not what Linux writes, or says the process is a zombie (it exited; only the reaping is left).
     */
    static long startTime(int pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Integer.toString(pid), "stat"), StandardCharsets.ISO_8859_1); // any byte
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        // pid (comm) state ppid ...: the name may hold spaces and parentheses, so count from its last ')'
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 > stat.length()) {
            return -1;
        }
        String[] f = stat.substring(close + 2).split(" ");
        if (f.length < 20 || f[0].equals("Z") || f[0].equals("X")) {
            return -1;
        }
        try {
            return Long.parseLong(f[19]); // field 3 is f[0], so field 22 is f[19]
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
