package dev.xq.host;

import static org.junit.jupiter.api.Assertions.fail;

import dev.xq.runtime.log.RuntimeLog;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for something another thread or process does, with a generous limit (a liveness check, not a speed one). */
final class Await {

    static final Duration LIMIT = Duration.ofSeconds(20);

    private Await() {
    }

    static void until(BooleanSupplier condition, Supplier<String> what) {
        until(LIMIT, condition, what);
    }

    /** As {@link #until(BooleanSupplier, Supplier)}, within {@code limit}. */
    static void until(Duration limit, BooleanSupplier condition, Supplier<String> what) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + limit + ": " + what.get());
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting for: " + what.get());
            }
        }
    }

    /** A log that keeps its lines, for tests that look at what was logged. */
    static final class Log implements RuntimeLog {
        final CopyOnWriteArrayList<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void info(String message) {
            lines.add("INFO " + message);
        }

        @Override
        public void warn(String message) {
            lines.add("WARN " + message);
        }

        @Override
        public void error(String message, Throwable cause) {
            lines.add("ERROR " + message + (cause == null ? "" : " " + cause));
        }

        boolean has(String level, String... parts) {
            for (String l : lines) {
                if (!l.startsWith(level + " ")) {
                    continue;
                }
                boolean all = true;
                for (String p : parts) {
                    all &= l.contains(p);
                }
                if (all) {
                    return true;
                }
            }
            return false;
        }
    }
}
