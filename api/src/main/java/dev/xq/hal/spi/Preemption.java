package dev.xq.hal.spi;

import dev.xq.api.PreemptionLevel;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * What a hardware queue offers beyond launching (level 1): holding back launched work (level 2)
 * and stopping the running command mid-way (level 3). A queue that can do it by itself returns
 * it from {@link HwQueue#preemption()}; a {@link PreemptionProvider} that works below another
 * driver returns one from {@link PreemptionProvider#attach}. The runtime uses whichever offers
 * the higher level, and calls it under the queue's control lock, never concurrently.
 */
@ConsumerType
public interface Preemption {

    /** @return the level offered: {@link PreemptionLevel#DEACTIVATE} or {@link PreemptionLevel#INTERRUPT} */
    PreemptionLevel level();

    /**
     * Level 2: keep launched commands that have not started from starting. Either stalls them in
     * place (returns an empty list) or takes them off the hardware and hands them back in launch
     * order; the runtime relaunches the handed-back commands exactly once, in order, after
     * {@link #reactivate()}. The running command, if any, goes on.
     */
    List<HwCommand> deactivate();

    /** Level 2: undoes {@link #deactivate()}. */
    void reactivate();

    /**
     * Level 2, for a queue that pays a price per launch to have it held in place by a later
     * {@link #deactivate()} (CUDA's guards: a stream wait in front of each command, ~1 µs of
     * device time): whether the launch that follows may go without it, because the runtime
     * foresees no deactivate before that command ends (it ends before the next foreseen arrival of
     * a queue preferred over this one: docs/runtime.md, "Arrival guards"). A deactivate that comes
     * anyway finds such a command unheld, and it runs, as at level 1. Called by the launching
     * thread right before each {@link HwQueue#launch}; the runtime never launches on one queue from
     * two threads at once, nor deactivates it meanwhile. Default: ignored (every launch is held as
     * usual).
     */
    default void nextLaunchUnheld(boolean unheld) {
    }

    /**
     * Level 3: stops the running command mid-way, saving its progress, and returns once the
     * device no longer runs anything of this queue. Called after {@link #deactivate()}; only
     * called when {@link #level()} is {@link PreemptionLevel#INTERRUPT}.
     */
    void interrupt();

    /** Level 3: resumes the interrupted command where it stopped. Called before {@link #reactivate()}. */
    void restore();

    /**
     * A provider's preemption: lets go of the queue when the provider goes away; the runtime has
     * restored and reactivated the queue first. A queue's own preemption is never detached.
     */
    default void detach() {
    }
}
