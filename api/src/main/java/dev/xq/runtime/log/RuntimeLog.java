package dev.xq.runtime.log;

import org.osgi.annotation.versioning.ConsumerType;

/** The runtime's logging port: the OSGi Log Service in a node, a plain sink in unit tests. */
@ConsumerType
public interface RuntimeLog {
    void info(String message);

    void warn(String message);

    /** A warning with the exception behind it; {@code cause} may be null. */
    default void warn(String message, Throwable cause) {
        warn(cause == null ? message : message + ": " + cause);
    }

    void error(String message, Throwable cause);

    /** Logs nothing; for tests that do not look at logs. */
    RuntimeLog NONE = new RuntimeLog() {
        @Override
        public void info(String message) {
        }

        @Override
        public void warn(String message) {
        }

        @Override
        public void error(String message, Throwable cause) {
        }
    };
}
