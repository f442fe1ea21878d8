package dev.xq.itest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the hostile suite's rows of issue 41 ("trust") use to reach a node as a client would: a
 * session on the process socket written by hand, raw HTTP requests, programs run as processes.
 */
final class Probes {

    private Probes() {
    }

    /** A session on a node's process socket from this JVM (its pid is this JVM's, as SO_PEERCRED says). */
    static final class Wire implements AutoCloseable {
        final SocketChannel ch;
        private final StringBuilder in = new StringBuilder();
        private boolean eof;

        Wire(Path socket) throws IOException {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.configureBlocking(false);
        }

        Wire send(String text) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (b.hasRemaining() && System.nanoTime() < deadline) {
                if (ch.write(b) == 0) {
                    sleep(1);
                }
            }
            return this;
        }

        /** @return the next line the node sent (without its newline), or null when none came within {@code millis} or it closed */
        String line(long millis) throws IOException {
            long deadline = System.nanoTime() + millis * 1_000_000L;
            ByteBuffer b = ByteBuffer.allocate(4096);
            while (true) {
                int nl = in.indexOf("\n");
                if (nl >= 0) {
                    String l = in.substring(0, nl);
                    in.delete(0, nl + 1);
                    return l;
                }
                if (eof || System.nanoTime() > deadline) {
                    return null;
                }
                int n;
                try {
                    n = ch.read(b);
                } catch (IOException reset) {
                    n = -1;
                }
                if (n < 0) {
                    eof = true;
                } else if (n == 0) {
                    sleep(2);
                } else {
                    in.append(new String(b.array(), 0, n, StandardCharsets.US_ASCII));
                    b.clear();
                }
            }
        }

        /** @return whether the node closed the session within {@code millis} (lines it sent first are dropped) */
        boolean closedWithin(long millis) throws IOException {
            long deadline = System.nanoTime() + millis * 1_000_000L;
            while (System.nanoTime() < deadline) {
                line(20);
                if (eof) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    /** An HTTP answer: its status (0: none within the time given, -1: the connection closed first) and body. */
    record Answer(int status, String body) {
    }

    /** One request on a connection of its own, {@code Connection: close}; the answer read within {@code millis}. */
    static Answer http(int port, String method, String path, String body, long millis) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), (int) millis);
            byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            String head = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n"
                    + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + b.length + "\r\n") + "\r\n";
            s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(b);
            s.getOutputStream().flush();
            return read(s, millis);
        }
    }

    /** Reads an answer to its end (the node closes: {@code Connection: close}). */
    static Answer read(Socket s, long millis) throws IOException {
        s.setSoTimeout((int) Math.max(1, millis));
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[8192];
        try {
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                got.write(buf, 0, n);
            }
        } catch (SocketTimeoutException late) {
            if (got.size() == 0) {
                return new Answer(0, "");
            }
        } catch (IOException reset) {
            if (got.size() == 0) {
                return new Answer(-1, "");
            }
        }
        String text = got.toString(StandardCharsets.UTF_8);
        if (!text.startsWith("HTTP/")) {
            return new Answer(-1, text);
        }
        String[] status = text.substring(0, Math.max(0, text.indexOf('\r'))).split(" ");
        int end = text.indexOf("\r\n\r\n");
        return new Answer(Integer.parseInt(status[1]), end < 0 ? "" : text.substring(end + 4));
    }

    /** The port of an endpoint {@code http://127.0.0.1:PORT}. */
    static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    /** What a program printed (stdout and stderr together) and its exit status; -1 when it ran past its time (it was killed). */
    record Ran(int rc, String out) {
    }

    static Ran run(List<String> cmd, long seconds) throws IOException, InterruptedException {
        Path log = Files.createTempFile("xqprobe", ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        boolean ended = p.waitFor(seconds, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        return new Ran(ended ? p.exitValue() : -1, out);
    }

    /** @return python3 on the PATH, or null */
    static String python() {
        return onPath("python3");
    }

    static String onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /** @return this JVM's effective uid (the owner of /proc/self) */
    static int euid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
