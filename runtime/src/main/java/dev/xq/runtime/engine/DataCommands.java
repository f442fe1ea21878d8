package dev.xq.runtime.engine;

import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.KernelFunction;
import dev.xq.hal.spi.DeviceOp;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Turns a host application's data and launch commands ({@link Command.Write}, {@link Command.Read},
 * {@link Command.Fill}, {@link Command.Launch}) into the driver's {@link DeviceOp}, at submit: it
 * checks that every buffer and function belongs to this node, is open and is on the queue's
 * device, that copies stay within their buffer and that a launch's arguments match the
 * function's parameters; and it takes a use of each buffer and module named, given back when the
 * command ends. A refusal is an {@link IllegalArgumentException} naming the value and what is
 * allowed, and changes nothing (no use is left taken).
 */
final class DataCommands {

    /** A resolved command: the driver's op and the uses to give back when the command ends. */
    record Resolved(DeviceOp op, List<DeviceObjects.Held> held) {
        void release() {
            for (DeviceObjects.Held h : held) {
                h.release();
            }
        }
    }

    private final DeviceObjects objects;

    DataCommands(DeviceObjects objects) {
        this.objects = objects;
    }

    /** @return whether the command is one this class resolves */
    static boolean isData(Command c) {
        return c instanceof Command.Write || c instanceof Command.Read || c instanceof Command.Fill || c instanceof Command.Launch;
    }

    /**
     * Resolves a data command of a queue that may have no device objects ({@code d} null: it was
     * not created by an XQueueService).
     *
     * @throws IllegalArgumentException naming what is wrong; nothing is left acquired
     */
    static Resolved resolve(DataCommands d, Command command, String device, String queue) {
        if (d == null) {
            throw new IllegalArgumentException("command kind '" + command.kind() + "' needs the node's device objects;"
                    + " queue " + queue + " was not created by an XQueueService");
        }
        return d.resolve(command, device, queue);
    }

    /**
     * @param device the queue's device
     * @param queue the queue's name, for messages
     * @throws IllegalArgumentException naming what is wrong; nothing is left acquired
     */
    Resolved resolve(Command command, String device, String queue) {
        List<DeviceObjects.Held> held = new ArrayList<>();
        try {
            DeviceOp op = switch (command) {
                case Command.Write w -> {
                    DeviceObjects.BufferImpl b = take(w.target(), device, queue, "write target", held);
                    range("write", w.bytes(), w.offset(), b);
                    yield new DeviceOp.Write(b.hw, w.offset(), w.source());
                }
                case Command.Read r -> {
                    DeviceObjects.BufferImpl b = take(r.source(), device, queue, "read source", held);
                    range("read", r.bytes(), r.offset(), b);
                    yield new DeviceOp.Read(b.hw, r.offset(), r.target());
                }
                case Command.Fill f -> {
                    DeviceObjects.BufferImpl b = take(f.target(), device, queue, "fill target", held);
                    range("fill", f.bytes(), f.offset(), b);
                    yield new DeviceOp.Fill(b.hw, f.offset(), f.bytes(), f.value());
                }
                case Command.Launch l -> launch(l, device, queue, held);
                default -> throw new IllegalArgumentException("command kind '" + command.kind() + "' is not a data command");
            };
            return new Resolved(op, List.copyOf(held));
        } catch (RuntimeException e) {
            for (DeviceObjects.Held h : held) {
                h.release();
            }
            throw e;
        }
    }

    private DeviceOp launch(Command.Launch l, String device, String queue, List<DeviceObjects.Held> held) {
        KernelFunction fn = l.function();
        if (!(fn instanceof DeviceObjects.FunctionImpl f) || f.module().objects() != objects) {
            throw new IllegalArgumentException("launch function " + fn + " was not looked up on this node; use CodeModule.function of a"
                    + " module from this XQueueService's load");
        }
        DeviceObjects.ModuleImpl m = f.module();
        if (!m.device.equals(device)) {
            throw new IllegalArgumentException(f + " is on " + m.device + ", but queue '" + queue + "' is on " + device
                    + "; load the module on " + device);
        }
        m.acquire();
        held.add(m);
        Optional<List<Long>> sizes = f.parameterSizes();
        List<Arg> args = l.args();
        if (sizes.isPresent()) {
            List<Long> p = sizes.get();
            if (p.size() != args.size()) {
                throw new IllegalArgumentException("kernel " + f.name() + " takes " + p.size() + " parameter" + (p.size() == 1 ? "" : "s")
                        + " of " + p + " bytes, but " + args.size() + " argument" + (args.size() == 1 ? " was" : "s were") + " given");
            }
            for (int i = 0; i < p.size(); i++) {
                long given = Arg.size(args.get(i));
                if (p.get(i) != given) {
                    throw new IllegalArgumentException("kernel " + f.name() + " parameter #" + i + " is " + p.get(i) + " bytes, but argument #"
                            + i + " (" + args.get(i) + ") is " + given + " bytes; I32/F32 are 4 bytes, I64/F64/Ptr/Buf 8");
                }
            }
        }
        List<Arg> resolved = new ArrayList<>(args.size());
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i) instanceof Arg.Buf buf) {
                DeviceObjects.BufferImpl b = take(buf.buffer(), device, queue, "argument #" + i, held);
                resolved.add(new Arg.Ptr(b.hw.address()));
            } else {
                resolved.add(args.get(i));
            }
        }
        return new DeviceOp.Launch(f.hw(), l.grid(), l.block(), l.sharedMemBytes(), resolved);
    }

    private DeviceObjects.BufferImpl take(DeviceBuffer buffer, String device, String queue, String role, List<DeviceObjects.Held> held) {
        if (!(buffer instanceof DeviceObjects.BufferImpl b) || b.objects() != objects) {
            throw new IllegalArgumentException(role + " " + buffer + " was not allocated on this node; use a buffer from this"
                    + " XQueueService's allocate");
        }
        if (!b.device.equals(device)) {
            throw new IllegalArgumentException(role + " " + b + " is on " + b.device + ", but queue '" + queue + "' is on " + device
                    + "; use a buffer of " + device);
        }
        b.acquire();
        held.add(b);
        return b;
    }

    private static void range(String what, long bytes, long offset, DeviceObjects.BufferImpl b) {
        long size = b.size();
        if (offset > size || bytes > size - offset) {
            throw new IllegalArgumentException(what + " of " + bytes + " bytes at offset " + offset + " is out of range of " + b
                    + "; allowed: offset + bytes <= " + size);
        }
    }
}
