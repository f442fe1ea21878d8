package dev.xq.hal.spi;

import dev.xq.api.Command;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A vendor queue (stream, user-mode queue, simulated queue) that runs commands in launch
 * order. Level 1 needs only {@link #launch}; a queue that can do more by itself returns a
 * {@link Preemption} from {@link #preemption()}.
 */
@ConsumerType
public interface HwQueue extends AutoCloseable {

    /** @return the platform of the driver that opened this queue, e.g. {@code hip} */
    String platform();

    /** @return the device this queue runs on */
    String deviceId();

    /**
     * Checks that the device can run this command, before it is accepted into an XQueue.
     * @throws IllegalArgumentException naming the command kind and what the device accepts
     */
    void check(Command command);

    /**
     * Hands one command to the hardware, asynchronously. Its end is reported to the listener.
     * @throws HalException if the hardware refused it at once (the command never runs)
     */
    void launch(HwCommand command);

    /**
     * Looks for finished commands now, on the calling thread, and reports them to their listeners
     * as the adapter's own completion thread would (in launch order per queue, never two
     * reporting threads at once). The runtime calls it from a thread that waits for one of this
     * queue's commands and spins near that command's expected end, so that the end is seen even
     * while the adapter's thread is late (a busy host had it off its CPU for milliseconds). Must
     * return at once without waiting for anything: when another thread is looking at that moment,
     * it does not look.
     *
     * @return whether it looked; the default, for adapters whose completions cannot be looked for
     *         from outside, never does
     * @since 2.3
     */
    default boolean poll() {
        return false;
    }

    /**
     * @return what this queue offers beyond launching by itself (levels 2 and 3), or empty: level 1
     *         only (a {@link PreemptionProvider} may still raise it)
     */
    default Optional<Preemption> preemption() {
        return Optional.empty();
    }

    /**
     * The vendor object under this queue, looked up by its type (e.g. {@link StreamHandle.Hip}),
     * for {@link PreemptionProvider}s that work below the driver.
     * @return the handle if this queue has one of that type, else empty
     */
    default <T> Optional<T> nativeHandle(Class<T> type) {
        return Optional.empty();
    }

    /**
     * Releases the queue. Commands still on it are reported as failed or simply dropped; the
     * runtime has already accounted for them. Must not throw for a queue that is already broken.
     */
    @Override
    void close();
}
