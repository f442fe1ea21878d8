package dev.xq.hal.kfd;

import dev.xq.hal.spi.HalException;

/**
 * A KFD call failed. The message names the ioctl (and DBG_TRAP operation), the errno name and
 * what that errno means for this call; {@link #errnoName()} lets callers branch without parsing.
 */
public class KfdException extends HalException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    KfdException(String call, int errno, String meaning) {
        super(call + " failed: " + Libc.errnoName(errno) + " (" + meaning + ")");
        this.call = call;
        this.errno = errno;
    }

    KfdException(String call, String message) {
        super(call + " failed: " + message);
        this.call = call;
        this.errno = 0;
    }

    /** @return the failing call, e.g. {@code AMDKFD_IOC_DBG_TRAP(SUSPEND_QUEUES)} */
    public String call() {
        return call;
    }

    /** @return the errno, or 0 when the call succeeded but a queue status bit reported the failure */
    public int errno() {
        return errno;
    }

    /** @return the errno's symbolic name, e.g. {@code EPERM}, or empty for a status-bit failure */
    public String errnoName() {
        return errno == 0 ? "" : Libc.errnoName(errno);
    }
}
