package dev.xq.api;

import java.io.Serial;

/** A command was cancelled because its queue was closed before the command ran. */
public class CommandCancelledException extends XQueueException {
    @Serial
    private static final long serialVersionUID = 1L;

    public CommandCancelledException(String message) {
        super(message, null);
    }
}
