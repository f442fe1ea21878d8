package dev.xq.host;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The files the host owns and the rules for them. A directory the node serves from must be its
 * own and closed to others' writes: whoever can write there could replace the socket or a
 * session's file and speak for the node.
 */
final class SocketFiles {

    /** Refusal to serve, with a message for the operator. */
    static class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }

        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Refused because another node accepts connections on the socket. */
    static final class Taken extends Refused {
        private static final long serialVersionUID = 1L;

        Taken(String message) {
            super(message);
        }
    }

    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;
    private static final Pattern SESSION_FILE = Pattern.compile("[0-9]+-[0-9]+");

    private SocketFiles() {
    }

    static Set<PosixFilePermission> dirMode(GroupPrincipal group) {
        return PosixFilePermissions.fromString(group == null ? "rwx------" : "rwxr-x---");
    }

    static Set<PosixFilePermission> fileMode(GroupPrincipal group) {
        return PosixFilePermissions.fromString(group == null ? "rw-------" : "rw-rw----");
    }

    static GroupPrincipal lookupGroup(Path anywhere, String name) throws Refused {
        if (name == null) {
            return null;
        }
        try {
            return anywhere.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(name);
        } catch (UserPrincipalNotFoundException e) {
            throw new Refused("socketGroup '" + name + "' is not a group of this host");
        } catch (IOException e) {
            throw new Refused("socketGroup '" + name + "' could not be looked up: " + e.getMessage(), e);
        }
    }

    /**
     * Creates {@code dir} if it is missing; else checks that it is a directory of the node's user
     * that nobody else may write to. Then gives it the mode (and group) the settings ask for.
     */
    static void prepareDirectory(Path dir, GroupPrincipal group, int euid) throws Refused {
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(dirMode(group)));
        } catch (FileAlreadyExistsException exists) {
            // checked below, whoever made it
        } catch (NoSuchFileException e) {
            throw new Refused("cannot create the socket directory " + dir + ": its parent " + dir.getParent() + " does not exist");
        } catch (IOException e) {
            throw new Refused("cannot create the socket directory " + dir + ": " + e, e);
        }
        int uid;
        int mode;
        try {
            if (Files.isSymbolicLink(dir)) {
                throw new Refused("refusing to serve from " + dir + ": it is a symbolic link (to " + Files.readSymbolicLink(dir)
                        + "); use a real directory");
            }
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new Refused("refusing to serve from " + dir + ": it exists and is not a directory");
            }
            uid = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            mode = (Integer) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (Refused r) {
            throw r;
        } catch (IOException | RuntimeException e) {
            throw new Refused("cannot inspect the socket directory " + dir + ": " + e, e);
        }
        if (uid != euid) {
            throw new Refused("refusing to serve from " + dir + ": it is owned by uid " + Integer.toUnsignedString(uid)
                    + ownerName(dir) + " (mode " + octal(mode) + "), not by the node's user (uid " + Integer.toUnsignedString(euid)
                    + "); a directory someone else owns is never used: remove it or configure another socketPath");
        }
        if ((mode & 0022) != 0) {
            throw new Refused("refusing to serve from " + dir + ": owner uid " + Integer.toUnsignedString(uid) + ownerName(dir)
                    + ", mode " + octal(mode) + " lets group or others write there; make it " + (group == null ? "0700" : "0750")
                    + " (chmod go-w) or remove it");
        }
        try {
            Files.setPosixFilePermissions(dir, dirMode(group));
            if (group != null) {
                Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setGroup(group);
            }
        } catch (FileSystemException e) {
            throw new Refused("cannot set mode " + (group == null ? "0700" : "0750 and group " + group.getName()) + " on " + dir
                    + ": " + e.getMessage() + (group == null ? "" : " (is the node's user a member of " + group.getName() + "?)"), e);
        } catch (IOException e) {
            throw new Refused("cannot set the mode of " + dir + ": " + e, e);
        }
    }

    /** Gives a file the host made its mode and group (after creation: the umask may have cut the group bits). */
    static void restrict(Path file, GroupPrincipal group) throws IOException {
        Files.setPosixFilePermissions(file, fileMode(group));
        if (group != null) {
            Files.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setGroup(group);
        }
    }

    /**
     * Makes way for the socket: a socket file nobody answers on is left over from a node that
     * died, and is removed; one that answers belongs to a running node and is refused.
     */
    static void clearStaleSocket(Path socket) throws Refused {
        if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        int mode;
        try {
            mode = (Integer) Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            throw new Refused("cannot inspect " + socket + ": " + e, e);
        }
        if ((mode & S_IFMT) != S_IFSOCK) {
            throw new Refused("refusing to serve on " + socket + ": it exists and is not a socket (mode " + octal(mode)
                    + "); remove it or configure another socketPath");
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            // non-blocking: a live node whose backlog is full must not hang this start
            probe.configureBlocking(false);
            probe.connect(UnixDomainSocketAddress.of(socket));
            throw new Taken("another node serves on " + socket + " (it accepts connections); stop it or configure another socketPath");
        } catch (ConnectException refused) {
            // nobody listens: a leftover
        } catch (Refused r) {
            throw r;
        } catch (IOException e) {
            throw new Refused("cannot tell whether another node serves on " + socket + ": " + e, e);
        }
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            throw new Refused("cannot remove the stale socket " + socket + ": " + e, e);
        }
    }

    /** Removes session files a node that died left behind (this node holds the socket, so they are nobody's). */
    static int removeLeftovers(Path shmDir) throws IOException {
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(shmDir)) {
            for (Path p : ds) {
                if (SESSION_FILE.matcher(p.getFileName().toString()).matches() && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    Files.deleteIfExists(p);
                    n++;
                }
            }
        }
        return n;
    }

    static String octal(int mode) {
        return String.format("%04o", mode & 07777);
    }

    private static String ownerName(Path p) {
        try {
            return " (" + Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName() + ")";
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
