package dev.xq.k8s;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code java -jar xq-k8s.jar webhook ...} or {@code device-plugin ...}: the two programs XQ runs on
 * Kubernetes (docs/kubernetes.md).
 */
public final class Main {

    static final String USAGE = """
            usage: java -jar xq-k8s.jar webhook --cert tls.crt --key tls.key [--host 0.0.0.0] [--port 8443] [--class PRIORITYCLASS=N]...
                   java -jar xq-k8s.jar device-plugin [--gpus 0,1] [--replicas 8] [--plugin-dir /var/lib/kubelet/device-plugins]
                        [--endpoint xq.sock] [--interposers /opt/xq/lib] [--node-socket-dir /run/xq] [--dev /dev]""";

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
            System.out.println(USAGE);
            return;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "webhook" -> Webhook.main(rest);
            case "device-plugin" -> {
                // Netty says once per connection that a Unix socket has no keep-alive option: true, and not news
                java.util.logging.Logger.getLogger("io.grpc.netty.shaded.io.netty.bootstrap").setLevel(java.util.logging.Level.SEVERE);
                try {
                    DevicePlugin p = new DevicePlugin(devicePlugin(rest));
                    p.start();
                    Runtime.getRuntime().addShutdownHook(new Thread(p::close));
                    Thread.currentThread().join();
                } catch (IllegalArgumentException e) {
                    System.err.println("xq device plugin: " + e.getMessage() + "\n" + USAGE);
                    System.exit(2);
                } catch (java.io.IOException e) {
                    System.err.println("xq device plugin: " + e.getMessage());
                    System.exit(1);
                }
            }
            default -> {
                System.err.println("xq-k8s: unknown program '" + args[0] + "'; allowed: webhook, device-plugin\n" + USAGE);
                System.exit(2);
            }
        }
    }

    static DevicePlugin.Settings devicePlugin(String[] args) throws java.io.IOException {
        Path pluginDir = Path.of("/var/lib/kubelet/device-plugins");
        String endpoint = "xq.sock";
        List<Integer> gpus = null;
        int replicas = 8;
        Path interposers = Path.of("/opt/xq/lib");
        Path run = Path.of("/run/xq");
        Path dev = Path.of("/dev");
        for (int i = 0; i < args.length; i += 2) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[i + 1];
            switch (a) {
                case "--plugin-dir" -> pluginDir = Path.of(v);
                case "--endpoint" -> endpoint = v;
                case "--interposers" -> interposers = Path.of(v);
                case "--node-socket-dir" -> run = Path.of(v);
                case "--dev" -> dev = Path.of(v);
                case "--replicas" -> replicas = integer(a, v);
                case "--gpus" -> {
                    gpus = new ArrayList<>();
                    for (String g : v.split(",")) {
                        int n = integer(a, g);
                        if (n < 0 || n > 255) {
                            throw new IllegalArgumentException("--gpus " + g + " is not a GPU ordinal in [0, 255]");
                        }
                        gpus.add(n);
                    }
                }
                default -> throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        if (gpus == null) {
            gpus = DevicePlugin.gpusIn(dev);
        }
        return new DevicePlugin.Settings(pluginDir, endpoint, gpus, replicas, interposers, run, dev, 1000);
    }

    private static int integer(String option, String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " '" + text + "' is not an integer");
        }
    }
}
