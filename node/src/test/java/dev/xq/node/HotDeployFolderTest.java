package dev.xq.node;

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
}
