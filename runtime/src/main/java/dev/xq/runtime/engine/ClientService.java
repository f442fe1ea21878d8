package dev.xq.runtime.engine;

import dev.xq.api.CodeModule;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.util.List;
import java.util.Optional;

/**
 * One host application's view of the node (in OSGi: one bundle's {@code XQueueService}): the
 * node's queues and devices, with the queues it creates and the buffers and modules it allocates
 * owned by it, so that {@link #close()} (its bundle stopped or uninstalled) closes those queues
 * (their pending commands are cancelled, as by the application's own close) and then frees the
 * memory once no command uses it. Queues the application closed itself are dropped from the list
 * as it grows (not by a state listener: that would cost every queue a lock per state change).
 */
public final class ClientService implements XQueueService, AutoCloseable {

    private final XqCore core;
    private final DeviceObjects.Owner owner;
    /** The queues it created (some perhaps closed since); guarded by itself. */
    private final java.util.Set<XQueue> queues = new java.util.LinkedHashSet<>();
    /** Prune the closed ones from {@link #queues} when it grows past this. */
    private int pruneAt = 64;
    private volatile boolean closed;

    ClientService(XqCore core, DeviceObjects.Owner owner) {
        this.core = core;
        this.owner = owner;
    }

    @Override
    public XQueue create(QueueOptions options) {
        if (closed) {
            throw new IllegalStateException("this XQueueService (" + owner + ") is closed: its bundle stopped; no queue was created");
        }
        XQueue q = core.create(options);
        synchronized (queues) {
            queues.add(q);
            if (queues.size() >= pruneAt) {
                queues.removeIf(ClientService::isClosed);
                pruneAt = Math.max(64, 2 * queues.size());
            }
        }
        if (closed) {
            q.close(); // closed while it was created: it goes with the rest
        }
        return q;
    }

    private static boolean isClosed(XQueue q) {
        return q.status().state() == dev.xq.api.QueueState.CLOSED;
    }

    /** @return the queues it created that are still open */
    public List<XQueue> ownQueues() {
        synchronized (queues) {
            return queues.stream().filter(q -> !isClosed(q)).toList();
        }
    }

    @Override
    public List<XQueue> queues() {
        return core.queues();
    }

    @Override
    public Optional<XQueue> find(long handle) {
        return core.find(handle);
    }

    @Override
    public List<DeviceInfo> devices() {
        return core.devices();
    }

    @Override
    public List<DriverInfo> drivers() {
        return core.drivers();
    }

    @Override
    public QueueConfig defaults() {
        return core.defaults();
    }

    @Override
    public DeviceBuffer allocate(String device, long bytes) {
        return owner.allocate(device, bytes);
    }

    @Override
    public List<DeviceBuffer> buffers() {
        return owner.buffers();
    }

    @Override
    public CodeModule load(String device, String name, byte[] image) {
        return owner.load(device, name, image);
    }

    /** @return its open modules */
    public List<CodeModule> modules() {
        return owner.modules();
    }

    /** Closes the queues it created, then frees its buffers and modules (once no command uses them). */
    @Override
    public void close() {
        closed = true;
        List<XQueue> mine;
        synchronized (queues) {
            mine = List.copyOf(queues);
            queues.clear();
        }
        // in parallel: each close gives the commands on the device a grace to finish (2 s), and
        // a bundle with many busy queues should not wait for them one after another
        List<Thread> closing = new java.util.ArrayList<>(mine.size());
        for (XQueue q : mine) {
            closing.add(Thread.ofVirtual().name("xq-client-close").start(() -> {
                try {
                    q.close(); // idempotent for the ones it closed itself
                } catch (RuntimeException e) {
                    // one queue that fails to close must not keep the others, or the memory, alive
                }
            }));
        }
        for (Thread t : closing) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        owner.close();
    }

    @Override
    public String toString() {
        return "XQueueService of " + owner;
    }
}
