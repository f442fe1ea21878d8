package dev.xq.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * The hot-deploy folder installs and starts whatever jar appears in it, so whoever can write
 * there runs code as the node's user: it must belong to that user and be writable by no one else.
 */
final class HotDeployFolder {

    private HotDeployFolder() {
    }

    /** @return why {@code dir} must not be used, or null when it is safe */
    static String problem(Path dir) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            return "hot-deploy folder " + dir + " is a symbolic link; give the real folder";
        }
        Object owner;
        Object me;
        try {
            owner = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            me = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
            return null; // no POSIX owners here to check
        }
        if (!owner.equals(me)) {
            return "hot-deploy folder " + dir + " belongs to uid " + owner + ", not to this node's uid " + me
                    + ": anyone who can write there runs code as this node; use a folder of your own (--bundles DIR)";
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
        if (perms.contains(PosixFilePermission.GROUP_WRITE) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            return "hot-deploy folder " + dir + " is writable by its group or by others (" + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                    + "): anyone who can write there runs code as this node; chmod go-w " + dir;
        }
        return null;
    }
}
