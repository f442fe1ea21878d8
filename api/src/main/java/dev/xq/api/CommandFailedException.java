package dev.xq.api;

import java.io.Serial;

/** A command failed on its device; the cause says why. */
public class CommandFailedException extends XQueueException {
    @Serial
    private static final long serialVersionUID = 1L;

    public CommandFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
