package dev.xq.hal.cuda;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Level 2 on CUDA: whether launched commands of a deactivated queue are held on their stream.
 * A held command sits behind a {@code cuStreamWaitValue32} on a flag word in device memory (the
 * guard), written by {@code cuStreamWriteValue32} on the device's side stream; a guard costs
 * the device about 1.5 us per command (H100/H200), so it is placed only where it can pay.
 */
enum StallMode {
    /**
     * Guards the launches of a queue from its first deactivate on, for as long as deactivates keep
     * coming ({@code stallHoldMillis} after the last reactivate): a queue the scheduler never holds
     * (a tenant alone, the top priority under hpf) pays nothing; the first deactivate of a queue
     * finds its commands unguarded and acts as level 1 once.
     */
    ADAPTIVE("adaptive"),
    /** Guards every launch of every queue: level 2 from the first deactivate, at the cost on every command. */
    ALWAYS("always"),
    /** No guards: queues are level 1, as before. */
    OFF("off");

    private final String label;

    StallMode(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }

    /** @throws IllegalArgumentException naming the value and the allowed ones */
    static StallMode parse(String text) {
        for (StallMode m : values()) {
            if (m.label.equals(text == null ? "" : text.strip())) {
                return m;
            }
        }
        throw new IllegalArgumentException("stall mode '" + text + "' is unknown; allowed: "
                + Arrays.stream(values()).map(StallMode::label).collect(Collectors.joining(", ")));
    }
}
