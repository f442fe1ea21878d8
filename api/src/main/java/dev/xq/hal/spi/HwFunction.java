package dev.xq.hal.spi;

import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A kernel of an {@link HwModule}.
 *
 * @since 2.1
 */
@ConsumerType
public interface HwFunction {

    /** @return its name */
    String name();

    /** @return its parameters' sizes in bytes, or empty where the device cannot tell */
    Optional<List<Long>> parameterSizes();
}
