package dev.xq.http;

/** A refusal with its HTTP status; the message becomes {@code {"error": ...}}. */
final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;

    ApiException(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    int status() {
        return status;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, message);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, message);
    }
}
