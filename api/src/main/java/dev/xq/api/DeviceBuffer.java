package dev.xq.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A region of device memory, allocated by {@link XQueueService#allocate(String, long)}. It belongs
 * to the bundle that allocated it: it is freed when that bundle closes it, or when the bundle
 * stops (the service it got is released), whichever comes first. Commands name it by this
 * object ({@link Command.Write}, {@link Command.Read}, {@link Command.Fill},
 * {@link Command.Arg.Buf}), never by a device address. Thread-safe.
 *
 * <p>Closing a buffer that commands submitted earlier still use is allowed: new commands
 * naming it are refused at once, and the memory is freed when the last of those commands has
 * ended (so a queued command never touches freed memory).
 *
 * @since 1.5
 */
@ProviderType
public interface DeviceBuffer extends AutoCloseable {

    /** @return a number unique on the node, for messages ({@code buffer #7}) */
    long id();

    /** @return the device the memory is on, e.g. {@code sim0} or {@code cuda0} */
    String device();

    /** @return its size in bytes */
    long size();

    /** @return false once {@link #close()} was called or its owner stopped */
    boolean isOpen();

    /** Frees the memory (once the commands that use it have ended). Idempotent. */
    @Override
    void close();
}
