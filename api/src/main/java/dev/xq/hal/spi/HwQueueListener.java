package dev.xq.hal.spi;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Receives what happens to launched commands. A hardware queue reports the commands it was
 * given in launch order, each exactly once: completed or failed (or handed back by
 * {@link HwQueue#deactivate()}).
 */
@ProviderType
public interface HwQueueListener {

    /**
     * The command ran to its end.
     *
     * @param startNanos when the device started it, on the {@link System#nanoTime()} clock
     * @param endNanos when the device finished it, same clock
     */
    void completed(HwCommand command, long startNanos, long endNanos);

    /** The command failed; the queue stays usable. */
    void failed(HwCommand command, Throwable cause);

    /**
     * The queue or its device is gone: every command launched and not yet reported will never
     * be reported. The runtime fails them with {@code cause}.
     */
    void lost(Throwable cause);
}
