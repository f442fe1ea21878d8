package dev.xq.hal.kfd;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Map;

/**
 * The three libc calls this bundle needs ({@code open}, {@code close}, {@code ioctl}), each
 * capturing {@code errno} right after the call so that the JVM's own libc use in between cannot
 * overwrite it.
 *
 * <p>Symbols are resolved the way a C program's calls resolve: {@code dlsym(RTLD_DEFAULT, name)}
 * (with {@code dlsym} itself from {@link Linker#defaultLookup()}), falling back to the default
 * lookup. The default lookup alone searches only libc's own scope and would skip an
 * {@code LD_PRELOAD}ed interposer; through RTLD_DEFAULT the tests' fake driver sees exactly the
 * calls production makes. Without a preload both give the same address.
 */
final class Libc {

    /** O_RDWR | O_CLOEXEC on Linux x86-64 and aarch64 (fcntl.h). */
    static final int O_RDWR_CLOEXEC = 0x2 | 0x80000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final MethodHandle DLSYM = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("dlsym"),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS));

    private static MemorySegment symbol(String name) {
        try (Arena arena = Arena.ofConfined()) {
            // RTLD_DEFAULT is the null handle on glibc and musl.
            MemorySegment s = (MemorySegment) DLSYM.invokeExact(MemorySegment.NULL, arena.allocateFrom(name));
            return s.equals(MemorySegment.NULL) ? LINKER.defaultLookup().findOrThrow(name) : s;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // open(2) is variadic (mode); passing the mode as the single variadic int matches the C ABI.
    private static final MethodHandle OPEN = LINKER.downcallHandle(
            symbol("open"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(
            symbol("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), CAPTURE_ERRNO);
    // ioctl(int, unsigned long, ...): the argument pointer is variadic.
    private static final MethodHandle IOCTL = LINKER.downcallHandle(
            symbol("ioctl"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));

    // eventfd(2): KFD's debug-trap ENABLE wants a file descriptor it can signal debug events on.
    private static final MethodHandle EVENTFD = LINKER.downcallHandle(
            symbol("eventfd"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), CAPTURE_ERRNO);

    /** EFD_CLOEXEC | EFD_NONBLOCK (sys/eventfd.h, Linux x86-64). */
    static final int EFD_CLOEXEC_NONBLOCK = 0x80000 | 0x800;

    /** Linux errno numbers (asm-generic/errno-base.h, errno.h) with what they mean here. */
    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "EPERM"), Map.entry(2, "ENOENT"), Map.entry(3, "ESRCH"), Map.entry(4, "EINTR"),
            Map.entry(5, "EIO"), Map.entry(6, "ENXIO"), Map.entry(9, "EBADF"), Map.entry(11, "EAGAIN"),
            Map.entry(12, "ENOMEM"), Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"), Map.entry(16, "EBUSY"),
            Map.entry(19, "ENODEV"), Map.entry(22, "EINVAL"), Map.entry(24, "EMFILE"), Map.entry(25, "ENOTTY"),
            Map.entry(28, "ENOSPC"), Map.entry(62, "ETIME"), Map.entry(95, "EOPNOTSUPP"),
            Map.entry(110, "ETIMEDOUT"), Map.entry(114, "EALREADY"));

    private Libc() {
    }

    /** @return the symbolic name of an errno value, e.g. {@code EPERM}, or {@code errno 77} */
    static String errnoName(int errno) {
        return NAMES.getOrDefault(errno, "errno " + errno);
    }

    /** @return the errno value for a symbolic name, or -1 if this class does not know it */
    static int errnoValue(String name) {
        for (Map.Entry<Integer, String> e : NAMES.entrySet()) {
            if (e.getValue().equals(name)) {
                return e.getKey();
            }
        }
        return -1;
    }

    /** A call's return value and the errno captured with it (0 on success). */
    record Result(int value, int errno) {
        boolean failed() {
            return value == -1;
        }
    }

    static Result open(String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            int rc = (int) OPEN.invokeExact(state, arena.allocateFrom(path), flags, 0);
            return new Result(rc, rc == -1 ? (int) ERRNO.get(state, 0L) : 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static Result close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            int rc = (int) CLOSE.invokeExact(state, fd);
            return new Result(rc, rc == -1 ? (int) ERRNO.get(state, 0L) : 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static Result eventfd(int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            int rc = (int) EVENTFD.invokeExact(state, 0, flags);
            return new Result(rc, rc == -1 ? (int) ERRNO.get(state, 0L) : 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static Result ioctl(int fd, long request, MemorySegment arg) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            int rc = (int) IOCTL.invokeExact(state, fd, request, arg);
            return new Result(rc, rc == -1 ? (int) ERRNO.get(state, 0L) : 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("native call failed", t);
    }
}
