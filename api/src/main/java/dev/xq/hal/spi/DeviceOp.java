package dev.xq.hal.spi;

import dev.xq.api.Command;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

/**
 * A data or launch command as a driver runs it: {@link Command.Write}, {@link Command.Read},
 * {@link Command.Fill} and {@link Command.Launch} with the host application's buffers and
 * functions resolved to the driver's own objects, ranges checked, arguments checked against the
 * function's parameters. The runtime keeps every buffer and module that an op names alive until
 * the command has ended.
 *
 * @since 2.1
 */
public sealed interface DeviceOp {

    /** Copy {@code source} into {@code target} at {@code offset}; within range. */
    record Write(HwBuffer target, long offset, MemorySegment source) implements DeviceOp {
        public Write {
            Objects.requireNonNull(target);
            Objects.requireNonNull(source);
        }
    }

    /** Copy from {@code source} at {@code offset} into {@code target}, which must hold the data when the command is reported completed. */
    record Read(HwBuffer source, long offset, MemorySegment target) implements DeviceOp {
        public Read {
            Objects.requireNonNull(source);
            Objects.requireNonNull(target);
        }
    }

    /** Set {@code bytes} bytes of {@code target} from {@code offset} to {@code value}. */
    record Fill(HwBuffer target, long offset, long bytes, byte value) implements DeviceOp {
        public Fill {
            Objects.requireNonNull(target);
        }
    }

    /**
     * Launch {@code function}; {@code args} are the application's with every
     * {@link Command.Arg.Buf} replaced by {@link Command.Arg.Ptr} of the buffer's address.
     */
    record Launch(HwFunction function, Command.Dim3 grid, Command.Dim3 block, int sharedMemBytes, List<Command.Arg> args)
            implements DeviceOp {
        public Launch {
            Objects.requireNonNull(function);
            args = List.copyOf(args);
        }
    }
}
