package dev.xq.hal.kfd;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * This process's own handle on {@code /dev/kfd}: version, probing, and the debugger API's queue
 * suspend/resume/snapshot on the process's own queues (self-debugging, pid = own pid, which
 * needs no ptrace rights). Each failure throws a {@link KfdException} naming the ioctl, the errno
 * and its meaning; nothing is changed by a call that fails. Thread-safe (calls are serialised).
 */
public final class KfdDevice implements AutoCloseable {

    /** The KFD minor version that introduced RUNTIME_ENABLE and DBG_TRAP. */
    public static final int DEBUGGER_MIN_MINOR = 13;

    private static final VarHandle DBG_PID = KfdAbi.DBG_TRAP_ARGS.varHandle(groupElement("pid"));
    private static final VarHandle DBG_OP = KfdAbi.DBG_TRAP_ARGS.varHandle(groupElement("op"));

    // Offsets come from the layouts (checked against gcc), never typed in.
    private static long off(java.lang.foreign.StructLayout s, String field) {
        return s.byteOffset(groupElement(field));
    }

    private static final long E_EXC = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "exception_status");
    private static final long E_RING = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "ring_base_address");
    private static final long E_WPTR = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "write_pointer_address");
    private static final long E_RPTR = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "read_pointer_address");
    private static final long E_QID = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "queue_id");
    private static final long E_GPU = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "gpu_id");
    private static final long E_RSIZE = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "ring_size");
    private static final long E_TYPE = off(KfdAbi.QUEUE_SNAPSHOT_ENTRY, "queue_type");

    /** KFD major/minor version. */
    public record Version(int major, int minor) {
        @Override
        public String toString() {
            return major + "." + minor;
        }
    }

    /** Per-queue outcome of a suspend or resume, in the order the ids were given. */
    public record QueueResult(int[] queueIds, QueueStatus[] status, int count) {
        /** @return the status of one queue id given to the call */
        public QueueStatus statusOf(int queueId) {
            for (int i = 0; i < queueIds.length; i++) {
                if (queueIds[i] == queueId) {
                    return status[i];
                }
            }
            throw new IllegalArgumentException("queue id " + queueId + " was not part of this call; ids: "
                    + Arrays.toString(queueIds));
        }
    }

    private final String path;
    private final int fd;
    private final int pid;
    private final Version version;
    private int eventFd = -1;
    private boolean trapEnabled;
    private boolean closed;

    private KfdDevice(String path, int fd) {
        this.path = path;
        this.fd = fd;
        this.pid = (int) ProcessHandle.current().pid();
        this.version = readVersion();
    }

    /**
     * Opens a KFD device file and reads its version.
     * @throws KfdException naming the path and errno when it cannot be opened (ENOENT: no AMD
     *         KFD driver; EACCES: the user is not in the render/video group)
     */
    public static KfdDevice open(String path) {
        if (path == null || path.isBlank()) {
            throw new IllegalArgumentException("device path is empty; expected a KFD device file such as /dev/kfd");
        }
        Libc.Result r = Libc.open(path, Libc.O_RDWR_CLOEXEC);
        if (r.failed()) {
            throw new KfdException("open(" + path + ")", r.errno(), switch (Libc.errnoName(r.errno())) {
                case "ENOENT" -> "no such file: the amdgpu KFD driver is not loaded or the device is not passed to this container";
                case "EACCES", "EPERM" -> "no permission: the user must be in the group owning " + path + " (render or video)";
                default -> "cannot open the KFD device file";
            });
        }
        try {
            return new KfdDevice(path, r.value());
        } catch (RuntimeException e) {
            Libc.close(r.value());
            throw e;
        }
    }

    /** @return the device file this handle was opened on */
    public String path() {
        return path;
    }

    /** @return the KFD version read at open */
    public Version version() {
        return version;
    }

    /** @return whether this KFD is new enough to have the debugger API (1.13+) */
    public boolean hasDebuggerApi() {
        return version.major() > 1 || (version.major() == 1 && version.minor() >= DEBUGGER_MIN_MINOR);
    }

    private Version readVersion() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment args = arena.allocate(KfdAbi.GET_VERSION_ARGS);
            call("AMDKFD_IOC_GET_VERSION", KfdAbi.IOC_GET_VERSION, args, errno -> switch (errno) {
                case "EINVAL", "ENOTTY" -> path + " is not a KFD device";
                default -> "the driver refused the version query";
            });
            return new Version(args.get(JAVA_INT, off(KfdAbi.GET_VERSION_ARGS, "major_version")),
                    args.get(JAVA_INT, off(KfdAbi.GET_VERSION_ARGS, "minor_version")));
        }
    }

    /**
     * RUNTIME_ENABLE as the HIP runtime does it during its initialisation. XQ never calls this in
     * production (HIP does, and a second call fails with EBUSY); tests against the fake driver use
     * it to play the HIP runtime's part.
     * @return the capabilities mask KFD reported
     */
    public synchronized int runtimeEnable(long rDebug, int modeMask) {
        requireOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment args = arena.allocate(KfdAbi.RUNTIME_ENABLE_ARGS);
            args.set(JAVA_LONG, off(KfdAbi.RUNTIME_ENABLE_ARGS, "r_debug"), rDebug);
            args.set(JAVA_INT, off(KfdAbi.RUNTIME_ENABLE_ARGS, "mode_mask"), modeMask);
            call("AMDKFD_IOC_RUNTIME_ENABLE", KfdAbi.IOC_RUNTIME_ENABLE, args, errno -> switch (errno) {
                case "EBUSY" -> "the runtime is already enabled for this process (the HIP runtime did it)";
                case "EPERM" -> "the runtime cannot be enabled while a debugger is attached";
                case "EINVAL" -> "KFD older than 1.13 or bad mode mask";
                default -> "the driver refused runtime enable";
            });
            return args.get(JAVA_INT, off(KfdAbi.RUNTIME_ENABLE_ARGS, "capabilities_mask"));
        }
    }

    /**
     * Makes sure the debug trap of this process is enabled (DBG_TRAP ENABLE on our own pid), so
     * that SUSPEND/RESUME/SNAPSHOT are allowed. Call only after the HIP runtime is initialised:
     * enabling first makes HIP initialisation block.
     * @return the runtime state KFD reported (0 disabled, 1 enabled, 2 busy, 3 error)
     */
    public synchronized int enableDebugTrap() {
        requireOpen();
        if (!hasDebuggerApi()) {
            throw new KfdException("AMDKFD_IOC_DBG_TRAP(ENABLE)", "KFD " + version + " at " + path
                    + " predates the debugger API (needs 1.13 or later)");
        }
        if (trapEnabled) {
            return 1;
        }
        if (eventFd < 0) {
            Libc.Result ev = Libc.eventfd(Libc.EFD_CLOEXEC_NONBLOCK);
            if (ev.failed()) {
                throw new KfdException("eventfd", ev.errno(), "cannot create the debug event descriptor KFD signals");
            }
            eventFd = ev.value();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = arena.allocate(KfdAbi.RUNTIME_INFO);
            MemorySegment args = dbgArgs(arena, KfdAbi.OP_ENABLE);
            args.set(JAVA_LONG, KfdAbi.unionOffset("enable", "exception_mask"), 0L);
            args.set(JAVA_LONG, KfdAbi.unionOffset("enable", "rinfo_ptr"), info.address());
            args.set(JAVA_INT, KfdAbi.unionOffset("enable", "rinfo_size"), (int) info.byteSize());
            args.set(JAVA_INT, KfdAbi.unionOffset("enable", "dbg_fd"), eventFd);
            Libc.Result r = Libc.ioctl(fd, KfdAbi.IOC_DBG_TRAP, args);
            if (r.failed() && !"EALREADY".equals(Libc.errnoName(r.errno()))) {
                throw new KfdException("AMDKFD_IOC_DBG_TRAP(ENABLE)", r.errno(), dbgMeaning(Libc.errnoName(r.errno())));
            }
            trapEnabled = true;
            return info.get(JAVA_INT, off(KfdAbi.RUNTIME_INFO, "runtime_state"));
        }
    }

    /**
     * Finds which way of stopping queues works here, without touching any queue: the debugger API
     * (enables the debug trap, so call it after HIP is initialised), else the patched-driver
     * ioctls, probed with queue id 0xffffffff (stock kernels answer EINVAL for the unknown number;
     * any other answer is taken as "the ioctl exists"), else none.
     */
    public synchronized KfdPath probe() {
        requireOpen();
        if (hasDebuggerApi()) {
            try {
                enableDebugTrap();
                return KfdPath.DEBUGGER;
            } catch (KfdException e) {
                // fall through: the patched ioctls might still exist
            }
        }
        for (long number : new long[] {KfdAbi.IOC_PATCHED_PREEMPT, KfdAbi.IOC_PATCHED_PREEMPT_W}) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment args = arena.allocate(KfdAbi.PATCHED_PREEMPT_ARGS);
                args.set(JAVA_INT, off(KfdAbi.PATCHED_PREEMPT_ARGS, "queue_id"), -1);
                Libc.Result r = Libc.ioctl(fd, number, args);
                String name = Libc.errnoName(r.errno());
                if (!r.failed() || !(name.equals("EINVAL") || name.equals("ENOTTY"))) {
                    patchedPreempt = number;
                    patchedResume = number == KfdAbi.IOC_PATCHED_PREEMPT ? KfdAbi.IOC_PATCHED_RESUME : KfdAbi.IOC_PATCHED_RESUME_W;
                    return KfdPath.PATCHED;
                }
            }
        }
        return KfdPath.NONE;
    }

    private long patchedPreempt;
    private long patchedResume;

    /**
     * Lists this process's queues (two calls: count, then fill). Exceptions in {@code clearMask}
     * are cleared on every listed queue; pass {@link KfdAbi#EC_QUEUE_NEW_MASK} so that new
     * queues become suspendable.
     */
    public synchronized List<QueueSnapshot> snapshot(long clearMask) {
        requireTrap("GET_QUEUE_SNAPSHOT");
        int entrySize = (int) KfdAbi.QUEUE_SNAPSHOT_ENTRY.byteSize();
        try (Arena arena = Arena.ofConfined()) {
            int capacity = 0;
            MemorySegment buf = MemorySegment.NULL;
            for (int attempt = 0; attempt < 4; attempt++) {
                MemorySegment args = dbgArgs(arena, KfdAbi.OP_GET_QUEUE_SNAPSHOT);
                args.set(JAVA_LONG, KfdAbi.unionOffset("queue_snapshot", "exception_mask"), clearMask);
                args.set(JAVA_LONG, KfdAbi.unionOffset("queue_snapshot", "snapshot_buf_ptr"), buf.address());
                args.set(JAVA_INT, KfdAbi.unionOffset("queue_snapshot", "num_queues"), capacity);
                args.set(JAVA_INT, KfdAbi.unionOffset("queue_snapshot", "entry_size"), entrySize);
                dbg("GET_QUEUE_SNAPSHOT", args);
                int total = args.get(JAVA_INT, KfdAbi.unionOffset("queue_snapshot", "num_queues"));
                int kernelEntry = args.get(JAVA_INT, KfdAbi.unionOffset("queue_snapshot", "entry_size"));
                if (total <= capacity) {
                    // The kernel copies min(its entry size, ours) bytes per entry at a stride of ours.
                    List<QueueSnapshot> out = new ArrayList<>(total);
                    for (int i = 0; i < total; i++) {
                        MemorySegment e = buf.asSlice((long) i * entrySize, entrySize);
                        out.add(new QueueSnapshot(e.get(JAVA_INT, E_QID), e.get(JAVA_INT, E_GPU), e.get(JAVA_INT, E_TYPE),
                                e.get(JAVA_LONG, E_EXC), e.get(JAVA_LONG, E_RING), e.get(JAVA_LONG, E_WPTR),
                                e.get(JAVA_LONG, E_RPTR), e.get(JAVA_INT, E_RSIZE)));
                    }
                    return out;
                }
                if (kernelEntry <= 0) {
                    throw new KfdException("AMDKFD_IOC_DBG_TRAP(GET_QUEUE_SNAPSHOT)", "driver reported entry size "
                            + kernelEntry);
                }
                // Queues may appear between the two calls: leave room for a few more.
                capacity = total + 8;
                buf = arena.allocate((long) capacity * entrySize, 8);
            }
            throw new KfdException("AMDKFD_IOC_DBG_TRAP(GET_QUEUE_SNAPSHOT)", "the queue count kept growing");
        }
    }

    /**
     * Suspends queues (DBG_TRAP SUSPEND_QUEUES). KFD suspends those it can and marks the others
     * with status bits; an errno means nothing was suspended.
     * @param gracePeriod the kernel's grace period (about 1000 GPU clocks per unit; 0 becomes 1)
     */
    public synchronized QueueResult suspend(int[] queueIds, int gracePeriod) {
        checkIds(queueIds, "SUSPEND_QUEUES");
        if (gracePeriod < 0) {
            throw new IllegalArgumentException("grace period " + gracePeriod + " is negative; allowed: 0 or more");
        }
        requireTrap("SUSPEND_QUEUES");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ids = arena.allocateFrom(JAVA_INT, queueIds);
            MemorySegment args = dbgArgs(arena, KfdAbi.OP_SUSPEND_QUEUES);
            args.set(JAVA_LONG, KfdAbi.unionOffset("suspend_queues", "exception_mask"), 0L);
            args.set(JAVA_LONG, KfdAbi.unionOffset("suspend_queues", "queue_array_ptr"), ids.address());
            args.set(JAVA_INT, KfdAbi.unionOffset("suspend_queues", "num_queues"), queueIds.length);
            args.set(JAVA_INT, KfdAbi.unionOffset("suspend_queues", "grace_period"), gracePeriod);
            int count = dbg("SUSPEND_QUEUES", args);
            return result(queueIds, ids, count);
        }
    }

    /** Resumes queues (DBG_TRAP RESUME_QUEUES); per-queue failures come back as status bits. */
    public synchronized QueueResult resume(int[] queueIds) {
        checkIds(queueIds, "RESUME_QUEUES");
        requireTrap("RESUME_QUEUES");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ids = arena.allocateFrom(JAVA_INT, queueIds);
            MemorySegment args = dbgArgs(arena, KfdAbi.OP_RESUME_QUEUES);
            args.set(JAVA_LONG, KfdAbi.unionOffset("resume_queues", "queue_array_ptr"), ids.address());
            args.set(JAVA_INT, KfdAbi.unionOffset("resume_queues", "num_queues"), queueIds.length);
            int count = dbg("RESUME_QUEUES", args);
            return result(queueIds, ids, count);
        }
    }

    /**
     * Packets queued but not yet taken by the command processor: *wptr − *rptr of an AQL queue,
     * read with acquire semantics from this process's memory. Zero means nothing queued, not that
     * the queue is idle (the read index moves when a packet is taken, not when it completes).
     */
    public static long pendingPackets(QueueSnapshot queue) {
        if (queue.writePointerAddress() == 0 || queue.readPointerAddress() == 0) {
            throw new IllegalArgumentException("queue " + queue.queueId() + " has no ring pointer addresses");
        }
        MemorySegment w = MemorySegment.ofAddress(queue.writePointerAddress()).reinterpret(8);
        MemorySegment r = MemorySegment.ofAddress(queue.readPointerAddress()).reinterpret(8);
        long read = (long) ACQUIRE_LONG.getAcquire(r, 0L);
        long write = (long) ACQUIRE_LONG.getAcquire(w, 0L);
        return Math.max(0L, write - read);
    }

    private static final VarHandle ACQUIRE_LONG = ValueLayout.JAVA_LONG.varHandle();

    /** The patched driver's preempt ioctl, if {@link #probe()} found it. Unverified ABI. */
    public synchronized void patchedPreempt(int queueId, int timeoutMs) {
        patched("PREEMPT_QUEUE", patchedPreempt, queueId, timeoutMs);
    }

    /** The patched driver's resume ioctl, if {@link #probe()} found it. Unverified ABI. */
    public synchronized void patchedResume(int queueId) {
        patched("RESUME_QUEUE", patchedResume, queueId, 0);
    }

    private void patched(String name, long number, int queueId, int timeoutMs) {
        requireOpen();
        if (number == 0) {
            throw new KfdException("AMDKFD_IOC_" + name + " (patched driver)", "not available: probe() did not find it");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment args = arena.allocate(KfdAbi.PATCHED_PREEMPT_ARGS);
            args.set(JAVA_INT, off(KfdAbi.PATCHED_PREEMPT_ARGS, "queue_id"), queueId);
            // 2 = save: keep the wave state so the work resumes.
            args.set(JAVA_INT, off(KfdAbi.PATCHED_PREEMPT_ARGS, "preempt_type"), 2);
            args.set(JAVA_INT, off(KfdAbi.PATCHED_PREEMPT_ARGS, "timeout_ms"), timeoutMs);
            call("AMDKFD_IOC_" + name + " (patched driver)", number, args, errno -> "queue " + queueId
                    + " refused by the patched driver");
        }
    }

    /** Disables the debug trap (which resumes every suspended queue) and closes the device. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (trapEnabled) {
            try (Arena arena = Arena.ofConfined()) {
                Libc.ioctl(fd, KfdAbi.IOC_DBG_TRAP, dbgArgs(arena, KfdAbi.OP_DISABLE));
            }
            trapEnabled = false;
        }
        if (eventFd >= 0) {
            Libc.close(eventFd);
        }
        Libc.close(fd);
    }

    private static QueueResult result(int[] queueIds, MemorySegment written, int count) {
        QueueStatus[] status = new QueueStatus[queueIds.length];
        for (int i = 0; i < queueIds.length; i++) {
            status[i] = QueueStatus.of(written.getAtIndex(JAVA_INT, i));
        }
        return new QueueResult(queueIds.clone(), status, count);
    }

    private static void checkIds(int[] queueIds, String op) {
        if (queueIds == null || queueIds.length == 0) {
            throw new IllegalArgumentException(op + ": no queue ids given; expected at least one KFD queue id");
        }
        for (int id : queueIds) {
            if ((id & (KfdAbi.QUEUE_INVALID_BIT | KfdAbi.QUEUE_ERROR_BIT)) != 0) {
                throw new IllegalArgumentException(op + ": queue id 0x" + Integer.toHexString(id)
                        + " has a status bit set; allowed: 0 to 0x3fffffff");
            }
        }
    }

    private MemorySegment dbgArgs(Arena arena, int op) {
        MemorySegment args = arena.allocate(KfdAbi.DBG_TRAP_ARGS);
        DBG_PID.set(args, 0L, pid);
        DBG_OP.set(args, 0L, op);
        return args;
    }

    private int dbg(String op, MemorySegment args) {
        return call("AMDKFD_IOC_DBG_TRAP(" + op + ")", KfdAbi.IOC_DBG_TRAP, args, KfdDevice::dbgMeaning);
    }

    /** Errno meanings as the driver produces them (kfd_chardev.c / kfd_debug.c), not the header comments. */
    private static String dbgMeaning(String errno) {
        return switch (errno) {
            case "EPERM" -> "the HIP runtime has not enabled KFD's runtime for this process (RUNTIME_ENABLE), "
                    + "or the firmware is too old; or another process is debugged without being its ptrace parent";
            case "EINVAL" -> "debug trap not enabled, bad argument, or the GPU runs without the hardware scheduler";
            case "EBUSY" -> "the queues are busy (being suspended or reset)";
            case "EALREADY" -> "the debug trap is already enabled";
            case "EBADF" -> "bad debug event file descriptor";
            case "ENODEV" -> "the GPU is not SOC15 and has no debugger support";
            case "ESRCH" -> "no such process";
            case "EFAULT" -> "the driver could not read or write the argument buffers";
            case "ENOMEM" -> "the driver is out of memory";
            case "ETIME", "ETIMEDOUT" -> "the queue did not stop within the preemption timeout";
            default -> "unexpected error from the KFD debugger API";
        };
    }

    private int call(String name, long number, MemorySegment args, java.util.function.Function<String, String> meaning) {
        Libc.Result r = Libc.ioctl(fd, number, args);
        if (r.failed()) {
            throw new KfdException(name, r.errno(), meaning.apply(Libc.errnoName(r.errno())));
        }
        return r.value();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("KFD device " + path + " is closed");
        }
    }

    private void requireTrap(String op) {
        requireOpen();
        if (!trapEnabled) {
            throw new IllegalStateException("AMDKFD_IOC_DBG_TRAP(" + op + ") needs the debug trap: call enableDebugTrap() "
                    + "(or probe()) first");
        }
    }
}
