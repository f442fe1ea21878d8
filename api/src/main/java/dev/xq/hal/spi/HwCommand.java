package dev.xq.hal.spi;

import dev.xq.api.Command;

/**
 * A command as handed to a hardware queue.
 *
 * @param sequence the command's number within its XQueue; strictly increasing per HwQueue
 * @param command what to run, as the application submitted it
 * @param op for a data or launch command of a loaded module ({@link Command.Write}, {@code Read},
 *        {@code Fill}, {@code Launch}): the same command with buffers and functions resolved to
 *        the driver's objects; null for every other command (since 2.1)
 */
public record HwCommand(long sequence, Command command, DeviceOp op) {

    /** A command without a {@link DeviceOp}. */
    public HwCommand(long sequence, Command command) {
        this(sequence, command, null);
    }
}
