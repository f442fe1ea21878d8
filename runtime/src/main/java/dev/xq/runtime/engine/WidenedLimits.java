package dev.xq.runtime.engine;

import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.XQueueStatus;

/**
 * The launch limits of one application queue: its configured ones, and the tenant-alone rule
 * (issue 13) and the on-top rule (docs/runtime.md) that widen them.
 *
 * <p>While no other open queue of another group or priority shares the device, the limits bound
 * nothing but this queue's own speed, so a queue limited by a time window has it widened to
 * {@code aloneWindowMicros} of estimated work and its threshold lifted (a queue limited by a
 * threshold alone keeps it): a host stall shorter than that no longer idles the device. What it
 * costs: a queue that opens on the device then finds up to that much of this queue's work already
 * launched (its first commands wait for it, once); from that moment the usual limits apply
 * again. Process queues follow the same rule without a bound (ExternalQueueImpl). A queue that
 * has company but that the policy keeps above all of it (on top) gets the same widened limits.
 *
 * <p>At preemption level 3 (interrupt) a suspend stops the queue's launched work where it stands:
 * the time window, which bounds the work a suspend waits for, bounds nothing there but the queue's
 * own speed, so it is not applied; the threshold and batch still bound what is handed to the
 * hardware, alone, on top or not (not lifted: what is launched is what a close lets run out its
 * grace, and the threshold's batch keeps half of it launched across a host stall). Not at level
 * 2: CUDA's stall guards launches only while it expects to need them, so a deactivate may find
 * launched work unguarded, which then runs as at level 1. On the 2-vCPU build VM the sim's fg on top under the 2,000 us window launched four 500 us
 * commands at a time, and a completion seen milliseconds late (a host stall) idled the device for
 * fg: fg P99 1.03-1.94 x standalone over five runs against 1.01-1.32 with no window for fg
 * (docs/performance.md, session 87).
 *
 * <p>Not thread-safe: the owner calls it holding its {@code state} lock.
 */
final class WidenedLimits {

    private QueueConfig config;
    /** What the gate applies: {@code config}, or its limits widened while the queue is alone. */
    private QueueConfig launchLimits;
    /** Whether another open queue shares the device (another group or priority); the core tells (at open, close, hint). */
    private boolean contended = true;
    /** Whether the policy keeps it on top of that company (the on-top rule; the core tells). */
    private boolean onTop;
    /** The work in flight a queue alone on its device may have, us; 0: the rule is off (the core sets it). */
    private long aloneWindowMicros;
    /** The level its hardware queue (or a provider) offers; the queue runs at the lower of this and its config's. */
    private PreemptionLevel available = PreemptionLevel.BLOCK;

    WidenedLimits(QueueConfig config) {
        this.config = config;
        this.launchLimits = config;
    }

    QueueConfig config() {
        return config;
    }

    /** @return what the gate applies */
    QueueConfig launchLimits() {
        return launchLimits;
    }

    void configure(QueueConfig newConfig) {
        config = newConfig;
        launchLimits = limits();
    }

    /** @return whether the core tells what it told last */
    boolean same(boolean isContended, boolean isOnTop, long windowMicros) {
        return contended == isContended && onTop == isOnTop && aloneWindowMicros == windowMicros;
    }

    /** @return whether the limits the gate applies changed */
    boolean set(boolean isContended, boolean isOnTop, long windowMicros) {
        contended = isContended;
        onTop = isOnTop;
        aloneWindowMicros = windowMicros;
        QueueConfig before = launchLimits;
        launchLimits = limits();
        return !launchLimits.equals(before);
    }

    /** @return whether the limits the gate applies changed: the hardware's level is {@code level} now */
    boolean available(PreemptionLevel level) {
        if (level == available) {
            return false;
        }
        available = level;
        QueueConfig before = launchLimits;
        launchLimits = limits();
        return !launchLimits.equals(before);
    }

    /** @return whether a suspend stops the launched work (level 3 in force), so the window bounds no wait */
    private boolean stopsLaunched() {
        return config.level().min(available) == PreemptionLevel.INTERRUPT;
    }

    /** @return the configured limits as they apply at the level in force: no window at level 3 */
    private QueueConfig configured() {
        return stopsLaunched() && config.windowMicros() > 0 ? config.withWindowMicros(0) : config;
    }

    /** @return whether no other open queue of another group or priority shares the device */
    boolean alone() {
        return !contended;
    }

    /** @return whether the queue's limits apply in full now (another queue shares its device, none keeps it on top) */
    boolean inFull() {
        return (contended && !onTop) || aloneWindowMicros == 0;
    }

    private QueueConfig limits() {
        if ((contended && !onTop) || aloneWindowMicros == 0 || config.windowMicros() == 0 || stopsLaunched()) {
            return configured(); // company, the rule off, no time window to widen (threshold alone: kept), or level 3 (no window)
        }
        if (config.windowMicros() >= aloneWindowMicros) {
            return config; // wide enough already
        }
        return config.withThreshold(QueueConfig.MAX_THRESHOLD).withWindowMicros(Math.max(config.windowMicros(), aloneWindowMicros));
    }

    XQueueStatus.Limits mode() {
        return launchLimits.equals(configured()) ? XQueueStatus.Limits.CONFIGURED
                : contended ? XQueueStatus.Limits.ON_TOP : XQueueStatus.Limits.ALONE;
    }
}
