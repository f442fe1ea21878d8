package dev.xq.hal.kfd;

import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HalException;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.Preemption;
import java.util.List;

/**
 * Level 3 for one HIP stream through its KFD queue. The queue is suspended while the runtime has
 * it deactivated or interrupted, and resumed when neither holds: KFD can only stop a whole queue,
 * so deactivate also stops the running command (saved by CWSR and resumed later, never lost)
 * and interrupt after deactivate has nothing left to do. A failing suspend throws and leaves
 * the queue running.
 */
final class KfdPreemptor implements Preemption {

    private final KfdPreemption owner;
    private final KfdDevice device;
    private final KfdPath path;
    private final int queueId;
    private final long stream;
    private final KfdSettings settings;
    private final RateLimiter limiter;
    private boolean deactivated;
    private boolean interrupted;
    private boolean suspended;
    private boolean detached;

    KfdPreemptor(KfdPreemption owner, KfdDevice device, KfdPath path, int queueId, long stream, KfdSettings settings,
            RateLimiter limiter) {
        this.owner = owner;
        this.device = device;
        this.path = path;
        this.queueId = queueId;
        this.stream = stream;
        this.settings = settings;
        this.limiter = limiter;
    }

    int queueId() {
        return queueId;
    }

    @Override
    public PreemptionLevel level() {
        return PreemptionLevel.INTERRUPT;
    }

    @Override
    public synchronized List<HwCommand> deactivate() {
        suspendIfNeeded();
        deactivated = true;
        return List.of();
    }

    @Override
    public synchronized void reactivate() {
        deactivated = false;
        resumeIfFree();
    }

    @Override
    public synchronized void interrupt() {
        suspendIfNeeded();
        interrupted = true;
    }

    @Override
    public synchronized void restore() {
        interrupted = false;
        resumeIfFree();
    }

    @Override
    public synchronized void detach() {
        if (detached) {
            return;
        }
        deactivated = false;
        interrupted = false;
        try {
            resumeIfFree();
        } finally {
            detached = true;
            owner.detached(queueId);
        }
    }

    /** @return whether this preemptor holds its queue suspended */
    synchronized boolean suspended() {
        return suspended;
    }

    private String what() {
        return "KFD queue " + queueId + " (HIP stream 0x" + Long.toHexString(stream) + ")";
    }

    private void suspendIfNeeded() {
        if (detached) {
            throw new IllegalStateException(what() + " was detached");
        }
        if (suspended) {
            return;
        }
        limiter.acquire();
        if (path == KfdPath.PATCHED) {
            device.patchedPreempt(queueId, 9000);
        } else {
            KfdDevice.QueueResult r = device.suspend(new int[] {queueId}, settings.gracePeriodUnits());
            QueueStatus s = r.statusOf(queueId);
            if (s != QueueStatus.DONE) {
                throw new KfdException("AMDKFD_IOC_DBG_TRAP(SUSPEND_QUEUES)", what() + " was not suspended, it keeps"
                        + " running: " + s.meaning());
            }
        }
        suspended = true;
    }

    private void resumeIfFree() {
        if (!suspended || deactivated || interrupted) {
            return;
        }
        if (path == KfdPath.PATCHED) {
            device.patchedResume(queueId);
        } else {
            KfdDevice.QueueResult r = device.resume(new int[] {queueId});
            QueueStatus s = r.statusOf(queueId);
            if (s != QueueStatus.DONE) {
                // INVALID here means KFD no longer holds it suspended (destroyed or resumed by DISABLE).
                suspended = false;
                throw new HalException("AMDKFD_IOC_DBG_TRAP(RESUME_QUEUES) failed: " + what() + ": " + s.meaning());
            }
        }
        suspended = false;
    }
}
