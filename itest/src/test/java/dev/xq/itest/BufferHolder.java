package dev.xq.itest;

import dev.xq.api.DeviceBuffer;
import dev.xq.api.XQueueService;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.function.Supplier;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * The activator of a small host bundle that {@link HostApiIT} builds and installs at run time:
 * it allocates buffers, loads a module and opens a queue (named {@value #QUEUE}) through its own
 * {@link XQueueService} and never frees or closes them; it shows the buffers to the test as a
 * {@code Supplier} service. Uninstalling it must free them and close the queue.
 */
public class BufferHolder implements BundleActivator {

    static final String PROPERTY = "xq.itest.holder";
    static final String QUEUE = "it-holder-queue";

    @Override
    public void start(BundleContext context) {
        ServiceReference<XQueueService> ref = context.getServiceReference(XQueueService.class);
        XQueueService xq = context.getService(ref);
        List<DeviceBuffer> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(xq.allocate("sim0", 1 << 20));
        }
        xq.create(dev.xq.api.QueueOptions.on("sim0").named(QUEUE));
        xq.load("sim0", "holder", "xq-sim-program 1\nkernel k saxpy_f32\n".getBytes(StandardCharsets.UTF_8));
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(PROPERTY, "true");
        Supplier<List<DeviceBuffer>> show = () -> List.copyOf(held);
        context.registerService(Supplier.class, show, props);
    }

    @Override
    public void stop(BundleContext context) {
        // nothing freed on purpose: the node must do it
    }
}
