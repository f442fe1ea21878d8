package dev.xq.api;

import java.io.Serial;

/** Base of the exceptions the XQueue API throws for outcomes of commands. */
public class XQueueException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    public XQueueException(String message, Throwable cause) {
        super(message, cause);
    }
}
