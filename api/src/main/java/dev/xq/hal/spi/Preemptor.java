package dev.xq.hal.spi;

import dev.xq.api.PreemptionLevel;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A provider's handle on one hardware queue. The runtime calls it under the queue's control
 * lock, with the same contracts as the matching {@link HwQueue} methods.
 */
@ConsumerType
public interface Preemptor {

    /** @return the level this preemptor gives the queue: 2 or 3 */
    PreemptionLevel level();

    /** Lv2, see {@link HwQueue#deactivate()}. */
    List<HwCommand> deactivate();

    /** Lv2, see {@link HwQueue#reactivate()}. */
    void reactivate();

    /** Lv3, see {@link HwQueue#interrupt()}. */
    void interrupt();

    /** Lv3, see {@link HwQueue#restore()}. */
    void restore();

    /** Lets go of the queue; the runtime has restored and reactivated it first. */
    void detach();
}
