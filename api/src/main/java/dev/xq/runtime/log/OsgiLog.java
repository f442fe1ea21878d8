package dev.xq.runtime.log;

import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;

/**
 * A {@link RuntimeLog} that writes to the OSGi Log Service while one is bound and drops lines
 * otherwise. A DS component holds one and forwards its optional, dynamic {@code LoggerFactory}
 * reference to {@link #bind} and {@link #unbind}.
 */
public final class OsgiLog implements RuntimeLog {

    private final Class<?> owner;
    private volatile Logger logger;

    /** @param owner the class whose name the log lines carry */
    public OsgiLog(Class<?> owner) {
        this.owner = owner;
    }

    public void bind(LoggerFactory factory) {
        logger = factory.getLogger(owner);
    }

    public void unbind() {
        logger = null;
    }

    @Override
    public void info(String message) {
        Logger l = logger;
        if (l != null) {
            l.info(message);
        }
    }

    @Override
    public void warn(String message) {
        Logger l = logger;
        if (l != null) {
            l.warn(message);
        }
    }

    @Override
    public void warn(String message, Throwable cause) {
        Logger l = logger;
        if (l != null) {
            if (cause == null) {
                l.warn(message);
            } else {
                l.warn(message, cause);
            }
        }
    }

    @Override
    public void error(String message, Throwable cause) {
        Logger l = logger;
        if (l != null) {
            if (cause == null) {
                l.error(message);
            } else {
                l.error(message, cause);
            }
        }
    }
}
