package dev.xq.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.k8s.deviceplugin.v1beta1.AllocateRequest;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerAllocateRequest;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerAllocateResponse;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import dev.xq.k8s.deviceplugin.v1beta1.DevicePluginGrpc;
import dev.xq.k8s.deviceplugin.v1beta1.Empty;
import dev.xq.k8s.deviceplugin.v1beta1.ListAndWatchResponse;
import dev.xq.k8s.deviceplugin.v1beta1.PreferredAllocationRequest;
import dev.xq.k8s.deviceplugin.v1beta1.RegisterRequest;
import dev.xq.k8s.deviceplugin.v1beta1.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.grpc.stub.StreamObserver;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device plugin against the kubelet's side of the protocol, over real Unix sockets and the real
 * gRPC stack: a test kubelet serves {@code Registration} on {@code kubelet.sock} in a device plugin
 * folder and, as the kubelet does, calls the plugin back on the socket it registered:
 * ListAndWatch, GetPreferredAllocation, Allocate; the kubelet's restart (the plugin's socket
 * removed) makes the plugin register again.
 */
class DevicePluginTest {

    @TempDir
    Path dir;
    private final BlockingQueue<RegisterRequest> registered = new LinkedBlockingQueue<>();
    private final NioEventLoopGroup group = new NioEventLoopGroup(1);
    private Server kubelet;
    private DevicePlugin plugin;
    private ManagedChannel toPlugin;
    private Path plugins;
    private Path run;
    private Path dev;

    @BeforeEach
    void kubelet() throws Exception {
        plugins = Files.createDirectories(dir.resolve("device-plugins"));
        run = Files.createDirectories(dir.resolve("run-xq"));
        dev = Files.createDirectories(dir.resolve("dev"));
        Files.createFile(dev.resolve("nvidiactl"));
        Files.createFile(dev.resolve("nvidia1"));
        kubelet = NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(plugins.resolve("kubelet.sock")))
                .channelType(NioServerDomainSocketChannel.class).bossEventLoopGroup(group).workerEventLoopGroup(group)
                .addService(new RegistrationGrpc.RegistrationImplBase() {
                    @Override
                    public void register(RegisterRequest request, StreamObserver<Empty> out) {
                        registered.add(request);
                        out.onNext(Empty.getDefaultInstance());
                        out.onCompleted();
                    }
                }).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        if (toPlugin != null) {
            toPlugin.shutdownNow();
        }
        if (plugin != null) {
            plugin.close();
        }
        kubelet.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private DevicePlugin.Settings settings() {
        return new DevicePlugin.Settings(plugins, "xq.sock", List.of(0, 1), 4, dir.resolve("lib"), run, dev, 50);
    }

    private DevicePluginGrpc.DevicePluginBlockingStub connect(String endpoint) {
        toPlugin = NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(plugins.resolve(endpoint))).channelType(NioDomainSocketChannel.class)
                .eventLoopGroup(group).usePlaintext().build();
        return DevicePluginGrpc.newBlockingStub(toPlugin).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @Test
    void registersAdvertisesSharesAndHandsContainersTheInterposerAndTheNodesSocket() throws Exception {
        plugin = new DevicePlugin(settings());
        plugin.start();
        RegisterRequest r = registered.poll(5, TimeUnit.SECONDS);
        assertEquals("v1beta1", r.getVersion());
        assertEquals("xq.sock", r.getEndpoint());
        assertEquals("xq.dev/gpu", r.getResourceName());
        assertTrue(r.getOptions().getGetPreferredAllocationAvailable());

        // the kubelet calls back on the socket registered
        DevicePluginGrpc.DevicePluginBlockingStub stub = connect(r.getEndpoint());
        Iterator<ListAndWatchResponse> watch = stub.withDeadlineAfter(20, TimeUnit.SECONDS).listAndWatch(Empty.getDefaultInstance());
        ListAndWatchResponse first = watch.next();
        assertEquals(8, first.getDevicesCount(), "2 GPUs x 4 shares");
        assertEquals("xq-gpu0-0", first.getDevices(0).getID());
        assertEquals("xq-gpu1-3", first.getDevices(7).getID());
        assertTrue(first.getDevicesList().stream().allMatch(d -> d.getHealth().equals("Unhealthy")), "no node socket yet: " + first);
        Files.createFile(run.resolve("node.sock")); // the node comes up
        ListAndWatchResponse second = watch.next();
        assertTrue(second.getDevicesList().stream().allMatch(d -> d.getHealth().equals("Healthy")), second.toString());

        List<String> preferred = stub.getPreferredAllocation(PreferredAllocationRequest.newBuilder().addContainerRequests(
                ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(List.of("xq-gpu0-0", "xq-gpu1-0", "xq-gpu1-1",
                        "xq-gpu1-2")).setAllocationSize(2)).build()).getContainerResponses(0).getDeviceIDsList();
        assertEquals(List.of("xq-gpu1-0", "xq-gpu1-1"), preferred, "two shares of the GPU with the most free");

        ContainerAllocateResponse a = stub.allocate(AllocateRequest.newBuilder().addContainerRequests(
                ContainerAllocateRequest.newBuilder().addAllDevicesIds(preferred)).build()).getContainerResponses(0);
        assertEquals("/opt/xq/lib/libxq-cuda.so:/opt/xq/lib/libxq-hip.so", a.getEnvsOrThrow("LD_PRELOAD"));
        assertEquals("/run/xq/node.sock", a.getEnvsOrThrow("XQ_SOCKET"));
        assertEquals("1", a.getEnvsOrThrow("NVIDIA_VISIBLE_DEVICES"));
        assertEquals(dir.resolve("lib").toString(), a.getMounts(0).getHostPath());
        assertTrue(a.getMounts(0).getReadOnly());
        assertEquals(run.toString(), a.getMounts(1).getHostPath());
        assertEquals("/run/xq", a.getMounts(1).getContainerPath());
        assertEquals(List.of("/dev/nvidiactl", "/dev/nvidia1"), a.getDevicesList().stream().map(d -> d.getContainerPath()).toList(),
                "the device files that exist, of the GPU given");

        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> stub.allocate(AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds("xq-gpu7-0")).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("'xq-gpu7-0'") && e.getStatus().getDescription().contains("[0, 1]"),
                e.getStatus().getDescription());
    }

    @Test
    void aKubeletRestartMakesItRegisterAgain() throws Exception {
        plugin = new DevicePlugin(settings());
        plugin.start();
        registered.poll(5, TimeUnit.SECONDS);
        Files.delete(plugins.resolve("xq.sock")); // what a restarting kubelet does to the plugins' sockets
        RegisterRequest again = registered.poll(5, TimeUnit.SECONDS);
        assertTrue(again != null, "registered again");
        long until = System.nanoTime() + 5_000_000_000L;
        while (plugin.registrations() < 2 && System.nanoTime() < until) {
            Thread.sleep(10); // the kubelet heard it before the plugin counted its answer
        }
        assertEquals(2, plugin.registrations());
        assertEquals(8, connect("xq.sock").listAndWatch(Empty.getDefaultInstance()).next().getDevicesCount(), "served again");
    }

    @Test
    void badSettingsAreRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DevicePlugin.Settings(plugins, "xq.sock", List.of(), 4, dir, run, dev, 50));
        assertTrue(e.getMessage().startsWith("no GPU to share"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new DevicePlugin.Settings(plugins, "xq.sock", List.of(0), 0, dir, run, dev, 50));
        assertEquals("replicas 0 is outside [1, 1000]", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new DevicePlugin.Settings(plugins, "../x", List.of(0), 4, dir, run, dev, 50));
        assertTrue(e.getMessage().startsWith("endpoint '../x'"), e.getMessage());
    }

    @Test
    void gpusAreFoundByTheirDeviceFiles() throws Exception {
        Files.createFile(dev.resolve("nvidia0"));
        Files.createFile(dev.resolve("nvidia-uvm"));
        assertEquals(List.of(0, 1), DevicePlugin.gpusIn(dev));
    }
}
