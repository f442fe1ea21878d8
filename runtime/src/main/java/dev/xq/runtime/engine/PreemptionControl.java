package dev.xq.runtime.engine;

import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.Preemption;
import dev.xq.hal.spi.PreemptionProvider;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;

/**
 * One queue's preemption beyond level 1: which {@link Preemption} serves it (the hardware
 * queue's own, or a provider's that raises it), and bringing the hardware in line with a
 * suspend or resume: undo what is no longer wanted first (restore, then reactivate), then apply
 * what is (deactivate, then interrupt). A refused deactivate or interrupt leaves the queue
 * running at the lower level and is logged; a failed restore or reactivate breaks the queue (its
 * commands fail with the cause), since its work could otherwise never run again.
 *
 * <p>Not thread-safe: the owning queue calls it under its control lock, never holding its state
 * lock (the {@link Owner} callbacks take that one).
 */
final class PreemptionControl {

    /** What the owning queue does for this class. */
    interface Owner {
        /** Commands a deactivate took back off the hardware, in launch order: to be launched again, once. */
        void requeue(List<HwCommand> flushed);

        /** A restore or reactivate failed: the queue's work can no longer run. */
        void broken(String what, RuntimeException cause);
    }

    private final HwQueue hw;
    private final Preemption own;
    private final Owner owner;
    private final RuntimeLog log;
    private final String queueName;

    private volatile Preemption provided;
    private PreemptionProvider provider;
    private Preemption deactivatedBy;
    private Preemption interruptedBy;

    PreemptionControl(HwQueue hw, Owner owner, RuntimeLog log, String queueName) {
        this.hw = hw;
        this.own = hw.preemption().orElse(null);
        this.owner = owner;
        this.log = log;
        this.queueName = queueName;
    }

    /**
     * Before a launch (under the owning queue's control lock): tells whoever serves level 2
     * whether that launch may go without being held in place ({@link Preemption#nextLaunchUnheld}).
     */
    void nextLaunchUnheld(boolean unheld) {
        Preemption p = servedBy(PreemptionLevel.DEACTIVATE);
        if (p != null) {
            p.nextLaunchUnheld(unheld);
        }
    }

    /** @return the highest level the queue has now, by itself or through a provider */
    PreemptionLevel available() {
        return level(provided).max(level(own));
    }

    private static PreemptionLevel level(Preemption p) {
        return p == null ? PreemptionLevel.BLOCK : p.level();
    }

    /** Who serves {@code needed}: the provider where it offers that much, else the queue itself, else nobody. */
    private Preemption servedBy(PreemptionLevel needed) {
        if (level(provided).number() >= needed.number()) {
            return provided;
        }
        return level(own).number() >= needed.number() ? own : null;
    }

    /**
     * Brings the hardware in line: suspended at {@code level} (at most what is available), or not
     * suspended at all.
     */
    void reconcile(boolean suspend, PreemptionLevel level) {
        Preemption want2 = suspend && level.number() >= 2 ? servedBy(PreemptionLevel.DEACTIVATE) : null;
        Preemption want3 = suspend && level.number() >= 3 ? servedBy(PreemptionLevel.INTERRUPT) : null;
        if (interruptedBy != null && interruptedBy != want3) {
            undoInterrupt();
        }
        if (deactivatedBy != null && deactivatedBy != want2) {
            undoDeactivate();
        }
        if (want2 != null && deactivatedBy == null) {
            try {
                List<HwCommand> flushed = want2.deactivate();
                deactivatedBy = want2;
                if (flushed != null && !flushed.isEmpty()) {
                    owner.requeue(flushed);
                }
            } catch (RuntimeException e) {
                // A refused deactivate leaves the queue running at Lv1: nothing is lost, it is only slower to preempt.
                log.error("queue " + queueName + ": deactivate on " + hw.deviceId() + " failed; staying at level 1", e);
                want3 = null;
            }
        }
        if (want3 != null && interruptedBy == null) {
            try {
                want3.interrupt();
                interruptedBy = want3;
            } catch (RuntimeException e) {
                log.error("queue " + queueName + ": interrupt on " + hw.deviceId() + " failed; the running command goes on", e);
            }
        }
    }

    /** Undoes any deactivate and interrupt, so that what is on the device runs out (close). */
    void release() {
        if (interruptedBy != null) {
            undoInterrupt();
        }
        if (deactivatedBy != null) {
            undoDeactivate();
        }
    }

    private void undoInterrupt() {
        try {
            interruptedBy.restore();
        } catch (RuntimeException e) {
            owner.broken("restore", e);
        } finally {
            interruptedBy = null;
        }
    }

    private void undoDeactivate() {
        try {
            deactivatedBy.reactivate();
        } catch (RuntimeException e) {
            owner.broken("reactivate", e);
        } finally {
            deactivatedBy = null;
        }
    }

    /**
     * Offers a provider: kept if none is attached yet and it attaches.
     * @return whether it attached (the caller reconciles)
     */
    boolean offer(PreemptionProvider p) {
        if (provided != null) {
            return false;
        }
        Preemption got = p.attach(hw).orElse(null);
        if (got == null) {
            return false;
        }
        provided = got;
        provider = p;
        log.info("queue " + queueName + " on " + hw.deviceId() + ": " + p.name() + " raises it to level " + got.level().number());
        return true;
    }

    /**
     * Undoes everything done through {@code p} and lets go of it; the queue falls back to its own level.
     * @return whether {@code p} was the one attached (the caller reconciles)
     */
    boolean withdraw(PreemptionProvider p) {
        if (provider != p || provided == null) {
            return false;
        }
        if (interruptedBy == provided) {
            undoInterrupt();
        }
        if (deactivatedBy == provided) {
            undoDeactivate();
        }
        detachProvider();
        return true;
    }

    /** Lets go of the provider, if any (close: the queue is released already). */
    void detachProvider() {
        Preemption p = provided;
        PreemptionProvider from = provider;
        provided = null;
        provider = null;
        if (p != null) {
            try {
                p.detach();
            } catch (RuntimeException e) {
                log.error("queue " + queueName + ": detach from " + from.name() + " failed", e);
            }
        }
    }
}
