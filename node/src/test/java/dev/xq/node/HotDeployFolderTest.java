package dev.xq.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HotDeployFolderTest {

    @TempDir
    Path tmp;

    @Test
    void aFolderOfOurOwnIsFine() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("hd"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        assertNull(HotDeployFolder.problem(d));
    }

    @Test
    void aFolderOthersMayWriteIsRefused() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("hd"));
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxrwxrwx"));
        String why = HotDeployFolder.problem(d);
        assertTrue(why != null && why.contains("writable by its group or by others") && why.contains("chmod go-w"), why);
    }

    @Test
    void aSymbolicLinkIsRefused() throws Exception {
        Path real = Files.createDirectory(tmp.resolve("real"));
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        String why = HotDeployFolder.problem(link);
        assertTrue(why != null && why.contains("symbolic link"), why);
    }

    @Test
    void aFolderOfAnotherUserIsRefused() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("theirs"));
        try {
            Files.setAttribute(d, "unix:uid", 65534);
        } catch (java.io.IOException notRoot) {
            org.junit.jupiter.api.Assumptions.abort("changing a folder's owner needs root: " + notRoot.getMessage());
        }
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
        String why = HotDeployFolder.problem(d);
        assertTrue(why != null && why.contains("belongs to uid 65534"), why);
    }

    @Test
    void jarsThatAreNotBundlesAreNamedWithTheReason() throws Exception {
        Path garbage = Files.writeString(tmp.resolve("corrupt.jar"), "garbage");
        String why = HotDeployFolder.notABundle(garbage);
        assertTrue(why != null && why.contains("cannot be read as a jar"), why);

        Path plain = tmp.resolve("plain.jar");
        java.util.jar.Manifest m = new java.util.jar.Manifest();
        m.getMainAttributes().put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
        try (var out = new java.util.jar.JarOutputStream(Files.newOutputStream(plain), m)) {
            out.putNextEntry(new java.util.zip.ZipEntry("a.txt"));
        }
        why = HotDeployFolder.notABundle(plain);
        assertTrue(why != null && why.contains("no Bundle-SymbolicName"), why);

        Path bundle = tmp.resolve("bundle.jar");
        m.getMainAttributes().putValue("Bundle-SymbolicName", "test.b");
        try (var out = new java.util.jar.JarOutputStream(Files.newOutputStream(bundle), m)) {
            out.putNextEntry(new java.util.zip.ZipEntry("a.txt"));
        }
        assertNull(HotDeployFolder.notABundle(bundle));
    }

    @Test
    void theNodesStorageIsOwnerOnlyAndFoldersOfDeadNodesAreRemoved() throws Exception {
        Path mine = NodeStorage.create(tmp);
        assertTrue(Files.getPosixFilePermissions(mine).equals(PosixFilePermissions.fromString("rwx------")),
                PosixFilePermissions.toString(Files.getPosixFilePermissions(mine)));
        // a node that died: a pid no process has (a finished child's)
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        Path dead = Files.createDirectory(tmp.resolve(NodeStorage.PREFIX + "dead"));
        Files.writeString(dead.resolve("pid"), Long.toString(p.pid()));
        Files.createDirectories(dead.resolve("felix/bundle0"));
        // a node still running (this test's parent process stands for it), and a folder without a pid yet
        Path alive = Files.createDirectory(tmp.resolve(NodeStorage.PREFIX + "alive"));
        Files.writeString(alive.resolve("pid"), Long.toString(ProcessHandle.current().parent().orElseThrow().pid()));
        Path starting = Files.createDirectory(tmp.resolve(NodeStorage.PREFIX + "starting"));
        assertEquals(1, NodeStorage.removeStale(tmp));
        assertFalse(Files.exists(dead));
        assertTrue(Files.exists(mine) && Files.exists(alive) && Files.exists(starting));
    }
}
