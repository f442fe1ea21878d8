package dev.xq.hal.spi;

/** The hardware or its library refused an operation; the message names the call and the error. */
public class HalException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HalException(String message) {
        super(message);
    }

    public HalException(String message, Throwable cause) {
        super(message, cause);
    }
}
