package dev.xq.hal.cuda;

import dev.xq.hal.spi.HalException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code CUhostFn} that hostfunc mode enqueues after each command. CUDA calls it on its own
 * callback thread once the stream reaches it; it only wakes the device's completion thread,
 * because a host function may not call CUDA and holds up its stream until it returns.
 *
 * <p>The stub lives in the global arena and finds its watcher through a token in a map, not a
 * pointer: a host function still queued on a stream when a bundle stops must find nothing
 * rather than freed memory.
 */
// FFM is this class's job: the restricted methods are the point
@SuppressWarnings("restricted")
final class HostFuncSignal {

    private static final Map<Long, CompletionWatcher> WATCHERS = new ConcurrentHashMap<>();
    private static final AtomicLong TOKENS = new AtomicLong();
    private static volatile MemorySegment stub;

    private HostFuncSignal() {
    }

    static MemorySegment stub() {
        MemorySegment s = stub;
        return s != null ? s : makeStub();
    }

    private static synchronized MemorySegment makeStub() {
        MemorySegment s = stub;
        if (s == null) {
            try {
                var target = MethodHandles.lookup().findStatic(HostFuncSignal.class, "called",
                        MethodType.methodType(void.class, MemorySegment.class));
                s = Linker.nativeLinker().upcallStub(target, CudaApi.HOST_FN, Arena.global());
            } catch (ReflectiveOperationException e) {
                throw new HalException("cannot make the cuLaunchHostFunc callback: " + e, e);
            }
            stub = s;
        }
        return s;
    }

    /** @return the user-data pointer value that identifies {@code w} to the callback */
    static MemorySegment register(CompletionWatcher w) {
        long token = TOKENS.incrementAndGet();
        WATCHERS.put(token, w);
        return MemorySegment.ofAddress(token);
    }

    static void unregister(MemorySegment token) {
        WATCHERS.remove(token.address());
    }

    /** Runs on CUDA's callback thread; an exception here would end the JVM, so none escapes. */
    private static void called(MemorySegment userData) {
        try {
            CompletionWatcher w = WATCHERS.get(userData.address());
            if (w != null) {
                w.signal();
            }
        } catch (Throwable ignored) {
            // nothing can be reported from here; the watcher's safety wake-up still sees the command
        }
    }
}
