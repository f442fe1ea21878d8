package dev.xq.host;

import dev.xq.api.QueueConfig;
import dev.xq.external.spi.ExternalQueues;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The node's socket for local processes: accepts connections, checks who connected and runs
 * one {@link Session} per process. Free of OSGi, so tests drive it with a plain runtime core.
 * A server that cannot serve (insecure directory, another node on the socket, bad settings)
 * stays stopped and says why in {@link #status()}.
 */
final class HostServer {

    private static final int BACKLOG = 128;
    private static final long JOIN_MILLIS = 5000;

    private final HostSettings settings;
    private final ExternalQueues queues;
    private final Supplier<QueueConfig> defaults;
    private final RuntimeLog log;
    private final Supplier<List<DeviceDescriptor>> devices;
    private final Set<String> unmatchedPci = ConcurrentHashMap.newKeySet();
    /** How many unmatched PCI bus ids are said (one line each) before the node stops saying more. */
    static final int MAX_UNMATCHED_PCI = 64;
    private final int euid;
    private final long startNanos = System.nanoTime();
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger liveSessions = new AtomicInteger();
    /** Sessions and registered streams per uid, for maxSessionsPerUser and maxStreamsPerUser (absent: none) */
    private final ConcurrentHashMap<Integer, Integer> userSessions = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, Integer> userStreams = new ConcurrentHashMap<>();
    private final AtomicInteger liveMappings = new AtomicInteger();
    private final AtomicLong sessionSeq = new AtomicLong();
    private final Heartbeat heartbeat = new Heartbeat();

    private volatile String status = "not serving: not started";
    private volatile boolean serving;
    private volatile boolean stopping;
    // guarded by this (start/stop)
    private int listenFd = -1;
    private Thread acceptThread;
    private volatile ScheduledThreadPoolExecutor timer;
    private volatile GroupPrincipal group;
    private volatile Path shmDir;
    /** How processes share the device in space; set before {@link #start()} ({@link SpacePlan#OFF} unless asked) */
    private volatile SpacePlan space = SpacePlan.OFF;
    /** What {@link #start()} needs to start the MPS daemon, or null for none */
    private volatile SpaceSettings spaceSettings;

    /** The MPS side of the host's configuration (docs/processes.md, "Space and time"). */
    record SpaceSettings(MpsDaemon.Mode mode, String control, Path device, int latencyPriority, int bestEffortShare,
                         boolean holdBestEffort, long holdBehindMicros, boolean narrow, boolean latencyOwnContext,
                         boolean narrowLatency, boolean lowBestEffort) {

        SpaceSettings(MpsDaemon.Mode mode, String control, Path device, int latencyPriority, int bestEffortShare, boolean holdBestEffort,
                      long holdBehindMicros, boolean narrow, boolean latencyOwnContext, boolean narrowLatency) {
            this(mode, control, device, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, narrow, latencyOwnContext,
                    narrowLatency, SpacePlan.DEFAULT_LOW_BEST_EFFORT);
        }

        SpaceSettings(MpsDaemon.Mode mode, String control, Path device, int latencyPriority, int bestEffortShare, boolean holdBestEffort,
                      long holdBehindMicros, boolean narrow, boolean latencyOwnContext) {
            this(mode, control, device, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, narrow, latencyOwnContext,
                    SpacePlan.DEFAULT_NARROW_LATENCY);
        }

        SpaceSettings(MpsDaemon.Mode mode, String control, Path device, int latencyPriority, int bestEffortShare, boolean holdBestEffort,
                      long holdBehindMicros) {
            this(mode, control, device, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, SpacePlan.DEFAULT_NARROW);
        }

        SpaceSettings(MpsDaemon.Mode mode, String control, Path device, int latencyPriority, int bestEffortShare, boolean holdBestEffort,
                      long holdBehindMicros, boolean narrow) {
            this(mode, control, device, latencyPriority, bestEffortShare, holdBestEffort, holdBehindMicros, narrow,
                    SpacePlan.DEFAULT_LATENCY_OWN_CONTEXT);
        }
    }

    HostServer(HostSettings settings, ExternalQueues queues, Supplier<QueueConfig> defaults, RuntimeLog log) {
        this(settings, queues, defaults, log, List::of);
    }

    /**
     * @param devices the node's devices as their drivers describe them, asked at each stream that
     *     names a PCI bus id
     */
    HostServer(HostSettings settings, ExternalQueues queues, Supplier<QueueConfig> defaults, RuntimeLog log,
               Supplier<List<DeviceDescriptor>> devices) {
        this.settings = settings;
        this.queues = queues;
        this.defaults = defaults;
        this.log = log;
        this.devices = devices;
        this.euid = Libc.geteuid();
    }

    /**
     * The highest device ordinal a {@code STREAM} may name on a node that has no device of the
     * stream's runtime (the simulated node, CI: processes on the fake libcuda register on
     * {@code cuda0}); no node has more GPUs than this, and each id names a device series that
     * stays in the metrics while its queues are open.
     */
    static final int MAX_ORDINAL = 255;

    /**
     * The node's device for a stream: the one whose PCI bus id is {@code pci}, else (no PCI id
     * sent, or none of the node's devices has it, said once per id in the log) the ordinal's
     * {@code cuda<N>} / {@code hip<N>}. Where the node has devices of the stream's runtime (a
     * driver lists {@code cuda<N>} / {@code hip<N>}), that ordinal must be one of them; where it has
     * none, any ordinal up to {@link #MAX_ORDINAL}.
     *
     * @param pci a normalised PCI bus id, or null
     * @throws IllegalArgumentException naming the ordinal and what is allowed, for a device the node does not have
     */
    String deviceFor(boolean hip, int ordinal, String pci) {
        String kind = hip ? "HIP" : "CUDA";
        String prefix = hip ? "hip" : "cuda"; // the ids the node's own adapters use
        if (ordinal < 0 || ordinal > MAX_ORDINAL) {
            throw new IllegalArgumentException("device " + ordinal + " is out of range; allowed: a " + kind
                    + " ordinal in [0, " + MAX_ORDINAL + "]");
        }
        String byOrdinal = prefix + ordinal;
        List<DeviceDescriptor> known;
        try {
            known = devices.get();
        } catch (RuntimeException e) {
            log.error("listing the node's devices failed; stream on " + (pci == null ? "" : pci + ", ") + "device "
                    + ordinal + " goes on " + byOrdinal, e);
            return byOrdinal;
        }
        if (pci != null) {
            Optional<String> found = PciDevices.find(pci, hip, known);
            if (found.isPresent()) {
                return found.get();
            }
        }
        List<String> own = known.stream().map(DeviceDescriptor::id)
                .filter(id -> id.startsWith(prefix) && id.length() > prefix.length()
                        && id.substring(prefix.length()).chars().allMatch(c -> c >= '0' && c <= '9'))
                .toList();
        if (!own.isEmpty() && !own.contains(byOrdinal)) {
            throw new IllegalArgumentException("device " + ordinal + " (" + byOrdinal + ") is not a " + kind + " device of this node"
                    + (pci == null ? "" : ", nor is PCI bus id " + pci) + "; allowed: " + String.join(", ", own)
                    + (pci == null ? "" : " (ordinal) or their PCI bus ids (property " + PciDevices.property(hip) + ")"));
        }
        // said once per id; a bounded set: a local process sending ever new ids gets no more lines after that
        if (pci != null && unmatchedPci.size() < MAX_UNMATCHED_PCI && unmatchedPci.add((hip ? "hip " : "cuda ") + pci)) {
            log.warn("no " + kind + " device of the node has PCI bus id " + pci + " (property "
                    + PciDevices.property(hip) + "); its streams go on the ordinal they report (" + byOrdinal
                    + " for the first)");
        }
        return byOrdinal;
    }

    HostSettings settings() {
        return settings;
    }

    /** Asks {@link #start()} to run the node's MPS daemon as these settings say. */
    void useSpace(SpaceSettings s) {
        spaceSettings = s;
    }

    /** The arrival watch's period, microseconds (0: none, the default); set before {@link #start()} */
    private volatile long arrivalWatchMicros;
    /** The arrival watch's quiet period, microseconds (0: never quiet) */
    private volatile long arrivalWatchQuietMicros = ArrivalWatch.DEFAULT_QUIET_MICROS;
    private volatile ArrivalWatch arrivalWatch;

    /**
     * Asks for the arrival watch ({@link ArrivalWatch}) at {@code micros} (0: none).
     *
     * @throws IllegalArgumentException naming the value and what is allowed; nothing changes then
     */
    void useArrivalWatch(long micros) {
        useArrivalWatch(micros, ArrivalWatch.DEFAULT_QUIET_MICROS);
    }

    /**
     * Asks for the arrival watch at {@code micros} (0: none), looking every {@code quietMicros}
     * while every watched stream is busy with an arrival told (0: never quiet).
     *
     * @throws IllegalArgumentException naming the value and what is allowed; nothing changes then
     */
    void useArrivalWatch(long micros, long quietMicros) {
        ArrivalWatch.check(micros);
        ArrivalWatch.checkQuiet(quietMicros);
        arrivalWatchMicros = micros;
        arrivalWatchQuietMicros = quietMicros;
    }

    /** @return the arrival watch while the host serves with one, else null */
    ArrivalWatch arrivalWatch() {
        return arrivalWatch;
    }

    SpacePlan space() {
        return space;
    }

    ExternalQueues queues() {
        return queues;
    }

    RuntimeLog log() {
        return log;
    }

    /** @return one line: where it serves, or why it does not */
    String status() {
        return status;
    }

    boolean serving() {
        return serving;
    }

    /** Sessions whose thread has not finished cleaning up (leak checks). */
    int liveSessions() {
        return liveSessions.get();
    }

    /** Shared-memory mappings not yet unmapped (leak checks). */
    int liveMappings() {
        return liveMappings.get();
    }

    Path shmDir() {
        return shmDir;
    }

    private volatile boolean quietIfTaken;

    /**
     * Whether another node serving on the socket is said at info, not as an error (a one-command run
     * beside a running node: {@code ./xq demo} or {@code ./xq bench} printed an ERROR line about
     * the other node's socket). Any other refusal stays an error.
     */
    void quietIfTaken(boolean on) {
        quietIfTaken = on;
    }

    /** @return whether it serves now; when not, {@link #status()} says why (and it was logged) */
    synchronized boolean start() {
        if (serving || stopping) {
            return serving;
        }
        if (!settings.enabled()) {
            status = "not serving: disabled by configuration (" + HostConfig.PID + " enabled=false)";
            log.info("process host " + status);
            return false;
        }
        Path sock = settings.socketPath();
        Path dir = sock.getParent();
        int fd = -1;
        boolean bound = false;
        try {
            GroupPrincipal g = SocketFiles.lookupGroup(dir, settings.group());
            SocketFiles.prepareDirectory(dir, g, euid);
            SocketFiles.clearStaleSocket(sock);
            fd = Libc.socket();
            Libc.bind(fd, sock.toString());
            bound = true;
            // the directory keeps others out until the mode is right
            SocketFiles.restrict(sock, g);
            Libc.listen(fd, BACKLOG);
            Path shm = dir.resolve(sock.getFileName() + ".shm");
            SocketFiles.prepareDirectory(shm, g, euid);
            int left = SocketFiles.removeLeftovers(shm);
            if (left > 0) {
                log.info("process host: removed " + left + " shared-memory files a previous node left in " + shm);
            }
            group = g;
            shmDir = shm;
            SpaceSettings sp = spaceSettings;
            if (sp != null) {
                MpsDaemon d = MpsDaemon.start(sp.mode(), sp.control(), dir, sp.device(), g, euid, log);
                space = new SpacePlan(d, sp.latencyPriority(), sp.bestEffortShare(), sp.holdBestEffort(), sp.holdBehindMicros(),
                        sp.narrow(), sp.latencyOwnContext(), sp.narrowLatency(), sp.lowBestEffort());
            }
        } catch (IOException | IllegalArgumentException | IllegalStateException e) {
            if (fd >= 0) {
                Libc.close(fd);
            }
            if (bound) {
                deleteQuietly(sock);
            }
            status = "not serving: " + e.getMessage();
            if (quietIfTaken && e instanceof SocketFiles.Taken) {
                // a one-command run (./xq demo, ./xq bench) beside a running node: that node serves
                // processes; this one needs no socket unless its command runs some, and then says so
                log.info("process host is " + status + " (this one-command run leaves processes to that node)");
            } else {
                log.error("process host is " + status, e instanceof SocketFiles.Refused ? null : e);
            }
            return false;
        }
        listenFd = fd;
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1,
                r -> Thread.ofPlatform().daemon().name("xq-host-timer").unstarted(r));
        t.setRemoveOnCancelPolicy(true);
        // every live session's shared memory: a process held by a node that stopped lets go (docs/processes.md, "Faults")
        t.scheduleWithFixedDelay(heartbeat, Heartbeat.PERIOD_MILLIS, Heartbeat.PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        // a session lives as long as its process, not its socket: a child may hold that (docs/processes.md, "Faults")
        t.scheduleWithFixedDelay(this::checkProcesses, PeerProcess.CHECK_MILLIS, PeerProcess.CHECK_MILLIS, TimeUnit.MILLISECONDS);
        timer = t;
        int lfd = fd;
        long watch = arrivalWatchMicros;
        if (watch > 0) {
            ArrivalWatch w = new ArrivalWatch(sessions, watch, arrivalWatchQuietMicros);
            arrivalWatch = w;
            w.start();
        }
        acceptThread = Thread.ofPlatform().daemon().name("xq-host-accept").start(() -> acceptLoop(lfd));
        serving = true;
        status = "serving on " + sock + " (slots " + settings.slots() + " per process, at most " + settings.maxSessions()
                + " sessions, " + settings.maxSessionsPerUser() + " sessions and " + settings.maxStreamsPerUser() + " streams per user, "
                + (settings.group() == null ? "node's user only" : "group " + settings.group()) + ")";
        log.info("process host " + status);
        return true;
    }

    /** Stops accepting, ends every session (their queues close first) and removes the socket and the files. */
    synchronized void stop() {
        if (stopping) {
            return;
        }
        stopping = true;
        Thread a = acceptThread;
        if (listenFd >= 0) {
            Libc.shutdown(listenFd); // wakes accept4 with EINVAL
        }
        join(a, "accept");
        ArrivalWatch w = arrivalWatch;
        if (w != null) {
            w.stop();
            log.info("process host: " + w.describe());
        }
        if (listenFd >= 0) {
            Libc.close(listenFd);
            listenFd = -1;
            deleteQuietly(settings.socketPath());
        }
        List<Session> all = List.copyOf(sessions);
        for (Session s : all) {
            s.requestClose();
        }
        for (Session s : all) {
            join(s.thread(), "session of process " + s.peerPid());
        }
        ScheduledThreadPoolExecutor t = timer;
        if (t != null) {
            t.shutdownNow();
            try {
                t.awaitTermination(JOIN_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Path shm = shmDir;
        if (shm != null) {
            try {
                SocketFiles.removeLeftovers(shm);
                Files.deleteIfExists(shm);
            } catch (IOException e) {
                log.warn("process host: could not remove " + shm + ": " + e);
            }
        }
        // after the sessions: their processes keep running, and the daemon's quit waits for them
        space.daemon().stop();
        if (serving) {
            log.info("process host stopped (" + settings.socketPath() + ")");
        }
        serving = false;
        status = "not serving: stopped";
    }

    private void join(Thread t, String what) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (t.isAlive()) {
            log.warn("process host: the " + what + " thread did not end within " + JOIN_MILLIS + " ms");
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // nothing better to do at this point; the next start removes a stale socket anyway
        }
    }

    private void acceptLoop(int fd) {
        long lastFdWarning = 0;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errBuf = a.allocate(Session.MAX_LINE);
            while (!stopping) {
                int c;
                try {
                    c = Libc.accept(fd);
                } catch (Libc.ErrnoException e) {
                    if (stopping) {
                        break;
                    }
                    if (e.errno == Libc.EINTR || e.errno == Libc.ECONNABORTED) {
                        continue;
                    }
                    if (e.errno == Libc.EMFILE || e.errno == Libc.ENFILE) {
                        long now = System.nanoTime();
                        if (now - lastFdWarning > 10_000_000_000L) {
                            lastFdWarning = now;
                            log.warn("process host: " + e.getMessage() + "; new processes wait until descriptors are free");
                        }
                        try {
                            Thread.sleep(100); // back off instead of spinning on a full descriptor table
                        } catch (InterruptedException ie) {
                            return;
                        }
                        continue;
                    }
                    serving = false;
                    status = "not serving: " + e.getMessage();
                    log.error("process host stopped accepting: " + e.getMessage(), null);
                    return;
                }
                if (stopping) {
                    Libc.close(c);
                    break;
                }
                accepted(c, errBuf);
            }
        } catch (RuntimeException | Error e) {
            serving = false;
            status = "not serving: accept loop failed: " + e;
            log.error("process host: accept loop failed", e);
        }
    }

    private void accepted(int c, MemorySegment errBuf) {
        Libc.Cred cred;
        try {
            cred = Libc.peerCred(c);
        } catch (Libc.ErrnoException e) {
            log.warn("process host: a connection without credentials was dropped: " + e.getMessage());
            Libc.close(c);
            return;
        }
        if (liveSessions.get() >= settings.maxSessions()) {
            refuseConnection(c, errBuf, cred, "node serves " + settings.maxSessions() + " processes already (maxSessions)");
            return;
        }
        // one user cannot take every session (reconnecting before its HELLO is late): counted from accept to end
        int had = take(userSessions, cred.uid(), settings.maxSessionsPerUser());
        if (had >= 0) {
            refuseConnection(c, errBuf, cred, "user " + Integer.toUnsignedString(cred.uid()) + " has " + had
                    + " sessions already (maxSessionsPerUser " + settings.maxSessionsPerUser() + ")");
            return;
        }
        // the process itself, not only its pid: a child that inherited the socket, or a pid handed out again, is not it
        PeerProcess process = PeerProcess.of(c, cred.pid());
        Session s = new Session(this, c, cred, process, sessionSeq.incrementAndGet());
        liveSessions.incrementAndGet();
        sessions.add(s);
        try {
            s.start();
        } catch (RuntimeException | OutOfMemoryError e) {
            sessions.remove(s);
            liveSessions.decrementAndGet();
            give(userSessions, cred.uid());
            Libc.close(c);
            process.close();
            log.error("process host: cannot start a session thread for process " + cred.pid(), e);
        }
    }

    private void refuseConnection(int c, MemorySegment errBuf, Libc.Cred cred, String reason) {
        byte[] b = ("ERR " + reason + "\n").getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(b, 0, errBuf, ValueLayout.JAVA_BYTE, 0, b.length);
        Libc.sendNow(c, errBuf, b.length);
        Libc.close(c);
        log.warn("process " + cred.pid() + " refused: " + reason);
    }

    /**
     * Counts one more for {@code uid} unless it has {@code max} already.
     *
     * @return -1 when counted, else how many it has
     */
    private static int take(ConcurrentHashMap<Integer, Integer> counts, int uid, int max) {
        int[] had = {-1};
        counts.compute(uid, (k, v) -> {
            int n = v == null ? 0 : v;
            if (n >= max) {
                had[0] = n;
                return v;
            }
            return n + 1;
        });
        return had[0];
    }

    private static void give(ConcurrentHashMap<Integer, Integer> counts, int uid) {
        counts.computeIfPresent(uid, (k, v) -> v <= 1 ? null : v - 1);
    }

    // ------------------------------------------------------------------ for sessions

    /**
     * A stream of {@code uid} is about to be registered: counted unless the user has
     * maxStreamsPerUser streams already.
     *
     * @return null when counted (give it back with {@link #streamEnded(int)}), else the reason to refuse it
     */
    String streamStarting(int uid) {
        int had = take(userStreams, uid, settings.maxStreamsPerUser());
        return had < 0 ? null : "user " + Integer.toUnsignedString(uid) + " has " + had + " streams already (maxStreamsPerUser "
                + settings.maxStreamsPerUser() + ")";
    }

    /** A stream counted by {@link #streamStarting(int)} ended. */
    void streamEnded(int uid) {
        give(userStreams, uid);
    }

    /** @return the sessions and the streams {@code uid} holds now */
    int[] userLoad(int uid) {
        return new int[] {userSessions.getOrDefault(uid, 0), userStreams.getOrDefault(uid, 0)};
    }

    SharedMemory createMemory(String fileName) throws IOException {
        Path dir = shmDir;
        if (dir == null) {
            throw new IOException("the server is not serving");
        }
        SharedMemory m = SharedMemory.create(dir.resolve(fileName), settings.slots(), defaults.get(), startNanos, group,
                liveMappings);
        heartbeat.add(m);
        return m;
    }

    /** The heartbeat the timer runs (tests). */
    Heartbeat heartbeat() {
        return heartbeat;
    }

    ScheduledFuture<?> schedule(Runnable r, long delay, TimeUnit unit) {
        ScheduledThreadPoolExecutor t = timer;
        try {
            return t == null ? null : t.schedule(r, delay, unit);
        } catch (RejectedExecutionException stopped) {
            return null; // the session ends with the server and unlinks then
        }
    }

    /** Ends the sessions whose process exited. Never throws: the timer would drop it. */
    private void checkProcesses() {
        for (Session s : sessions) {
            try {
                s.checkProcess();
            } catch (RuntimeException e) {
                log.error("process host: checking whether process " + s.peerPid() + " lives failed", e);
            }
        }
    }

    void ended(Session s) {
        if (sessions.remove(s)) {
            liveSessions.decrementAndGet();
            give(userSessions, s.peerUid());
        }
    }

    // ------------------------------------------------------------------ display

    List<Session.Info> sessions() {
        List<Session.Info> l = new ArrayList<>();
        for (Session s : sessions) {
            l.add(s.info());
        }
        l.sort(Comparator.comparingLong(Session.Info::pid));
        return l;
    }

    /** The session numbered {@code seq} (the number after the pid in its file's name). */
    Optional<Session> session(long seq) {
        return sessions.stream().filter(s -> s.seq() == seq).findFirst();
    }
}
