package dev.xq.host;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/** The interposer's side of the protocol, in Java, for tests: lines over the socket and the mapped file. */
final class TestClient implements AutoCloseable {

    static final long PID = ProcessHandle.current().pid();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final SocketChannel ch;
    private final Selector selector;
    private final ByteBuffer in = ByteBuffer.allocate(64 * 1024);
    private final StringBuilder pending = new StringBuilder();
    private boolean eof;
    private Arena arena;
    private MemorySegment shm;
    private Path shmPath;

    private TestClient(SocketChannel ch, Selector selector) {
        this.ch = ch;
        this.selector = selector;
    }

    static TestClient connect(Path socket) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(socket));
        ch.configureBlocking(false);
        Selector sel = Selector.open();
        ch.register(sel, SelectionKey.OP_READ);
        return new TestClient(ch, sel);
    }

    /** Sends bytes as they are; a peer that already closed is no error here (tests look at the answer). */
    void raw(byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        try {
            while (b.hasRemaining()) {
                if (ch.write(b) == 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("the node did not take " + b.remaining() + " bytes within 20 s");
                    }
                    Thread.onSpinWait();
                }
            }
        } catch (IOException e) {
            if (!isPeerGone(e)) {
                throw e;
            }
        }
    }

    private static boolean isPeerGone(IOException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("Broken pipe") || m.contains("Connection reset");
    }

    void send(String line) throws IOException {
        raw((line + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    /** @return the next line, or null at the end of the stream */
    String readLine(Duration timeout) throws IOException, TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            int nl = pending.indexOf("\n");
            if (nl >= 0) {
                String l = pending.substring(0, nl);
                pending.delete(0, nl + 1);
                return l;
            }
            if (eof) {
                return null;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new TimeoutException("no line from the node within " + timeout + "; have '" + pending + "'");
            }
            selector.select(Math.max(1, left / 1_000_000));
            selector.selectedKeys().clear();
            in.clear();
            int n;
            try {
                n = ch.read(in);
            } catch (IOException e) {
                if (isPeerGone(e)) {
                    eof = true;
                    continue;
                }
                throw e;
            }
            if (n < 0) {
                eof = true;
            } else if (n > 0) {
                pending.append(new String(in.array(), 0, n, StandardCharsets.US_ASCII));
            }
        }
    }

    String readLine() throws IOException, TimeoutException {
        return readLine(Duration.ofSeconds(10));
    }

    /** Reads lines until the stream ends; fails if it does not within the timeout. */
    void awaitEof(Duration timeout) throws IOException, TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (readLine(Duration.ofNanos(Math.max(1, deadline - System.nanoTime()))) != null) {
            // skip
        }
    }

    /** Sends HELLO and checks the OK. @return the fields of the OK line */
    String[] hello(String name, String priority) throws IOException, TimeoutException {
        return hello(name, priority, null);
    }

    /** HELLO with capabilities ({@code hip,lv3}; null: none, the CUDA interposer's line). */
    String[] hello(String name, String priority, String capabilities) throws IOException, TimeoutException {
        send("HELLO 1 " + PID + " " + name + " " + priority + (capabilities == null ? "" : " " + capabilities));
        String ok = readLine();
        if (ok == null || !ok.startsWith("OK ")) {
            throw new IOException("expected OK, got " + ok);
        }
        String[] f = ok.split(" ");
        shmPath = Path.of(f[1]);
        return f;
    }

    Path shmPath() {
        return shmPath;
    }

    /** Maps the session's file as the interposer would. */
    void map() throws IOException {
        arena = Arena.ofShared();
        try (FileChannel fc = FileChannel.open(shmPath, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            shm = fc.map(FileChannel.MapMode.READ_WRITE, 0, fc.size(), arena);
        }
    }

    MemorySegment shm() {
        return shm;
    }

    static long slotBase(int slot) {
        return SharedMemory.HEADER_SIZE + (long) slot * SharedMemory.SLOT_SIZE;
    }

    int readInt(long offset) {
        return (int) INT.getAcquire(shm, offset);
    }

    long readLong(long offset) {
        return (long) LONG.getAcquire(shm, offset);
    }

    int slotInt(int slot, long field) {
        return readInt(slotBase(slot) + field);
    }

    long slotLong(int slot, long field) {
        return readLong(slotBase(slot) + field);
    }

    void writeSlotInt(int slot, long field, int v) {
        INT.setRelease(shm, slotBase(slot) + field, v);
    }

    void writeSlotLong(int slot, long field, long v) {
        LONG.setRelease(shm, slotBase(slot) + field, v);
    }

    /** Sends STREAM and checks the Q. @return the queue handle */
    long stream(int slot, int device, int prio, int least, int greatest, String label) throws IOException, TimeoutException {
        send("STREAM " + slot + " 7f00deadbeef " + device + " " + prio + " " + least + " " + greatest + " " + label);
        String q = readLine();
        while (q != null && q.startsWith("GATE ")) { // a wake-up for an earlier stream (one closing opens its gate) may come first
            q = readLine();
        }
        String want = "Q " + slot + " ";
        if (q == null || !q.startsWith(want)) {
            throw new IOException("expected '" + want + "<handle>', got " + q);
        }
        return Long.parseLong(q.substring(want.length()));
    }

    @Override
    public void close() throws IOException {
        selector.close();
        ch.close();
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }
}
