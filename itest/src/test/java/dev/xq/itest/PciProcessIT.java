package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.inject.Inject;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * A process that sees its GPU under another ordinal (CUDA_VISIBLE_DEVICES=GPU-uuid, as in a
 * container) has its queue on the node's device with the same PCI bus id. The node's device list
 * is a test double: a driver service describing cuda0 and cuda3 with their {@code pci} property,
 * as hal-lv1-cuda would on a GPU node (it opens no queues: processes launch their own work).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class PciProcessIT {

    @Inject
    XQueueService xq;

    @Inject
    BundleContext bundles;

    private Path work;
    private ServiceRegistration<XpuDriver> driver;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    /** Describes two GPUs; opening a queue on them is refused. */
    static final class DescribedGpus implements XpuDriver {
        @Override
        public String platform() {
            return "cuda";
        }

        @Override
        public String status() {
            return "2 devices (test double: described only)";
        }

        @Override
        public List<DeviceDescriptor> devices() {
            return List.of(gpu("cuda0", "0000:10:00.0"), gpu("cuda3", "0000:3b:00.0"));
        }

        private static DeviceDescriptor gpu(String id, String pci) {
            return new DeviceDescriptor(id, "described GPU", PreemptionLevel.of(1), 1, 1L << 30, Set.of(), Map.of("pci", pci));
        }

        @Override
        public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
            throw new IllegalArgumentException("device " + deviceId + " is only described here; no queues");
        }
    }

    @Before
    public void nodeServes() throws IOException, InterruptedException {
        work = Files.createTempDirectory(Path.of(System.getProperty("xq.itest.work", "/tmp")).toAbsolutePath(), "pci");
        assertTrue("the interposer is built: " + FakeApps.interposer(), Files.isRegularFile(FakeApps.interposer()));
        assertTrue("the process host serves on " + socket(), XqNode.eventually(10_000, () -> Files.exists(socket())));
        driver = bundles.registerService(XpuDriver.class, new DescribedGpus(), new Hashtable<>());
    }

    @After
    public void driverGone() {
        if (driver != null) {
            driver.unregister();
        }
    }

    private Path socket() {
        return Path.of(bundles.getProperty(XqNode.HOST_SOCKET_PROPERTY));
    }

    private List<XQueueStatus> queuesOf(long pid) {
        return xq.queues().stream().map(XQueue::status).filter(s -> s.group().startsWith(pid + ":")).toList();
    }

    @Test
    public void aProcessSeeingItsGpuAsDevice0LandsOnTheNodesDeviceWithItsPciBusId() throws Exception {
        FakeApps.App pod = FakeApps.start(work, socket(), work.resolve("gpu.lock"),
                Map.of("XQ_NAME", "pod", "CUDA_VISIBLE_DEVICES", "GPU-5f3e2d1c-aaaa-bbbb-cccc-0123456789ab",
                        "FAKECUDA_PCI", "0000:3b:00"),
                "--seconds", "2", "--kernels", "2", "--us", "500", "--period-ms", "20");
        FakeApps.App plain = FakeApps.start(work, socket(), work.resolve("gpu.lock"), Map.of("XQ_NAME", "plain"),
                "--seconds", "2", "--kernels", "2", "--us", "500", "--period-ms", "20");
        assertTrue("pod has a queue in the node", XqNode.eventually(5_000, () -> !queuesOf(pod.pid()).isEmpty()));
        assertTrue("plain has a queue in the node", XqNode.eventually(5_000, () -> !queuesOf(plain.pid()).isEmpty()));
        assertEquals("its device 0 is the node's cuda3 (PCI 0000:3b:00.0)", "cuda3", queuesOf(pod.pid()).getFirst().device());
        assertEquals("the fake's device 0 (PCI 0000:10:00.0) is cuda0", "cuda0", queuesOf(plain.pid()).getFirst().device());
        assertEquals("exit of pod; stderr: " + pod.stderr(), 0, pod.waitFor(20));
        assertEquals("exit of plain; stderr: " + plain.stderr(), 0, plain.waitFor(20));
    }
}
