package dev.xq.api;

/** Where an XQueue stands, as the scheduler sees it. */
public enum QueueState {
    /** No pending and no in-flight command. */
    IDLE,
    /** Has work and may launch it. */
    READY,
    /** Has work, but the scheduler or the application holds it back. */
    SUSPENDED,
    /** Its device is gone or its hardware queue broke; new commands are refused. */
    ERROR,
    /** Closed by the application. */
    CLOSED
}
