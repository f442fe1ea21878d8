package dev.xq.bench.workload;

import dev.xq.api.Command;
import java.util.Objects;

/**
 * What one task submits: {@code count} copies of {@code command}.
 */
public record TaskShape(int count, Command command) {
    public TaskShape {
        Objects.requireNonNull(command, "command");
        if (count < 1) {
            throw new IllegalArgumentException("a task of " + count + " commands is empty; allowed: >= 1");
        }
    }

    /** @return a task of {@code n} spin commands of {@code micros} on one engine */
    public static TaskShape spins(int n, long micros) {
        return new TaskShape(n, Command.spin(micros));
    }
}
