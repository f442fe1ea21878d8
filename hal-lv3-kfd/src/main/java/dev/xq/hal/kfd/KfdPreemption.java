package dev.xq.hal.kfd;

import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.Preemption;
import dev.xq.hal.spi.StreamHandle;
import dev.xq.runtime.log.RuntimeLog;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The provider's logic without OSGi: owns the {@link KfdDevice}, finds the path on first use,
 * maps HIP streams to KFD queue ids and hands out {@link KfdPreemptor}s.
 *
 * <p>Stream-to-queue mapping: nothing public links a {@code hipStream_t} to a KFD queue id, so the
 * mapping is by appearance. At each attach a queue snapshot is taken (clearing QUEUE_NEW, which
 * makes queues suspendable); the compute AQL queues not seen in any earlier snapshot are the
 * candidates. Exactly one candidate is taken as the stream's queue; none (HIP reused a pooled
 * queue shared with another stream) or several (several streams or HIP's own queues created
 * since the last look) leave the stream unmapped and {@code attach} empty, because suspending a
 * wrong or shared queue would stop other tenants. This works when each stream is attached right
 * after it is created and HIP gives it a queue of its own (ROCclr hands out up to
 * GPU_MAX_HW_QUEUES, 4 by default, before it shares); it is unverified on hardware.
 */
final class KfdPreemption implements AutoCloseable {

    private final KfdSettings settings;
    private final RuntimeLog log;
    private final KfdDevice device;
    private final String unavailable;
    private final RateLimiter limiter;
    private final Set<Integer> seen = new HashSet<>();
    private final Map<Integer, KfdPreemptor> attached = new LinkedHashMap<>();
    private KfdPath path;
    private String pathProblem;
    private int unmapped;
    private boolean closed;

    private KfdPreemption(KfdSettings settings, RuntimeLog log, KfdDevice device, String unavailable) {
        this.settings = settings;
        this.log = log;
        this.device = device;
        this.unavailable = unavailable;
        this.limiter = new RateLimiter(settings == null ? 0 : settings.minSuspendIntervalMicros() * 1000L);
    }

    /** Opens the device; never throws: without one, the provider stays and says why. */
    static KfdPreemption start(KfdSettings settings, RuntimeLog log) {
        KfdDevice dev;
        try {
            dev = KfdDevice.open(settings.device());
        } catch (KfdException e) {
            String why = "ENOENT".equals(e.errnoName()) ? "no " + settings.device() : e.getMessage();
            return new KfdPreemption(settings, log, null, why);
        }
        return new KfdPreemption(settings, log, dev, null);
    }

    /** A provider that attaches nothing, e.g. after a bad configuration. */
    static KfdPreemption unavailable(String why) {
        return new KfdPreemption(null, RuntimeLog.NONE, null, why);
    }

    synchronized String status() {
        if (unavailable != null) {
            return unavailable;
        }
        if (closed) {
            return "stopped";
        }
        StringBuilder s = new StringBuilder("KFD ").append(device.version()).append(" at ").append(device.path());
        if (settings.mode() == KfdSettings.Mode.LOGICAL) {
            return s.append(", logical mode: no queue is suspended").toString();
        }
        if (path == null) {
            s.append(", path not probed yet (probed at the first HIP queue)");
        } else if (pathProblem != null) {
            s.append(", ").append(pathProblem);
        } else {
            s.append(", ").append(path == KfdPath.DEBUGGER ? "debugger API (CWSR)" : "patched preempt ioctls");
        }
        s.append(", ").append(attached.size()).append(attached.size() == 1 ? " queue raised" : " queues raised");
        if (unmapped > 0) {
            s.append(", ").append(unmapped).append(" HIP queue(s) left at their own level (no unique KFD queue)");
        }
        return s.toString();
    }

    synchronized Optional<Preemption> attach(HwQueue queue) {
        if (unavailable != null || closed || settings.mode() == KfdSettings.Mode.LOGICAL) {
            return Optional.empty();
        }
        Optional<StreamHandle.Hip> hip = queue.nativeHandle(StreamHandle.Hip.class);
        if (hip.isEmpty()) {
            return Optional.empty();
        }
        long stream = hip.get().address();
        if (!ensurePath()) {
            return Optional.empty();
        }
        List<QueueSnapshot> now;
        try {
            now = device.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        } catch (KfdException e) {
            log.warn("kfd: snapshot for HIP stream 0x" + Long.toHexString(stream) + " failed", e);
            return Optional.empty();
        }
        Integer candidate = null;
        int fresh = 0;
        for (QueueSnapshot q : now) {
            if (q.computeAql() && !seen.contains(q.queueId())) {
                fresh++;
                candidate = q.queueId();
            }
        }
        now.forEach(q -> seen.add(q.queueId()));
        if (fresh != 1 || attached.containsKey(candidate)) {
            unmapped++;
            log.info("kfd: HIP stream 0x" + Long.toHexString(stream) + " on " + queue.deviceId() + " not raised: "
                    + fresh + " new compute queues since the last look (need exactly 1)");
            return Optional.empty();
        }
        KfdPreemptor p = new KfdPreemptor(this, device, path, candidate, stream, settings, limiter);
        attached.put(candidate, p);
        log.info("kfd: HIP stream 0x" + Long.toHexString(stream) + " -> KFD queue " + candidate);
        return Optional.of(p);
    }

    synchronized void detached(int queueId) {
        attached.remove(queueId);
    }

    /**
     * Logical priority: packets queued on a KFD queue and not yet taken by the GPU.
     * @throws IllegalArgumentException naming the id when this process has no such queue
     */
    synchronized long pendingWork(int queueId) {
        if (device == null) {
            throw new IllegalStateException("kfd: " + unavailable);
        }
        if (!ensureTrap()) {
            throw new IllegalStateException("kfd: " + pathProblem);
        }
        return device.snapshot(0).stream().filter(q -> q.queueId() == queueId).findFirst()
                .map(KfdDevice::pendingPackets)
                .orElseThrow(() -> new IllegalArgumentException("KFD queue " + queueId + " is not a queue of this process"));
    }

    private boolean ensureTrap() {
        if (device.hasDebuggerApi()) {
            try {
                device.enableDebugTrap();
                return true;
            } catch (KfdException e) {
                pathProblem = e.getMessage();
            }
        } else {
            pathProblem = "KFD " + device.version() + " has no debugger API (needs 1.13)";
        }
        return false;
    }

    private boolean ensurePath() {
        if (path != null) {
            return pathProblem == null;
        }
        // First HIP queue: HIP is initialised by now, so enabling the debug trap cannot block it.
        path = device.probe();
        KfdSettings.Mode mode = settings.mode();
        if (path == KfdPath.NONE) {
            pathProblem = "no way to stop queues: KFD " + device.version() + (device.hasDebuggerApi()
                    ? " refused the debug trap" : " predates the debugger API (1.13)") + " and no patched preempt ioctls";
        } else if (mode == KfdSettings.Mode.CWSR && path != KfdPath.DEBUGGER) {
            pathProblem = "mode cwsr but the debugger API is not available (found " + path + ")";
        } else if (mode == KfdSettings.Mode.PREEMPT && path != KfdPath.PATCHED) {
            pathProblem = "mode preempt but the patched preempt ioctls are not available (found " + path + ")";
        }
        if (pathProblem != null) {
            log.warn("kfd: " + pathProblem, null);
        } else {
            log.info("kfd: using " + path + " on KFD " + device.version());
        }
        return pathProblem == null;
    }

    /** Resumes whatever is still suspended, disables the debug trap and closes the device. */
    @Override
    public void close() {
        List<KfdPreemptor> held;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            held = List.copyOf(attached.values());
        }
        // Outside our lock: a preemptor's detach takes its own lock, then ours.
        for (KfdPreemptor p : held) {
            try {
                p.detach();
            } catch (RuntimeException e) {
                log.warn("kfd: resuming KFD queue " + p.queueId() + " at shutdown failed", e);
            }
        }
        if (device != null) {
            // DISABLE resumes anything a failed resume above left suspended.
            device.close();
        }
    }
}
