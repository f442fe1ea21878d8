package dev.xq.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A node's private folder for the framework's storage (Config Admin's store, bundle data) and
 * Gogo's home: created owner-only (0700) under the temporary folder, with the node's pid in it,
 * so that a later node can remove the folders of nodes that died without cleaning up.
 */
final class NodeStorage {

    static final String PREFIX = "xq-node-";
    private static final String PID_FILE = "pid";

    private NodeStorage() {
    }

    /** @return a new folder of this process only (Files.createTempDirectory: rwx------ on POSIX) */
    static Path create() throws IOException {
        return create(Path.of(System.getProperty("java.io.tmpdir")));
    }

    static Path create(Path tmp) throws IOException {
        Path dir = Files.createTempDirectory(tmp, PREFIX);
        Files.writeString(dir.resolve(PID_FILE), Long.toString(ProcessHandle.current().pid()));
        return dir;
    }

    /** Removes the folders of nodes no longer running; quietly skips what it cannot read or remove. */
    static int removeStale() {
        return removeStale(Path.of(System.getProperty("java.io.tmpdir")));
    }

    /** @return how many folders were removed */
    static int removeStale(Path tmp) {
        int removed = 0;
        try (Stream<Path> s = Files.list(tmp)) {
            for (Path d : s.filter(p -> p.getFileName().toString().startsWith(PREFIX) && Files.isDirectory(p)).toList()) {
                if (isStale(d)) {
                    delete(d);
                    removed++;
                }
            }
        } catch (IOException | RuntimeException e) {
            // nothing to clean, or not ours to read: harmless
        }
        return removed;
    }

    /** A folder is stale when its pid file names a process that is gone (not another user's: those are not readable). */
    static boolean isStale(Path dir) {
        try {
            long pid = Long.parseLong(Files.readString(dir.resolve(PID_FILE)).trim());
            return pid != ProcessHandle.current().pid() && ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
        } catch (IOException | RuntimeException e) {
            return false; // no pid yet (a node starting), or not ours: leave it
        }
    }

    static void delete(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a folder left behind is harmless
        }
    }
}
