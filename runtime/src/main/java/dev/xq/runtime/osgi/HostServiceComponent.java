package dev.xq.runtime.osgi;

import dev.xq.api.CodeModule;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.runtime.engine.ClientService;
import java.util.List;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ServiceScope;

/**
 * {@link XQueueService} as each bundle gets it: a bundle-scoped service (the framework's
 * {@code ServiceFactory}), one instance per bundle that uses it, whose buffers and modules belong
 * to that bundle. When the bundle stops (or releases the service), the framework ungets it, this
 * instance is deactivated and frees what the bundle still holds: an uninstalled host bundle
 * leaves no device memory behind.
 */
@Component(service = XQueueService.class, scope = ServiceScope.BUNDLE)
public class HostServiceComponent implements XQueueService {

    @Reference(target = "(component.name=dev.xq.runtime.osgi.RuntimeComponent)")
    SchedulerControl runtime;

    private ClientService client;

    @Activate
    void activate(ComponentContext context) {
        Bundle b = context.getUsingBundle();
        String who = b == null ? "an unknown bundle" : "bundle " + b.getSymbolicName() + " [" + b.getBundleId() + "]";
        client = ((RuntimeComponent) runtime).core().client(who);
    }

    @Deactivate
    void deactivate() {
        client.close();
    }

    @Override
    public XQueue create(QueueOptions options) {
        return client.create(options);
    }

    @Override
    public List<XQueue> queues() {
        return client.queues();
    }

    @Override
    public Optional<XQueue> find(long handle) {
        return client.find(handle);
    }

    @Override
    public List<DeviceInfo> devices() {
        return client.devices();
    }

    @Override
    public List<DriverInfo> drivers() {
        return client.drivers();
    }

    @Override
    public QueueConfig defaults() {
        return client.defaults();
    }

    @Override
    public DeviceBuffer allocate(String device, long bytes) {
        return client.allocate(device, bytes);
    }

    @Override
    public List<DeviceBuffer> buffers() {
        return client.buffers();
    }

    @Override
    public CodeModule load(String device, String name, byte[] image) {
        return client.load(device, name, image);
    }
}
