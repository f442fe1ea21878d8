package dev.xq.runtime.engine;

import java.util.concurrent.locks.ReentrantLock;

/** How a queue's locks are taken on the scheduler's path: a short spin before parking. */
final class SpinningLocks {

    private SpinningLocks() {
    }

    /**
     * Takes a lock on the scheduler's path (views, decisions applied). Both locks are held for
     * microseconds, so a short spin almost always gets them; a plain {@code lock()} would park
     * this thread at the first contention, and the wake-up after the holder lets go costs far
     * more than the wait (milliseconds at the tail on a loaded or virtual host), all of it added
     * to the decision. Past the spin (the holder itself is descheduled) it parks as usual.
     */
    static void lock(ReentrantLock lock) {
        if (lock.tryLock()) {
            return;
        }
        long giveUp = System.nanoTime() + 200_000L;
        do {
            Thread.onSpinWait();
            if (lock.tryLock()) {
                return;
            }
        } while (System.nanoTime() < giveUp);
        lock.lock();
    }
}
