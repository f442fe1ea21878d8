package dev.xq.host;

import dev.xq.api.Hint;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueSpec;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One connected process: its thread reads the process's lines and answers them
 * (docs/processes.md, "Wire protocol"). Only this thread closes the socket, so that a send from
 * a deciding thread never reaches a descriptor number the kernel has handed out again; other
 * threads only shut it down, which ends the thread's read.
 *
 * <p>Its job: the connection's life and its requests (SPACE, HELLO, MAPPED, STREAM, WAKE, CLOSE,
 * LV3, NARROW), which read and change the per-connection state under the single-thread rule.
 * Apart: the line and field rules ({@link WireLines}), how the process shares its device
 * ({@link ProcessSpace}), what it offers to preempt inside itself ({@link InProcessPreemption}).
 */
final class Session {

    /** Longest line, its {@code \n} included. */
    static final int MAX_LINE = 512;
    static final int FLOOD_LINES = 10_000;
    /**
     * WAKE lines have a limit of their own: a process that synchronises after every tiny kernel
     * goes ready and idle thousands of times a second, honestly; the scheduler folds such a storm
     * into few decisions. Only a rate no launching process reaches is refused.
     */
    static final int FLOOD_WAKES = 200_000;
    static final long FLOOD_WINDOW_NANOS = 1_000_000_000L;

    private static final int CMDLINE_MAX = 256;

    /** One registered stream. */
    /** @param latency whether its priority is at the node's latency-critical class or above (the arrival watch looks at it) */
    record Stream(int slot, String key, String name, String device, long handle, SlotControl control, ExternalQueue queue,
                  boolean latency) {
    }

    /** One stream as the operator sees it; {@code gate} is the slot's gate word (1 held, 0 open, -1 unmapped). */
    record StreamInfo(int slot, long handle, String name, String device, String key, int gate, String limits) {
    }

    /**
     * A snapshot for the operator; {@code runtime} is {@code cuda} or {@code hip}, {@code lv3} what
     * became of the process's interrupts ({@code -}: not offered, {@code off}: the node does not ask).
     */
    record Info(long pid, long seq, String name, int streams, Instant since, String cmdline, String state, long gatesSent,
                long gatesDropped, List<StreamInfo> streamList, String runtime, String lv3, String space, long letGo) {
    }

    private final HostServer server;
    private final int fd;
    private final Libc.Cred peer;
    /** The process that connected, held by its pidfd: the session lives only as long as it does */
    private final PeerProcess process;
    private final long seq;
    private final Instant connected = Instant.now();
    private volatile Thread thread;

    // written by the session thread, read by the shell
    private volatile String name;
    private volatile Instant since;
    private volatile String cmdline = "";
    private volatile SharedMemory memory;
    private volatile AtomicReferenceArray<Stream> streams = new AtomicReferenceArray<>(0);
    private final AtomicInteger streamCount = new AtomicInteger();
    /** UNSTUCK lines: held streams the process let go itself (its watchdog, docs/processes.md "Deferred launches"). */
    private final java.util.concurrent.atomic.AtomicLong letGo = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicLong gatesSent = new AtomicLong();
    private final AtomicLong gatesDropped = new AtomicLong();
    private volatile boolean hip;
    private final InProcessPreemption preemption = new InProcessPreemption();
    private final ProcessSpace space = new ProcessSpace();

    // session thread only
    private Integer processPriority;
    private boolean ending;
    private long floodWindowStart;
    private int floodLines;
    private int floodWakes;
    private ScheduledFuture<?> unlinkTask;
    private volatile ScheduledFuture<?> helloTimer;

    private final Object sendLock = new Object();
    // guarded by sendLock
    private final Arena sendArena = Arena.ofShared();
    private final MemorySegment sendBuf = sendArena.allocate(MAX_LINE);
    private boolean fdOpen = true;
    private boolean shutDown;

    Session(HostServer server, int fd, Libc.Cred peer, PeerProcess process, long seq) {
        this.server = server;
        this.fd = fd;
        this.peer = peer;
        this.process = process;
        this.seq = seq;
    }

    void start() {
        Thread t = Thread.ofPlatform().daemon().name("xq-host-" + peer.pid()).unstarted(this::run);
        thread = t;
        helloTimer = server.schedule(this::helloLate, server.settings().helloWithin().toMillis(), TimeUnit.MILLISECONDS);
        try {
            t.start();
        } catch (RuntimeException | OutOfMemoryError e) {
            ScheduledFuture<?> h = helloTimer;
            if (h != null) {
                h.cancel(false);
            }
            throw e;
        }
    }

    /** A connection that never says HELLO would hold a session (of maxSessions) for nothing. */
    private void helloLate() {
        synchronized (sendLock) {
            if (!fdOpen || shutDown) {
                return;
            }
        }
        if (name == null) {
            String reason = "no HELLO within " + server.settings().helloWithin().toMillis() + " ms";
            server.log().warn("process " + peer.pid() + " refused: " + reason + "; session closed");
            send("ERR " + reason, false);
            requestClose();
        }
    }

    Thread thread() {
        return thread;
    }

    /**
     * Run by the host's timer every {@link PeerProcess#CHECK_MILLIS}: a session whose process
     * exited ends as if its socket had closed (its queues close first), even while a child that
     * inherited the socket keeps it open; the holder is told why.
     */
    void checkProcess() {
        synchronized (sendLock) {
            // a hung-up socket: every holder closed it (a process that exits does so before its pidfd
            // says so); the session thread is about to see the end, and that is no news
            if (!fdOpen || shutDown || (Libc.pollNow(fd, (short) 0) & Libc.POLLHUP) != 0) {
                return;
            }
        }
        PeerProcess.Life life = process.life();
        if (life == PeerProcess.Life.ALIVE) {
            return;
        }
        String n = name;
        String reason = n == null ? notAlive(life, "HELLO")
                : "pid " + peer.pid() + (life == PeerProcess.Life.EXITED ? " exited" : " is another process now")
                        + "; its session ends (another process holds its socket)";
        server.log().warn(who() + (n == null ? " refused: " : ": ") + reason + "; session closed");
        send("ERR " + reason, false);
        requestClose();
    }

    private String notAlive(PeerProcess.Life life, String request) {
        return life == PeerProcess.Life.EXITED
                ? "pid " + peer.pid() + " is not alive (it exited before its " + request + ": a child speaking for its parent?)"
                : "pid " + peer.pid() + " is another process now";
    }

    long peerPid() {
        return peer.pid();
    }

    int peerUid() {
        return peer.uid();
    }

    long seq() {
        return seq;
    }

    /** Ends the session from any thread: its thread sees the end of the stream and cleans up. */
    void requestClose() {
        synchronized (sendLock) {
            if (fdOpen && !shutDown) {
                shutDown = true;
                Libc.shutdown(fd);
            }
        }
    }

    private String who() {
        String n = name;
        return "process " + peer.pid() + (n == null ? "" : " (" + n + ")");
    }

    // ------------------------------------------------------------------ reading

    private void run() {
        try (Arena rx = Arena.ofConfined()) {
            MemorySegment buf = rx.allocate(4096);
            byte[] chunk = new byte[(int) buf.byteSize()];
            byte[] line = new byte[MAX_LINE];
            int len = 0;
            while (!ending) {
                long n = Libc.recv(fd, buf);
                if (n == 0) {
                    break;
                }
                long now = System.nanoTime();
                MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, 0, chunk, 0, (int) n);
                for (int i = 0; i < n && !ending; i++) {
                    byte b = chunk[i];
                    if (b == '\n') {
                        line(line, len, now);
                        len = 0;
                    } else if (len == MAX_LINE - 1) {
                        refuse("line longer than " + MAX_LINE + " bytes");
                    } else {
                        line[len++] = b;
                    }
                }
            }
        } catch (Libc.ErrnoException e) {
            if (!shutDownRequested()) {
                server.log().info(who() + ": connection failed (" + e.getMessage() + "); session closed");
            }
        } catch (RuntimeException | Error e) {
            server.log().error(who() + ": session failed; closing it", e);
        } finally {
            end();
        }
    }

    private boolean shutDownRequested() {
        synchronized (sendLock) {
            return shutDown;
        }
    }

    private void line(byte[] bytes, int len, long now) {
        if (now - floodWindowStart > FLOOD_WINDOW_NANOS) {
            floodWindowStart = now;
            floodLines = 0;
            floodWakes = 0;
        }
        boolean wakeLine = WireLines.isWake(bytes, len);
        if (wakeLine ? ++floodWakes > FLOOD_WAKES : ++floodLines > FLOOD_LINES) {
            refuse(wakeLine ? "more than " + FLOOD_WAKES + " WAKE lines within one second"
                    : "more than " + FLOOD_LINES + " lines other than WAKE within one second");
            return;
        }
        String[] f;
        try {
            f = WireLines.fields(bytes, len);
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            return;
        }
        if (name == null && !f[0].equals("HELLO") && !f[0].equals("SPACE")) {
            refuse("the first line must be HELLO or SPACE, got '" + WireLines.shorten(f[0]) + "'");
            return;
        }
        switch (f[0]) {
            case "SPACE" -> space(f);
            case "HELLO" -> hello(f);
            case "MAPPED" -> mapped(f);
            case "STREAM" -> stream(f);
            case "WAKE" -> wake(f);
            case "CLOSE" -> close(f);
            case "LV3" -> lv3(f);
            case "NARROW" -> narrow(f);
            case "UNSTUCK" -> unstuck(f);
            case "WAITS" -> waits(f);
            default -> refuse("unknown request '" + WireLines.shorten(f[0])
                    + "'; allowed: SPACE, HELLO, MAPPED, STREAM, WAKE, CLOSE, LV3, NARROW, UNSTUCK, WAITS");
        }
    }

    // ------------------------------------------------------------------ requests

    /**
     * Checks the version, pid, name and priority fields that HELLO and SPACE share.
     *
     * @return the priority, or null for none
     * @throws IllegalArgumentException naming the field and what is allowed
     */
    private Integer identity(String[] f) {
        if (!f[1].equals("1")) {
            throw new IllegalArgumentException("protocol version '" + WireLines.shorten(f[1]) + "' is not supported; this node speaks 1");
        }
        long claimed;
        try {
            claimed = Long.parseLong(WireLines.asciiDigits(f[2]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("pid '" + WireLines.shorten(f[2]) + "' is not a number");
        }
        // a process in a container of its own pid namespace says its pid there; the session keeps
        // the pid of the node's namespace (peer.pid()) for everything else
        if (claimed != peer.pid() && claimed != PeerProcess.namespacePid(peer.pid())) {
            throw new IllegalArgumentException("pid " + claimed + " is not yours (peer pid " + peer.pid() + ")");
        }
        // SO_PEERCRED names the process that connected; a child that inherited the socket passes
        // that check with its parent's pid, so the process must also still be the one that connected
        PeerProcess.Life life = process.life();
        if (life != PeerProcess.Life.ALIVE) {
            throw new IllegalArgumentException(notAlive(life, f[0]));
        }
        if (!WireLines.NAME.matcher(f[3]).matches()) {
            throw new IllegalArgumentException("name '" + WireLines.shorten(f[3]) + "' has characters outside [A-Za-z0-9._:/+-]");
        }
        return WireLines.priority(f[4]);
    }

    /**
     * {@code SPACE 1 <pid> <name> <priority or ->}: a process about to create its CUDA context asks
     * how it shares the device (docs/processes.md, "Space and time"); the answer is the
     * connection's only line: {@code SPACE mps <pipe directory> <percent>} or
     * {@code SPACE none <reason>}.
     */
    private void space(String[] f) {
        if (name != null) {
            refuse("SPACE after HELLO; SPACE is a connection's only request");
            return;
        }
        if (f.length != 5 && f.length != 6) {
            refuse("SPACE takes 4 or 5 fields (SPACE 1 <pid> <name> <priority or -> [narrow]), got " + (f.length - 1));
            return;
        }
        if (f.length == 6 && !f[5].equals("narrow")) {
            refuse("SPACE's fifth field '" + WireLines.shorten(f[5]) + "' is not known; allowed: narrow");
            return;
        }
        Integer prio;
        try {
            prio = identity(f);
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            return;
        }
        ScheduledFuture<?> h = helloTimer;
        if (h != null) {
            h.cancel(false);
        }
        SpacePlan plan = server.space();
        reply(plan.answer(prio, f.length == 6));
        ending = true; // one question, one answer: the session ends here
    }

    private void hello(String[] f) {
        if (name != null) {
            refuse("a second HELLO");
            return;
        }
        if (f.length != 5 && f.length != 6) {
            refuse("HELLO takes 4 or 5 fields (HELLO 1 <pid> <name> <priority or -> [<capability>,...]), got " + (f.length - 1));
            return;
        }
        Integer prio;
        try {
            prio = identity(f);
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            return;
        }
        List<String> caps;
        try {
            caps = f.length == 6 ? WireLines.capabilities(f[5]) : List.of();
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            return;
        }
        SharedMemory m;
        try {
            m = server.createMemory(peer.pid() + "-" + seq);
        } catch (IOException | RuntimeException e) {
            server.log().error("process " + peer.pid() + " (" + f[3] + "): cannot create its shared memory", e);
            refuse("node cannot create the shared memory: " + e.getMessage());
            return;
        }
        memory = m;
        streams = new AtomicReferenceArray<>(m.slots());
        processPriority = prio;
        cmdline = cmdline(peer.pid());
        since = Instant.now();
        hip = caps.contains("hip");
        preemption.hello(caps, server.settings().interruptProcesses());
        space.hello(server.space(), prio, caps);
        boolean interrupts = preemption.interrupts();
        name = f[3];
        // the words after the slot size: what this node takes (a process sends only what is named).
        // WAITS lines only from a process below the latency-critical priorities: only the measured
        // cut of best-effort processes reads them, and a latency-critical one's thread is spared the
        // line (at most one every 20 ms after a synchronize)
        boolean waits = prio == null || prio < server.space().latencyPriority();
        if (!reply("OK " + m.path() + " " + m.slots() + " " + SharedMemory.SLOT_SIZE + (interrupts ? " lv3" : "") + " lag"
                + (waits ? " waits" : ""))) {
            return;
        }
        ScheduledFuture<?> h = helloTimer;
        if (h != null) {
            h.cancel(false);
        }
        unlinkTask = server.schedule(m::unlink, server.settings().unlinkAfter().toMillis(), TimeUnit.MILLISECONDS);
        server.log().info(who() + " registered (uid " + Integer.toUnsignedString(peer.uid()) + ", priority "
                + (prio == null ? "-" : prio) + ", " + (hip ? "HIP" : "CUDA") + (interrupts ? ", Lv3" : "")
                + space.registered() + "): "
                + cmdline);
    }

    private void mapped(String[] f) {
        if (f.length != 1) {
            refuse("MAPPED takes no fields");
            return;
        }
        memory.unlink();
    }

    private void stream(String[] f) {
        if (f.length != 8 && f.length != 9) {
            refuse("STREAM takes 7 or 8 fields (STREAM <slot> <key> <device> <prio> <least> <greatest> <label> [<pci>]), got "
                    + (f.length - 1));
            return;
        }
        int slot = slot(f[1]);
        if (slot < 0) {
            return;
        }
        if (streams.get(slot) != null) {
            refuse("slot " + slot + " is already in use");
            return;
        }
        if (!WireLines.KEY.matcher(f[2]).matches()) {
            refuse("stream key '" + WireLines.shorten(f[2]) + "' is not a hexadecimal handle");
            return;
        }
        int[] v = new int[4];
        String[] what = {"device", "prio", "least", "greatest"};
        for (int i = 0; i < 4; i++) {
            try {
                v[i] = Integer.parseInt(WireLines.asciiDigits(f[3 + i]));
            } catch (NumberFormatException e) {
                refuse(what[i] + " '" + WireLines.shorten(f[3 + i]) + "' is not a whole number");
                return;
            }
        }
        if (v[0] < 0) {
            refuse("device " + v[0] + " is negative; allowed: a " + (hip ? "HIP" : "CUDA") + " ordinal in [0, "
                    + HostServer.MAX_ORDINAL + "]");
            return;
        }
        if (!WireLines.NAME.matcher(f[7]).matches()) {
            refuse("label '" + WireLines.shorten(f[7]) + "' has characters outside [A-Za-z0-9._:/+-]");
            return;
        }
        String pci = null;
        if (f.length == 9) {
            pci = PciDevices.normalise(f[8]).orElse(null);
            if (pci == null) {
                refuse("pci '" + WireLines.shorten(f[8]) + "' is not " + PciDevices.ALLOWED);
                return;
            }
        }
        Integer hint = priority(processPriority, v[1], v[2]);
        String qname = name + "/" + f[7];
        String device;
        try {
            device = server.deviceFor(hip, v[0], pci);
        } catch (IllegalArgumentException e) { // a device the node does not have: no queue, no series in the metrics
            refuse(e.getMessage());
            return;
        }
        ExternalQueueSpec spec = new ExternalQueueSpec(qname, device, peer.pid() + ":" + name, peer.pid(),
                hint == null ? List.of() : List.of(new Hint.Priority(hint)), null);
        // the streams of all the user's sessions count (maxStreamsPerUser): one user cannot flood the node with queues
        String full = server.streamStarting(peer.uid());
        if (full != null) {
            refuse(full);
            return;
        }
        SlotControl control = new SlotControl(this, memory, slot, space.smShare(), space.heldInTime(),
                space.spatial() ? server.space().holdBehindMicros() : 0, space.narrowed(), space.ownContext());
        ExternalQueue q;
        try {
            q = server.queues().open(spec, control);
        } catch (IllegalArgumentException e) {
            server.streamEnded(peer.uid());
            refuse("node refused stream " + slot + ": " + e.getMessage());
            return;
        } catch (RuntimeException e) {
            server.streamEnded(peer.uid());
            server.log().error(who() + ": opening a queue for stream " + slot + " failed", e);
            refuse("node failed to open a queue for stream " + slot);
            return;
        }
        boolean latency = hint != null && hint >= server.space().latencyPriority();
        streams.set(slot, new Stream(slot, f[2], qname, device, q.handle(), control, q, latency));
        streamCount.incrementAndGet();
        // Answered before the Q goes out, under the send lock: a limit that grows from now on
        // sends its GATE, and that GATE queues behind the Q (flipped after the send, a change made
        // by a thread that had already seen the Q lost its GATE).
        synchronized (sendLock) {
            control.answered();
            reply("Q " + slot + " " + q.handle());
        }
    }

    /**
     * The queue's priority hint (docs/processes.md): the process's priority when it has one (every
     * stream of it alike: a stream's CUDA priority orders the process's own work on the device, and
     * added here it let a best-effort process's high-priority stream outrank a latency-critical
     * process, and held a process's streams behind each other); else the steps the stream's CUDA
     * priority is above the least one, when it is.
     *
     * @return the hint's value, clamped into the hint's range, or null for no hint
     */
    static Integer priority(Integer processPriority, int prio, int least) {
        if (processPriority == null && prio == least) {
            return null;
        }
        long value = processPriority != null ? processPriority : (long) least - prio;
        return (int) Math.max(Hint.MIN_PRIORITY, Math.min(Hint.MAX_PRIORITY, value));
    }

    private void wake(String[] f) {
        if (f.length != 2 && f.length != 3) {
            refuse("WAKE takes 1 or 2 fields (WAKE <slot> [<lag in us>])");
            return;
        }
        int slot = slot(f[1]);
        if (slot < 0) {
            return;
        }
        long lag = -1;
        if (f.length == 3) {
            // the device lag of the busy period that just ended (docs/processes.md, "Wire protocol")
            lag = lag(f[2]);
            if (lag < 0) {
                refuse("WAKE lag '" + WireLines.shorten(f[2]) + "' is not a whole number of microseconds in [0, " + MAX_LAG_MICROS + "]");
                return;
            }
        }
        Stream s = streams.get(slot);
        if (s != null && lag >= 0) {
            s.control().lagged(lag);
        }
        if (s != null) { // a free slot: a late wake of a stream already closed, harmless
            ArrivalWatch w = server.arrivalWatch();
            if (w != null && s.latency()) {
                w.told(this, slot);
            }
            s.queue().changed();
        }
    }

    /** The longest device lag a WAKE line may tell: 1000 s. */
    static final long MAX_LAG_MICROS = 1_000_000_000L;

    /** @return the lag field's value, -1 when it is not a whole number in [0, {@link #MAX_LAG_MICROS}] (a loop: every WAKE line may carry one) */
    static long lag(String field) {
        int n = field.length();
        if (n == 0 || n > 10) {
            return -1;
        }
        long v = 0;
        for (int i = 0; i < n; i++) {
            char c = field.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v <= MAX_LAG_MICROS ? v : -1;
    }

    /** The arrival watch's state for this process's slots (its ready stamps told the node): see {@link ArrivalWatch}. */
    private volatile java.util.concurrent.atomic.AtomicLongArray toldStamps;

    /** @return the slot's ready stamp now (0: none, or unmapped) */
    long readyStamp(int slot) {
        SharedMemory m = memory;
        return m == null ? 0 : m.readyStamp(slot);
    }

    /** @return the stamps told per slot, made on first use */
    java.util.concurrent.atomic.AtomicLongArray toldStamps() {
        java.util.concurrent.atomic.AtomicLongArray t = toldStamps;
        int n = streams.length();
        if (t == null || t.length() != n) {
            synchronized (this) {
                t = toldStamps;
                if (t == null || t.length() != n) {
                    toldStamps = t = new java.util.concurrent.atomic.AtomicLongArray(n);
                }
            }
        }
        return t;
    }

    /** @return the streams registered now, by slot (the array itself: read only) */
    AtomicReferenceArray<Stream> streamSlots() {
        return streams;
    }

    /** @return how many streams it has registered */
    int streamCount() {
        return streamCount.get();
    }

    /**
     * {@code UNSTUCK <slot> <ms>}: the process let a stream go that the node holds, because another
     * stream of it that the node lets launch had seen none of its work end for ms milliseconds (its
     * work may wait on the device for the held one's, which the node cannot see). Counted
     * (xq:processes) and logged: the first three of a session, then every hundredth.
     */
    private void unstuck(String[] f) {
        if (f.length != 3) {
            refuse("UNSTUCK takes 2 fields (UNSTUCK <slot> <ms>), got " + (f.length - 1));
            return;
        }
        int slot = slot(f[1]);
        if (slot < 0) {
            return;
        }
        long ms;
        try {
            ms = Long.parseLong(WireLines.asciiDigits(f[2]));
        } catch (NumberFormatException e) {
            refuse("UNSTUCK ms '" + WireLines.shorten(f[2]) + "' is not a whole number of milliseconds");
            return;
        }
        if (ms < 0) {
            refuse("UNSTUCK ms " + ms + " is negative; allowed: 0 or more");
            return;
        }
        long n = letGo.incrementAndGet();
        Stream s = streams.get(slot);
        String line = who() + ": stream " + (s == null ? "in slot " + slot : s.name()) + " let go by its process though held: another"
                + " stream of it, let launch, saw none of its work end for " + ms + " ms (a wait on the device for the held one's?)";
        if (n <= 3 || n % 100 == 0) {
            server.log().info(line + (n <= 3 ? "" : " (" + n + " times in this process)"));
        }
    }

    /**
     * {@code WAITS <n>}: the process has waited on the device n times so far with work of its in
     * flight (a synchronize of a stream, its context or an event), told now and then (at most
     * every 20 ms, where the count changed). A count that goes back, or is not a whole number, is
     * refused and ends the session, as every bad line does.
     */
    private void waits(String[] f) {
        if (f.length != 2) {
            refuse("WAITS takes 1 field (WAITS <n>), got " + (f.length - 1));
            return;
        }
        long n;
        try {
            n = Long.parseLong(WireLines.asciiDigits(f[1]));
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || f[1].startsWith("+")) {
            refuse("WAITS n '" + WireLines.shorten(f[1]) + "' is not a whole number in [0, " + Long.MAX_VALUE + "]");
            return;
        }
        long before = waits;
        if (n < before) {
            refuse("WAITS n " + n + " is less than the " + before + " told before; a count only grows");
            return;
        }
        waits = n;
    }

    /** The process's waits on the device as it last told them ({@code WAITS}); -1: none told. */
    private volatile long waits = -1;

    /** @return the count the process last told in a {@code WAITS} line, -1 when none */
    long hostWaits() {
        return waits;
    }

    /** {@code LV3 <slot> suspended|resumed|failed <reason>}: what became of a SUSPEND or RESUME. */
    private void lv3(String[] f) {
        if (!preemption.lv3Offered()) {
            refuse("LV3 from a process that did not offer the capability lv3 in its HELLO");
            return;
        }
        if (f.length < 3) {
            refuse("LV3 takes 2 or 3 fields (LV3 <slot> suspended|resumed|failed <reason>), got " + (f.length - 1));
            return;
        }
        int slot = slot(f[1]);
        if (slot < 0) {
            return;
        }
        switch (f[2]) {
            case "suspended", "resumed" -> {
                if (f.length != 3) {
                    refuse("LV3 " + f[2] + " takes no reason, got " + (f.length - 3) + " more field(s)");
                    return;
                }
                preemption.done(f[2].equals("suspended"));
            }
            case "failed" -> {
                if (f.length != 4 || !WireLines.NAME.matcher(f[3]).matches()) {
                    refuse("LV3 failed takes one reason of [A-Za-z0-9._:/+-] (LV3 <slot> failed <reason>)");
                    return;
                }
                preemption.failed(f[3]);
                Stream s = streams.get(slot);
                server.log().info(who() + ": stream " + (s == null ? "in slot " + slot : s.name())
                        + " was not interrupted (" + f[3] + "); it is held at Lv1");
            }
            default -> refuse("LV3 state '" + WireLines.shorten(f[2]) + "' is not known; allowed: suspended, resumed, failed");
        }
    }

    /** Whether this process is asked to stop its streams' GPU queues (Lv3). */
    boolean interrupts() {
        return preemption.interrupts();
    }

    /** Never blocks: a lost SUSPEND leaves the stream at Lv1; a lost RESUME is made good by the process (open gate). */
    void sendInterrupt(boolean held, int slot) {
        if (!preemption.interrupts()) {
            return;
        }
        preemption.asking(); // counted before the line goes, as a GATE (sendGate)
        if (!send((held ? "SUSPEND " : "RESUME ") + slot, true)) {
            preemption.notAsked();
        }
    }

    /**
     * {@code NARROW off}: the process's narrowing stopped (its driver failed to make a green
     * context or a stream in one): its queues are held in time from now on, as a process's that
     * cannot be narrowed (docs/processes.md, "Narrowing"). {@code NARROW plain}: its driver refused
     * the split for thread clusters and its green contexts are split plainly, beside which another
     * client's large eager batch was measured waiting for their kernels: said and shown, the
     * process narrowed as before (docs/processes.md, "How the device is split").
     */
    private void narrow(String[] f) {
        if (f.length != 2 || !(f[1].equals("off") || f[1].equals("plain"))) {
            refuse("NARROW takes 1 field, off or plain (NARROW off, NARROW plain), got '"
                    + WireLines.shorten(String.join(" ", Arrays.copyOfRange(f, 1, f.length))) + "'");
            return;
        }
        if (f[1].equals("plain")) {
            if (space.splitPlainly()) {
                server.log().warn(who() + ": its driver refused the split for thread clusters; its green contexts are split "
                        + "plainly, beside which another process's large batch can wait for their kernels (docs/processes.md, "
                        + "\"How the device is split\")");
            }
            return;
        }
        if (!space.narrowingStopped()) {
            return; // never narrowed: nothing to stop
        }
        server.log().warn(who() + ": narrowing stopped in the process (see its stderr); its queues are "
                + (space.heldInTime() ? "held in time from now on" : "on the whole device from now on"));
        for (int i = 0; i < streams.length(); i++) {
            Stream st = streams.get(i);
            if (st != null) {
                st.queue().narrowingStopped(); // the slot's reserve cleared first, while the control still writes it
                st.control().narrowingStopped();
            }
        }
    }

    private void close(String[] f) {
        if (f.length != 2) {
            refuse("CLOSE takes 1 field (CLOSE <slot>)");
            return;
        }
        int slot = slot(f[1]);
        if (slot < 0) {
            return;
        }
        Stream s = streams.getAndSet(slot, null);
        if (s != null) {
            closeStream(s);
        }
    }

    private void closeStream(Stream s) {
        try {
            s.queue().close();
        } catch (RuntimeException e) {
            server.log().error(who() + ": closing queue " + s.handle() + " failed", e);
        }
        s.control().retire(); // clears what a later stream in this slot must not inherit
        streamCount.decrementAndGet();
        server.streamEnded(peer.uid());
    }

    /** @return the slot, or -1 after refusing */
    private int slot(String field) {
        int slot;
        try {
            slot = Integer.parseInt(WireLines.asciiDigits(field));
        } catch (NumberFormatException e) {
            refuse("slot '" + WireLines.shorten(field) + "' is not a whole number");
            return -1;
        }
        int n = streams.length();
        if (slot < 0 || slot >= n) {
            refuse("slot " + slot + " is out of range [0, " + n + ")");
            return -1;
        }
        return slot;
    }

    private void refuse(String reason) {
        if (ending) {
            return;
        }
        ending = true;
        String n = name;
        server.log().warn("process " + peer.pid() + (n == null ? "" : " (" + n + ")") + " refused: " + reason + "; session closed");
        send("ERR " + reason, false);
    }

    // ------------------------------------------------------------------ sending

    /** A reply the process waits for; a process that does not take it is cut off. */
    private boolean reply(String line) {
        if (send(line, false)) {
            return true;
        }
        ending = true;
        return false;
    }

    /** Never blocks; a process whose buffer is full loses the line and finds out within its 100 ms wait. */
    void sendGate(int slot) {
        // counted before the line goes: a process (or a test) that read it sees it counted; a
        // count made after the send raced the reader (HostServerTest saw 0 after reading GATE)
        gatesSent.incrementAndGet();
        if (!send("GATE " + slot, true)) {
            gatesSent.decrementAndGet();
        }
    }

    private boolean send(String line, boolean droppable) {
        byte[] b = (line + "\n").getBytes(StandardCharsets.US_ASCII);
        int len = Math.min(b.length, MAX_LINE);
        if (len < b.length) {
            b[len - 1] = '\n'; // only an ERR reason can be this long; cut, not refused
        }
        String problem = null;
        synchronized (sendLock) {
            if (!fdOpen || shutDown) {
                return false;
            }
            MemorySegment.copy(b, 0, sendBuf, ValueLayout.JAVA_BYTE, 0, len);
            long n = Libc.sendNow(fd, sendBuf, len);
            if (n == len) {
                return true;
            }
            if (n == -Libc.EAGAIN && droppable) {
                gatesDropped.incrementAndGet();
                return false;
            }
            if (n == -Libc.EAGAIN || n >= 0) {
                // a cut line would garble everything after it: end the session instead
                problem = n == -Libc.EAGAIN ? "does not read what the node sends (its socket buffer is full)"
                        : "took only " + n + " of " + len + " bytes of a line";
                shutDown = true;
                Libc.shutdown(fd);
            }
            // else the process is gone (EPIPE, ECONNRESET): the session thread sees the end
        }
        if (problem != null) {
            server.log().warn(who() + " " + problem + "; session closed");
        }
        return false;
    }

    // ------------------------------------------------------------------ ending

    /** Queues first (closing one opens its gate), then the mapping, the file and the socket. */
    private void end() {
        ending = true;
        AtomicReferenceArray<Stream> all = streams;
        for (int i = 0; i < all.length(); i++) {
            Stream s = all.getAndSet(i, null);
            if (s != null) {
                closeStream(s);
            }
        }
        for (ScheduledFuture<?> t : new ScheduledFuture<?>[] {unlinkTask, helloTimer}) {
            if (t != null) {
                t.cancel(false);
            }
        }
        SharedMemory m = memory;
        if (m != null) {
            m.close();
            m.unlink();
        }
        synchronized (sendLock) {
            fdOpen = false;
            Libc.close(fd);
            sendArena.close();
        }
        process.close();
        if (name != null) {
            server.log().info(who() + " left");
        }
        server.ended(this);
    }

    // ------------------------------------------------------------------ display

    Info info() {
        List<StreamInfo> l = new ArrayList<>();
        AtomicReferenceArray<Stream> all = streams;
        for (int i = 0; i < all.length(); i++) {
            Stream s = all.get(i);
            if (s != null) {
                SharedMemory m = memory;
                l.add(new StreamInfo(s.slot(), s.handle(), s.name(), s.device(), s.key(), gate(s.slot()),
                        m == null ? "-" : m.limits(s.slot())));
            }
        }
        String n = name;
        return new Info(peer.pid(), seq, n == null ? "-" : n, streamCount.get(), since == null ? connected : since, cmdline,
                n == null ? "connecting" : "registered", gatesSent.get(), gatesDropped.get(), l, n == null ? "-" : hip ? "hip" : "cuda",
                n == null ? "-" : preemption.display(), space.display(), letGo.get());
    }

    private int gate(int slot) {
        SharedMemory m = memory;
        return m == null ? -1 : m.gate(slot);
    }

    long gatesDropped() {
        return gatesDropped.get();
    }

    /** The process's command line for display: NULs as spaces, at most 256 characters, nothing unprintable. */
    static String cmdline(long pid) {
        byte[] raw;
        try (InputStream in = Files.newInputStream(Path.of("/proc", Long.toString(pid), "cmdline"))) {
            raw = in.readNBytes(CMDLINE_MAX * 4);
        } catch (IOException | RuntimeException e) {
            return "?";
        }
        String s = new String(raw, StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(Math.min(s.length(), CMDLINE_MAX));
        for (int i = 0; i < s.length() && sb.length() < CMDLINE_MAX; i++) {
            char c = s.charAt(i);
            sb.append(c == 0 ? ' ' : Character.isISOControl(c) ? '?' : c);
        }
        return sb.toString().strip();
    }
}
