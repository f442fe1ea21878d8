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
