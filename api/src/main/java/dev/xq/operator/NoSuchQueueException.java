package dev.xq.operator;

/**
 * No open queue answers to the key an operator gave. An {@link IllegalArgumentException}, as
 * every refused value is, so that front ends that only know those still show the message;
 * the HTTP API answers it with 404 rather than 400.
 */
public final class NoSuchQueueException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public NoSuchQueueException(String message) {
        super(message);
    }
}
