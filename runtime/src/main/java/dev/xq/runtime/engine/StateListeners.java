package dev.xq.runtime.engine;

import dev.xq.api.QueueState;
import dev.xq.runtime.log.RuntimeLog;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** A queue's {@code onStateChange} listeners: told once per change of state, whoever noticed it. */
final class StateListeners {

    private final CopyOnWriteArrayList<Consumer<QueueState>> listeners = new CopyOnWriteArrayList<>();
    private final AtomicReference<QueueState> last = new AtomicReference<>(QueueState.IDLE);

    AutoCloseable add(Consumer<QueueState> listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /**
     * Tells the listeners if the state moved since the last time anyone looked. The state is only
     * computed when someone listens.
     */
    void announce(Supplier<QueueState> state, String queue, RuntimeLog log) {
        if (listeners.isEmpty()) {
            return;
        }
        QueueState now = state.get();
        if (last.getAndSet(now) != now) {
            for (var l : listeners) {
                try {
                    l.accept(now);
                } catch (RuntimeException e) {
                    log.error("queue " + queue + ": state listener failed", e);
                }
            }
        }
    }
}
