package dev.xq.hal.spi;

import dev.xq.api.Command;

/**
 * A command as handed to a hardware queue.
 *
 * @param sequence the command's number within its XQueue; strictly increasing per HwQueue
 * @param command what to run
 */
public record HwCommand(long sequence, Command command) {
}
