package dev.xq.hal.spi;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A vendor queue (stream, user-mode queue, simulated queue) that runs commands in launch
 * order. Lv1 needs only {@link #launch}; a queue whose {@link #maxLevel()} is 2 or 3
 * implements the matching preemption methods.
 */
@ConsumerType
public interface HwQueue extends AutoCloseable {

    /** @return the platform of the driver that opened this queue, e.g. {@code hip} */
    String platform();

    /** @return the device this queue runs on */
    String deviceId();

    /** @return the highest level this queue offers by itself */
    PreemptionLevel maxLevel();

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
     * Lv2: keep launched commands that have not started from starting. A driver either stalls
     * them in place (returns an empty list) or takes them off the hardware and hands them back
     * in launch order; the runtime relaunches the handed-back commands exactly once, in order,
     * after {@link #reactivate()}. The running command, if any, goes on.
     */
    default List<HwCommand> deactivate() {
        throw new UnsupportedOperationException(platform() + " queue on " + deviceId() + " does not offer level 2");
    }

    /** Lv2: undoes {@link #deactivate()}. */
    default void reactivate() {
        throw new UnsupportedOperationException(platform() + " queue on " + deviceId() + " does not offer level 2");
    }

    /**
     * Lv3: stops the running command mid-way, saving its progress, and returns once the device
     * no longer runs anything of this queue. Called after {@link #deactivate()}.
     */
    default void interrupt() {
        throw new UnsupportedOperationException(platform() + " queue on " + deviceId() + " does not offer level 3");
    }

    /** Lv3: resumes the interrupted command where it stopped. Called before {@link #reactivate()}. */
    default void restore() {
        throw new UnsupportedOperationException(platform() + " queue on " + deviceId() + " does not offer level 3");
    }

    /**
     * @return the vendor handle for {@link PreemptionProvider}s that work below the driver (a
     *         HIP stream address, for example), or {@code null}
     */
    default Object nativeHandle() {
        return null;
    }

    /**
     * Releases the queue. Commands still on it are reported as failed or simply dropped; the
     * runtime has already accounted for them. Must not throw for a queue that is already broken.
     */
    @Override
    void close();
}
