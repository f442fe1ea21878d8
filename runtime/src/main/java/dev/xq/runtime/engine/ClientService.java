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
 * node's queues and devices, with the buffers and modules it allocates owned by it, so that
 * {@link #close()} (its bundle stopped) frees them.
 */
public final class ClientService implements XQueueService, AutoCloseable {

    private final XqCore core;
    private final DeviceObjects.Owner owner;

    ClientService(XqCore core, DeviceObjects.Owner owner) {
        this.core = core;
        this.owner = owner;
    }

    @Override
    public XQueue create(QueueOptions options) {
        return core.create(options);
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

    /** Frees what it owns (once unused). */
    @Override
    public void close() {
        owner.close();
    }

    @Override
    public String toString() {
        return "XQueueService of " + owner;
    }
}
