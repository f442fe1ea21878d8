package dev.xq.k8s;

import dev.xq.k8s.deviceplugin.v1beta1.AllocateRequest;
import dev.xq.k8s.deviceplugin.v1beta1.AllocateResponse;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerAllocateRequest;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerAllocateResponse;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import dev.xq.k8s.deviceplugin.v1beta1.ContainerPreferredAllocationResponse;
import dev.xq.k8s.deviceplugin.v1beta1.Device;
import dev.xq.k8s.deviceplugin.v1beta1.DevicePluginGrpc;
import dev.xq.k8s.deviceplugin.v1beta1.DevicePluginOptions;
import dev.xq.k8s.deviceplugin.v1beta1.DeviceSpec;
import dev.xq.k8s.deviceplugin.v1beta1.Empty;
import dev.xq.k8s.deviceplugin.v1beta1.ListAndWatchResponse;
import dev.xq.k8s.deviceplugin.v1beta1.Mount;
import dev.xq.k8s.deviceplugin.v1beta1.PreStartContainerRequest;
import dev.xq.k8s.deviceplugin.v1beta1.PreStartContainerResponse;
import dev.xq.k8s.deviceplugin.v1beta1.PreferredAllocationRequest;
import dev.xq.k8s.deviceplugin.v1beta1.PreferredAllocationResponse;
import dev.xq.k8s.deviceplugin.v1beta1.RegisterRequest;
import dev.xq.k8s.deviceplugin.v1beta1.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * XQ's device plugin (issue 43): tells the kubelet of its host that it has {@value
 * PodMutator#RESOURCE}, {@code replicas} shares of each GPU, over the kubelet's {@code
 * deviceplugin/v1beta1} gRPC API on Unix sockets, and in {@code Allocate} hands each container the
 * interposers ({@code LD_PRELOAD}, from a host folder mounted read-only), the node's socket folder
 * ({@code XQ_SOCKET}; read-write, as the node's shared memory lies beside its socket), the GPU's
 * device files that exist on the host, and {@code NVIDIA_VISIBLE_DEVICES} for the NVIDIA
 * container runtime. So an unmodified image is scheduled by the XQ node of its host; the
 * admission webhook ({@link Webhook}) adds its priority.
 *
 * <p>A share is a place, not a fraction: XQ decides who runs by priority, whatever shares a
 * container holds. The plugin's devices are healthy while the node's socket exists; it registers
 * again when the kubelet restarts (which removes the plugins' sockets).
 */
public final class DevicePlugin implements AutoCloseable {

    static {
        // The JDK's own Unix sockets (NIO) carry the gRPC calls: no native transport library is loaded.
        System.setProperty("io.grpc.netty.shaded.io.netty.transport.noNative", "true");
    }

    static final String API_VERSION = "v1beta1";
    static final String KUBELET_SOCKET = "kubelet.sock";
    static final String HEALTHY = "Healthy";
    static final String UNHEALTHY = "Unhealthy";
    private static final Pattern ID = Pattern.compile("xq-gpu(\\d{1,3})-(\\d{1,4})");

    /**
     * @param pluginDir the kubelet's device plugin folder ({@code /var/lib/kubelet/device-plugins})
     * @param endpoint this plugin's socket, a file name in it
     * @param gpus the host's GPU ordinals shared
     * @param replicas shares advertised per GPU
     * @param interposerDir the host folder holding {@code libxq-cuda.so} and {@code libxq-hip.so}
     * @param nodeSocketDir the host folder of the node's socket ({@code node.sock}) and shared memory
     * @param devDir where the GPU device files are looked for ({@code /dev})
     * @param healthMillis how often the node's socket is looked for
     */
    record Settings(Path pluginDir, String endpoint, List<Integer> gpus, int replicas, Path interposerDir, Path nodeSocketDir,
                    Path devDir, long healthMillis) {
        Settings {
            gpus = List.copyOf(gpus);
            if (gpus.isEmpty()) {
                throw new IllegalArgumentException("no GPU to share: give --gpus (ordinals, e.g. 0,1) or run where /dev/nvidia<N> exist");
            }
            if (replicas < 1 || replicas > 1000) {
                throw new IllegalArgumentException("replicas " + replicas + " is outside [1, 1000]");
            }
            if (!endpoint.matches("[A-Za-z0-9._-]{1,100}") || endpoint.equals(KUBELET_SOCKET)) {
                throw new IllegalArgumentException("endpoint '" + endpoint + "' must be a plain file name other than " + KUBELET_SOCKET);
            }
        }
    }

    /** Where things are inside the container. */
    static final String CONTAINER_LIB = "/opt/xq/lib";
    static final String CONTAINER_RUN = "/run/xq";

    private final Settings s;
    private final EventLoopGroup group = new NioEventLoopGroup(2);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "xq-device-plugin");
        t.setDaemon(true);
        return t;
    });
    private final List<StreamObserver<ListAndWatchResponse>> watchers = new CopyOnWriteArrayList<>();
    private volatile boolean healthy;
    private Server server;
    private volatile int registrations;

    DevicePlugin(Settings settings) {
        this.s = settings;
    }

    /** Serves on the plugin's socket and registers with the kubelet; then watches both. */
    synchronized void start() throws IOException {
        healthy = nodeUp();
        serve();
        register();
        timer.scheduleWithFixedDelay(this::tick, s.healthMillis(), s.healthMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return how many times the plugin has registered with a kubelet */
    int registrations() {
        return registrations;
    }

    private boolean nodeUp() {
        return Files.exists(s.nodeSocketDir().resolve("node.sock"));
    }

    private Path socket() {
        return s.pluginDir().resolve(s.endpoint());
    }

    private void serve() throws IOException {
        Files.deleteIfExists(socket()); // a stale one of an earlier run
        server = NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket())).channelType(NioServerDomainSocketChannel.class)
                .bossEventLoopGroup(group).workerEventLoopGroup(group).addService(new Service()).build().start();
    }

    private void register() throws IOException {
        Path kubelet = s.pluginDir().resolve(KUBELET_SOCKET);
        ManagedChannel ch = NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(kubelet)).channelType(NioDomainSocketChannel.class)
                .eventLoopGroup(group).usePlaintext().build();
        try {
            RegistrationGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS).register(RegisterRequest.newBuilder()
                    .setVersion(API_VERSION).setEndpoint(s.endpoint()).setResourceName(PodMutator.RESOURCE)
                    .setOptions(DevicePluginOptions.newBuilder().setGetPreferredAllocationAvailable(true)).build());
            registrations++;
            System.out.println("xq device plugin: registered " + PodMutator.RESOURCE + " (" + s.gpus().size() + " GPU(s) x " + s.replicas()
                    + ") with the kubelet at " + kubelet + ", serving " + socket());
        } catch (RuntimeException e) {
            throw new IOException("registering with the kubelet at " + kubelet + " failed: " + e.getMessage()
                    + (Files.exists(kubelet) ? "" : " (no such socket: is the kubelet running, and its device plugin folder mounted "
                            + "here? --plugin-dir)"), e);
        } finally {
            ch.shutdownNow();
        }
    }

    /** Health changes go to every ListAndWatch; a kubelet restart (our socket gone) means serving and registering again. */
    private void tick() {
        try {
            boolean up = nodeUp();
            if (up != healthy) {
                healthy = up;
                System.out.println("xq device plugin: the node's socket " + (up ? "is back" : "is gone") + ": devices " + (up ? HEALTHY : UNHEALTHY));
                ListAndWatchResponse now = list();
                for (StreamObserver<ListAndWatchResponse> w : watchers) {
                    try {
                        w.onNext(now);
                    } catch (RuntimeException gone) {
                        watchers.remove(w);
                    }
                }
            }
            if (!Files.exists(socket())) {
                synchronized (this) {
                    System.out.println("xq device plugin: " + socket() + " is gone (the kubelet restarted?): serving and registering again");
                    server.shutdownNow();
                    watchers.clear();
                    serve();
                    register();
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("xq device plugin: " + e.getMessage() + " (tried again in " + s.healthMillis() + " ms)");
        }
    }

    ListAndWatchResponse list() {
        ListAndWatchResponse.Builder b = ListAndWatchResponse.newBuilder();
        String h = healthy ? HEALTHY : UNHEALTHY;
        for (int g : s.gpus()) {
            for (int r = 0; r < s.replicas(); r++) {
                b.addDevices(Device.newBuilder().setID(id(g, r)).setHealth(h));
            }
        }
        return b.build();
    }

    static String id(int gpu, int replica) {
        return "xq-gpu" + gpu + "-" + replica;
    }

    /** @return the GPU of a device ID this plugin advertises */
    private int gpuOf(String id) {
        Matcher m = ID.matcher(id);
        if (m.matches()) {
            int g = Integer.parseInt(m.group(1));
            int r = Integer.parseInt(m.group(2));
            if (s.gpus().contains(g) && r < s.replicas()) {
                return g;
            }
        }
        throw Status.INVALID_ARGUMENT.withDescription("device '" + id + "' is not one this plugin advertises (xq-gpu<G>-<R>, G in "
                + s.gpus() + ", R in [0, " + (s.replicas() - 1) + "])").asRuntimeException();
    }

    ContainerAllocateResponse allocate(ContainerAllocateRequest rq) {
        Set<Integer> gpus = new TreeSet<>();
        for (String id : rq.getDevicesIdsList()) {
            gpus.add(gpuOf(id));
        }
        ContainerAllocateResponse.Builder b = ContainerAllocateResponse.newBuilder();
        b.putEnvs("LD_PRELOAD", CONTAINER_LIB + "/libxq-cuda.so:" + CONTAINER_LIB + "/libxq-hip.so");
        b.putEnvs("XQ_SOCKET", CONTAINER_RUN + "/node.sock");
        b.putEnvs("NVIDIA_VISIBLE_DEVICES", String.join(",", gpus.stream().map(String::valueOf).toList()));
        b.addMounts(Mount.newBuilder().setHostPath(s.interposerDir().toString()).setContainerPath(CONTAINER_LIB).setReadOnly(true));
        b.addMounts(Mount.newBuilder().setHostPath(s.nodeSocketDir().toString()).setContainerPath(CONTAINER_RUN).setReadOnly(false));
        List<String> files = new ArrayList<>(List.of("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"));
        for (int g : gpus) {
            files.add("nvidia" + g);
        }
        for (String f : files) {
            Path p = s.devDir().resolve(f);
            if (Files.exists(p)) {
                b.addDevices(DeviceSpec.newBuilder().setHostPath(p.toString()).setContainerPath("/dev/" + f).setPermissions("rw"));
            }
        }
        b.putAnnotations("xq.dev/gpus", String.join(",", gpus.stream().map(String::valueOf).toList()));
        return b.build();
    }

    /**
     * A container's shares: those it must have, then from the GPU with the most shares available
     * (one GPU for one container where it fits: shares of one device are what XQ schedules).
     */
    List<String> prefer(ContainerPreferredAllocationRequest rq) {
        LinkedHashSet<String> pick = new LinkedHashSet<>(rq.getMustIncludeDeviceIDsList());
        Map<Integer, List<String>> free = new LinkedHashMap<>();
        for (String id : rq.getAvailableDeviceIDsList()) {
            if (!pick.contains(id)) {
                free.computeIfAbsent(gpuOf(id), k -> new ArrayList<>()).add(id);
            }
        }
        List<Integer> order = new ArrayList<>(free.keySet());
        order.sort(Comparator.comparing((Integer g) -> -free.get(g).size()).thenComparing(g -> g));
        for (int g : order) {
            for (String id : free.get(g)) {
                if (pick.size() >= rq.getAllocationSize()) {
                    break;
                }
                pick.add(id);
            }
        }
        return new ArrayList<>(pick);
    }

    private final class Service extends DevicePluginGrpc.DevicePluginImplBase {
        @Override
        public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
            out.onNext(DevicePluginOptions.newBuilder().setGetPreferredAllocationAvailable(true).build());
            out.onCompleted();
        }

        @Override
        public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
            if (out instanceof ServerCallStreamObserver<ListAndWatchResponse> sc) {
                sc.setOnCancelHandler(() -> watchers.remove(out));
            }
            watchers.add(out);
            out.onNext(list()); // then kept open: health changes follow
        }

        @Override
        public void getPreferredAllocation(PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> out) {
            try {
                PreferredAllocationResponse.Builder b = PreferredAllocationResponse.newBuilder();
                for (ContainerPreferredAllocationRequest c : request.getContainerRequestsList()) {
                    b.addContainerResponses(ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(prefer(c)));
                }
                out.onNext(b.build());
                out.onCompleted();
            } catch (RuntimeException e) {
                out.onError(e);
            }
        }

        @Override
        public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
            try {
                AllocateResponse.Builder b = AllocateResponse.newBuilder();
                for (ContainerAllocateRequest c : request.getContainerRequestsList()) {
                    b.addContainerResponses(DevicePlugin.this.allocate(c));
                }
                out.onNext(b.build());
                out.onCompleted();
            } catch (RuntimeException e) {
                out.onError(e);
            }
        }

        @Override
        public void preStartContainer(PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> out) {
            out.onNext(PreStartContainerResponse.getDefaultInstance());
            out.onCompleted();
        }
    }

    @Override
    public synchronized void close() {
        timer.shutdownNow();
        for (StreamObserver<ListAndWatchResponse> w : watchers) {
            try {
                w.onCompleted();
            } catch (RuntimeException ignored) {
                // the kubelet went first
            }
        }
        watchers.clear();
        if (server != null) {
            server.shutdownNow();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        try {
            Files.deleteIfExists(socket());
        } catch (IOException ignored) {
            // the kubelet's folder: it cleans it too
        }
    }

    /** @return the GPU ordinals of the {@code nvidia<N>} device files in {@code dev} */
    static List<Integer> gpusIn(Path dev) throws IOException {
        List<Integer> gpus = new ArrayList<>();
        if (!Files.isDirectory(dev)) {
            return gpus;
        }
        try (var ls = Files.list(dev)) {
            ls.map(p -> p.getFileName().toString()).filter(n -> n.matches("nvidia\\d{1,3}")).map(n -> Integer.parseInt(n.substring(6)))
                    .sorted().forEach(gpus::add);
        }
        return gpus;
    }
}
