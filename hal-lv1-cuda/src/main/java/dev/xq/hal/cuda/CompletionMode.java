package dev.xq.hal.cuda;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * How a device's completion thread learns that a command has finished. All modes bracket each
 * command with two timing events; they differ only in how the thread waits.
 */
enum CompletionMode {
    /**
     * cuEventQuery on every queue's oldest command; between queries the thread sleeps until
     * shortly before the command's predicted end and spins from there (see {@link CompletionWatcher}).
     */
    POLL("poll"),
    /** cuEventSynchronize on the oldest command of the device; the driver spins (default event flags). */
    SYNC_SPIN("sync-spin"),
    /** cuEventSynchronize on events made with CU_EVENT_BLOCKING_SYNC: the driver sleeps until an interrupt. */
    SYNC_BLOCK("sync-block"),
    /** cuLaunchHostFunc after each command: the driver's callback thread wakes the completion thread. */
    HOST_FUNC("hostfunc");

    private final String label;

    CompletionMode(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }

    /** @throws IllegalArgumentException naming the value and the allowed ones */
    static CompletionMode parse(String text) {
        for (CompletionMode m : values()) {
            if (m.label.equals(text == null ? "" : text.strip())) {
                return m;
            }
        }
        throw new IllegalArgumentException("completion mode '" + text + "' is unknown; allowed: "
                + Arrays.stream(values()).map(CompletionMode::label).collect(Collectors.joining(", ")));
    }
}
