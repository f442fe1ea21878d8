package dev.xq.api;

import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A kernel of a {@link CodeModule}, launched with {@link Command.Launch}.
 *
 * @since 1.5
 */
@ProviderType
public interface KernelFunction {

    /** @return the module it belongs to */
    CodeModule module();

    /** @return its name in the module */
    String name();

    /**
     * @return the size in bytes of each parameter, where the device can tell (CUDA 12.4 and newer,
     *         the simulated device); a launch whose arguments do not match is refused at submit.
     *         {@link Command.Arg.I32} and {@link Command.Arg.F32} are 4 bytes, the others 8.
     */
    Optional<List<Long>> parameterSizes();
}
