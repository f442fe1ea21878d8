package dev.xq.hal.spi;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The vendor stream under a hardware queue, for {@link PreemptionProvider}s that work below the
 * driver that opened it: looked up by type with {@link HwQueue#nativeHandle(Class)}, e.g.
 * {@code queue.nativeHandle(StreamHandle.Hip.class)}, so that a provider never guesses what an
 * untyped handle means.
 */
@ProviderType
public sealed interface StreamHandle {

    /** The address of the stream object. */
    long address();

    /** A HIP stream ({@code hipStream_t}) opened through libamdhip64. */
    record Hip(long address) implements StreamHandle {
    }

    /** A CUDA stream ({@code CUstream}) opened through the driver API. */
    record Cuda(long address) implements StreamHandle {
    }
}
