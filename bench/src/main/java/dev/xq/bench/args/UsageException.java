package dev.xq.bench.args;

import java.io.Serial;

/** A command line the suite cannot run; the message names the bad argument and what is allowed. */
public class UsageException extends IllegalArgumentException {
    @Serial
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
